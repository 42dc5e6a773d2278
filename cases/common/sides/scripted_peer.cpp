#include "scripted_peer.hpp"
#include "liveness.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>

#include "conformance.hpp"
#include "uet/codec/decoded.hpp"

namespace uet::cases {

namespace w = uet::wire;
using w::Field;
using w::Node;

namespace {

// Our PDC's id and its start PSN: any values do; these are far from 0 so that a target that ignores the
// start PSN of the SYN (and counts from 0) shows.
constexpr uint16_t kScriptPdcId = 0x5C01;
constexpr uint32_t kStartPsn = 0x5C000000;
// The initiator ID the scripted requests carry (no target AV knows it: receives take any source).
constexpr uint32_t kScriptInitiator = 0x5C1;
// How many of the answers to a request a message shows.
constexpr size_t kMaxAnswersDescribed = 4;

constexpr Node kRudStandard[] = {Node::uet, Node::uet_pds, Node::uet_pds_rud_rod_req, Node::uet_pds_next,
                                 Node::uet_ses_std, Node::uet_ses_std_buffer_offset, Node::uet_ses_std_som};
constexpr Node kRudMedium[] = {Node::uet, Node::uet_pds, Node::uet_pds_rud_rod_req, Node::uet_pds_next, Node::uet_ses_medium};
constexpr Node kRudOptimized[] = {Node::uet, Node::uet_pds, Node::uet_pds_rud_rod_req, Node::uet_pds_next, Node::uet_ses_small};
constexpr Node kUudStandard[] = {Node::uet, Node::uet_pds, Node::uet_pds_uud, Node::uet_pds_next,
                                 Node::uet_ses_std, Node::uet_ses_std_buffer_offset, Node::uet_ses_std_som};
constexpr Node kUudMedium[] = {Node::uet, Node::uet_pds, Node::uet_pds_uud, Node::uet_pds_next, Node::uet_ses_medium};

std::span<const Node> path_of(ScriptedDelivery delivery, SesHeader header) {
  if (delivery == ScriptedDelivery::uud) {
    if (header == SesHeader::medium) return kUudMedium;
    return kUudStandard;  // the optimized header is refused before this (no RMA over UUD)
  }
  switch (header) {
    case SesHeader::medium: return kRudMedium;
    case SesHeader::optimized: return kRudOptimized;
    default: return kRudStandard;
  }
}

std::string address_text(const std::vector<uint8_t>& sa) {
  if (sa.size() < sizeof(sockaddr_in)) return "?";
  char ip[INET6_ADDRSTRLEN] = "?";
  uint16_t port = 0;
  const auto* any = reinterpret_cast<const sockaddr*>(sa.data());
  if (any->sa_family == AF_INET6 && sa.size() >= sizeof(sockaddr_in6)) {
    const auto* s6 = reinterpret_cast<const sockaddr_in6*>(sa.data());
    inet_ntop(AF_INET6, &s6->sin6_addr, ip, sizeof ip);
    port = ntohs(s6->sin6_port);
    return std::string("[") + ip + "]:" + std::to_string(port);
  }
  const auto* s4 = reinterpret_cast<const sockaddr_in*>(sa.data());
  inet_ntop(AF_INET, &s4->sin_addr, ip, sizeof ip);
  port = ntohs(s4->sin_port);
  return std::string(ip) + ":" + std::to_string(port);
}

// The IP of a socket address (not its port): answers are taken from the target's IP, any source port (a FEP
// may spread its packets over source ports for entropy).
bool same_ip(const std::vector<uint8_t>& a, const sockaddr_storage& b) {
  const auto* sa = reinterpret_cast<const sockaddr*>(a.data());
  if (sa->sa_family != b.ss_family) return false;
  if (b.ss_family == AF_INET6)
    return std::memcmp(&reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr,
                       &reinterpret_cast<const sockaddr_in6*>(&b)->sin6_addr, 16) == 0;
  return reinterpret_cast<const sockaddr_in*>(sa)->sin_addr.s_addr ==
         reinterpret_cast<const sockaddr_in*>(&b)->sin_addr.s_addr;
}

bool is_ack(const WireFrame& f) { return f.get(Field::uet_pds_cack_psn).has_value(); }
bool is_nack(const WireFrame& f) { return f.get(Field::uet_pds_nack_code).has_value(); }

}  // namespace

std::string psn_text(uint32_t psn) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", psn);
  return text;
}

