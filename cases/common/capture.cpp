#include "capture.hpp"

#include <pcap/pcap.h>
#include <poll.h>

#include <chrono>
#include <cstdio>
#include <memory>

#include "peer.hpp"
#include "uet/codec/decoded.hpp"

namespace uet::cases {

std::optional<uint64_t> WireFrame::get(wire::Field f) const {
  for (const auto& [field, value] : fields)
    if (field == f) return value;
  return std::nullopt;
}

bool is_request(const WireFrame& f) { return f.get(wire::Field::uet_ses_opcode).has_value(); }

Capture::~Capture() {
  if (pcap_) pcap_close(pcap_);
}

bool Capture::start(Toward toward) {
  const auto cfg = manifest_map("wire");
  const char* port_key = toward == Toward::target ? "udp_port" : "initiator_udp_port";
  if (!cfg.count("interface") || !cfg.count(port_key))
    return error_ = std::string("the manifest names no wire capture (wire: interface, ") + port_key + ")", false;
  udp_port_ = static_cast<uint16_t>(std::stoul(cfg.at(port_key)));
  char err[PCAP_ERRBUF_SIZE] = {};
  pcap_ = pcap_create(cfg.at("interface").c_str(), err);
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
  const std::string filter = "udp port " + std::to_string(udp_port_);
  if (pcap_compile(pcap_, &prog, filter.c_str(), 1, PCAP_NETMASK_UNKNOWN) != 0 || pcap_setfilter(pcap_, &prog) != 0)
    return error_ = "pcap filter '" + filter + "': " + pcap_geterr(pcap_), false;
  pcap_freecode(&prog);
  if (pcap_setnonblock(pcap_, 1, err) != 0) return error_ = std::string("pcap_setnonblock: ") + err, false;
  linktype_ = pcap_datalink(pcap_);
  if (!codec::root_for_linktype(linktype_)) return error_ = "link type " + std::to_string(linktype_) + " is not decoded", false;
  return true;
}

void Capture::drain() {
  const auto root = *codec::root_for_linktype(linktype_);
  codec::DecodeOptions opts;
  opts.udp_port = udp_port_;
  auto decoded = std::make_unique<codec::Decoded>();
  pcap_pkthdr* hdr = nullptr;
  const u_char* data = nullptr;
  while (pcap_next_ex(pcap_, &hdr, &data) == 1) {
    codec::decode(data, hdr->caplen, hdr->len, root, opts, *decoded);
    if (!decoded->reached_uet) continue;
    WireFrame f;
    for (size_t i = 0; i < decoded->n_emitted; ++i) {
      const wire::Field field = decoded->emitted[i].field;
      f.fields.emplace_back(field, decoded->values[static_cast<size_t>(field)]);
    }
    seen_.push_back(std::move(f));
  }
  // A check that misses a frame the kernel dropped would blame the provider: say so where it shows.
  pcap_stat st{};
  if (pcap_stats(pcap_, &st) == 0 && st.ps_drop > dropped_) {
    dropped_ = st.ps_drop;
    fprintf(stderr, "capture on udp port %u dropped %u frames so far: a missing frame may not be the provider's\n",
            udp_port_, dropped_);
  }
}

std::optional<WireFrame> Capture::find(const std::function<bool(const WireFrame&)>& want, int timeout_ms) {
  if (!pcap_) return std::nullopt;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    drain();
    for (; searched_ < seen_.size(); ++searched_)
      if (want(seen_[searched_])) return seen_[searched_++];
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) return std::nullopt;
    pollfd pfd{pcap_get_selectable_fd(pcap_), POLLIN, 0};
    ::poll(&pfd, 1, static_cast<int>(std::min<long>(left, 50)));
  }
}

}  // namespace uet::cases
