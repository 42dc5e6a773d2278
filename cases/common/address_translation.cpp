#include "address_translation.hpp"

namespace uet::cases {

bool same_address_layout(const Manifest& a, const Manifest& b) { return a.address_layout.same_as(b.address_layout); }

AddressFields address_fields(const std::vector<uint8_t>& blob, const Manifest& owner) {
  AddressFields f = owner.address_layout.read(blob);
  if (!f.values.count(AddrField::udp_port) && owner.wire_udp_port) f.values[AddrField::udp_port] = owner.wire_udp_port;
  return f;
}

std::optional<std::vector<uint8_t>> encode_address(const AddressFields& fields, const Manifest& user,
                                                   std::vector<uint8_t> template_blob, std::string* why) {
  const AddressLayout& layout = layout_of(user);
  if (!layout.write(template_blob, fields, why)) return std::nullopt;
  note("address translated", "the two providers lay out fi_getname differently: the suite carried the address as "
                             "fields and encoded it in " + user.name + "'s " + layout.basis());
  return template_blob;
}

std::optional<std::vector<uint8_t>> address_for(const std::vector<uint8_t>& blob, const Manifest& owner,
                                                const Manifest& user, const std::vector<uint8_t>& user_template,
                                                std::string* why) {
  if (same_address_layout(owner, user)) return blob;
  return encode_address(address_fields(blob, owner), user, user_template, why);
}

}  // namespace uet::cases
