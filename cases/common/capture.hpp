// Wire observations for cases whose statement is on the wire (catalogue check: wire/both): a live
// libpcap capture on the initiator's side (the manifest's `wire:` interface, BPF `udp port <udp_port>`,
// immediate mode), decoded with the suite's codec. A case starts it before the operation and then asks
// for the first request frame that satisfies a condition, with a deadline. A malformed UET frame fails
// the case, blamed on its sender, whatever the case looks for.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "conformance.hpp"
#include "uet/codec/reassembly.hpp"
#include "uet/wire/wire_gen.hpp"

typedef struct pcap pcap_t;
typedef struct pcap_dumper pcap_dumper_t;

namespace uet::cases {

// One decoded UET frame: every field it carries, in wire order, and whether the codec found it malformed.
struct WireFrame {
  std::vector<std::pair<wire::Field, uint64_t>> fields;
  bool malformed = false;
  // A sealed frame (it has a TSS header): the UDP payload from the TSS header on, and the IP addresses, for
  // a check that opens it with the key the suite gave (uet/tss/seal.hpp).
  std::vector<uint8_t> sealed, src_ip, dst_ip;
  std::optional<uint64_t> get(wire::Field f) const;
};

// A partial frame (gVisor packetimpact's style): only the fields a check cares about, each with the
// value it wants; the frame's other fields may be anything.
using Partial = std::vector<std::pair<wire::Field, uint64_t>>;
bool matches(const WireFrame& f, const Partial& want);
// "uet.ses.job_id is 0x5a5a02, not 0x5a5a01; ..." for each field of `want` the frame lacks or differs in.
std::string differences(const WireFrame& f, const Partial& want);

class Capture {
 public:
  Capture() = default;
  Capture(const Capture&) = delete;
  Capture& operator=(const Capture&) = delete;
  ~Capture();
  // Which side's UDP port the decoded requests go to: the target's (`wire: udp_port`) or, for requests
  // the target sends, the initiator's (`wire: initiator_udp_port`).
  enum class Toward { target, initiator };
  // False with error() when the manifest has no `wire:` section or the capture cannot open (not root).
  bool start(Toward toward = Toward::target);
  const std::string& error() const { return error_; }
  // The first UET frame captured so far or within `timeout_ms` for which `want` holds.
  std::optional<WireFrame> find(const std::function<bool(const WireFrame&)>& want, int timeout_ms = 3000);
  // The first frame within `timeout_ms` whose fields are `want`'s among those of `of_kind` (e.g. the
  // requests); when none is, `why` names the kind's last frame and how it differs from `want`.
  std::optional<WireFrame> expect(const Partial& want, const std::function<bool(const WireFrame&)>& of_kind,
                                  std::string* why, int timeout_ms = 3000);
  // Every UET frame seen so far (including those find() passed over).
  const std::vector<WireFrame>& seen() const { return seen_; }

 private:
  void drain();
  void keep_as_evidence();
  pcap_t* pcap_ = nullptr;
  pcap_dumper_t* dumper_ = nullptr;  // the case's evidence file (UET_CASES_CAPTURE_DIR)
  int linktype_ = 0;
  uint16_t udp_port_ = 0;
  Side sender_ = Side::initiator;  // who sends the frames decoded here
  bool malformed_reported_ = false;
  // A provider's datagram larger than the link's MTU is on the wire as IP fragments: put back together
  // as uet-decode does, it is checked as one frame.
  codec::Reassembler reassembler_;
  uint64_t frames_ = 0;
  std::string error_;
  std::vector<WireFrame> seen_;
  size_t searched_ = 0;
  unsigned dropped_ = 0;  // frames the kernel dropped for want of room (pcap_stats), reported as they grow
};

// Added to a capture's "udp port N" filter: the IP fragments that filter cannot see (it matches only
// a datagram's first IPv4 fragment, and no IPv6 fragment), so that datagrams can be reassembled.
inline constexpr const char* kIpFragmentsFilter = " or (ip[6:2] & 0x1fff != 0) or (ip6 and ip6[6] == 44)";

// One line of a frame's UET fields, values by name (evidence in reports).
std::string summary(const WireFrame& f);
// True for a frame carrying an SES request (it has an opcode).
bool is_request(const WireFrame& f);
// True for a frame carrying an SES response (it has a return code).
bool is_response(const WireFrame& f);

}  // namespace uet::cases
