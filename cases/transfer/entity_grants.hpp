// The fixture of the cases where each side's JobIDs are granted to its process by its manifest's privileged
// entity (the grant command, run with the process's pid before it opens its endpoint, as a launcher would),
// never taken from the environment: the jobs and security areas.
#pragma once

#include <rdma/fi_rma.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "entity_commands.hpp"
#include "two_sided.hpp"

namespace uet::cases {

enum class Placement { two_nodes, one_node };

// How a grant is made: which of the manifest's commands (default: privileged_entity.grant) and the values it
// takes besides {pid} and {job}.
struct Granting {
  std::function<const std::vector<std::string>&(const Manifest&)> command;
  std::map<std::string, std::string> values;
};

class EntityGrants : public TwoSided {
 protected:
  void SetUp() override {
    UET_REQUIRE_UET_PROVIDER();
    UET_REQUIRE_PAIR_CLAIMS_KIND();
    UET_REQUIRE_TAKES_JOB_IDS(manifest(), "the initiator");
    UET_REQUIRE_TAKES_JOB_IDS(target_manifest(), "the target");
    UET_NOT_APPLICABLE_IF(!manifest().privileged_entity.declared || !target_manifest().privileged_entity.declared, reason::kManifestLacksHook,
                          "a side's manifest declares no privileged entity (privileged_entity): the suite cannot "
                          "grant its process a JobID");
    env_.emplace(manifest().privileged_entity.environment);
  }
  void TearDown() override {
    TwoSided::TearDown();
    std::string out;
    for (const auto& [cmd, pid, job] : grants_)
      run_command(*cmd, {{"pid", std::to_string(pid)}, {"job", std::to_string(job)}}, &out);
    env_.reset();
  }
  // Grants `job` to process `pid` with a side's manifest command (`how`: another grant command of the
  // manifest and the values it takes besides {pid} and {job}); false with the reason.
  bool Grant(const Manifest& side, pid_t pid, uint32_t job, std::string* why, const Granting& how = {}) {
    std::string out;
    const auto& cmd = how.command ? how.command(side) : side.privileged_entity.grant;
    std::map<std::string, std::string> values = how.values;
    values["pid"] = std::to_string(pid);
    values["job"] = std::to_string(job);
    const int rc = run_command(cmd, values, &out);
    if (rc != 0) {
      *why = "the grant command failed (" + std::to_string(rc) + "): " + joined(cmd) + ": " + out;
      return false;
    }
    grants_.push_back({&side.privileged_entity.revoke, pid, job});
    return true;
  }
  // The target opens with `target_jobs` granted (one: the indirect method, the JobID its entity maps to it;
  // several: the AV method, FI_AV_AUTH_KEY) and this side with `my_job` (the direct method, granted to this
  // process first). `target_how` grants the target's JobIDs, `my_how` this side's.
  void Open(Placement where, std::vector<uint32_t> target_jobs, uint32_t my_job, uint64_t caps = FI_MSG | FI_RMA,
            const Granting& target_how = {}, const Granting& my_how = {}) {
    std::string why;
    ASSERT_TRUE(Grant(manifest(), getpid(), my_job, &why, my_how)) << why;
    EndpointSpec mine = Spec(caps), theirs = Spec(caps);
    mine.method = JobMethod::direct;
    mine.job = my_job;
    theirs.method = target_jobs.size() == 1 ? JobMethod::indirect : JobMethod::av;
    std::map<std::string, std::string> set;
    std::vector<std::string> unset;
    split_env(target_manifest().privileged_entity.environment, &set, &unset);
    // One node: the target starts beside this process (in its namespace, container or node, at its address),
    // wherever the plan puts targets.
    if (where == Placement::one_node) target.place_at(TargetPlace{});
    OpenBoth(mine, &theirs, set, unset, [&](pid_t pid, std::string* err) {
      for (uint32_t job : target_jobs)
        if (!Grant(target_manifest(), pid, job, err, target_how)) return false;
      return true;
    });
  }
  Outcome Send(const char* text) {
    int ctx = 0;
    const ssize_t rc = me.post([&] { return fi_send(me.ep, text, std::strlen(text) + 1, nullptr, dest, &ctx); });
    EXPECT_EQ(rc, 0) << fi_refused("fi_send", rc);
    return rc ? Outcome{} : me.wait(&ctx, 15000);
  }
  Outcome Write(const RemoteMr& mr, const std::vector<uint8_t>& src) {
    int ctx = 0;
    const ssize_t rc = me.post([&] { return fi_write(me.ep, src.data(), src.size(), nullptr, dest, mr.base, mr.key, &ctx); });
    EXPECT_EQ(rc, 0) << fi_refused("fi_write", rc);
    return rc ? Outcome{} : me.wait(&ctx, 15000);
  }
  std::optional<ScopedEnvironment> env_;
  std::vector<std::tuple<const std::vector<std::string>*, pid_t, uint32_t>> grants_;
};

}  // namespace uet::cases
