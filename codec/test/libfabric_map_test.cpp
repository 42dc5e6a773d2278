// uet/wire/libfabric_gen.hpp (spec/wire.yaml `libfabric:`): libfabric names against UET wire values.
// The expected wire values are the digest's numbers (F.3), written out here rather than taken from
// wire_gen.hpp, so a wrong pair in the YAML fails even if it names a real enum value.
#include <gtest/gtest.h>

#include <cstring>
#include <utility>

#include "uet/wire/libfabric_gen.hpp"

namespace uet::wire::libfabric {
namespace {

// The lookups are constexpr: a provider can use them in static tables.
static_assert(amo_opcode_of(FI_SUM) == 0x02);
static_assert(fi_errno_of_ses_rc(ses_return_code::RC_BAD_MKEY) == FI_EKEYREJECTED);

constexpr std::pair<enum fi_op, uint8_t> kOps[] = {
    {FI_MIN, 0x00}, {FI_MAX, 0x01}, {FI_SUM, 0x02}, {FI_DIFF, 0x03}, {FI_PROD, 0x04}, {FI_LOR, 0x05},
    {FI_LAND, 0x06}, {FI_BOR, 0x07}, {FI_BAND, 0x08}, {FI_LXOR, 0x09}, {FI_BXOR, 0x0A},
    {FI_ATOMIC_READ, 0x0B}, {FI_ATOMIC_WRITE, 0x0C}, {FI_CSWAP, 0x0D}, {FI_CSWAP_NE, 0x0E},
    {FI_CSWAP_LE, 0x0F}, {FI_CSWAP_LT, 0x10}, {FI_CSWAP_GE, 0x11}, {FI_CSWAP_GT, 0x12}, {FI_MSWAP, 0x13}};

constexpr std::pair<enum fi_datatype, uint8_t> kTypes[] = {
    {FI_INT8, 0x00}, {FI_UINT8, 0x01}, {FI_INT16, 0x02}, {FI_UINT16, 0x03}, {FI_INT32, 0x04},
    {FI_UINT32, 0x05}, {FI_INT64, 0x06}, {FI_UINT64, 0x07}, {FI_INT128, 0x08}, {FI_UINT128, 0x09},
    {FI_FLOAT, 0x0A}, {FI_DOUBLE, 0x0B}, {FI_FLOAT_COMPLEX, 0x0C}, {FI_DOUBLE_COMPLEX, 0x0D},
    {FI_LONG_DOUBLE, 0x0E}, {FI_LONG_DOUBLE_COMPLEX, 0x0F}, {FI_BFLOAT16, 0x10}, {FI_FLOAT16, 0x11}};

TEST(LibfabricMap, EveryFiOpMapsToItsOpcodeAndBack) {
  for (const auto& [op, wire] : kOps) {
    SCOPED_TRACE(static_cast<int>(op));
    ASSERT_EQ(amo_opcode_of(op), wire);
    EXPECT_EQ(fi_op_of(wire), op);
  }
}

TEST(LibfabricMap, OpcodesWithoutAFiOpAreNullopt) {
  EXPECT_EQ(fi_op_of(amo_opcode::INVAL), std::nullopt);  // invalidate: no libfabric op
  EXPECT_EQ(fi_op_of(0x15), std::nullopt);               // reserved
  EXPECT_EQ(fi_op_of(0xE0), std::nullopt);               // vendor
  EXPECT_EQ(amo_opcode_of(FI_NOOP), std::nullopt);       // collective-only op
}

TEST(LibfabricMap, EveryFiDatatypeMapsToItsDatatypeAndBack) {
  for (const auto& [dt, wire] : kTypes) {
    SCOPED_TRACE(static_cast<int>(dt));
    ASSERT_EQ(amo_datatype_of(dt), wire);
    EXPECT_EQ(fi_datatype_of(wire), dt);
  }
}

TEST(LibfabricMap, Float8AndCollectiveDatatypesHaveNoUetDatatype) {
  EXPECT_EQ(amo_datatype_of(FI_FLOAT8_E4M3), std::nullopt);
  EXPECT_EQ(amo_datatype_of(FI_FLOAT8_E5M2), std::nullopt);
  EXPECT_EQ(amo_datatype_of(FI_VOID), std::nullopt);
  EXPECT_EQ(fi_datatype_of(0x12), std::nullopt);  // reserved
  EXPECT_EQ(fi_datatype_of(0xE0), std::nullopt);  // vendor
}

TEST(LibfabricMap, SesReturnCodesGiveTheChosenErrnoElseFiEio) {
  EXPECT_EQ(fi_errno_of_ses_rc(ses_return_code::RC_BAD_MKEY), FI_EKEYREJECTED);
  EXPECT_EQ(fi_errno_of_ses_rc(ses_return_code::RC_CANCELLED), FI_ECANCELED);
  EXPECT_EQ(fi_errno_of_ses_rc(ses_return_code::RC_NO_MATCH), FI_ENOMSG);
  EXPECT_EQ(fi_errno_of_ses_rc(ses_return_code::RC_UNDELIVERABLE), FI_EIO);  // listed code, not in the map
  EXPECT_EQ(fi_errno_of_ses_rc(ses_return_code::RC_DROPPED), FI_EIO);
  EXPECT_EQ(fi_errno_of_ses_rc(0x30), FI_EIO);  // vendor
  EXPECT_EQ(fi_errno_of_ses_rc(0x40), FI_EIO);  // beyond the 6-bit field
  EXPECT_EQ(kSesRcErrnoDefault, FI_EIO);
  for (uint64_t rc = 0; rc < 64; ++rc) EXPECT_GT(fi_errno_of_ses_rc(rc), 0) << rc;  // err is positive
}

TEST(LibfabricMap, ErrnoMapNamesAChoiceOfTheGeneratedTable) {
  EXPECT_STREQ(ses_rc_errno_choice(), "ses-rc-fi-errno");
  EXPECT_STREQ(choice_info(Choice::ses_rc_fi_errno).id, ses_rc_errno_choice());
}

}  // namespace
}  // namespace uet::wire::libfabric
