// Service names and numbers to resource indices. The service file (spec 2.2.3): one entry per line,
// `service_name start_index num_indices`, name at most constants.service_name_max characters, start_index
// + num_indices <= 4096; `#` starts a comment. One bad line refuses the whole file: a half-read file
// would give a process a service another process reads differently.
#include "service.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "uet/wire/wire_gen.hpp"

namespace softuet {

namespace {

constexpr uint32_t kRiLimit = 1u << uet::wire::k_resource_index_bits;  // 4096: RIs 0..4095

std::optional<uint32_t> number(const std::string& s) {
  if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return static_cast<uint32_t>(std::stoul(s));
}

// Why a range cannot serve endpoints, or empty. RI 0 is reserved for a provider-to-provider channel (C.2).
std::string range_problem(uint32_t start, uint32_t count) {
  if (count == 0) return "num_indices is 0";
  if (start == 0) return "start_index 0 is reserved";
  if (start + count > kRiLimit) return "start_index + num_indices > " + std::to_string(kRiLimit);
  return {};
}

std::optional<std::map<std::string, ServiceRange>> read_file(const std::string& path, std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = "UET_PROVIDER_SERVICE_PATH=" + path + ": " + std::strerror(errno);
    return std::nullopt;
  }
  std::map<std::string, ServiceRange> names;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (const size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string name, start_text, count_text, extra;
    if (!(words >> name)) continue;  // blank or comment
    const std::string where = path + ":" + std::to_string(n) + ": ";
    if (!(words >> start_text >> count_text) || (words >> extra)) {
      *error = where + "want `service_name start_index num_indices`";
      return std::nullopt;
    }
    const auto start = number(start_text), count = number(count_text);
    if (!start || !count) {
      *error = where + "start_index and num_indices are numbers";
      return std::nullopt;
    }
    if (name.size() > uet::wire::k_service_name_max) {
      *error = where + "service name longer than " + std::to_string(uet::wire::k_service_name_max) + " characters";
      return std::nullopt;
    }
    if (const std::string why = range_problem(*start, *count); !why.empty()) {
      *error = where + why;
      return std::nullopt;
    }
    if (!names.emplace(name, ServiceRange{static_cast<uint16_t>(*start), static_cast<uint16_t>(*count)}).second) {
      *error = where + "service '" + name + "' named twice";
      return std::nullopt;
    }
  }
  return names;
}

}  // namespace

std::optional<ServiceRange> resolve_service(const std::string& service, const std::string& file, std::string* error) {
  if (const auto n = number(service)) {
    if (const std::string why = range_problem(*n, 1); !why.empty()) {
      *error = "service '" + service + "': resource index " + why;
      return std::nullopt;
    }
    return ServiceRange{static_cast<uint16_t>(*n), 1};
  }
  if (!file.empty()) {
    const auto names = read_file(file, error);
    if (!names) return std::nullopt;
    if (const auto it = names->find(service); it != names->end()) return it->second;
  }
  *error = "service '" + service + "': not a resource index (1.." + std::to_string(kRiLimit - 1) +
           ") nor a name of " + (file.empty() ? std::string("a service file (UET_PROVIDER_SERVICE_PATH is unset)") : file) +
           "; softuet knows no predefined service names (choice predefined-service-names)";
  return std::nullopt;
}

}  // namespace softuet
