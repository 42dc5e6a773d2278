// fi_getinfo's `service` (spec 2.2.5.2.2, digest C.6): a resource-index number, or a service name from the
// UET_PROVIDER_SERVICE_PATH file (spec 2.2.3). Predefined names (Table 2-12) are MISSING: softuet knows
// none (spec/wire.yaml choice predefined-service-names), so a name must come from the file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace softuet {

// The resource indices a service names: start .. start + count - 1.
struct ServiceRange {
  uint16_t start = 0;
  uint16_t count = 0;
};

// The range `service` names; nullopt with *error (naming the bad value, or `path:line: reason` for a bad
// service file line) when it names none. `file` is UET_PROVIDER_SERVICE_PATH (empty: unset).
std::optional<ServiceRange> resolve_service(const std::string& service, const std::string& file, std::string* error);

}  // namespace softuet
