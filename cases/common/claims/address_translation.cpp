#include "address_translation.hpp"

namespace uet::cases {

void note_address_translated(const Manifest& initiator, const Manifest& target) {
  // One note in the initiator's process, whichever side encodes: a target process's notes reach no verdict.
  note("address translated", "the two providers lay out fi_getname differently (" + initiator.name + ": " +
                                 layout_of(initiator).basis() + "; " + target.name + ": " + layout_of(target).basis() +
                                 "): the suite carries each address as fields and the side that inserts it encodes "
                                 "it in its own layout");
}

bool same_address_layout(const Manifest& a, const Manifest& b) { return a.address_layout.same_as(b.address_layout); }

AddressFields address_fields(const std::vector<uint8_t>& blob, const Manifest& owner) {
  AddressFields f = owner.address_layout.read(blob);
  if (!f.values.count(AddrField::udp_port) && owner.wire.udp_port.number) f.values[AddrField::udp_port] = owner.wire.udp_port.number;
  return f;
}

std::optional<std::vector<uint8_t>> encode_address(const AddressFields& fields, const Manifest& user,
                                                   std::vector<uint8_t> template_blob, std::string* why) {
  const AddressLayout& layout = layout_of(user);
  if (!layout.write(template_blob, fields, why)) return std::nullopt;
  return template_blob;
}

std::optional<std::vector<uint8_t>> address_for(const std::vector<uint8_t>& blob, const Manifest& owner,
                                                const Manifest& user, const std::vector<uint8_t>& user_template,
                                                std::string* why) {
  if (same_address_layout(owner, user)) return blob;
  note_address_translated(manifest(), target_manifest());
  return encode_address(address_fields(blob, owner), user, user_template, why);
}

}  // namespace uet::cases
