#include "address_crossing.hpp"

#include "uet/wire/wire_gen.hpp"

namespace uet::cases {

namespace w = uet::wire;

std::string not_a_version0_address(const Manifest& owner, const std::vector<uint8_t>& blob) {
  const AddressLayout& layout = layout_of(owner);
  std::string why;
  const auto version = layout.get(blob, AddrField::version);
  if (version && *version != w::k_addr_version)
    why = "its fi_getname gives address version " + std::to_string(*version) + " (Table 2-10's fields are version " +
          std::to_string(w::k_addr_version) + ")";
  const auto flags = layout.get(blob, AddrField::flags);
  if (flags && !(*flags >> w::k_addr_flag_fa_valid & 1))
    why += (why.empty() ? "its fi_getname gives " : ", ") + std::string("the FA-valid flag (bit ") +
           std::to_string(w::k_addr_flag_fa_valid) + ") clear in flags " + std::to_string(*flags);
  return why;
}

namespace {
std::string& memo(Side owner) {
  static std::string initiator, target;
  return owner == Side::initiator ? initiator : target;
}
}  // namespace

void remember_uncrossable(Side owner, const std::string& why) {
  if (memo(owner).empty()) memo(owner) = why;
}

const std::string& uncrossable(Side owner) { return memo(owner); }

std::string uncrossable_reason(const Manifest& owner, const Manifest& user, const std::string& why) {
  return owner.name + "'s addresses cannot be expressed in " + user.name + "'s layout or version: " + why;
}

void judge_refused_address(Side owner_side, const Manifest& owner, const std::vector<uint8_t>& blob, const Manifest& user) {
  // A provider that refuses its own addresses (a cell of one manifest) fails: nothing but itself is at fault.
  if (owner.name == user.name) return;
  if (const std::string why = not_a_version0_address(owner, blob); !why.empty())
    remember_uncrossable(owner_side, uncrossable_reason(owner, user, why + ", which " + user.name + "'s fi_av_insert refused"));
}

}  // namespace uet::cases
