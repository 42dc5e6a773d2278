// JobIDs from the privileged entity between two processes (UEC 1.0 §2.2.4, §2.2.4.1, §2.2.4.3): each
// side's JobID is granted to its process by its manifest's privileged entity (entity_grants.hpp).
// A buffer or region of the target's JobID takes a message of that JobID and refuses one of another JobID
// with the right return code and nothing written; a revoked grant stops the target's new endpoints while
// its open one keeps receiving; the target's JobID is on the wire. The buffer and region cases run twice:
// between two nodes (each side in its namespace) and between two processes on one node and one FEP (the
// target in the initiator's namespace, with the same address): a provider that short-cuts traffic inside
// a node must authorize it exactly as remote traffic.
#include <rdma/fi_rma.h>

#include <cstdlib>
#include <optional>

#include "area_traits.hpp"
#include "entity_grants.hpp"
#include "job_id_on_wire.hpp"
#include "uet/wire/wire_gen.hpp"

// What the harness must know of this area (common/claims/area_traits.hpp).
UET_AREA_TRAITS(.processes = 2, .entity = true, .weight = 6);

namespace uet::cases {
namespace {

namespace w = uet::wire;

constexpr uint32_t kTargetJob = 0x5E0101, kOtherJob = 0x5E0102, kRevokedJob = 0x5E0103;
// Job initialisation's JobIDs and the one a configuration system has the address allocation response name.
constexpr uint32_t kInitJob = 0x5E0111, kInitJob2 = 0x5E0112, kAllocJob = 0x5E0113;

class Jobs : public EntityGrants {
 protected:
  void BufferTakesItsJobId(Placement where) {
    ASSERT_NO_FATAL_FAILURE(Open(where, {kTargetJob}, kTargetJob));
    if (IsSkipped()) return;
    ASSERT_EQ(target.post_recv(1, 64), 0) << target.error();
    const Outcome o = Send("granted");
    ASSERT_EQ(o.state, Outcome::completed) << "err " << o.error.err << ", prov_errno " << o.error.prov_errno;
    EXPECT_EQ(target.completion(1, kArrivalMs).state, RecvResult::completed) << target.error();
  }
  void BufferRefusesAnotherJobId(Placement where) {
    ASSERT_NO_FATAL_FAILURE(Open(where, {kTargetJob}, kOtherJob));
    if (IsSkipped()) return;
    ASSERT_EQ(target.post_recv(1, 64), 0) << target.error();
    const Outcome o = Send("another job");
    EXPECT_EQ(o.state, Outcome::failed) << "a message of JobID " << kOtherJob << " reached a buffer of JobID "
                                        << kTargetJob << ", which the entity granted to the target alone";
    if (o.state == Outcome::failed) {
      EXPECT_EQ(o.error.err, w::libfabric::fi_errno_of_ses_rc(static_cast<uint64_t>(o.error.prov_errno)))
          << "err is the libfabric code of the SES return code in prov_errno";
    }
    EXPECT_EQ(target.completion(1, 200).state, RecvResult::none) << "the target's buffer took the message";
  }
  // The target's endpoint takes both JobIDs (the AV method, both granted to it by its entity); its region
  // only kTargetJob: the write of kOtherJob reaches the endpoint and is refused by the region.
  void RegionRefusesAnotherJobId(Placement where) {
    ASSERT_NO_FATAL_FAILURE(Open(where, {kTargetJob, kOtherJob}, kOtherJob));
    if (IsSkipped()) return;
    ASSERT_NE(target.insert_auth_key(kOtherJob), FI_ADDR_NOTAVAIL) << target.error();
    RemoteMr mr;
    ASSERT_TRUE(target.register_mr(1, 64, 0, "direct:" + std::to_string(kTargetJob), &mr)) << target.error();
    const Outcome o = Write(mr, std::vector<uint8_t>(32, 0xEE));
    expect_error_entry(o, w::ses_return_code::RC_PERM_VIOLATION);
    EXPECT_EQ(target.read_mr(1, 0, 64), std::vector<uint8_t>(64, 0))
        << "JobID " << kOtherJob << " wrote into a region of JobID " << kTargetJob;
  }

};

TEST_P(Jobs, ABufferOfAnEntityJobIdTakesIt) {
  covers({"2.2.4.3.1-a", "2.2.4.3-c", "2.2.4.1-b"});
  BufferTakesItsJobId(Placement::two_nodes);
}

TEST_P(Jobs, ABufferOfAnEntityJobIdTakesItOnOneNode) {
  covers({"2.2.4.3.1-a", "2.2.4.3-c", "2.2.4.1-b"});
  BufferTakesItsJobId(Placement::one_node);
}

TEST_P(Jobs, ABufferOfAnEntityJobIdRefusesAnother) {
  covers({"2.2.4.3.1-a", "2.2.4.3-a", "2.2.4.3-c", "2.2.4-c"});
  BufferRefusesAnotherJobId(Placement::two_nodes);
}

TEST_P(Jobs, ABufferOfAnEntityJobIdRefusesAnotherOnOneNode) {
  covers({"2.2.4.3.1-a", "2.2.4.3-a", "2.2.4.3-c", "2.2.4-c"});
  BufferRefusesAnotherJobId(Placement::one_node);
}

TEST_P(Jobs, ARegionOfAnEntityJobIdIsNotWrittenByAnother) {
  covers({"2.2.4.3.3-d", "2.2.4.3.3-e", "2.2.4.3-c", "2.2.4-c", "2.2.5.6-a"});
  RegionRefusesAnotherJobId(Placement::two_nodes);
}

TEST_P(Jobs, ARegionOfAnEntityJobIdIsNotWrittenByAnotherOnOneNode) {
  covers({"2.2.4.3.3-d", "2.2.4.3.3-e", "2.2.4.3-c", "2.2.4-c", "2.2.5.6-a"});
  RegionRefusesAnotherJobId(Placement::one_node);
}

// The target's JobID, which its entity granted, is what its requests carry (2.2.4.4-a, 2.2.4-b).
TEST_P(Jobs, TheTargetsEntityJobIdIsOnTheWire) {
  covers({"2.2.4.4-a", "2.2.4-b"});
  ASSERT_NO_FATAL_FAILURE(Open(Placement::two_nodes, {kTargetJob}, kTargetJob, FI_MSG));
  if (IsSkipped()) return;
  ASSERT_NO_FATAL_FAILURE(ExpectTargetSendsJobId(me, target, kTargetJob));
}

// A revoked grant stops the target's new endpoints; its open one keeps receiving (2.2.4.1-e).
TEST_P(Jobs, ARevokedGrantStopsTheTargetsNewEndpointsNotItsOpenOne) {
  covers({"2.2.4.1-e", "2.2.4-c"});
  ASSERT_NO_FATAL_FAILURE(Open(Placement::two_nodes, {kRevokedJob}, kRevokedJob));
  if (IsSkipped()) return;
  std::string out;
  const int rc = run_command(target_manifest().privileged_entity.revoke,
                             {{"pid", std::to_string(target.pid())}, {"job", std::to_string(kRevokedJob)}}, &out);
  ASSERT_EQ(rc, 0) << "the revoke command failed: " << out;
  EXPECT_TRUE(target.open_another_endpoint(kRevokedJob).empty())
      << "the target opened an endpoint with JobID " << kRevokedJob << " after its entity revoked it";
  ASSERT_EQ(target.post_recv(1, 64), 0) << target.error();
  const Outcome o = Send("still open");
  ASSERT_EQ(o.state, Outcome::completed) << "the endpoint opened before the revoke: err " << o.error.err;
  EXPECT_EQ(target.completion(1, kArrivalMs).state, RecvResult::completed) << target.error();
}

// The address allocation response's JobID against job initialisation's (2.2.5.3.5.1-h/i): the target's entity
// maps it job initialisation's JobID(s) and answers its address allocation with another, kAllocJob.
class AllocationJobId : public Jobs {
 protected:
  void SetUp() override {
    Jobs::SetUp();
    if (IsSkipped()) return;
    UET_NOT_APPLICABLE_IF(target_manifest().privileged_entity.allocation_grant.empty(), reason::kManifestLacksHook,
                          "the target's manifest declares no allocation_grant: the suite cannot have its entity answer "
                          "an address allocation with another JobID than job initialisation's");
  }
  // The target's grants, with kAllocJob in its address allocation response.
  static Granting Allocating() {
    return {[](const Manifest& m) -> const std::vector<std::string>& { return m.privileged_entity.allocation_grant; },
            {{"alloc_job", std::to_string(kAllocJob)}}};
  }
};

// One JobID of job initialisation: the response's JobID takes precedence, and the target sends with it.
TEST_P(AllocationJobId, TheResponsesJobIdTakesPrecedenceOverJobInitialisations) {
  covers({"2.2.5.3.5.1-h"});
  ASSERT_NO_FATAL_FAILURE(Open(Placement::two_nodes, {kInitJob}, kAllocJob, FI_MSG, Allocating()));
  if (IsSkipped()) return;
  ASSERT_NO_FATAL_FAILURE(ExpectTargetSendsJobId(me, target, kAllocJob));
}

// Several JobIDs of job initialisation and FI_AV_AUTH_KEY: the response's JobID is ignored, so the target's
// endpoint takes no message of it, while job initialisation's JobIDs enter its AV as auth keys.
TEST_P(AllocationJobId, WithSeveralJobIdsAndAvAuthKeysTheResponsesJobIdIsIgnored) {
  covers({"2.2.5.3.5.1-i"});
  ASSERT_NO_FATAL_FAILURE(Open(Placement::two_nodes, {kInitJob, kInitJob2}, kAllocJob, FI_MSG, Allocating()));
  if (IsSkipped()) return;
  EXPECT_NE(target.insert_auth_key(kInitJob2), FI_ADDR_NOTAVAIL)
      << "a JobID of the target's job initialisation does not enter its AV: " << target.error();
  ASSERT_EQ(target.post_recv(1, 64), 0) << target.error();
  const Outcome o = Send("the response's JobID");
  EXPECT_EQ(o.state, Outcome::failed) << "a message of JobID " << kAllocJob << " (the address allocation response's, "
                                      << "which an FI_AV_AUTH_KEY endpoint with several JobIDs ignores) was taken";
  EXPECT_EQ(target.completion(1, 200).state, RecvResult::none) << "the target's buffer took the message";
}

UET_INSTANTIATE_TWO_SIDED_RDM(Jobs);
UET_INSTANTIATE_TWO_SIDED_RDM(AllocationJobId);

}  // namespace
}  // namespace uet::cases