const char* ses_header_name(SesHeader h) {
  switch (h) {
    case SesHeader::medium: return "small message / small RMA header (uet.ses.medium, next_hdr 2)";
    case SesHeader::optimized: return "optimized non-matching header (uet.ses.small, next_hdr 1)";
    default: return "standard header (uet.ses.std, next_hdr 3)";
  }
}

ScriptedPeer::~ScriptedPeer() {
  if (fd_ >= 0) ::close(fd_);
}

bool ScriptedPeer::open(const std::vector<uint8_t>& target_name, uint32_t job_id, ScriptedDelivery delivery) {
  delivery_ = delivery;
  job_id_ = job_id;
  next_psn_ = kStartPsn;
  std::string why;
  if (!address_target(target_name, &why) || !bind_on_initiator_address(&why)) {
    error_ = "the scripted peer: " + why;
    return false;
  }
  note("scripted peer", "the suite played the initiator from " + route() + " (" +
                            (delivery == ScriptedDelivery::rud ? "RUD" : "UUD") + ")");
  return true;
}

std::string ScriptedPeer::route() const { return address_text(from_) + " to " + address_text(to_); }

bool ScriptedPeer::address_target(const std::vector<uint8_t>& name, std::string* why) {
  const Manifest& target = target_manifest();
  const AddressLayout& layout = layout_of(target);
  if (const std::string misfit = layout.misfit(name.size()); !misfit.empty()) {
    *why = "the target's fi_getname does not fit its layout: " + misfit + " (" + to_hex(name.data(), name.size()) + ")";
    return false;
  }
  const auto fa = layout.fa(name);
  const uint64_t flags = layout.get(name, AddrField::flags).value_or(0);
  uint64_t port = layout.get(name, AddrField::udp_port).value_or(0);
  if (!port) port = target.wire.udp_port.number;
  if (!fa || !port || port > 0xFFFF) {
    *why = "the target's address names no fabric address or UDP port (its layout has no udp_port and the manifest's "
           "wire udp_port is " + (target.wire.udp_port.automatic ? std::string("auto") : std::to_string(target.wire.udp_port.number)) + ")";
    return false;
  }
  pid_on_fep_ = static_cast<uint16_t>(layout.get(name, AddrField::pid_on_fep).value_or(0) & ((1u << w::k_pid_on_fep_bits) - 1));
  resource_index_ = static_cast<uint16_t>(layout.get(name, AddrField::start_index).value_or(0) &
                                          ((1u << w::k_resource_index_bits) - 1));
  relative_ = !(flags & (1u << w::k_addr_flag_absolute));
  v6_ = flags & (1u << w::k_addr_flag_ipv6);
  if (v6_) {
    sockaddr_in6 sa{};
    sa.sin6_family = AF_INET6;
    sa.sin6_port = htons(static_cast<uint16_t>(port));
    std::memcpy(&sa.sin6_addr, fa->data(), 16);
    to_.assign(reinterpret_cast<uint8_t*>(&sa), reinterpret_cast<uint8_t*>(&sa) + sizeof sa);
  } else {
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<uint16_t>(port));
    std::memcpy(&sa.sin_addr, fa->data(), 4);
    to_.assign(reinterpret_cast<uint8_t*>(&sa), reinterpret_cast<uint8_t*>(&sa) + sizeof sa);
  }
  return true;
}

