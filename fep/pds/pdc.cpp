#include "pdc.hpp"

#include <algorithm>
#include <cstdint>

namespace softuet::pds {

InitiatorPdc::InitiatorPdc(Mode mode, Psn start_psn, Config config)
    : mode_(mode), config_(config), start_psn_(start_psn), next_psn_(start_psn), rto_(config.initial_rto) {}

RequestFields InitiatorPdc::fields_for(Psn psn, bool retransmit, bool ack_request) const {
  RequestFields f;
  f.psn = psn;
  f.syn = !established_;
  f.psn_offset = static_cast<uint16_t>((psn - start_psn_) & 0xFFF);
  // CLEAR_PSN: the oldest PSN still unacknowledged; the target may forget everything before it.
  const Psn clear = unacked_.empty() ? psn : unacked_.begin()->first;
  f.clear_psn_offset = static_cast<int16_t>(static_cast<int32_t>(clear - psn));
  f.retransmit = retransmit;
  f.ack_request = ack_request;
  return f;
}

RequestFields InitiatorPdc::send(uint64_t token, TimePoint now, bool ack_request) {
  const Psn psn = next_psn_++;
  unacked_.emplace(psn, Pending{token, now, now, now + rto_, rto_, 0, ack_request, false});
  return fields_for(psn, false, ack_request);
}

void InitiatorPdc::measured(std::chrono::microseconds rtt) {
  using std::chrono::microseconds;
  if (!srtt_) {
    srtt_ = rtt;
    rttvar_ = rtt / 2;
  } else {
    const microseconds err = *srtt_ > rtt ? *srtt_ - rtt : rtt - *srtt_;
    rttvar_ = (3 * rttvar_ + err) / 4;
    srtt_ = (7 * *srtt_ + rtt) / 8;
  }
  rto_ = std::clamp(*srtt_ + 4 * rttvar_, config_.min_rto, config_.max_rto);
}

std::vector<uint64_t> InitiatorPdc::on_ack(Psn cack_psn, int16_t ack_psn_offset, TimePoint now) {
  std::vector<uint64_t> done;
  // An ACK for a PSN never sent is a confused or forged peer: ignore it rather than clear the window.
  if (!psn_before(cack_psn, next_psn_) && cack_psn != next_psn_ - 1) return done;
  established_ = true;
  if (const auto answered = unacked_.find(cack_psn + static_cast<Psn>(static_cast<int32_t>(ack_psn_offset)));
      answered != unacked_.end() && !answered->second.resent && now >= answered->second.last_sent)
    measured(std::chrono::duration_cast<std::chrono::microseconds>(now - answered->second.last_sent));
  while (!unacked_.empty() && !psn_after(unacked_.begin()->first, cack_psn)) {
    done.push_back(unacked_.begin()->second.token);
    unacked_.erase(unacked_.begin());
  }
  if (ack_psn_offset > 0) {
    const auto it = unacked_.find(cack_psn + static_cast<Psn>(ack_psn_offset));
    if (it != unacked_.end()) {
      done.push_back(it->second.token);
      unacked_.erase(it);
    }
  }
  return done;
}

ToSend InitiatorPdc::resend(Psn psn, Pending& p, TimePoint now, bool lost) {
  if (lost) {
    ++p.retransmits;
    p.rto = std::min(std::max(p.rto * 2, rto_), config_.max_rto);
  } else {
    p.rto = std::max(p.rto, rto_);
  }
  p.resent = true;
  p.last_sent = now;
  p.deadline = now + p.rto;
  return {fields_for(psn, true, true), p.token};  // a retransmission asks for a prompt ACK
}

std::vector<ToSend> InitiatorPdc::on_nack(Psn psn, TimePoint now) {
  std::vector<ToSend> out;
  for (auto it = unacked_.find(psn); it != unacked_.end(); ++it) {
    if (now - it->second.last_sent >= config_.nack_holdoff)
      out.push_back(resend(it->first, it->second, now, it->first == psn));
    if (mode_ == Mode::rud) break;  // ROD: the target dropped everything after the gap too
  }
  return out;
}

std::vector<ToSend> InitiatorPdc::due(TimePoint now) {
  std::vector<ToSend> out;
  bool backed_off = false;
  for (auto it = unacked_.begin(); it != unacked_.end();) {
    if (it->second.deadline > now) {
      ++it;
      continue;
    }
    // One timeout backs the PDC off once, however many packets it finds expired (they were sent together),
    // before any of them is resent.
    if (!backed_off) {
      rto_ = std::min(rto_ * 2, config_.max_rto);
      backed_off = true;
    }
    if (out_of_tries(it->second.retransmits, config_.max_retransmits, it->second.first_sent, now, config_.give_up_after)) {
      failed_.push_back(it->second.token);
      it = unacked_.erase(it);
      continue;
    }
    if (mode_ == Mode::rod) {
      // Go back N: the target dropped every packet after this one, so resend them all now.
      out.push_back(resend(it->first, it->second, now, true));
      for (++it; it != unacked_.end(); ++it) out.push_back(resend(it->first, it->second, now, false));
      break;
    }
    out.push_back(resend(it->first, it->second, now, true));
    ++it;
  }
  return out;
}

std::vector<uint64_t> InitiatorPdc::take_failed() {
  std::vector<uint64_t> out;
  out.swap(failed_);
  return out;
}

std::optional<TimePoint> InitiatorPdc::next_deadline() const {
  std::optional<TimePoint> next;
  for (const auto& [psn, p] : unacked_)
    if (!next || p.deadline < *next) next = p.deadline;
  return next;
}

Verdict TargetPdc::on_request(const RequestFields& f) {
  Verdict v;
  if (!established_) {
    if (!f.syn) return v;  // an unknown PDC without SYN: nothing to deliver (the caller may NACK INV_DPDCID)
    cack_ = f.psn - f.psn_offset - 1;  // Start_PSN = psn - psn_offset, nothing received before it
    established_ = true;
  }
  const Psn psn = f.psn;
  const bool ack_now = f.ack_request || f.retransmit || ++since_ack_ >= config_.ack_every;
  if (!psn_after(psn, cack_) || beyond_.count(psn)) {
    v.duplicate = true;
    v.send_ack = true;  // the initiator missed our ACK: repeat it
  } else if (psn == cack_ + 1) {
    v.deliver = true;
    ++cack_;
    while (!beyond_.empty() && *beyond_.begin() == cack_ + 1) {
      beyond_.erase(beyond_.begin());
      ++cack_;
    }
    v.send_ack = ack_now;
  } else if (mode_ == Mode::rod) {
    // ROD delivers in order only: drop the early packet and ask for the missing one (the initiator
    // ignores repeats within its hold-off).
    v.nack_psn = cack_ + 1;
  } else if (psn - cack_ > 4 * config_.window) {
    return v;  // far outside any window the initiator may have open: drop without a trace
  } else {
    beyond_.insert(psn);
    v.deliver = true;
    v.send_ack = true;  // tell the initiator at once which PSN arrived past the gap
    v.ack_psn_offset = static_cast<int16_t>(static_cast<int32_t>(psn - cack_));
  }
  // An ACK names the PSN it answers as cack_psn + ack_psn_offset: negative for a duplicate below cack_psn
  // or a packet that filled a gap (cack_psn moved past it), positive for a packet past a gap or its
  // duplicate. A response the ACK carries for a request without message_id finds its request by that PSN
  // (choice unnumbered-response-message-id).
  const int32_t at = static_cast<int32_t>(psn - cack_);
  if (at >= INT16_MIN && at <= INT16_MAX) v.ack_psn_offset = static_cast<int16_t>(at);
  if (v.send_ack) since_ack_ = 0;
  return v;
}

}  // namespace softuet::pds
