// JobIDs and the privileged entity, within one process (UEC 1.0 §2.2.4, §2.2.4.1): a JobID user space hands
// the provider is validated (only one the entity granted to this process opens an endpoint or enters the
// AV), the indirect JobID comes from the entity, and a revoked grant stops new endpoints while open ones
// keep working. The manifest's `privileged_entity` says how to reach the provider's entity and how to grant
// and revoke; the case process runs those commands for itself, in the launcher's place.
#include <rdma/fi_errno.h>

#include "area_traits.hpp"
#include "entity_fixture.hpp"

// What the harness must know of this area (common/claims/area_traits.hpp).
UET_AREA_TRAITS(.processes = 1, .entity = true, .weight = 2);

namespace uet::cases {
namespace {

// JobIDs of the cases: distinct per case, so one case's grant never answers for another.
constexpr uint32_t kGranted = 0x5E0001, kNotGranted = 0x5E0002, kIndirect = 0x5E0003, kRevoked = 0x5E0004,
                   kAvGranted = 0x5E0005, kAvNotGranted = 0x5E0006, kSeveralA = 0x5E0007, kSeveralB = 0x5E0008,
                   kEnded = 0x5E0009;
constexpr uint32_t kWorkloadJob = 4242001;  // the workload manager's job the kEnded grant belongs to

using Entity = EntityCase;

TEST_F(Entity, AGrantedJobIdOpensAnEndpoint) {
  covers({"2.2.4-c", "2.2.4-a", "2.2.4.1-b", "2.2.4.1-i"});
  UET_REQUIRE_JOB_METHOD(manifest(), "direct", "the provider");
  ASSERT_NO_FATAL_FAILURE(Grant(kGranted));
  Loopback lb;
  const int rc = lb.open(Spec(kGranted));
  ASSERT_EQ(rc, 0) << "an endpoint with JobID " << kGranted << ", which the entity granted to this process: "
                   << lb.failed << " returned " << fi_err(rc);
  ASSERT_EQ(lb.enable(), 0);
  ASSERT_NO_FATAL_FAILURE(SendOne(lb));
}

TEST_F(Entity, AJobIdNotGrantedOpensNoEndpoint) {
  covers({"2.2.4-c"});
  UET_REQUIRE_JOB_METHOD(manifest(), "direct", "the provider");
  ASSERT_NO_FATAL_FAILURE(Grant(kGranted));
  {
    // The same pair with the granted JobID opens: a refusal below is the JobID's, not the pair's.
    Loopback granted;
    ASSERT_EQ(granted.open(Spec(kGranted)), 0) << granted.failed;
  }
  Loopback lb;
  int rc = lb.open(Spec(kNotGranted));
  if (rc == 0) rc = lb.enable();
  EXPECT_NE(rc, 0) << "an endpoint opened with JobID " << kNotGranted
                   << ", which the privileged entity never granted to this process (only " << kGranted << ")";
}

TEST_F(Entity, TheIndirectJobIdComesFromTheEntity) {
  covers({"2.2.4-a", "2.2.4-b", "2.2.4.1-a", "2.2.4.1-b"});
  {
    Loopback none;
    int rc = none.open(Spec(0));
    if (rc == 0) rc = none.enable();
    EXPECT_NE(rc, 0) << "an endpoint of the indirect method opened although the entity maps no JobID to this process";
  }
  ASSERT_NO_FATAL_FAILURE(Grant(kIndirect));
  Loopback lb;
  const int rc = lb.open(Spec(0));
  ASSERT_EQ(rc, 0) << "the indirect method with JobID " << kIndirect << " mapped: " << fi_refused(lb.failed, rc);
  ASSERT_EQ(lb.enable(), 0);
  ASSERT_NO_FATAL_FAILURE(SendOne(lb));
}

TEST_F(Entity, ARevokedGrantStopsNewEndpointsNotOpenOnes) {
  covers({"2.2.4-c", "2.2.4.1-e"});
  UET_REQUIRE_JOB_METHOD(manifest(), "direct", "the provider");
  ASSERT_NO_FATAL_FAILURE(Grant(kRevoked));
  Loopback open_before;
  ASSERT_EQ(open_before.open(Spec(kRevoked)), 0) << open_before.failed;
  ASSERT_EQ(open_before.enable(), 0);
  ASSERT_NO_FATAL_FAILURE(Revoke(kRevoked));
  // A third endpoint of the same domain (a second domain of one process may not be able to take the FEP).
  EXPECT_NE(OpenAnother(open_before), 0) << "an endpoint opened with JobID " << kRevoked << " after the entity revoked it";
  ASSERT_NO_FATAL_FAILURE(SendOne(open_before));
}

TEST_F(Entity, AnAuthKeyNotGrantedIsNotInserted) {
  covers({"2.2.4-c"});
  UET_REQUIRE_JOB_METHOD(manifest(), "av", "the provider");
  ASSERT_NO_FATAL_FAILURE(Grant(kAvGranted));
  LoopbackSpec spec;
  spec.auth_key_size = FI_AV_AUTH_KEY;
  Loopback lb;
  const int rc = lb.open(spec);
  UET_NOT_APPLICABLE_IF(rc == -FI_ENODATA, reason::kNotClaimedJobIdMethod, "the provider offers no FI_AV_AUTH_KEY domain (the AV JobID method)");
  ASSERT_EQ(rc, 0) << fi_refused(lb.failed, rc);
  fi_addr_t handle = FI_ADDR_NOTAVAIL;
  uint8_t key[3];
  job_key(kAvGranted, key);
  EXPECT_EQ(fi_av_insert_auth_key(lb.av, key, sizeof key, &handle, 0), 0) << "JobID " << kAvGranted << ", granted";
  job_key(kAvNotGranted, key);
  EXPECT_NE(fi_av_insert_auth_key(lb.av, key, sizeof key, &handle, 0), 0)
      << "JobID " << kAvNotGranted << " entered the AV although the entity never granted it to this process";
}

// The workload manager ends the job a grant belongs to: new endpoints with its JobID no longer open; the
// endpoints open before keep working.
TEST_F(Entity, AnEndedJobsJobIdOpensNoNewEndpoint) {
  covers({"2.2.4-c", "2.2.4.1-e"});
  UET_REQUIRE_JOB_METHOD(manifest(), "direct", "the provider");
  const auto& pe = manifest().privileged_entity;
  UET_NOT_APPLICABLE_IF(pe.job.grant.empty(), reason::kManifestLacksHook, "the manifest does not say how a grant belongs to a workload-manager "
                                              "job or how a job ends (privileged_entity.job)");
  const std::map<std::string, std::string> values{{"job", std::to_string(kEnded)},
                                                  {"wlm_job", std::to_string(kWorkloadJob)}};
  std::string out;
  ASSERT_EQ(run_command(pe.job.grant, values, &out), 0) << "the job's grant command failed: " << joined(pe.job.grant)
                                                        << ": " << out;
  Loopback open_before;
  ASSERT_EQ(open_before.open(Spec(kEnded)), 0) << open_before.failed;
  ASSERT_EQ(open_before.enable(), 0);
  ASSERT_EQ(run_command(pe.job.end, values, &out), 0) << "the job's end command failed: " << joined(pe.job.end) << ": "
                                                      << out;
  EXPECT_NE(OpenAnother(open_before), 0) << "an endpoint opened with JobID " << kEnded << " after job " << kWorkloadJob
                                         << ", which it was granted for, ended";
  ASSERT_NO_FATAL_FAILURE(SendOne(open_before));
}

TEST_F(Entity, SeveralJobIdsOfOneProcessEnterTheAv) {
  covers({"2.2.4.1-f"});
  UET_REQUIRE_JOB_METHOD(manifest(), "av", "the provider");
  ASSERT_NO_FATAL_FAILURE(Grant(kSeveralA));
  ASSERT_NO_FATAL_FAILURE(Grant(kSeveralB));
  LoopbackSpec spec;
  spec.auth_key_size = FI_AV_AUTH_KEY;
  Loopback lb;
  const int rc = lb.open(spec);
  UET_NOT_APPLICABLE_IF(rc == -FI_ENODATA, reason::kNotClaimedJobIdMethod, "the provider offers no FI_AV_AUTH_KEY domain (the AV JobID method)");
  ASSERT_EQ(rc, 0) << "an FI_AV_AUTH_KEY endpoint of a process with two JobIDs mapped: " << fi_refused(lb.failed, rc);
  for (uint32_t job : {kSeveralA, kSeveralB}) {
    fi_addr_t handle = FI_ADDR_NOTAVAIL;
    uint8_t key[3];
    job_key(job, key);
    EXPECT_EQ(fi_av_insert_auth_key(lb.av, key, sizeof key, &handle, 0), 0) << "JobID " << job << ", mapped";
  }
}

}  // namespace
}  // namespace uet::cases
