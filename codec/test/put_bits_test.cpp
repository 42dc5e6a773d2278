// put_bits writes a field in place by whole words; a bit-at-a-time writer is the reference it must match
// for every offset and width, without touching the bits around the field.
#include <gtest/gtest.h>

#include <array>
#include <random>

#include "uet/codec/encoder.hpp"

namespace uet::codec::test {
namespace {

void reference_put(uint8_t* buf, size_t at, unsigned bit, unsigned bits, uint64_t value) {
  for (unsigned i = 0; i < bits; ++i) {
    const unsigned pos = bit + i;  // from the MSB of buf[at]
    const uint8_t mask = static_cast<uint8_t>(0x80u >> (pos % 8));
    const bool on = (value >> (bits - 1 - i)) & 1u;
    buf[at + pos / 8] = on ? (buf[at + pos / 8] | mask) : (buf[at + pos / 8] & ~mask);
  }
}

TEST(PutBits, MatchesABitAtATimeWriterForEveryOffsetAndWidth) {
  std::mt19937_64 rng(4793);
  for (unsigned bit = 0; bit < 16; ++bit) {
    for (unsigned bits = 1; bits <= 64; ++bits) {
      for (int trial = 0; trial < 8; ++trial) {
        std::array<uint8_t, 16> want{}, got{};
        for (auto& b : want) b = static_cast<uint8_t>(rng());
        got = want;
        const uint64_t value = rng();  // wider than the field: the extra high bits must be ignored
        reference_put(want.data(), 2, bit, bits, value);
        put_bits(got.data(), 2, bit, bits, value);
        ASSERT_EQ(want, got) << "bit " << bit << " bits " << bits << " value " << value;
      }
    }
  }
}

}  // namespace
}  // namespace uet::codec::test
