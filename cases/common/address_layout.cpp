#include "address_layout.hpp"

#include <bit>
#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace uet::cases {
namespace {

const std::map<std::string, AddrField>& field_names() {
  static const std::map<std::string, AddrField> names = {
      {"version", AddrField::version},         {"flags", AddrField::flags},
      {"caps", AddrField::caps},               {"fa", AddrField::fa},
      {"pid_on_fep", AddrField::pid_on_fep},   {"start_index", AddrField::start_index},
      {"num_indices", AddrField::num_indices}, {"initiator_id", AddrField::initiator_id},
      {"udp_port", AddrField::udp_port}};
  return names;
}

bool little_endian(AddressLayout::Order o) {
  return o == AddressLayout::Order::little || (o == AddressLayout::Order::host && std::endian::native == std::endian::little);
}

}  // namespace

const char* addr_field_name(AddrField f) {
  for (const auto& [name, field] : field_names())
    if (field == f) return name.c_str();
  return "?";
}

std::optional<uint64_t> AddressLayout::get(const uint8_t* blob, size_t len, AddrField f) const {
  const auto it = fields.find(f);
  if (it == fields.end() || !blob || it->second.width > 8 || it->second.offset + it->second.width > len) return std::nullopt;
  const Place& p = it->second;
  const size_t n = p.width;
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint8_t byte = blob[p.offset + (little_endian(p.order) ? n - 1 - i : i)];
    v = v << 8 | byte;
  }
  return v;
}

bool AddressLayout::set(std::vector<uint8_t>& blob, AddrField f, uint64_t value) const {
  const auto it = fields.find(f);
  if (it == fields.end() || it->second.width > 8 || it->second.offset + it->second.width > blob.size()) return false;
  const Place& p = it->second;
  for (size_t i = 0; i < p.width; ++i) {
    const uint8_t byte = static_cast<uint8_t>(value >> (8 * i));
    blob[p.offset + (little_endian(p.order) ? i : p.width - 1 - i)] = byte;
  }
  return true;
}

std::optional<std::array<uint8_t, 16>> AddressLayout::fa(const uint8_t* blob, size_t len) const {
  const auto it = fields.find(AddrField::fa);
  if (it == fields.end() || !blob || it->second.width != 16 || it->second.offset + 16 > len) return std::nullopt;
  std::array<uint8_t, 16> out{};
  std::memcpy(out.data(), blob + it->second.offset, 16);
  return out;
}

std::string AddressLayout::misfit(size_t len) const {
  if (len >= size) return "";
  return std::to_string(len) + " bytes, where " + basis() + " has " + std::to_string(size);
}

std::string AddressLayout::basis() const {
  if (declared_by == "manifest") return "the layout its manifest declares";
  return "layout " + name + (choice.empty() ? "" : " (choice " + choice + ")");
}

AddressLayout address_layout_from_json(const nlohmann::json& doc) {
  AddressLayout l;
  l.name = doc.at("name").get<std::string>();
  l.declared_by = doc.at("declared_by").get<std::string>();
  if (doc.contains("choice") && doc["choice"].is_string()) l.choice = doc["choice"].get<std::string>();
  l.size = doc.at("size").get<size_t>();
  for (const auto& [name, place] : doc.at("fields").items()) {
    const auto known = field_names().find(name);
    if (known == field_names().end()) throw std::invalid_argument("address_layout: unknown field " + name);
    AddressLayout::Place p;
    p.offset = place.at("offset").get<size_t>();
    p.width = place.at("width").get<size_t>();
    const std::string order = place.value("order", "host");
    p.order = order == "big" ? AddressLayout::Order::big : order == "little" ? AddressLayout::Order::little
                                                                              : AddressLayout::Order::host;
    l.fields[known->second] = p;
  }
  return l;
}

}  // namespace uet::cases