// The initiator's address is the one this namespace routes toward the target from: a connected probe socket
// learns it (no datagram is sent), and the peer's socket binds an ephemeral port on it, unconnected, so that
// an answer from any source port of the target's IP reaches it.
bool ScriptedPeer::bind_on_initiator_address(std::string* why) {
  const int family = v6_ ? AF_INET6 : AF_INET;
  const int probe = ::socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (probe < 0) return *why = std::string("socket: ") + std::strerror(errno), false;
  sockaddr_storage local{};
  socklen_t len = sizeof local;
  const bool routed = ::connect(probe, reinterpret_cast<const sockaddr*>(to_.data()), static_cast<socklen_t>(to_.size())) == 0 &&
                      ::getsockname(probe, reinterpret_cast<sockaddr*>(&local), &len) == 0;
  const int routed_errno = errno;
  ::close(probe);
  if (!routed) return *why = "no route to the target " + address_text(to_) + ": " + std::strerror(routed_errno), false;
  if (v6_) reinterpret_cast<sockaddr_in6*>(&local)->sin6_port = 0;
  else reinterpret_cast<sockaddr_in*>(&local)->sin_port = 0;
  fd_ = ::socket(family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd_ < 0) return *why = std::string("socket: ") + std::strerror(errno), false;
  if (::bind(fd_, reinterpret_cast<const sockaddr*>(&local), len) != 0 ||
      ::getsockname(fd_, reinterpret_cast<sockaddr*>(&local), &len) != 0)
    return *why = std::string("bind: ") + std::strerror(errno), false;
  from_.assign(reinterpret_cast<uint8_t*>(&local), reinterpret_cast<uint8_t*>(&local) + len);
  return true;
}

// The PDS request header of PSN `psn` as the PDC stands now: SYN (with the start PSN's offset) until the
// target has acknowledged a request, then its PDC id as dpdcid; every request asks for an ACK (a script
// waits for each); CLEAR_PSN is the oldest PSN not acknowledged yet.
void ScriptedPeer::set_pds_fields(codec::FieldValues& v, uint32_t psn, bool retransmit) const {
  if (delivery_ == ScriptedDelivery::uud) {
    v.set(Field::uet_pds_type, w::pds_type::UUD_REQ);
    return;
  }
  const bool syn = !established_;
  const uint32_t clear = unacked_.empty() ? psn : std::min(psn, *unacked_.begin());
  v.set(Field::uet_pds_type, w::pds_type::RUD_REQ);
  v.set(Field::uet_pds_flags_retx, retransmit ? 1 : 0).set(Field::uet_pds_flags_ar, 1).set(Field::uet_pds_flags_syn, syn ? 1 : 0);
  v.set(Field::uet_pds_clear_psn_offset, static_cast<uint16_t>(static_cast<int16_t>(clear - psn)));
  v.set(Field::uet_pds_psn, psn);
  v.set(Field::uet_pds_spdcid, kScriptPdcId);
  if (syn) {
    v.set(Field::uet_pds_use_rsv_pdc, 0);
    v.set(Field::uet_pds_psn_offset, psn - kStartPsn);  // SYN lasts a script's first requests: a small offset
  } else {
    v.set(Field::uet_pds_dpdcid, target_pdc_);
  }
}

std::optional<SentRequest> ScriptedPeer::send(SesHeader header, uint64_t opcode, std::span<const uint8_t> payload,
                                              const Partial& fields) {
  if (fd_ < 0) return error_ = "the scripted peer is not open", std::nullopt;
  if (delivery_ == ScriptedDelivery::uud && header == SesHeader::optimized)
    return error_ = "the optimized header carries RMA, which UUD does not", std::nullopt;
  SentRequest r;
  r.header = header;
  r.payload.assign(payload.begin(), payload.end());
  codec::FieldValues& v = r.values;
  v.set(Field::uet_ses_opcode, opcode).set(Field::uet_ses_version, w::k_ses_version);
  v.set(Field::uet_ses_rel, relative_ ? 1 : 0).set(Field::uet_ses_som, 1).set(Field::uet_ses_eom, 1);
  v.set(Field::uet_ses_ri_generation, 0).set(Field::uet_ses_job_id, job_id_);
  v.set(Field::uet_ses_pid_on_fep, pid_on_fep_).set(Field::uet_ses_resource_index, resource_index_);
  v.set(Field::uet_ses_request_length, payload.size()).set(Field::uet_ses_buffer_offset, 0);
  if (header != SesHeader::optimized) v.set(Field::uet_ses_initiator, kScriptInitiator);
  if (header == SesHeader::standard) {
    v.set(Field::uet_ses_message_id, next_message_id_);
    if (++next_message_id_ == 0) next_message_id_ = 1;  // 0 is no numbered request's message_id
  }
  for (const auto& [field, value] : fields) v.set(field, value);
  if (delivery_ == ScriptedDelivery::rud) r.psn = next_psn_++;
  if (!transmit(r, false)) return std::nullopt;
  return r;
}

