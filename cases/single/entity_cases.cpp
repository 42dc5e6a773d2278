// JobIDs and the privileged entity, within one process (UEC 1.0 §2.2.4, §2.2.4.1): a JobID user space hands
// the provider is validated (only one the entity granted to this process opens an endpoint or enters the
// AV), the indirect JobID comes from the entity, and a revoked grant stops new endpoints while open ones
// keep working. The manifest's `privileged_entity` says how to reach the provider's entity and how to grant
// and revoke; the case process runs those commands for itself, in the launcher's place.
#include <fcntl.h>
#include <poll.h>
#include <rdma/fi_errno.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "conformance.hpp"
#include "loopback.hpp"

extern char** environ;

namespace uet::cases {
namespace {

constexpr int kCommandDeadlineMs = 15000;
// JobIDs of the cases: distinct per case, so one case's grant never answers for another.
constexpr uint32_t kGranted = 0x5E0001, kNotGranted = 0x5E0002, kIndirect = 0x5E0003, kRevoked = 0x5E0004,
                   kAvGranted = 0x5E0005, kAvNotGranted = 0x5E0006;

// Runs a manifest command with {pid} (this process) and {job} filled in; its exit status (-1: it did not
// end within the deadline and was killed), with what it printed in `output`.
int run_command(const std::vector<std::string>& argv_template, uint32_t job, std::string* output) {
  std::vector<std::string> args;
  for (std::string a : argv_template) {
    for (const auto& [key, value] : {std::pair<std::string, std::string>{"{pid}", std::to_string(getpid())},
                                     {"{job}", std::to_string(job)}})
      for (size_t at; (at = a.find(key)) != std::string::npos;) a.replace(at, key.size(), value);
    args.push_back(std::move(a));
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, out[1], 2);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  if (rc != 0) {
    close(out[0]);
    *output = std::string("cannot run ") + args[0] + ": " + std::strerror(rc);
    return -1;
  }
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(kCommandDeadlineMs);
  char buf[512];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
    pollfd p{out[0], POLLIN, 0};
    if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) <= 0) {
      kill(pid, SIGKILL);
      break;
    }
    const ssize_t n = read(out[0], buf, sizeof buf);
    if (n <= 0) break;
    output->append(buf, static_cast<size_t>(n));
  }
  close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string joined(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

// The manifest's privileged_entity.environment over this process's, for the case's duration.
class EntityEnvironment {
 public:
  EntityEnvironment() {
    std::map<std::string, std::string> set;
    std::vector<std::string> unset;
    split_env(manifest().privileged_entity.environment, &set, &unset);
    for (const auto& [k, v] : set) keep(k), setenv(k.c_str(), v.c_str(), 1);
    for (const auto& k : unset) keep(k), unsetenv(k.c_str());
  }
  ~EntityEnvironment() {
    for (const auto& [k, v] : before_) v ? setenv(k.c_str(), v->c_str(), 1) : unsetenv(k.c_str());
  }

 private:
  void keep(const std::string& k) {
    const char* v = std::getenv(k.c_str());
    before_[k] = v ? std::optional<std::string>(v) : std::nullopt;
  }
  std::map<std::string, std::optional<std::string>> before_;
};

class Entity : public ::testing::Test {
 protected:
  void SetUp() override {
    UET_REQUIRE_UET_PROVIDER();
    UET_NOT_APPLICABLE_IF(!manifest().privileged_entity.declared,
                          "the manifest declares no privileged entity (privileged_entity): the suite cannot grant "
                          "or revoke a JobID with the provider's");
    env_.emplace();
  }
  void TearDown() override {
    for (uint32_t job : granted_) {
      std::string out;
      run_command(manifest().privileged_entity.revoke, job, &out);
    }
    env_.reset();
  }
  // Grants `job` to this process through the manifest's command (a failure of the command fails the case).
  void Grant(uint32_t job) {
    std::string out;
    const int rc = run_command(manifest().privileged_entity.grant, job, &out);
    ASSERT_EQ(rc, 0) << "the grant command failed: " << joined(manifest().privileged_entity.grant) << ": " << out;
    granted_.push_back(job);
  }
  void Revoke(uint32_t job) {
    std::string out;
    const int rc = run_command(manifest().privileged_entity.revoke, job, &out);
    ASSERT_EQ(rc, 0) << "the revoke command failed: " << joined(manifest().privileged_entity.revoke) << ": " << out;
    std::erase(granted_, job);
  }
  // An RDM pair whose endpoints use `job` as their direct auth key (0: the indirect method).
  static LoopbackSpec Spec(uint32_t job) {
    LoopbackSpec spec;
    spec.auth_key_size = job ? 3 : 0;
    spec.job = job;
    return spec;
  }
  // One message from endpoint 0 to endpoint 1 of an enabled pair: both completions, or a failure.
  static void SendOne(Loopback& lb) {
    char msg[16] = "entity", buf[16] = {};
    int sctx = 0, rctx = 0;
    ASSERT_EQ(fi_recv(lb.ep[1], buf, sizeof buf, nullptr, FI_ADDR_UNSPEC, &rctx), 0);
    ASSERT_EQ(lb.post([&] { return fi_send(lb.ep[0], msg, sizeof msg, nullptr, lb.addr[1], &sctx); }), 0);
    EXPECT_EQ(lb.wait(&sctx).state, Outcome::completed) << "the send of an endpoint opened before the revoke";
    EXPECT_EQ(lb.wait(&rctx).state, Outcome::completed) << "its receive";
    EXPECT_STREQ(buf, "entity");
  }

  // fi_endpoint, bind and fi_enable of one more endpoint of `lb`'s domain (its JobID method and key): 0 or
  // the first error.
  static int OpenAnother(Loopback& lb) {
    fid_ep* ep = nullptr;
    int rc = fi_endpoint(lb.domain, lb.info, &ep, nullptr);
    if (rc == 0) rc = fi_ep_bind(ep, &lb.cq->fid, FI_TRANSMIT | FI_RECV);
    if (rc == 0) rc = fi_ep_bind(ep, &lb.av->fid, 0);
    if (rc == 0) rc = fi_enable(ep);
    if (ep) fi_close(&ep->fid);
    return rc;
  }

  std::optional<EntityEnvironment> env_;
  std::vector<uint32_t> granted_;
};

TEST_F(Entity, AGrantedJobIdOpensAnEndpoint) {
  covers({"2.2.4-c", "2.2.4-a", "2.2.4.1-b"});
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
  covers({"2.2.4-a", "2.2.4-b", "2.2.4.1-b"});
  {
    Loopback none;
    int rc = none.open(Spec(0));
    if (rc == 0) rc = none.enable();
    EXPECT_NE(rc, 0) << "an endpoint of the indirect method opened although the entity maps no JobID to this process";
  }
  ASSERT_NO_FATAL_FAILURE(Grant(kIndirect));
  Loopback lb;
  const int rc = lb.open(Spec(0));
  ASSERT_EQ(rc, 0) << "the indirect method with JobID " << kIndirect << " mapped: " << lb.failed << " " << fi_err(rc);
  ASSERT_EQ(lb.enable(), 0);
  ASSERT_NO_FATAL_FAILURE(SendOne(lb));
}

TEST_F(Entity, ARevokedGrantStopsNewEndpointsNotOpenOnes) {
  covers({"2.2.4-c", "2.2.4.1-e"});
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
  ASSERT_NO_FATAL_FAILURE(Grant(kAvGranted));
  LoopbackSpec spec;
  spec.auth_key_size = FI_AV_AUTH_KEY;
  Loopback lb;
  const int rc = lb.open(spec);
  UET_NOT_APPLICABLE_IF(rc == -FI_ENODATA, "the provider offers no FI_AV_AUTH_KEY domain (the AV JobID method)");
  ASSERT_EQ(rc, 0) << lb.failed << " " << fi_err(rc);
  fi_addr_t handle = FI_ADDR_NOTAVAIL;
  uint8_t key[3];
  job_key(kAvGranted, key);
  EXPECT_EQ(fi_av_insert_auth_key(lb.av, key, sizeof key, &handle, 0), 0) << "JobID " << kAvGranted << ", granted";
  job_key(kAvNotGranted, key);
  EXPECT_NE(fi_av_insert_auth_key(lb.av, key, sizeof key, &handle, 0), 0)
      << "JobID " << kAvNotGranted << " entered the AV although the entity never granted it to this process";
}

}  // namespace
}  // namespace uet::cases
