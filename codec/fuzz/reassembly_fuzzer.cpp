// libFuzzer target: any sequence of frames, fed through the Reassembler as uet-decode feeds a capture,
// must neither crash nor read out of bounds, and the frames it reassembles must decode as well.
// The input is frames one after the other, each as a length byte and that many bytes; byte 0 picks
// the link type. Few datagrams may be held, so the limit is exercised too.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "uet/codec/decoded.hpp"
#include "uet/codec/reassembly.hpp"
#include "uet/codec/record.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static const int kLinks[] = {1, 101, 228, 229, 113, 276};
  const auto root = *uet::codec::root_for_linktype(kLinks[data[0] % 6]);
  uet::codec::Reassembler reassembler(4);
  uet::codec::DecodeOptions options;
  uet::codec::Decoded frame_decode, datagram_decode;
  uet::codec::RecordWriter w;
  uint64_t number = 0;
  for (size_t at = 1; at < size;) {
    const size_t len = std::min<size_t>(data[at], size - at - 1);
    std::vector<uint8_t> frame(data + at + 1, data + at + 1 + len);  // exact size: ASan sees any overread
    at += 1 + len;
    const auto n = static_cast<uint32_t>(frame.size());
    uet::codec::decode(frame.data(), n, n, root, options, frame_decode);
    if (const uet::codec::Reassembled* whole = reassembler.add(++number, frame_decode)) {
      const auto m = static_cast<uint32_t>(whole->frame.size());
      uet::codec::decode(whole->frame.data(), m, m, root, options, datagram_decode);
      w.write(datagram_decode, {number, 0, 0, false, whole->from});
    } else {
      w.write(frame_decode, {number, 0, 0, false});
    }
    w.clear();
  }
  return 0;
}
