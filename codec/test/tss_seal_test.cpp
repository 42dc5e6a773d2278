// TSS sealing (uet/tss/seal.hpp): the header the codec decodes, and an ICV that fails for any change of
// key, addresses, header or ciphertext.
#include <gtest/gtest.h>

#include "uet/codec/decoded.hpp"
#include "uet/tss/seal.hpp"
#include "uet/wire/wire_gen.hpp"

namespace {

namespace w = uet::wire;

const std::vector<uint8_t> kKey(w::k_tss_key_bytes, 0x42);
const std::vector<uint8_t> kSrc{198, 18, 0, 1}, kDst{198, 18, 0, 2};
const std::vector<uint8_t> kPacket{0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70};

TEST(TssSeal, TheHeaderIsTheCodecsTssHeader) {
  const auto frame = uet::tss::seal({0xABCDEF, 3, 77, std::nullopt}, kKey, {kSrc, kDst}, kPacket);
  ASSERT_EQ(frame.size(), 12 + kPacket.size() + w::k_tss_icv_bytes);
  uet::codec::Decoded d;
  const auto n = static_cast<uint32_t>(frame.size());
  uet::codec::decode(frame.data(), n, n, w::Node::uet, {}, d);
  EXPECT_EQ(d.get(w::Field::uet_tss_type), w::pds_type::UET_TSS);
  EXPECT_EQ(d.get(w::Field::uet_tss_sdi), 0xABCDEFu);
  EXPECT_EQ(d.get(w::Field::uet_tss_epoch), 3u);
  EXPECT_EQ(d.get(w::Field::uet_tss_an), 1u);  // the epoch's low bit
  EXPECT_EQ(d.get(w::Field::uet_tss_tsc), 77u);
  EXPECT_EQ(d.get(w::Field::uet_tss_sp), 0u);
}

TEST(TssSeal, OpensUnderItsKeyToThePacket) {
  const auto frame = uet::tss::seal({5, 1, 1, std::nullopt}, kKey, {kSrc, kDst}, kPacket);
  uet::tss::Header h;
  const auto plain = uet::tss::open(frame, kKey, {kSrc, kDst}, &h);
  ASSERT_TRUE(plain);
  EXPECT_EQ(*plain, kPacket);
  EXPECT_EQ(h.sdi, 5u);
  EXPECT_EQ(h.tsc, 1u);
}

TEST(TssSeal, WithAnSsiTheHeaderIs16Bytes) {
  const std::vector<uint8_t> src6(16, 0x20), dst6(16, 0x21);
  const auto frame = uet::tss::seal({5, 1, 1, 0x11223344}, kKey, {src6, dst6}, kPacket);
  EXPECT_EQ(frame.size(), 16 + kPacket.size() + w::k_tss_icv_bytes);
  uet::tss::Header h;
  ASSERT_TRUE(uet::tss::open(frame, kKey, {src6, dst6}, &h));
  EXPECT_EQ(h.ssi, 0x11223344u);
}

TEST(TssSeal, AnyChangeFailsTheIcv) {
  const auto frame = uet::tss::seal({5, 1, 1, std::nullopt}, kKey, {kSrc, kDst}, kPacket);
  std::vector<uint8_t> other_key = kKey;
  other_key[0] ^= 1;
  std::string why;
  EXPECT_FALSE(uet::tss::open(frame, other_key, {kSrc, kDst}, nullptr, &why));
  EXPECT_NE(why.find("ICV"), std::string::npos) << why;
  EXPECT_FALSE(uet::tss::open(frame, kKey, {kDst, kSrc}, nullptr));  // the addresses are in the AAD
  for (size_t at : {size_t{3}, size_t{11}, size_t{12}, frame.size() - 1}) {
    auto changed = frame;
    changed[at] ^= 0x01;
    EXPECT_FALSE(uet::tss::open(changed, kKey, {kSrc, kDst}, nullptr)) << "byte " << at;
  }
}

TEST(TssSeal, WhatIsNotASealedFrameDoesNotOpen) {
  std::string why;
  EXPECT_FALSE(uet::tss::open(kPacket, kKey, {kSrc, kDst}, nullptr, &why));
  EXPECT_EQ(why, "no TSS header");
  const auto frame = uet::tss::seal({5, 1, 1, std::nullopt}, kKey, {kSrc, kDst}, kPacket);
  for (size_t n = 0; n < 12 + w::k_tss_icv_bytes; ++n)
    EXPECT_FALSE(uet::tss::open(std::span(frame).first(n), kKey, {kSrc, kDst}, nullptr)) << n << " bytes";
  EXPECT_FALSE(uet::tss::open(frame, std::vector<uint8_t>(16, 0x42), {kSrc, kDst}, nullptr));  // a short key
}

}  // namespace
