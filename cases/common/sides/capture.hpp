// Wire observations for cases whose statement is on the wire (catalogue check: wire/both): a live
// libpcap capture on the initiator's side of the test link (the manifest's `wire:` interface), of every UDP
// datagram on it (and the IP fragments of any), in immediate mode. UET is told apart by port: each side's
// declared UET port (`wire: udp_port`), or, for a side whose manifest says `auto`, its port from its address
// (its layout's udp_port), else the port of the first datagram to that side (by its FA, else by the case's
// direction) that reads as UET; both sides' ports are learned. Each UET datagram is decoded with the
// suite's codec and kept with its bytes, its sender and its diagnostics; a case asks for the first frame that
// satisfies a condition, with a deadline. A malformed UET frame fails the case, blamed on its sender,
// whatever the case looks for; so does a capture that saw no UET at all when a case waited for a frame
// (saying what UDP the link did carry).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "conformance.hpp"
#include "uet/codec/reassembly.hpp"
#include "uet/wire/wire_gen.hpp"

typedef struct pcap pcap_t;
typedef struct pcap_dumper pcap_dumper_t;
struct pcap_pkthdr;

namespace uet::cases {

// One decoded UET frame: every field it carries, in wire order, its bytes, who sent it and whether the codec
// found it malformed.
struct WireFrame {
  std::vector<std::pair<wire::Field, uint64_t>> fields;
  bool malformed = false;
  Side sender = Side::initiator;
  std::vector<uint8_t> bytes;                     // the frame (a reassembled datagram when it was fragmented)
  uint32_t payload_offset = 0, payload_len = 0;  // what follows the UET headers
  // A sealed frame (it has a TSS header): the UDP payload from the TSS header on, and the IP addresses, for
  // a check that opens it with the key the suite gave (uet/tss/seal.hpp).
  std::vector<uint8_t> sealed, src_ip, dst_ip;
  std::optional<uint64_t> get(wire::Field f) const;
  // A byte-string field's bytes (empty when the frame does not carry it).
  std::vector<uint8_t> field_bytes(wire::Field f) const;
  // The first byte after the UET headers, if any.
  std::optional<uint8_t> first_payload_byte() const;
};

// A decoded UET frame as a WireFrame (its fields in wire order, bytes, payload place, sealed part), sent by `sender`.
WireFrame frame_of(const codec::Decoded& decoded, Side sender);

// Judges a frame the codec found malformed: each of its diagnostics fails the running case, blamed on the frame's
// sender, the first time the case sees it (in frame `frame_number` of its capture; 0: from no capture); later
// frames with it are counted in its evidence.
void report_malformed(const codec::Decoded& decoded, Side sender, uint64_t frame_number = 0);

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
  // Which side's frames find() looks at by default: those toward the target (the initiator sent them) or,
  // for requests the target sends, those toward the initiator.
  enum class Toward { target, initiator };
  // False with error() when the manifest has no `wire:` section or the capture cannot open (not root).
  // `target_fa`, when given, tells the directions apart when both sides use one UDP port.
  bool start(Toward toward = Toward::target, const std::vector<uint8_t>& target_fa = {});
  const std::string& error() const { return error_; }
  // The first UET frame of the default direction, captured so far or within `timeout_ms`, for which `want`
  // holds (from where the last find of that direction stopped); it becomes the evidence of what the case
  // asserts next.
  std::optional<WireFrame> find(const std::function<bool(const WireFrame&)>& want, int timeout_ms = 3000);
  // The same for the frames `sender` sent.
  std::optional<WireFrame> find(Side sender, const std::function<bool(const WireFrame&)>& want, int timeout_ms = 3000);
  // The first frame within `timeout_ms` whose fields are `want`'s among those of `of_kind` (e.g. the
  // requests); when none is, `why` names the kind's last frame and how it differs from `want`.
  std::optional<WireFrame> expect(const Partial& want, const std::function<bool(const WireFrame&)>& of_kind,
                                  std::string* why, int timeout_ms = 3000);
  // Every UET frame seen so far, of both directions (including those find() passed over).
  const std::vector<WireFrame>& seen() const { return seen_; }
  // The UDP port UET goes to on `side`: declared, learned, or 0 while an `auto` port is not yet seen.
  uint16_t uet_port(Side side) const { return side == Side::target ? to_target_ : to_initiator_; }
  // What the link carried besides UET: "N UDP datagrams to ports a (n), b (m)", or "no UDP datagram at all".
  std::string other_traffic() const;

