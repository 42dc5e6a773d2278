// The C++ types of the resolved side's values that the cases take as more than JSON, with the reader and
// writer the generated loader (resolved_side_gen.hpp) calls for each: a key of $defs/resolved in
// cases/manifests/manifest.schema.yaml with x-cpp {type: T, json: NAME} is read by NAME_from_json and
// written by NAME_to_json.
#pragma once

#include <rdma/fabric.h>

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "address_layout.hpp"
#include "uet/wire/wire_gen.hpp"

namespace uet::cases {

// A record the reader refuses, in words of its own (not nlohmann's).
struct BadRecord : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Environment values that are unset are nullopt.
using Env = std::map<std::string, std::optional<std::string>>;
Env env_from_json(const nlohmann::json& j);
nlohmann::json env_to_json(const Env& env);

// A side's UET port: a number, or automatic (the provider binds one of its own choosing; number 0).
struct UdpPort {
  uint16_t number = 0;
  bool automatic = false;
};
UdpPort udp_port_from_json(const nlohmann::json& j);
nlohmann::json udp_port_to_json(const UdpPort& port);

std::vector<fi_ep_type> endpoint_types_from_json(const nlohmann::json& j);
nlohmann::json endpoint_types_to_json(const std::vector<fi_ep_type>& types);

wire::SpecVersion spec_version_from_json(const nlohmann::json& j);
nlohmann::json spec_version_to_json(wire::SpecVersion version);

// address_layout_from_json is address_layout.hpp's; this writes what it keeps.
nlohmann::json address_layout_to_json(const AddressLayout& layout);

// A value no case reads yet, kept whole as its JSON text.
std::string json_text_from_json(const nlohmann::json& j);
nlohmann::json json_text_to_json(const std::string& text);

}  // namespace uet::cases
