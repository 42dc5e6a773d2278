// Whether one side's addresses can cross to the other in a pair. An address that Table 2-10's version 0 does
// not describe (another version, or its FA-valid flag clear: digest C.2, C.3) is refused by a provider that
// follows the spec (Av.AddressesOfAnotherFormatAreRefused); its owner answers for it in its own cell
// (Discovery.GetnameReturnsTheCompleteUetAddress). In a pair, the cases that need it to cross are then not
// applicable, once decided for the binary's later cases too, rather than failures of the side that refused;
// a provider that refuses its own (a cell of one manifest) fails.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "conformance.hpp"

namespace uet::cases {

// Why `blob`, an address of `owner`'s provider read through its layout, is not a Table 2-10 version-0
// address with a valid FA; empty when it is (or its layout places neither version nor flags).
std::string not_a_version0_address(const Manifest& owner, const std::vector<uint8_t>& blob);

// Remembers for this binary's later cases that `owner`'s addresses do not cross to the other side, and why.
void remember_uncrossable(Side owner, const std::string& why);
// Why `owner`'s addresses do not cross, or empty while nothing says so.
const std::string& uncrossable(Side owner);
// The reason of the not-applicable verdict: "<owner>'s addresses cannot be expressed in <user>'s layout or
// version: <why>".
std::string uncrossable_reason(const Manifest& owner, const Manifest& user, const std::string& why);
// After `user`'s fi_av_insert refused `blob`, an address of `owner_side`'s provider (`owner`): remembers that
// its addresses do not cross when Table 2-10's version 0 does not describe it; else the refusal is the user's.
void judge_refused_address(Side owner_side, const Manifest& owner, const std::vector<uint8_t>& blob, const Manifest& user);

}  // namespace uet::cases

// Not applicable when an earlier case of the binary found that `owner`'s addresses do not cross the pair.
#define UET_REQUIRE_ADDRESSES_CROSS(owner)                                          \
  if (!::uet::cases::uncrossable(owner).empty())                                    \
  UET_NOT_APPLICABLE(::uet::cases::reason::kAddressNotExpressible, ::uet::cases::uncrossable(owner))

namespace uet::cases {
// UET_REQUIRE_ADDRESSES_CROSS for a function that returns a value: the caller returns when IsSkipped().
inline void skip_if_uncrossable(Side owner) { UET_REQUIRE_ADDRESSES_CROSS(owner); }
}  // namespace uet::cases
