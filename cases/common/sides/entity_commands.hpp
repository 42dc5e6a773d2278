// The manifest's privileged-entity commands as the cases run them: placeholders ({pid}, {job}, {dir})
// filled in, a deadline on each, the provider's environment for them, and the entity's Control API trace.
#pragma once

#include <sys/types.h>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "conformance.hpp"

namespace uet::cases {

// Runs a manifest command with its placeholders filled from `values` ({pid} is this process unless
// given); its exit status (-1: it did not end within the deadline and was killed), output in `output`.
int run_command(const std::vector<std::string>& argv_template, const std::map<std::string, std::string>& values,
                std::string* output);
// Starts a manifest command in the background (its output to /dev/null); its pid, or -1.
pid_t start_command(const std::vector<std::string>& argv_template, const std::map<std::string, std::string>& values);
std::string joined(const std::vector<std::string>& argv);

// An environment over this process's, for a scope's duration; placeholders in values filled from `values`.
class ScopedEnvironment {
 public:
  explicit ScopedEnvironment(const Env& env, const std::map<std::string, std::string>& values = {});
  ~ScopedEnvironment();

 private:
  std::map<std::string, std::optional<std::string>> before_;
};

// The entity's Control API trace (the manifest's privileged_entity.trace): its requests, one JSON object
// each (pid, uid, cmd, attrs, replies: uet-entity --trace's format).
std::vector<nlohmann::json> control_trace(const std::string& path);

}  // namespace uet::cases
