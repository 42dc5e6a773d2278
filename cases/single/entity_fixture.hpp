// What the entity cases share: running the manifest's entity commands ({pid}, {job}, {dir} filled in)
// under a deadline, the provider's environment for them, the grant/revoke fixture, and the entity's
// Control API trace (what the provider asked and was told).
#pragma once

#include <sys/types.h>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "conformance.hpp"
#include "loopback.hpp"

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

class EntityCase : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  // Grants `job` to this process through the manifest's command (a failure of the command fails the case).
  void Grant(uint32_t job);
  void Revoke(uint32_t job);
  // An RDM pair whose endpoints use `job` as their direct auth key (0: the indirect method).
  static LoopbackSpec Spec(uint32_t job);
  // One message from endpoint 0 to endpoint 1 of an enabled pair: both completions, or a failure.
  static void SendOne(Loopback& lb);
  // fi_endpoint, bind and fi_enable of one more endpoint of `lb`'s domain: 0 or the first error.
  static int OpenAnother(Loopback& lb);

  std::optional<ScopedEnvironment> env_;
  std::vector<uint32_t> granted_;
};

}  // namespace uet::cases
