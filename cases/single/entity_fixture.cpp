#include "entity_fixture.hpp"
#include "job_id_methods.hpp"

#include <rdma/fi_cm.h>

namespace uet::cases {

void EntityCase::SetUp() {
  UET_REQUIRE_UET_PROVIDER();
  UET_REQUIRE_TAKES_JOB_IDS(manifest(), "the provider");
  UET_NOT_APPLICABLE_IF(!manifest().privileged_entity.declared, reason::kManifestLacksHook,
                        "the manifest declares no privileged entity (privileged_entity): the suite cannot grant "
                        "or revoke a JobID with the provider's");
  env_.emplace(manifest().privileged_entity.environment);
}

void EntityCase::TearDown() {
  for (uint32_t job : granted_) {
    std::string out;
    run_command(manifest().privileged_entity.revoke, {{"job", std::to_string(job)}}, &out);
  }
  env_.reset();
}

void EntityCase::Grant(uint32_t job) {
  std::string out;
  const int rc = run_command(manifest().privileged_entity.grant, {{"job", std::to_string(job)}}, &out);
  ASSERT_EQ(rc, 0) << "the grant command failed: " << joined(manifest().privileged_entity.grant) << ": " << out;
  granted_.push_back(job);
}

void EntityCase::Revoke(uint32_t job) {
  std::string out;
  const int rc = run_command(manifest().privileged_entity.revoke, {{"job", std::to_string(job)}}, &out);
  ASSERT_EQ(rc, 0) << "the revoke command failed: " << joined(manifest().privileged_entity.revoke) << ": " << out;
  std::erase(granted_, job);
}

LoopbackSpec EntityCase::Spec(uint32_t job) {
  LoopbackSpec spec;
  spec.auth_key_size = job ? 3 : 0;
  spec.job = job;
  return spec;
}
void EntityCase::SendOne(Loopback& lb) {
  char msg[16] = "entity", buf[16] = {};
  int sctx = 0, rctx = 0;
  ASSERT_EQ(fi_recv(lb.ep[1], buf, sizeof buf, nullptr, FI_ADDR_UNSPEC, &rctx), 0);
  ASSERT_EQ(lb.post([&] { return fi_send(lb.ep[0], msg, sizeof msg, nullptr, lb.addr[1], &sctx); }), 0);
  EXPECT_EQ(lb.wait(&sctx).state, Outcome::completed) << "the send of an endpoint opened before the revoke";
  EXPECT_EQ(lb.wait(&rctx).state, Outcome::completed) << "its receive";
  EXPECT_STREQ(buf, "entity");
}

int EntityCase::OpenAnother(Loopback& lb) {
  fid_ep* ep = nullptr;
  int rc = fi_endpoint(lb.domain, lb.info, &ep, nullptr);
  if (rc == 0) rc = fi_ep_bind(ep, &lb.cq->fid, FI_TRANSMIT | FI_RECV);
  if (rc == 0) rc = fi_ep_bind(ep, &lb.av->fid, 0);
  if (rc == 0) rc = fi_enable(ep);
  if (ep) fi_close(&ep->fid);
  return rc;
}

}  // namespace uet::cases
