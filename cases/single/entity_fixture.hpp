// The single-process entity cases' fixture: the manifest's entity environment, grants and revokes that
// are undone after each case, and the loopback pair they open.
#pragma once

#include <optional>
#include <vector>

#include "entity_commands.hpp"
#include "loopback.hpp"

namespace uet::cases {

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
