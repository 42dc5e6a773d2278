// The fault knobs of fep/src/faults.def as an enum, and the check the data path makes.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace softuet {

enum class Fault : uint8_t {
#define SOFTUET_FAULT(name, statement, rule, ...) name,
#include "faults.def"
#undef SOFTUET_FAULT
  count_
};

struct FaultInfo {
  std::string_view name;
  std::string_view statement;
  std::string_view rule;
};
inline constexpr FaultInfo kFaults[] = {
#define SOFTUET_FAULT(name, statement, rule, ...) {#name, statement, rule},
#include "faults.def"
#undef SOFTUET_FAULT
};
static_assert(static_cast<size_t>(Fault::count_) <= 64, "fault knobs are kept in one 64-bit set");

inline std::optional<Fault> fault_by_name(std::string_view name) {
  for (size_t i = 0; i < static_cast<size_t>(Fault::count_); ++i)
    if (kFaults[i].name == name) return static_cast<Fault>(i);
  return std::nullopt;
}

inline constexpr uint64_t fault_bit(Fault f) { return uint64_t{1} << static_cast<unsigned>(f); }

}  // namespace softuet
