// libFuzzer target: any bytes, under any link type the decoder knows, must decode without a crash or
// an out-of-bounds read, and so must the segments of a UDP GSO run found in them. Built in the fuzz tree
// (UET_FUZZ=ON: clang, -fsanitize=fuzzer,address,undefined).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "uet/codec/decoded.hpp"
#include "uet/codec/gso.hpp"
#include "uet/codec/record.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  static const int kLinks[] = {1, 101, 228, 229, 113, 276};
  const int linktype = kLinks[data[0] % 6];
  const bool cut = data[1] & 1;  // pretend the capture cut the frame
  std::vector<uint8_t> frame(data + 2, data + size);  // exact size: ASan sees any overread
  uet::codec::Decoded d;
  uet::codec::DecodeOptions options;
  uet::codec::decode(frame.data(), static_cast<uint32_t>(frame.size()), static_cast<uint32_t>(frame.size() + cut),
                     *uet::codec::root_for_linktype(linktype), options, d);
  uet::codec::Decoded scratch;
  const std::optional<uet::codec::GsoRun> gso = uet::codec::take_gso_run(d, options, scratch);
  uet::codec::FrameMeta meta{1, 0, 0, false};
  if (gso) meta.gso = &*gso;
  uet::codec::RecordWriter w;
  w.write(d, meta);
  (void)uet::codec::summary_line(d, meta);
  return 0;
}
