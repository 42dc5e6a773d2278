// uet-decode: decode the UET frames of a pcap/pcapng file into JSON records or summary lines.
// IP fragments are reassembled across frames (uet/codec/reassembly.hpp); the frame that completes a
// datagram reports the datagram's decode. A UDP GSO super-datagram is decoded packet by packet
// (uet/codec/gso.hpp).
//
// UET is told apart by UDP port: --port N decodes port N only (--port N --port M: each side's of a pair, a
// datagram under the one it goes to); the default, --port auto, decodes UET's port
// 4793 and learns every other port from the first datagram to it that reads as well-formed UET, as the cases'
// own capture learns a provider's own port (cases/common/sides/capture.hpp), and says on stderr which it learned.
//
// Exit status: 0 decoded the whole file; 1 --strict and a frame was malformed; 2 bad usage;
// 3 the file cannot be opened or its link type is not decodable; 4 the file ends in the middle of a
// frame or cannot be read (records and counts up to that point are still printed).
#include <pcap/pcap.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "uet/codec/decoded.hpp"
#include "uet/codec/gso.hpp"
#include "uet/codec/reassembly.hpp"
#include "uet/codec/record.hpp"

namespace {

enum class Mode { json, summary, count };

struct Counts {
  uint64_t frames = 0, uet = 0, malformed = 0, non_uet = 0, fragment = 0;
  void add(uet::codec::Status s) {
    ++frames;
    switch (s) {
      case uet::codec::Status::uet: ++uet; break;
      case uet::codec::Status::malformed: ++malformed; break;
      case uet::codec::Status::non_uet: ++non_uet; break;
      case uet::codec::Status::fragment: ++fragment; break;
    }
  }
};

// Which UDP ports carry UET: fixed ones (each side's of a pair), or (auto) UET's own and those learned from
// the capture.
struct Ports {
  std::vector<uint16_t> fixed;
  std::vector<std::pair<uint16_t, uint64_t>> learned;  // a port, and the frame it was learned from

  bool known(uint16_t port) const {
    for (const auto& [p, frame] : learned)
      if (p == port) return true;
    return false;
  }

