// The suite as a UET initiator of its own (gVisor packetimpact's test bench): a UDP socket in the initiator's
// network namespace, on an ephemeral port of its address, that sends request frames the codec's encoder builds
// from field values (the tables the decoder reads) to a target endpoint's UET address, and decodes what comes
// back to that port (ACKs, NACKs and the SES responses they carry). A case that checks what a TARGET does
// plays the initiator with it, so the target's rules are exercised whatever an initiator provider would send.
//
// It is no FEP: one PDC toward one target endpoint, established with SYN as the spec lays it out (the first
// requests carry SYN, the start PSN's offset and our PDC id; once the target acknowledges, its PDC id is
// dpdcid), PSNs in order, and what a script asks: send request k, wait for its answer, send it again. Every
// wait has a deadline and every datagram that comes back is decoded, whatever it holds.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "capture.hpp"
#include "uet/codec/encoder.hpp"
#include "uet/wire/wire_gen.hpp"

namespace uet::cases {

// The SES request header a scripted request travels in (spec/wire.yaml nodes uet.ses.std, uet.ses.medium
// "small message / small RMA", uet.ses.small "optimized non-matching").
enum class SesHeader { standard, medium, optimized };
const char* ses_header_name(SesHeader h);
// A PSN as messages show it: 0x5c000000.
std::string psn_text(uint32_t psn);

// The delivery mode of the scripted PDC: RUD (acknowledged) or UUD (datagrams, nothing comes back).
enum class ScriptedDelivery { rud, uud };

// A request as the peer sent it: enough to send it again and to find its answer.
struct SentRequest {
  uint32_t psn = 0;             // RUD: its PSN (UUD: none)
  SesHeader header = SesHeader::standard;
  codec::FieldValues values;    // every field it was encoded from
  std::vector<uint8_t> payload;
  WireFrame frame;              // as the target received it, decoded
};

// How long a script waits for an answer the target must send.
inline constexpr int kAnswerMs = 3000;

class ScriptedPeer {
 public:
  ScriptedPeer() = default;
  ScriptedPeer(const ScriptedPeer&) = delete;
  ScriptedPeer& operator=(const ScriptedPeer&) = delete;
  ~ScriptedPeer();

  // Opens the socket toward the target endpoint whose fi_getname is `target_name` (read through the target
  // manifest's layout; its UDP port from the layout, else the manifest's wire udp_port). Requests carry
  // `job_id` and the endpoint's PIDonFEP and resource index unless a script says otherwise. False with error().
  bool open(const std::vector<uint8_t>& target_name, uint32_t job_id, ScriptedDelivery delivery = ScriptedDelivery::rud);
  const std::string& error() const { return error_; }
  // "10.0.0.1:40123 to 10.0.0.2:4794": where the peer plays from, for messages and notes.
  std::string route() const;
  uint16_t target_pid_on_fep() const { return pid_on_fep_; }
  uint16_t target_resource_index() const { return resource_index_; }

  // Sends a one-packet request (SOM and EOM, request_length the payload's size, a fresh message_id where the
  // header has one) of `opcode` in `header`, with `fields` over those defaults and over the addressing, at
  // the PDC's next PSN. nullopt with error() when the path cannot be encoded or the datagram not sent.
  std::optional<SentRequest> send(SesHeader header, uint64_t opcode, std::span<const uint8_t> payload,
                                  const Partial& fields = {});
  // Sends `request` again: the same PSN and SES header, flags.retx set, the PDS fields of the PDC as it is
  // now (SYN only while the target has acknowledged nothing). False with error().
  bool resend(const SentRequest& request);

  // The first answer to `request` (an ACK that acknowledges its PSN, by name or cumulatively, or a NACK of
  // it) within `timeout_ms` for which `want` holds; answers are searched from the first that came, so a
  // script may ask about one request twice. When none is, `why` says what did come back.
  std::optional<WireFrame> find(const SentRequest& request, const std::function<bool(const WireFrame&)>& want,
                                std::string* why, int timeout_ms = kAnswerMs);
  // find() for the answer whose fields are `want`'s (packetimpact's Expect); `why` also names how the last
  // answer to the request differs.
  std::optional<WireFrame> expect(const SentRequest& request, const Partial& want, std::string* why,
                                  int timeout_ms = kAnswerMs);
  // The n-th answer to `request` (0: the first), within `timeout_ms`.
  std::optional<WireFrame> answer(const SentRequest& request, size_t n, std::string* why, int timeout_ms = kAnswerMs);
  // Every UET frame that came back so far.
  const std::vector<WireFrame>& answers() const { return answers_; }

 private:
  bool address_target(const std::vector<uint8_t>& name, std::string* why);
  bool bind_on_initiator_address(std::string* why);
  void set_pds_fields(codec::FieldValues& v, uint32_t psn, bool retransmit) const;
  // Encodes `request` with the PDC's PDS fields for its PSN and sends it.
  bool transmit(SentRequest& request, bool retransmit);
  // Reads and decodes what arrived, waiting up to `timeout_ms` for one datagram (0: only what is there).
  void receive(int timeout_ms);
  void learn_from(const WireFrame& answer);
  // Does `answer` answer the request of PSN `psn`?
  static bool answers_psn(const WireFrame& answer, uint32_t psn);
  std::string described_answers(uint32_t psn) const;

  int fd_ = -1;
  bool v6_ = false;
  std::vector<uint8_t> to_;    // the target's sockaddr
  std::vector<uint8_t> from_;  // ours, once bound
  ScriptedDelivery delivery_ = ScriptedDelivery::rud;
  uint32_t job_id_ = 0;
  uint16_t pid_on_fep_ = 0, resource_index_ = 0;
  bool relative_ = true;         // the target's address is relative (ses.rel)
  uint32_t next_psn_ = 0;
  uint16_t next_message_id_ = 1;
  bool established_ = false;     // the target has acknowledged a request of our PDC
  uint16_t target_pdc_ = 0;      // its PDC id, from that ACK's spdcid
  std::set<uint32_t> unacked_;   // PSNs sent and not yet acknowledged (clear_psn_offset)
  std::vector<WireFrame> answers_;
  uint64_t not_uet_ = 0;         // datagrams that came back and are not UET
  std::string error_;
};

}  // namespace uet::cases