bool ScriptedPeer::resend(const SentRequest& request) {
  SentRequest again = request;
  return transmit(again, true) || (error_ = "resending PSN " + psn_text(request.psn) + ": " + error_, false);
}

bool ScriptedPeer::transmit(SentRequest& r, bool retransmit) {
  set_pds_fields(r.values, r.psn, retransmit);
  std::vector<uint8_t> bytes;
  try {
    bytes = codec::encode_path(path_of(delivery_, r.header), r.values, r.payload);
  } catch (const codec::EncodeError& e) {
    error_ = std::string("the codec cannot encode the request: ") + e.what();
    return false;
  }
  auto decoded = std::make_unique<codec::Decoded>();
  const auto n = static_cast<uint32_t>(bytes.size());
  codec::decode(bytes.data(), n, n, Node::uet, decode_options(w::kUdpPort), *decoded);
  r.frame = frame_of(*decoded, Side::initiator);
  if (::sendto(fd_, bytes.data(), bytes.size(), 0, reinterpret_cast<const sockaddr*>(to_.data()),
               static_cast<socklen_t>(to_.size())) != static_cast<ssize_t>(bytes.size())) {
    error_ = std::string("sendto ") + address_text(to_) + ": " + std::strerror(errno);
    return false;
  }
  if (delivery_ == ScriptedDelivery::rud) unacked_.insert(r.psn);
  evidence_frame(Side::initiator, "scripted: " + summary(r.frame));
  return true;
}

void ScriptedPeer::receive(int timeout_ms) {
  pollfd pfd{fd_, POLLIN, 0};
  if (::poll(&pfd, 1, timeout_ms) <= 0) return;
  std::vector<uint8_t> buf(65536);
  auto decoded = std::make_unique<codec::Decoded>();
  for (;;) {
    sockaddr_storage src{};
    socklen_t len = sizeof src;
    const ssize_t got = ::recvfrom(fd_, buf.data(), buf.size(), 0, reinterpret_cast<sockaddr*>(&src), &len);
    if (got < 0) return;  // EAGAIN: all read
    if (!same_ip(to_, src)) continue;  // not the target's: nothing a script asked for
    const auto n = static_cast<uint32_t>(got);
    codec::decode(buf.data(), n, n, Node::uet, decode_options(w::kUdpPort), *decoded);
    if (!decoded->reached_uet) {
      ++not_uet_;
      continue;
    }
    if (decoded->n_diags) report_malformed(*decoded, Side::target);
    answers_.push_back(frame_of(*decoded, Side::target));
    learn_from(answers_.back());
  }
}

// An ACK to our PDC establishes it (the target's PDC id is its spdcid) and acknowledges PSNs up to cack_psn
// and the one it names.
void ScriptedPeer::learn_from(const WireFrame& f) {
  if (!is_ack(f) || f.get(Field::uet_pds_dpdcid) != kScriptPdcId) return;
  if (!established_) {
    established_ = true;
    target_pdc_ = static_cast<uint16_t>(f.get(Field::uet_pds_spdcid).value_or(0));
  }
  const auto cack = static_cast<uint32_t>(*f.get(Field::uet_pds_cack_psn));
  const auto offset = static_cast<int16_t>(static_cast<uint16_t>(f.get(Field::uet_pds_ack_psn_offset).value_or(0)));
  std::erase_if(unacked_, [&](uint32_t psn) {
    return static_cast<int32_t>(psn - cack) <= 0 || psn == cack + static_cast<uint32_t>(static_cast<int32_t>(offset));
  });
}

