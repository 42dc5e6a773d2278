#include "resolved_side_types.hpp"

#include <nlohmann/json.hpp>

namespace uet::cases {

Env env_from_json(const nlohmann::json& j) {
  Env out;
  if (j.is_object())
    for (const auto& [k, v] : j.items()) out[k] = v.is_null() ? std::nullopt : std::optional<std::string>(v.get<std::string>());
  return out;
}

nlohmann::json env_to_json(const Env& env) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : env) j[k] = v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  return j;
}

UdpPort udp_port_from_json(const nlohmann::json& j) {
  if (j.is_string() && j.get<std::string>() == "auto") return {0, true};
  return {j.get<uint16_t>(), false};
}

nlohmann::json udp_port_to_json(const UdpPort& port) {
  return port.automatic ? nlohmann::json("auto") : nlohmann::json(port.number);
}

std::vector<fi_ep_type> endpoint_types_from_json(const nlohmann::json& j) {
  std::vector<fi_ep_type> out;
  for (const auto& e : j) {
    const std::string name = e.get<std::string>();
    if (name != "rdm" && name != "dgram") throw BadRecord("endpoint_types: '" + name + "' is not rdm or dgram");
    out.push_back(name == "rdm" ? FI_EP_RDM : FI_EP_DGRAM);
  }
  return out;
}

nlohmann::json endpoint_types_to_json(const std::vector<fi_ep_type>& types) {
  nlohmann::json j = nlohmann::json::array();
  for (fi_ep_type t : types) j.push_back(t == FI_EP_RDM ? "rdm" : "dgram");
  return j;
}

wire::SpecVersion spec_version_from_json(const nlohmann::json& j) {
  const std::string v = j.get<std::string>();
  const auto version = wire::spec_version_by_name(v.c_str());
  if (!version) throw BadRecord("checked_spec_version: '" + v + "' is not a spec version of spec/wire.yaml");
  return *version;
}

nlohmann::json spec_version_to_json(wire::SpecVersion version) { return wire::spec_version_name(version); }

nlohmann::json address_layout_to_json(const AddressLayout& layout) {
  nlohmann::json fields = nlohmann::json::object(), places = nlohmann::json::array();
  for (const auto& [f, p] : layout.fields) {
    const char* order = p.order == AddressLayout::Order::big ? "big" : p.order == AddressLayout::Order::little ? "little" : "host";
    fields[addr_field_name(f)] = {{"offset", p.offset}, {"width", p.width}, {"order", order}};
  }
  if (layout.choice_size) places.push_back("size");
  for (AddrField f : layout.choice_fields) places.push_back(addr_field_name(f));
  return {{"name", layout.name}, {"declared_by", layout.declared_by},
          {"choice", layout.choice.empty() ? nlohmann::json(nullptr) : nlohmann::json(layout.choice)},
          {"size", layout.size}, {"fields", fields}, {"choice_places", places}};
}

std::string json_text_from_json(const nlohmann::json& j) { return j.dump(); }

nlohmann::json json_text_to_json(const std::string& text) { return nlohmann::json::parse(text); }

}  // namespace uet::cases
