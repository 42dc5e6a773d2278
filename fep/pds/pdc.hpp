// The PDS reliability engine of softuet (digest I.5): one packet delivery context (PDC) seen from the
// initiator (PSNs, the unacknowledged window, retransmission timers) and from the target (duplicate
// suppression, cumulative ACKs, in-order delivery for ROD).
//
// It is pure logic: no sockets and no clock of its own (callers pass `now`), so loss, reordering and
// timer expiry can be replayed exactly in tests.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

namespace softuet::pds {

using Psn = uint32_t;
using Clock = std::chrono::steady_clock;
using TimePoint = Clock::time_point;

enum class Mode : uint8_t { rud, rod };

// PSNs wrap at 2^32: compare them by serial-number arithmetic (RFC 1982).
inline bool psn_before(Psn a, Psn b) { return static_cast<int32_t>(a - b) < 0; }
inline bool psn_after(Psn a, Psn b) { return psn_before(b, a); }

// The one rule of softuet's retry budgets (PDS retransmissions, RUDI packets, responses asked for again): an
// attempt is given up on when it has used its tries AND has gone unanswered for `give_up_after` since it was
// first sent. Tries alone are spent by the clock: a busy host that does not run the peer for the few seconds
// the tries take makes a live peer look dead.
inline constexpr std::chrono::milliseconds kGiveUpAfter{10000};
inline bool out_of_tries(unsigned tries, unsigned max_tries, TimePoint first_sent, TimePoint now,
                         std::chrono::milliseconds give_up_after = kGiveUpAfter) {
  return tries >= max_tries && now - first_sent >= give_up_after;
}

// The retransmission timeout is measured per PDC as RFC 6298 does for TCP: smoothed round trip plus four
// times its variation, from packets sent once (Karn), doubled once per timeout and kept doubled until a new
// measurement; new packets take it. A fixed timeout resends whole windows whenever a window takes longer
// to drain than it. A packet lost again backs off its own timer too (doubling from the larger of its last
// and the PDC's), so its retransmissions spread over seconds, however fast the PDC measures.
struct Config {
  std::chrono::microseconds initial_rto{2000};  // until the first round trip is measured
  std::chrono::microseconds min_rto{2000};
  std::chrono::microseconds max_rto{200000};
  unsigned max_retransmits = 20;      // then the packet, and its message, fail (out_of_tries)
  // Twenty retransmissions backing off to max_rto are spent in about 3 s: a target left unscheduled that
  // long mid-transfer failed a message (issue 33). A peer that is truly gone still fails, this much later.
  std::chrono::milliseconds give_up_after = kGiveUpAfter;
  unsigned window = 512;              // packets in flight per PDC
  unsigned ack_every = 8;             // the target ACKs at least every N packets (and on AR)
  // A packet resent less than this long ago is not resent again for a NACK: the target NACKs every
  // out-of-order arrival, so one loss yields a burst of NACKs for the same PSN.
  std::chrono::microseconds nack_holdoff{500};
};

// The PDS fields of one request packet, as the initiator must send it.
struct RequestFields {
  Psn psn = 0;
  bool syn = false;            // until the target has acknowledged anything (the PDC is being established)
  uint16_t psn_offset = 0;     // SYN overlay: psn - start_psn (12 bits)
  int16_t clear_psn_offset = 0;  // CLEAR_PSN - psn, CLEAR_PSN = oldest unacknowledged PSN (<= psn)
  bool retransmit = false;
  bool ack_request = false;
};

// A packet to (re)send: its fields plus the caller's token naming the upper-layer bytes.
struct ToSend {
  RequestFields fields;
  uint64_t token;
};

class InitiatorPdc {
 public:
  InitiatorPdc(Mode mode, Psn start_psn, Config config = {});

  // Room for another packet in the window?
  bool can_send() const { return unacked_.size() < config_.window; }
  // Assign the next PSN to a new packet (the caller keeps its bytes under `token`).
  RequestFields send(uint64_t token, TimePoint now, bool ack_request = false);

  // A cumulative ACK: every PSN up to and including `cack_psn` is delivered; `ack_psn` (cack + offset)
  // is delivered too, and is the packet the ACK answers: its round trip is measured if it was sent once.
  // Returns the tokens acknowledged by it.
  std::vector<uint64_t> on_ack(Psn cack_psn, int16_t ack_psn_offset, TimePoint now);
  // A NACK for `psn`: that packet (and, for ROD, every later one) is resent at once, unless it was
  // resent within the NACK hold-off.
  std::vector<ToSend> on_nack(Psn psn, TimePoint now);
  // Packets whose retransmission timer expired by `now`, with their timers restarted (the PDC's timeout
  // backed off once for all of them).
  // For ROD, an expired packet is resent with every later one (the target dropped those).
  std::vector<ToSend> due(TimePoint now);
  // Tokens that ran out of retransmissions since the last call (their messages have failed).
  std::vector<uint64_t> take_failed();

  std::optional<TimePoint> next_deadline() const;
  size_t in_flight() const { return unacked_.size(); }
  bool established() const { return established_; }
  Psn next_psn() const { return next_psn_; }
  std::chrono::microseconds rto() const { return rto_; }
  std::optional<std::chrono::microseconds> srtt() const { return srtt_; }

 private:
  struct Pending {
    uint64_t token;
    TimePoint first_sent;
    TimePoint last_sent;
    TimePoint deadline;
    std::chrono::microseconds rto;  // this packet's timer
    unsigned retransmits;
    bool ack_request;
    bool resent;  // its round trip is ambiguous: an ACK may answer either copy
  };
  RequestFields fields_for(Psn psn, bool retransmit, bool ack_request) const;
  // `lost`: this packet itself timed out or was NACKed (counts against its retries and backs off its
  // timer); otherwise it is resent only because ROD dropped it behind a lost one.
  ToSend resend(Psn psn, Pending& p, TimePoint now, bool lost);
  void measured(std::chrono::microseconds rtt);

  Mode mode_;
  Config config_;
  Psn start_psn_;
  Psn next_psn_;
  bool established_ = false;
  std::optional<std::chrono::microseconds> srtt_;
  std::chrono::microseconds rttvar_{0};
  std::chrono::microseconds rto_;
  std::map<Psn, Pending, bool (*)(Psn, Psn)> unacked_{psn_before};
  std::vector<uint64_t> failed_;
};

// What the target does with one request packet.
struct Verdict {
  bool deliver = false;     // hand the packet to SES now
  bool duplicate = false;   // seen before: do not deliver again
  bool send_ack = false;    // answer with an ACK carrying cack_psn / ack_psn_offset
  int16_t ack_psn_offset = 0;
  std::optional<Psn> nack_psn;  // ROD: answer with NACK ROD_OOO for this (the expected) PSN
};

class TargetPdc {
 public:
  TargetPdc(Mode mode, Config config = {}) : mode_(mode), config_(config) {}

  Verdict on_request(const RequestFields& fields);
  // Every PSN up to here has been received (valid once established()).
  Psn cack_psn() const { return cack_; }
  bool established() const { return established_; }

 private:
  Mode mode_;
  Config config_;
  bool established_ = false;
  Psn cack_ = 0;                 // cumulative: all PSNs <= cack_ received
  std::set<Psn, bool (*)(Psn, Psn)> beyond_{psn_before};  // RUD: received PSNs above cack_
  unsigned since_ack_ = 0;
};

}  // namespace softuet::pds