bool ScriptedPeer::answers_psn(const WireFrame& f, uint32_t psn) {
  if (f.get(Field::uet_pds_dpdcid) != kScriptPdcId) return false;
  if (is_nack(f)) return f.get(Field::uet_pds_nack_psn) == psn;
  if (!is_ack(f)) return false;
  const auto cack = static_cast<uint32_t>(*f.get(Field::uet_pds_cack_psn));
  const auto offset = static_cast<int16_t>(static_cast<uint16_t>(f.get(Field::uet_pds_ack_psn_offset).value_or(0)));
  return psn == cack + static_cast<uint32_t>(static_cast<int32_t>(offset)) || static_cast<int32_t>(psn - cack) <= 0;
}

std::string ScriptedPeer::described_answers(uint32_t psn) const {
  std::string out;
  size_t shown = 0, to_psn = 0;
  for (const WireFrame& f : answers_) {
    if (!answers_psn(f, psn)) continue;
    ++to_psn;
    if (shown++ < kMaxAnswersDescribed) out += (out.empty() ? "" : "; ") + summary(f);
  }
  const std::string others = std::to_string(answers_.size() - to_psn) + " other UET frame" +
                             (answers_.size() - to_psn == 1 ? "" : "s") + " and " + std::to_string(not_uet_) +
                             " datagram" + (not_uet_ == 1 ? "" : "s") + " that are not UET came back";
  if (!to_psn) return "no answer to PSN " + psn_text(psn) + " on " + route() + " (" + others + ")";
  return std::to_string(to_psn) + " answer" + (to_psn == 1 ? "" : "s") + " to PSN " + psn_text(psn) + ": " + out +
         " (" + others + ")";
}

std::optional<WireFrame> ScriptedPeer::answer(const SentRequest& request, size_t n, std::string* why, int timeout_ms) {
  const auto nth = [&](const WireFrame& f) {  // f is an element of answers_
    size_t before = 0;
    for (const WireFrame* g = answers_.data(); g != &f; ++g) before += answers_psn(*g, request.psn);
    return before == n;
  };
  auto got = find(request, nth, why, timeout_ms);
  if (!got && why) *why = "answer " + std::to_string(n + 1) + " did not come: " + *why;
  return got;
}

std::optional<WireFrame> ScriptedPeer::find(const SentRequest& request, const std::function<bool(const WireFrame&)>& want,
                                            std::string* why, int timeout_ms) {
  observing(Side::target, "wire: the target's answers to a scripted request");
  if (delivery_ == ScriptedDelivery::uud) {
    if (why) *why = "UUD requests are not answered";
    return std::nullopt;
  }
  LivenessDeadline deadline(timeout_ms);
  for (size_t seen = answers_.size();;) {
    receive(0);
    for (const WireFrame& f : answers_) {
      if (answers_psn(f, request.psn) && want(f)) {
        evidence_frame(Side::target, summary(f));
        LivenessDeadline::ended();
        return f;
      }
    }
    // Answers still coming (to this request or another) are progress: the target is at work.
    if (answers_.size() > seen) deadline.progressed();
    seen = answers_.size();
    const int left = deadline.left_ms();
    if (left == 0) break;
    receive(std::min(left, 50));
  }
  deadline.timed_out();
  if (why) *why = described_answers(request.psn) + " within " + std::to_string(timeout_ms) + " ms";
  return std::nullopt;
}

std::optional<WireFrame> ScriptedPeer::expect(const SentRequest& request, const Partial& want, std::string* why,
                                              int timeout_ms) {
  std::optional<WireFrame> last;
  const auto found = find(request, [&](const WireFrame& f) {
    last = f;
    return matches(f, want);
  }, why, timeout_ms);
  if (!found && last && why) {
    evidence_frame(Side::target, summary(*last));
    *why = "the answers to PSN " + psn_text(request.psn) + " differ: " + differences(*last, want) + " (" + *why + ")";
  }
  return found;
}

}  // namespace uet::cases
