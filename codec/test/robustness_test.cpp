// No input crashes the decoder or makes it read outside the frame (run under ASan/UBSan in CI):
// random bytes under every link type, and every valid frame with random bytes flipped.
#include <gtest/gtest.h>

#include <memory>

#include "graph_paths.hpp"

namespace uet::codec::test {
namespace {

void check_invariants(const Decoded& d) {
  ASSERT_LE(d.n_emitted, Decoded::kMaxEmitted);
  ASSERT_LE(d.payload_offset + d.payload_len, d.caplen);
  for (unsigned i = 0; i < d.n_emitted; ++i) {
    const wire::FieldInfo& info = wire::field_info(d.emitted[i].field);
    if (info.nbytes) {
      ASSERT_LE(d.values[static_cast<size_t>(d.emitted[i].field)] + info.nbytes, d.caplen) << info.name;
    }
  }
}

// A heap copy of exactly `n` bytes, so that AddressSanitizer sees any read past the frame.
void decode_exact(const uint8_t* bytes, size_t n, uint32_t len, wire::Node root, Decoded& d) {
  std::unique_ptr<uint8_t[]> copy(new uint8_t[n ? n : 1]);
  std::copy(bytes, bytes + n, copy.get());
  decode(copy.get(), static_cast<uint32_t>(n), len, root, DecodeOptions{}, d);
  check_invariants(d);
}

TEST(Robustness, RandomBytesUnderEveryLinkType) {
  std::mt19937_64 rng(2024);
  Decoded d;
  for (int linktype : {1, 101, 228, 229, 113, 276}) {
    const wire::Node root = *root_for_linktype(linktype);
    for (int i = 0; i < 20000; ++i) {
      std::vector<uint8_t> b(rng() % 160);
      for (auto& x : b) x = static_cast<uint8_t>(rng());
      decode_exact(b.data(), b.size(), static_cast<uint32_t>(b.size() + rng() % 2), root, d);
    }
  }
}

TEST(Robustness, MutatedFramesOfEveryUetPath) {
  std::mt19937_64 rng(99);
  Decoded d;
  size_t decoded = 0;
  for (const GraphPath& path : uet_paths_over_ethernet()) {
    const BuiltFrame built = build_frame(path, rng, rng() % 40);
    for (int i = 0; i < 300; ++i) {
      std::vector<uint8_t> b = built.bytes;
      for (int flips = 1 + static_cast<int>(rng() % 4); flips; --flips) b[14 + rng() % (b.size() - 14)] ^= static_cast<uint8_t>(1 + rng() % 255);
      const size_t cut = rng() % 3 ? b.size() : rng() % b.size();
      decode_exact(b.data(), cut, static_cast<uint32_t>(b.size()), wire::Node::eth, d);
      ++decoded;
    }
  }
  RecordProperty("frames", static_cast<int>(decoded));
}

}  // namespace
}  // namespace uet::codec::test