  // Decodes a datagram by these rules, `options.udp_port` left at the port it was decoded with (what GSO's
  // segments are decoded with after it). A datagram to an unknown port is tried as UET, and its port learned
  // when it reads as UET without a diagnostic: one malformed datagram of other UDP teaches nothing.
  void decode(const uint8_t* data, uint32_t caplen, uint32_t len, uet::wire::Node root,
              uet::codec::DecodeOptions& options, uet::codec::Decoded& out, uint64_t frame) {
    options.udp_port = fixed.empty() ? uet::wire::kUdpPort : fixed.front();
    uet::codec::decode(data, caplen, len, root, options, out);
    const auto dport = out.get(uet::wire::Field::udp_dstport);
    if (!fixed.empty()) {
      // A datagram to another of the fixed ports is decoded under its own; any other, under the first.
      if (dport && *dport != options.udp_port && std::find(fixed.begin(), fixed.end(), *dport) != fixed.end()) {
        options.udp_port = static_cast<uint16_t>(*dport);
        uet::codec::decode(data, caplen, len, root, options, out);
      }
      return;
    }
    if (!dport || *dport == uet::wire::kUdpPort) return;
    const auto port = static_cast<uint16_t>(*dport);
    const bool was_known = known(port);
    if (!was_known && uet::codec::frame_status(out, nullptr) != uet::codec::Status::non_uet) return;
    options.udp_port = port;
    uet::codec::decode(data, caplen, len, root, options, out);
    if (was_known) return;
    if (uet::codec::frame_status(out, nullptr) == uet::codec::Status::uet) return learned.emplace_back(port, frame), void();
    options.udp_port = uet::wire::kUdpPort;  // not UET after all: as it was
    uet::codec::decode(data, caplen, len, root, options, out);
  }
};

void flush(uet::codec::RecordWriter& writer) {
  const std::string_view text = writer.text();
  std::fwrite(text.data(), 1, text.size(), stdout);
  writer.clear();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Decode Ultra Ethernet Transport frames of a capture (pcap or pcapng) per spec/wire.yaml."};
  std::string path;
  bool summary = false, count = false, strict = false;
  std::vector<std::string> port_args{"auto"};
  app.add_option("file", path, "capture file (pcap or pcapng); - reads standard input")->required();
  auto* summary_opt = app.add_flag("--summary", summary, "one line per frame instead of JSON records");
  app.add_flag("--count", count, "decode every frame, print only the counts")->excludes(summary_opt);
  app.add_option("--port", port_args,
                 "UDP destination port of UET: N (given again for each side's port of a pair: a datagram is decoded "
                 "under the one it goes to), or auto (default): 4793 and each port whose first well-formed UET "
                 "datagram the capture holds")
      ->check(CLI::IsMember({"auto"}) | CLI::Range(1, 65535));
  app.add_flag("--strict", strict, "exit with status 1 when any frame is malformed");
  std::string version = uet::wire::spec_version_name(uet::wire::kSpecVersionDefault);
  std::vector<std::string> versions;
  for (size_t i = 0; i < uet::wire::kSpecVersionCount; ++i)
    versions.emplace_back(uet::wire::spec_version_name(static_cast<uet::wire::SpecVersion>(i)));
  app.add_option("--spec-version", version, "the UEC spec version to decode by (default " + version + ")")
      ->check(CLI::IsMember(versions));
  uint32_t conf_offset = 0;
  app.add_option("--tss-conf-offset", conf_offset,
                 "bytes of clear text after a TSS header (the secure domain's confidentiality offset), "
                 "decoded from the PDS header on; default 0: nothing after TSS is decoded")
      ->check(CLI::Range(0, 65535));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  const Mode mode = count ? Mode::count : summary ? Mode::summary : Mode::json;

  char err[PCAP_ERRBUF_SIZE] = {};
  pcap_t* pcap = pcap_open_offline(path.c_str(), err);
  if (!pcap) {
    std::fprintf(stderr, "uet-decode: cannot read %s: %s\n", path.c_str(), err);
    return 3;
  }
  const int linktype = pcap_datalink(pcap);
  const auto root = uet::codec::root_for_linktype(linktype);
  if (!root) {
    const char* name = pcap_datalink_val_to_name(linktype);
    std::fprintf(stderr, "uet-decode: %s: link type %d (%s) is not one uet-decode decodes "
                 "(Ethernet, raw IP, Linux cooked v1/v2)\n", path.c_str(), linktype, name ? name : "unknown");
    pcap_close(pcap);
    return 3;
  }

  Ports ports;
  for (const std::string& port : port_args) {
    if (port == "auto") continue;
    if (std::find(ports.fixed.begin(), ports.fixed.end(), std::stoul(port)) == ports.fixed.end())
      ports.fixed.push_back(static_cast<uint16_t>(std::stoul(port)));
  }
  if (!ports.fixed.empty() && std::find(port_args.begin(), port_args.end(), "auto") != port_args.end()) {
    std::fprintf(stderr, "uet-decode: --port: auto learns ports; it cannot be given with fixed ones\n");
    return 2;
  }
  uet::codec::DecodeOptions options;
  options.spec_version = *uet::wire::spec_version_by_name(version.c_str());
  options.tss_conf_offset = conf_offset;
  uet::codec::Decoded frame_decode, datagram_decode, gso_scratch;
  uet::codec::Reassembler reassembler;
  uet::codec::RecordWriter writer;
  Counts counts;
  pcap_pkthdr* hdr = nullptr;
  const u_char* data = nullptr;
  int rc;
  while ((rc = pcap_next_ex(pcap, &hdr, &data)) == 1) {
    ports.decode(data, hdr->caplen, hdr->len, *root, options, frame_decode, counts.frames + 1);
    uet::codec::Decoded* decoded = &frame_decode;
    const uet::codec::Reassembled* whole = reassembler.add(counts.frames + 1, frame_decode);
    if (whole) {
      // The fragment completed its datagram: this frame reports the datagram's decode.
      const auto size = static_cast<uint32_t>(whole->frame.size());
      ports.decode(whole->frame.data(), size, size, *root, options, datagram_decode, counts.frames + 1);
      decoded = &datagram_decode;
    }
    const std::optional<uet::codec::GsoRun> gso = uet::codec::take_gso_run(*decoded, options, gso_scratch);
    counts.add(uet::codec::frame_status(*decoded, gso ? &*gso : nullptr));
    if (mode == Mode::count) continue;
    uet::codec::FrameMeta meta{counts.frames, hdr->ts.tv_sec, static_cast<uint32_t>(hdr->ts.tv_usec), false};
    if (whole) meta.reassembled_from = whole->from;
    if (gso) meta.gso = &*gso;
    if (mode == Mode::json) {
      writer.write(*decoded, meta);
      if (writer.text().size() > (1u << 20)) flush(writer);
    } else {
      std::printf("%s\n", uet::codec::summary_line(*decoded, meta).c_str());
    }
  }
  flush(writer);
  int status = 0;
  if (rc == PCAP_ERROR) {
    std::fprintf(stderr, "uet-decode: %s: read error after frame %llu: %s\n", path.c_str(),
                 static_cast<unsigned long long>(counts.frames), pcap_geterr(pcap));
    status = 4;
  }
  pcap_close(pcap);
  std::fflush(stdout);
  for (const auto& [learned, frame] : ports.learned)
    std::fprintf(stderr, "uet-decode: UDP port %u read as UET from frame %llu on (learned: --port auto; --port N "
                 "decodes one port only)\n", learned, static_cast<unsigned long long>(frame));
  std::fprintf(mode == Mode::count ? stdout : stderr,
               "%llu frames: %llu uet, %llu malformed, %llu non-uet, %llu fragment\n",
               static_cast<unsigned long long>(counts.frames), static_cast<unsigned long long>(counts.uet),
               static_cast<unsigned long long>(counts.malformed), static_cast<unsigned long long>(counts.non_uet),
               static_cast<unsigned long long>(counts.fragment));
  if (status == 0 && strict && counts.malformed) status = 1;
  return status;
}
