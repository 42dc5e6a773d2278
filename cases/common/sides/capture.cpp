#include "capture.hpp"
#include "liveness.hpp"

#include "cell_plan.hpp"
#include "job_id_methods.hpp"

#include "uet/tss/seal.hpp"

#include <gtest/gtest.h>
#include <pcap/pcap.h>
#include <poll.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <memory>

#include "conformance.hpp"
#include "uet/codec/decoded.hpp"
#include "uet/codec/gso.hpp"

namespace uet::cases {

namespace {
// The pcap file format's sizes: the file header, and the header before each frame's bytes.
constexpr uint64_t kPcapFileHeaderBytes = 24, kPcapRecordHeaderBytes = 16;
}  // namespace

std::optional<uint64_t> WireFrame::get(wire::Field f) const {
  for (const auto& [field, value] : fields)
    if (field == f) return value;
  return std::nullopt;
}

std::vector<uint8_t> WireFrame::field_bytes(wire::Field f) const {
  const auto at = get(f);
  const size_t n = wire::field_info(f).nbytes;
  if (!at || *at + n > bytes.size()) return {};
  return {bytes.begin() + static_cast<long>(*at), bytes.begin() + static_cast<long>(*at + n)};
}

std::optional<uint8_t> WireFrame::first_payload_byte() const {
  if (!payload_len || payload_offset >= bytes.size()) return std::nullopt;
  return bytes[payload_offset];
}

// With a cell plan, every packet this capture sees is also written to a pcap file named
// after the running case: the run keeps it, decodes it with both decoders and links it from the report.
void Capture::keep_as_evidence() {
  const CellPlan* plan = cell_plan_if_named();
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  if (!plan || plan->captures.empty() || !info) return;
  const std::string& dir = plan->captures;
  std::string name = std::string(info->test_suite_name()) + "." + info->name();
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') c = '_';
  static int serial = 0;
  const std::string path = dir + "/" + name + "-" + std::to_string(++serial) + ".pcap";
  dumper_ = pcap_dump_open(pcap_, path.c_str());
  if (!dumper_) {
    std::fprintf(stderr, "capture: cannot keep %s: %s\n", path.c_str(), pcap_geterr(pcap_));
    return;
  }
  evidence_path_ = path;
  evidence_cap_ = plan->capture_cap_bytes;
  evidence_bytes_ = kPcapFileHeaderBytes;
  evidence_capture(path, to_target_, to_initiator_);
}

void Capture::dump(const pcap_pkthdr& hdr, const u_char* data) {
  // The head is kept: a case's negotiation and first exchanges are there. A frame is kept whole or not at all,
  // so the file stays a valid capture.
  const uint64_t record = kPcapRecordHeaderBytes + hdr.caplen;
  if (!evidence_cut_ && evidence_bytes_ + record <= evidence_cap_) {
    pcap_dump(reinterpret_cast<u_char*>(dumper_), &hdr, data);
    evidence_bytes_ += record;
    return;
  }
  if (!evidence_cut_++)
    std::fprintf(stderr, "capture: %s reached its cap of %llu bytes: later frames are not kept in it\n",
                 evidence_path_.c_str(), static_cast<unsigned long long>(evidence_cap_));
}

std::string summary(const WireFrame& f) {
  std::string out;
  for (const auto& [field, value] : f.fields) {
    const std::string name = wire::field_name(field);
    if (name.rfind("uet.", 0) != 0) continue;  // the UET headers; addresses and ports say little here
    if (wire::field_info(field).kind == wire::Kind::bytes) {
      // Its bytes in hex without 0x, as the decoders' records give them (codec/DECODE-OUTPUT.md), not where they lie.
      const std::vector<uint8_t> b = f.field_bytes(field);
      out += (out.empty() ? "" : " ") + name + "=" + to_hex(b.data(), b.size());
      continue;
    }
    // A signed field (kind int in spec/wire.yaml) by its value, as the decoders give it: -0x1, not 0xffff...
    const bool negative = wire::field_info(field).kind == wire::Kind::int_ && static_cast<int64_t>(value) < 0;
    char hex[24];
    std::snprintf(hex, sizeof hex, "%s0x%llx", negative ? "-" : "",
                  static_cast<unsigned long long>(negative ? 0 - value : value));
    out += (out.empty() ? "" : " ") + name + "=" + hex;
  }
  return out;
}

bool matches(const WireFrame& f, const Partial& want) {
  for (const auto& [field, value] : want)
    if (f.get(field) != value) return false;
  return true;
}

std::string differences(const WireFrame& f, const Partial& want) {
  std::string out;
  char text[96];
  for (const auto& [field, value] : want) {
    const auto got = f.get(field);
    if (got == value) continue;
    if (got) {
      std::snprintf(text, sizeof text, " is 0x%llx, not 0x%llx", static_cast<unsigned long long>(*got),
                    static_cast<unsigned long long>(value));
    } else {
      std::snprintf(text, sizeof text, " is absent (want 0x%llx)", static_cast<unsigned long long>(value));
    }
    out += (out.empty() ? "" : "; ") + std::string(wire::field_name(field)) + text;
  }
  return out;
}

std::optional<WireFrame> Capture::expect(const Partial& want, const std::function<bool(const WireFrame&)>& of_kind,
                                         std::string* why, int timeout_ms) {
  std::optional<WireFrame> last;
  auto found = find(default_sender_, [&](const WireFrame& f) {
    if (!of_kind(f)) return false;
    last = f;
    return matches(f, want);
  }, timeout_ms);
  if (!found && why) {
    *why = last ? "the last such frame differs: " + differences(*last, want) : std::string("no such frame at all");
    if (last) evidence_frame(default_sender_, summary(*last));
  }
  return found;
}

bool is_request(const WireFrame& f) { return f.get(wire::Field::uet_ses_opcode).has_value(); }
bool is_response(const WireFrame& f) { return f.get(wire::Field::uet_ses_rsp_return_code).has_value(); }

Capture::~Capture() {
  if (dumper_) {
    drain();  // what arrived since the last look belongs to the evidence too
    pcap_dump_close(dumper_);
    evidence_capture(evidence_path_, to_target_, to_initiator_);  // with the ports learned since it began
    if (evidence_cut_) evidence_capture_cut(evidence_path_, evidence_bytes_, evidence_cut_);
  }
  if (pcap_) pcap_close(pcap_);
}

namespace {

struct PairAddresses {
  const ::testing::TestInfo* test = nullptr;  // the case that opened the pair: another case's is not this one's
  std::vector<uint8_t> initiator, target;
};
const ::testing::TestInfo* current_case() { return ::testing::UnitTest::GetInstance()->current_test_info(); }
PairAddresses& pair_of_case() {
  static PairAddresses p;
  if (p.test != current_case()) p = {};
  return p;
}

// An `auto` side's port from its fi_getname (its layout's udp_port), or 0.
uint16_t port_in_address(const Manifest& side, const std::vector<uint8_t>& name) {
  const auto port = side.wire.udp_port.automatic && !name.empty() ? layout_of(side).get(name, AddrField::udp_port) : std::nullopt;
  if (port && *port) note(std::string(&side == &manifest() ? "initiator" : "target") + " UET port",
                          "from its fi_getname: " + std::to_string(*port) + " (the manifest says auto)");
  return port ? static_cast<uint16_t>(*port) : 0;
}

}  // namespace

std::vector<uint8_t> fabric_address(const Manifest& side, const std::vector<uint8_t>& name, bool* ipv6) {
  const auto fa = layout_of(side).fa(name);
  const auto flags = layout_of(side).get(name, AddrField::flags);
  if (!fa || !flags) return {};
  const bool v6 = *flags & (1u << wire::k_addr_flag_ipv6);
  if (ipv6) *ipv6 = v6;
  return {fa->begin(), fa->begin() + (v6 ? 16 : 4)};
}

void Capture::ports_from_addresses() {
  // Only an `auto` port is learned from them. Each address is read once, when the case has it: reading one
  // makes the verdict rest on its layout.
  if (!target_auto_ && !initiator_auto_) return;
  const PairAddresses& pair = pair_of_case();
  if (!target_address_read_ && !pair.target.empty()) {
    target_address_read_ = true;
    if (target_auto_ && !to_target_) to_target_ = port_in_address(target_manifest(), pair.target);
    if (target_fa_.empty()) target_fa_ = fabric_address(target_manifest(), pair.target);
  }
  if (!initiator_address_read_ && !pair.initiator.empty()) {
    initiator_address_read_ = true;
    if (initiator_auto_ && !to_initiator_) to_initiator_ = port_in_address(manifest(), pair.initiator);
    initiator_fa_ = fabric_address(manifest(), pair.initiator);
  }
}

void pair_addresses(const std::vector<uint8_t>& initiator, const std::vector<uint8_t>& target) {
  pair_of_case() = {current_case(), initiator, target};
}

void pair_address(Side side, const std::vector<uint8_t>& name) {
  PairAddresses& pair = pair_of_case();
  pair.test = current_case();
  (side == Side::initiator ? pair.initiator : pair.target) = name;
}

bool Capture::start(Toward toward, const std::vector<uint8_t>& target_fa) {
  // The capture is on this side (the initiator's) in either direction.
  if (manifest().wire.interface.empty() || (!target_manifest().wire.udp_port.number && !target_manifest().wire.udp_port.automatic))
    return error_ = "the manifest names no wire capture (wire: interface, udp_port) for the target (" +
                    target_manifest().path + ")",
           false;
  to_target_ = target_manifest().wire.udp_port.number;
  target_auto_ = target_manifest().wire.udp_port.automatic;
  to_initiator_ = manifest().wire.udp_port.number;
  initiator_auto_ = manifest().wire.udp_port.automatic;
  target_fa_ = target_fa;
  ports_from_addresses();
  default_sender_ = toward == Toward::target ? Side::initiator : Side::target;
  char err[PCAP_ERRBUF_SIZE] = {};
  pcap_ = pcap_create(manifest().wire.interface.c_str(), err);
  if (!pcap_) return error_ = std::string("pcap_create: ") + err, false;
  pcap_set_snaplen(pcap_, 65535);
  pcap_set_immediate_mode(pcap_, 1);  // every packet at once, not when a ring block fills
  pcap_set_timeout(pcap_, 10);
  // In immediate mode every frame takes a slot of the snap length, so libpcap's default 2 MB ring holds
  // about 30 frames: a burst of retransmitted 4 KiB packets (3 fragments each on a 1500-byte link) between
  // two find() calls overflowed it, and a check missed a frame that was on the wire.
  pcap_set_buffer_size(pcap_, 64 << 20);
  if (pcap_activate(pcap_) < 0) return error_ = std::string("pcap_activate (needs root): ") + pcap_geterr(pcap_), false;
  bpf_program prog{};
  if (pcap_compile(pcap_, &prog, kTestLinkFilter, 1, PCAP_NETMASK_UNKNOWN) != 0 || pcap_setfilter(pcap_, &prog) != 0)
    return error_ = std::string("pcap filter '") + kTestLinkFilter + "': " + pcap_geterr(pcap_), false;
  pcap_freecode(&prog);
  if (pcap_setnonblock(pcap_, 1, err) != 0) return error_ = std::string("pcap_setnonblock: ") + err, false;
  linktype_ = pcap_datalink(pcap_);
  keep_as_evidence();
  if (!codec::root_for_linktype(linktype_)) return error_ = "link type " + std::to_string(linktype_) + " is not decoded", false;
  return true;
}

std::string Capture::other_traffic() const {
  uint64_t total = 0;
  std::string ports;
  for (const auto& [port, n] : other_udp_) {
    total += n;
    if (ports.size() < 200) ports += (ports.empty() ? "" : ", ") + std::to_string(port) + " (" + std::to_string(n) + ")";
  }
  if (!total) return "no UDP datagram at all";
  return std::to_string(total) + " UDP datagram" + (total == 1 ? "" : "s") + " to port" +
         (other_udp_.size() == 1 ? " " : "s ") + ports;
}

namespace {

// The sealed part of a frame with a TSS header: from that header (its length from its SP bit) to the end.
void keep_sealed(const codec::Decoded& d, WireFrame& f) {
  uet::tss::Header h;
  if (d.get(wire::Field::uet_tss_sp).value_or(0)) h.ssi = 0;
  const size_t header = uet::tss::encode_header(h).size();
  if (d.payload_offset < header || d.payload_offset > d.caplen) return;
  f.sealed.assign(d.frame + d.payload_offset - header, d.frame + d.caplen);
  const bool v6 = d.get(wire::Field::ipv6_src).has_value();
  const size_t n = v6 ? 16 : 4;
  const uint8_t* src = d.bytes_of(v6 ? wire::Field::ipv6_src : wire::Field::ip_src);
  const uint8_t* dst = d.bytes_of(v6 ? wire::Field::ipv6_dst : wire::Field::ip_dst);
  f.src_ip.assign(src, src + n);
  f.dst_ip.assign(dst, dst + n);
}

}  // namespace

void report_malformed(const codec::Decoded& decoded, Side from, uint64_t frame_number) {
  // A frame the codec cannot take as well-formed UET is a fault of its sender, whatever the case checks. Each of
  // its diagnostics is judged on the statements it breaks: the first frame with it fails the case, the later
  // ones are counted.
  std::string frame;  // the frame's summary, made only for a diagnostic first seen here
  for (size_t i = 0; i < decoded.n_diags; ++i) {
    const auto& g = decoded.diags[i];
    const std::string kind = codec::diag_kind_name(g.kind), header = wire::header_name(g.header),
                      field = g.field != codec::kNoField ? wire::field_name(g.field) : "";
    bool again = false;  // the same diagnostic twice in one frame (two reserved fields of a header) counts once
    for (size_t j = 0; j < i && !again; ++j)
      again = decoded.diags[j].kind == g.kind && decoded.diags[j].header == g.header && decoded.diags[j].field == g.field;
    if (again || (g.kind == codec::DiagKind::job_id_zero && declared_no_job_id(from)) ||
        !count_diagnostic(from, kind, header, field))
      continue;
    if (frame.empty()) frame = summary(frame_of(decoded, from));
    observing(from, std::string("wire: a malformed frame the ") + (from == Side::initiator ? "initiator" : "target") + " sent");
    ADD_FAILURE() << "a malformed UET frame on the wire: " << kind << " in " << header
                  << (field.empty() ? std::string() : "." + field) << " at byte " << g.offset << " (value " << g.value
                  << ")" << (frame_number ? ", first in frame #" + std::to_string(frame_number) : std::string());
    evidence_diagnostic(from, kind, header, field, g.offset, g.value, frame, frame_number);
  }
  // The layouts the decode of that frame followed where the spec is missing or in conflict.
  for (size_t i = 0; i < decoded.n_emitted; ++i)
    if (decoded.emitted[i].uncertain != wire::Choice::none) rests_on_choice(wire::choice_info(decoded.emitted[i].uncertain).id);
}

namespace {

// What the report says of a port learned from the wire; the spec's port is UDP 4793 (digest I.1).
std::string learned_port(uint16_t port) {
  return "learned from the wire: " + std::to_string(port) + " (the manifest says auto)" +
         (port == wire::kUdpPort ? "" : "; not UET's UDP port " + std::to_string(wire::kUdpPort));
}

}  // namespace

WireFrame frame_of(const codec::Decoded& decoded, Side sender) {
  WireFrame f;
  f.malformed = decoded.n_diags != 0;
  f.sender = sender;
  f.bytes.assign(decoded.frame, decoded.frame + decoded.caplen);
  f.payload_offset = decoded.payload_offset;
  f.payload_len = decoded.payload_len;
  for (size_t i = 0; i < decoded.n_emitted; ++i) {
    const wire::Field field = decoded.emitted[i].field;
    f.fields.emplace_back(field, decoded.values[static_cast<size_t>(field)]);
  }
  if (decoded.get(wire::Field::uet_tss_sdi)) keep_sealed(decoded, f);
  return f;
}

void Capture::keep(codec::Decoded& decoded, Side sender) {
  if (decoded.n_diags) report_malformed(decoded, sender, frames_);
  seen_.push_back(frame_of(decoded, sender));
}

namespace {

// A datagram to a port not yet known as UET is UET when it decodes as such: well-formed, or decoded to its end
// and broken only in values its headers carry (invalid_value, job_id_zero), so that a provider whose every
// request is malformed (JobID 0) still has its port learned and its frames judged.
bool reads_as_uet(const codec::Decoded& d) {
  if (!d.reached_uet) return false;
  if (!d.n_diags) return true;
  if (!d.ended) return false;
  for (size_t i = 0; i < d.n_diags; ++i)
    if (d.diags[i].kind != codec::DiagKind::invalid_value && d.diags[i].kind != codec::DiagKind::job_id_zero) return false;
  return true;
}

bool goes_to(const codec::Decoded& d, const std::vector<uint8_t>& fa) {
  const bool v6 = d.get(wire::Field::ipv6_dst).has_value();
  const uint8_t* dst = d.bytes_of(v6 ? wire::Field::ipv6_dst : wire::Field::ip_dst);
  return dst && fa.size() == (v6 ? 16u : 4u) && std::equal(fa.begin(), fa.end(), dst);
}

}  // namespace

std::optional<Side> Capture::toward(const codec::Decoded& d) const {
  const bool target = goes_to(d, target_fa_), initiator = goes_to(d, initiator_fa_);
  if (target == initiator) return std::nullopt;
  return target ? Side::target : Side::initiator;
}

std::optional<Side> Capture::sender_of(uint16_t port, const codec::Decoded& d) const {
  if (!port) return std::nullopt;
  // With one port on both sides, by the address it goes to (the initiator's, without the target's FA).
  if (port == to_target_ && port == to_initiator_) return !target_fa_.empty() && !goes_to(d, target_fa_) ? Side::target : Side::initiator;
  if (port == to_target_) return Side::initiator;
  if (port == to_initiator_) return Side::target;
  return std::nullopt;
}

std::optional<Side> Capture::learn(uint16_t port, const codec::Decoded& d) {
  const bool target_open = target_auto_ && !to_target_, initiator_open = initiator_auto_ && !to_initiator_;
  std::optional<Side> to = toward(d);
  if (!to && target_open && initiator_open) {
    // Nothing tells the sides apart: the first goes the way the case said it captures.
    to = default_sender_ == Side::target ? Side::initiator : Side::target;
  } else if (!to) {
    to = target_open ? Side::target : Side::initiator;
  }
  if (*to == Side::target && target_open && port != to_initiator_) {
    to_target_ = port;
    note("target UET port", learned_port(port));
    return Side::initiator;
  }
  if (*to == Side::initiator && initiator_open && port != to_target_) {
    to_initiator_ = port;
    note("initiator UET port", learned_port(port));
    return Side::target;
  }
  return std::nullopt;
}

void Capture::drain() {
  const auto root = *codec::root_for_linktype(linktype_);
  // Three decodes of a few hundred KB each, made once per capture, not once per look.
  if (!frame_decode_) {
    frame_decode_ = std::make_unique<codec::Decoded>();
    datagram_decode_ = std::make_unique<codec::Decoded>();
    segment_ = std::make_unique<codec::Decoded>();
  }
  pcap_pkthdr* hdr = nullptr;
  const u_char* data = nullptr;
  std::vector<uint8_t> bytes;
  while (pcap_next_ex(pcap_, &hdr, &data) == 1) {
    if (dumper_) dump(*hdr, data);
    // Any port will do for the first look: it finds the UDP header and the IP fragments. Read as UET for
    // the target's port, it is the datagram's decode when that is where it goes.
    const uint16_t first_look = to_target_;
    codec::decode(data, hdr->caplen, hdr->len, root, decode_options(first_look), *frame_decode_);
    codec::Decoded* datagram = frame_decode_.get();
    // A fragment is no UET frame on its own; the one that completes a datagram stands for the datagram.
    if (const codec::Reassembled* whole = reassembler_.add(++frames_, *frame_decode_)) {
      bytes = whole->frame;
      const auto size = static_cast<uint32_t>(bytes.size());
      codec::decode(bytes.data(), size, size, root, decode_options(first_look), *datagram_decode_);
      datagram = datagram_decode_.get();
    } else if (frame_decode_->fragment) {
      continue;
    } else {
      bytes.assign(data, data + hdr->caplen);
    }
    const auto dport = datagram->get(wire::Field::udp_dstport);
    if (!dport) continue;
    const auto port = static_cast<uint16_t>(*dport);
    const auto size = static_cast<uint32_t>(bytes.size());
    if (port != first_look) {
      codec::decode(bytes.data(), size, size, root, decode_options(port), *datagram_decode_);
      datagram = datagram_decode_.get();
    }
    // The case may have opened its endpoints since the capture began: their addresses tell the ports.
    ports_from_addresses();
    std::optional<Side> sender = sender_of(port, *datagram);
    if (!sender && reads_as_uet(*datagram)) sender = learn(port, *datagram);
    if (!sender || !datagram->reached_uet) {
      ++other_udp_[port];
      continue;
    }
    // A UDP GSO super-datagram (a capture on a sending host with segmentation offload) holds several UET
    // packets at a stride: each is a frame of its own, as the sender meant it.
    const auto run = codec::take_gso_run(*datagram, decode_options(port), *segment_);
    keep(*datagram, *sender);
    for (uint32_t i = 1; run && i < run->count; ++i) {
      run->decode_segment(*datagram, i, *segment_);
      keep(*segment_, *sender);
    }
  }
  // A check that misses a frame the kernel dropped would blame the provider: say so where it shows.
  pcap_stat st{};
  if (pcap_stats(pcap_, &st) == 0 && st.ps_drop > dropped_) {
    dropped_ = st.ps_drop;
    fprintf(stderr, "capture on the test link dropped %u frames so far: a missing frame may not be the provider's\n",
            dropped_);
  }
}

void Capture::report_silence() {
  // Not a silent pass, nor a vague failure: the case waited for UET and the link carried none.
  silence_reported_ = true;
  const Manifest& t = target_manifest();
  observing(Side::initiator, "wire: no UET traffic on the test link");
  ADD_FAILURE() << "no UET traffic on the test link (" << manifest().wire.interface << "; the target's UET port "
                << (t.wire.udp_port.automatic ? std::string("auto, none learned") : std::to_string(t.wire.udp_port.number))
                << "): " << other_traffic();
}

std::optional<WireFrame> Capture::find(const std::function<bool(const WireFrame&)>& want, int timeout_ms) {
  return find(default_sender_, want, timeout_ms);
}

std::optional<WireFrame> Capture::find(Side sender, const std::function<bool(const WireFrame&)>& want, int timeout_ms) {
  if (!pcap_) return std::nullopt;
  LivenessDeadline deadline(timeout_ms);
  const char* who = sender == Side::initiator ? "the initiator" : "the target";
  for (size_t frames = seen_.size();;) {
    drain();
    for (size_t& i = searched_[sender == Side::initiator ? 0 : 1]; i < seen_.size(); ++i) {
      if (seen_[i].sender == sender && want(seen_[i])) {
        // What the case asserts next is about this frame, which its sender put on the wire.
        observing(sender, std::string("wire: a frame ") + who + " sent");
        evidence_frame(sender, summary(seen_[i]));
        LivenessDeadline::ended();
        return seen_[i++];
      }
    }
    // Frames still coming are progress: the exchange the case waits on is under way.
    if (seen_.size() > frames) deadline.progressed();
    frames = seen_.size();
    const int left = deadline.left_ms();
    if (left == 0) {
      deadline.timed_out();
      if (seen_.empty() && timeout_ms > 0 && !silence_reported_) report_silence();
      // No frame of the kind the case wanted: the sender did not send it. The frames it did send are
      // the evidence.
      observing(sender, std::string("wire: no matching frame from ") + who);
      for (size_t i = seen_.size() > 8 ? seen_.size() - 8 : 0; i < seen_.size(); ++i)
        if (seen_[i].sender == sender) evidence_frame(sender, summary(seen_[i]));
      return std::nullopt;
    }
    pollfd pfd{pcap_get_selectable_fd(pcap_), POLLIN, 0};
    ::poll(&pfd, 1, std::min(left, 50));
  }
}

}  // namespace uet::cases
