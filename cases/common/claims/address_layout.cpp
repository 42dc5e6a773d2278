#include "address_layout.hpp"

#include "conformance.hpp"

#include <algorithm>
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

void AddressLayout::reads(AddrField f) const {
  if (!choice.empty() && choice_fields.count(f)) rests_on_choice(choice);
}

std::optional<uint64_t> AddressLayout::get(const uint8_t* blob, size_t len, AddrField f) const {
  reads(f);
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
  reads(f);
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
  reads(AddrField::fa);
  const auto it = fields.find(AddrField::fa);
  if (it == fields.end() || !blob || (it->second.width != 16 && it->second.width != 4) ||
      it->second.offset + it->second.width > len)
    return std::nullopt;
  std::array<uint8_t, 16> out{};
  std::memcpy(out.data(), blob + it->second.offset, it->second.width);
  return out;
}

AddressFields AddressLayout::read(const std::vector<uint8_t>& blob) const {
  AddressFields out;
  for (const auto& [f, place] : fields) {
    if (f == AddrField::fa) {
      out.fa = fa(blob);
    } else if (const auto v = get(blob, f)) {
      out.values[f] = *v;
    }
  }
  return out;
}

bool AddressLayout::write(std::vector<uint8_t>& blob, const AddressFields& from, std::string* why) const {
  if (blob.size() < size) blob.resize(size, 0);
  for (const auto& [f, place] : fields) {
    if (f == AddrField::fa) {
      reads(AddrField::fa);
      if (!from.fa) return *why = "the address has no fabric address", false;
      if (place.width == 4 && std::any_of(from.fa->begin() + 4, from.fa->end(), [](uint8_t b) { return b != 0; }))
        return *why = "an IPv6 fabric address does not fit " + basis() + "'s 4-byte fa", false;
      std::memcpy(blob.data() + place.offset, from.fa->data(), place.width);
      continue;
    }
    const auto v = from.values.find(f);
    if (v == from.values.end()) return *why = std::string("the address has no ") + addr_field_name(f) + ", which " + basis() + " needs", false;
    if (place.width < 8 && v->second >> (8 * place.width))
      return *why = std::string(addr_field_name(f)) + " " + std::to_string(v->second) + " does not fit " +
                    std::to_string(place.width) + " bytes of " + basis(),
             false;
    set(blob, f, v->second);
  }
  return true;
}

bool AddressLayout::same_as(const AddressLayout& other) const {
  if (size != other.size || fields.size() != other.fields.size()) return false;
  for (const auto& [f, p] : fields) {
    const auto it = other.fields.find(f);
    if (it == other.fields.end() || it->second.offset != p.offset || it->second.width != p.width ||
        little_endian(it->second.order) != little_endian(p.order))
      return false;
  }
  return true;
}

nlohmann::json address_fields_json(const AddressFields& a) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [f, v] : a.values) j[addr_field_name(f)] = v;
  if (a.fa) {
    static const char* hex = "0123456789abcdef";
    std::string text;
    for (uint8_t b : *a.fa) text += {hex[b >> 4], hex[b & 15]};
    j["fa"] = text;
  }
  return j;
}

AddressFields address_fields_from_json(const nlohmann::json& j) {
  AddressFields a;
  for (const auto& [name, value] : j.items()) {
    const auto known = field_names().find(name);
    if (known == field_names().end()) throw std::invalid_argument("address fields: unknown field " + name);
    if (known->second != AddrField::fa) {
      a.values[known->second] = value.get<uint64_t>();
      continue;
    }
    const std::string text = value.get<std::string>();
    if (text.size() != 32) throw std::invalid_argument("address fields: fa is not 16 bytes of hex");
    std::array<uint8_t, 16> fa{};
    for (size_t i = 0; i < 16; ++i) fa[i] = static_cast<uint8_t>(std::stoul(text.substr(2 * i, 2), nullptr, 16));
    a.fa = fa;
  }
  return a;
}

std::string AddressLayout::misfit(size_t len) const {
  if (len >= size) return "";
  if (choice_size && !choice.empty()) rests_on_choice(choice);  // too short for the size the choice gives
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
  // A record without choice_places (written before they were told apart): every place is the choice's.
  l.choice_size = !l.choice.empty();
  for (const auto& [f, place] : l.fields) l.choice_fields.insert(f);
  if (doc.contains("choice_places")) {
    l.choice_size = false;
    l.choice_fields.clear();
    for (const auto& name : doc["choice_places"]) {
      const std::string text = name.get<std::string>();
      if (text == "size") {
        l.choice_size = true;
      } else if (const auto known = field_names().find(text); known != field_names().end()) {
        l.choice_fields.insert(known->second);
      } else {
        throw std::invalid_argument("address_layout: choice_places: unknown place " + text);
      }
    }
  }
  return l;
}

}  // namespace uet::cases
