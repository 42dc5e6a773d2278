// Shared credentials in the store, and tokens: the rules without a socket in between.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "cred_store.hpp"
#include "uet/entity/process_info.hpp"
#include "uet/entity/token.hpp"

namespace uet::entity {
namespace {

namespace cc = control::cred;

// This test process, as the entity would see it, as user `uid` in job `job`.
CredStore::Caller me(uint32_t uid, uint32_t job = 0) {
  const auto p = process_info(static_cast<uint32_t>(getpid()));
  return {static_cast<uint32_t>(getpid()), uid, {uid}, job, p ? p->start : 1};
}

TEST(CredStore, AcquireGrantsTheAcquirerAndJobIdsComeFromTheRange) {
  Store s(":memory:");
  CredStore cs(s);
  CredStore::Cred a{}, b{};
  ASSERT_FALSE(cs.acquire(me(100), 0, &a));
  ASSERT_FALSE(cs.acquire(me(100), 0, &b));
  EXPECT_EQ(a.job_id, cc::kJobIdFirst);
  EXPECT_EQ(b.job_id, cc::kJobIdFirst + 1);
  uint32_t job_id = 0;
  EXPECT_FALSE(cs.access(me(100), a.cred, "", &job_id));
  EXPECT_EQ(job_id, a.job_id);
  CredStore::Caller other = me(200);
  other.pid = 1;  // another process: this one holds a reference, and a holder is not asked again
  other.start = process_info(1)->start;
  const auto no = cs.access(other, a.cred, "", &job_id);
  ASSERT_TRUE(no);
  EXPECT_EQ(no->err, EACCES);
}

TEST(CredStore, EveryLimitIsCheckedOnItsOwn) {
  Store s(":memory:");
  CredStore cs(s);
  cs.set_limit(static_cast<uint8_t>(cc::Scope::job), 7, 1);
  CredStore::Cred c{};
  ASSERT_FALSE(cs.acquire(me(100, 7), 0, &c));
  const auto no = cs.acquire(me(100, 7), 0, &c);
  ASSERT_TRUE(no);
  EXPECT_EQ(no->err, EDQUOT);
  EXPECT_NE(no->what.find("the job limit of job 7 is 1"), std::string::npos) << no->what;
  EXPECT_FALSE(cs.acquire(me(100, 8), 0, &c));  // another job's limit is its own
}

TEST(CredStore, AJobEndDropsReferencesAndTransientCredentials) {
  Store s(":memory:");
  CredStore cs(s);
  CredStore::Cred transient{}, persistent{};
  ASSERT_FALSE(cs.acquire(me(100, 3), 0, &transient));
  ASSERT_FALSE(cs.acquire(me(100, 3), cc::kFlag_persistent, &persistent));
  uint32_t job_id = 0;
  ASSERT_FALSE(cs.access(me(100, 3), persistent.cred, "svc", &job_id));
  const Store::Process self{static_cast<uint32_t>(getpid()), me(100).start};
  EXPECT_EQ(s.jobs(self, "svc"), std::vector<uint32_t>{persistent.job_id});
  cs.job_end(3);
  const auto left = cs.list(std::nullopt, std::nullopt);
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].cred, persistent.cred);
  EXPECT_EQ(left[0].refs, 0u);
  EXPECT_TRUE(s.jobs(self, "svc").empty());
}

TEST(CredStore, ReconcileEndsEveryJobNotActive) {
  Store s(":memory:");
  CredStore cs(s);
  cs.job_start(1, {});
  cs.job_start(2, {});
  EXPECT_EQ(cs.reconcile({2}), 1u);
  EXPECT_FALSE(cs.job_known(1));
  EXPECT_TRUE(cs.job_known(2));
}

TEST(Token, OnlyAnIntactUnexpiredTokenOfTheCallersJobPasses) {
  const std::vector<uint8_t> key(cc::kTokenKeyBytes, 0x5a);
  const auto t = make_token(key, {9, 0xC00001, 44, 1000});
  ASSERT_EQ(t.size(), cc::kTokenBytes);
  const auto ok = verify_token(t, key, 44, 999);
  ASSERT_TRUE(std::holds_alternative<TokenClaims>(ok));
  EXPECT_EQ(std::get<TokenClaims>(ok).job_id, 0xC00001u);
  EXPECT_EQ(std::get<Problem>(verify_token(t, key, 45, 999)).err, EACCES);
  EXPECT_EQ(std::get<Problem>(verify_token(t, key, 44, 1000)).err, EKEYEXPIRED);
  for (size_t i = 1; i < t.size(); ++i) {  // every byte after the version is covered by the MAC
    auto bad = t;
    bad[i] ^= 1;
    EXPECT_TRUE(std::holds_alternative<Problem>(verify_token(bad, key, 44, 999))) << "byte " << i;
  }
  auto other_key = key;
  other_key[0] ^= 1;
  EXPECT_TRUE(std::holds_alternative<Problem>(verify_token(t, other_key, 44, 999)));
  EXPECT_EQ(std::get<Problem>(verify_token(std::span(t).first(10), key, 44, 999)).err, EINVAL);
}

TEST(ProcessInfo, ThisProcessIsInNoSlurmJob) {
  const auto p = process_info(static_cast<uint32_t>(getpid()));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->uid, getuid());
  EXPECT_EQ(slurm_step_job(ProcessInfo{1, 0, 0, {}, 1, "slurmstepd: [123.batch]"}), 123u);
  EXPECT_EQ(slurm_step_job(ProcessInfo{1, 0, 1000, {}, 1, "slurmstepd: [123.batch]"}), 0u);  // not root's
  EXPECT_FALSE(process_info(0x7FFFFFFF));
}

}  // namespace
}  // namespace uet::entity
