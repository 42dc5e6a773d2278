// Pairs of providers that lay out fi_getname differently (their manifests' address_layout): the suite carries
// an address between them as fields and each side encodes it in its own provider's layout before
// fi_av_insert. The address-format statements are still judged on each side's own blob; a case whose pair
// needed this says so (a note) and rests on both layouts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "address_layout.hpp"
#include "conformance.hpp"

namespace uet::cases {

// Notes on the case that the pair's addresses cross as fields (the address-format statements are still judged
// on each side's own bytes).
void note_address_translated(const Manifest& initiator, const Manifest& target);

// True when the two sides' providers lay out fi_getname alike: addresses pass between them as bytes.
bool same_address_layout(const Manifest& a, const Manifest& b);

// The fields of an address of `owner`'s provider, its UET port added from owner's manifest when its layout
// has none (a declared number; nothing with `auto`).
AddressFields address_fields(const std::vector<uint8_t>& blob, const Manifest& owner);

// `fields` encoded in `user`'s layout over `template_blob` (an address `user`'s provider gave: the bytes its
// layout does not place stay its own); nullopt with `why` when a field is missing or does not fit. Notes on
// the running case that the address was translated.
std::optional<std::vector<uint8_t>> encode_address(const AddressFields& fields, const Manifest& user,
                                                   std::vector<uint8_t> template_blob, std::string* why);

// An address of `owner`'s provider as `user`'s provider takes it: the same bytes when both lay out fi_getname
// alike, else its fields encoded in user's layout over `user_template` (nullopt with `why` as above).
std::optional<std::vector<uint8_t>> address_for(const std::vector<uint8_t>& blob, const Manifest& owner,
                                                const Manifest& user, const std::vector<uint8_t>& user_template,
                                                std::string* why);

}  // namespace uet::cases