 private:
  void drain();
  // An `auto` side's UET port and each side's FA from its address, once the case has it.
  void ports_from_addresses();
  // The side a datagram goes to by its destination IP, when that is one side's FA and not the other's.
  std::optional<Side> toward(const codec::Decoded& d) const;
  // Who sent a datagram to `port`, by the ports known so far; nullopt for a port of neither side.
  std::optional<Side> sender_of(uint16_t port, const codec::Decoded& d) const;
  // A datagram to a port of neither side that reads as UET: the `auto` port of the side it goes to, and its
  // sender; nullopt when no side's port is left to learn.
  std::optional<Side> learn(uint16_t port, const codec::Decoded& d);
  void keep(codec::Decoded& decoded, Side sender);
  void report_silence();
  void keep_as_evidence();
  void dump(const pcap_pkthdr& hdr, const unsigned char* data);
  pcap_t* pcap_ = nullptr;
  pcap_dumper_t* dumper_ = nullptr;  // the case's evidence file (the cell plan's captures folder)
  std::string evidence_path_;
  // The evidence file keeps its head up to the cell plan's capture_cap_bytes: what it holds, and the frames
  // left out after it (a chatty provider's capture would fill the disk).
  uint64_t evidence_cap_ = 0, evidence_bytes_ = 0, evidence_cut_ = 0;
  int linktype_ = 0;
  uint16_t to_target_ = 0, to_initiator_ = 0;  // the UET port of each side (0: auto, not learned yet)
  bool target_auto_ = false, initiator_auto_ = false;
  std::vector<uint8_t> target_fa_, initiator_fa_;  // each side's FA (empty: not known)
  bool target_address_read_ = false, initiator_address_read_ = false;
  Side default_sender_ = Side::initiator;
  bool silence_reported_ = false;
  // A provider's datagram larger than the link's MTU is on the wire as IP fragments: put back together
  // as uet-decode does, it is checked as one frame.
  codec::Reassembler reassembler_;
  std::unique_ptr<codec::Decoded> frame_decode_, datagram_decode_, segment_;
  uint64_t frames_ = 0;
  std::map<uint16_t, uint64_t> other_udp_;  // datagrams that are not UET, by destination port
  std::string error_;
  std::vector<WireFrame> seen_;
  size_t searched_[2] = {0, 0};  // per sender
  unsigned dropped_ = 0;  // frames the kernel dropped for want of room (pcap_stats), reported as they grow
};

// The capture's filter: every UDP datagram and the IP fragments "udp" cannot see (it matches only a
// datagram's first IPv4 fragment, and no IPv6 fragment), so that datagrams can be reassembled.
inline constexpr const char* kTestLinkFilter = "udp or (ip[6:2] & 0x1fff != 0) or (ip6 and ip6[6] == 44)";

// The two endpoints' addresses as the running case opened its pair (TwoSided::OpenBoth and the like): a
// capture takes an `auto` side's UET port from its fi_getname where the side's layout has a udp_port, so the
// two directions are told apart before any traffic (else it learns the port from the first UET datagram).
void pair_addresses(const std::vector<uint8_t>& initiator, const std::vector<uint8_t>& target);
// One side's address as the case learns it: the target's when it opens, the initiator's when the target is
// given it to insert (cases that do not open through OpenBoth).
void pair_address(Side side, const std::vector<uint8_t>& name);

// The fabric address (FA) of a side's UET address (Table 2-10, read through that side's layout): 4 bytes for
// IPv4, 16 for IPv6 (address flag bit 6, told in `ipv6`); empty when the layout cannot read it.
std::vector<uint8_t> fabric_address(const Manifest& side, const std::vector<uint8_t>& name, bool* ipv6 = nullptr);

// One line of a frame's UET fields, values by name (evidence in reports).
std::string summary(const WireFrame& f);
// True for a frame carrying an SES request (it has an opcode).
bool is_request(const WireFrame& f);
// True for a frame carrying an SES response (it has a return code).
bool is_response(const WireFrame& f);

}  // namespace uet::cases
