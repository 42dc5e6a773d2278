// softuet with the privileged entity (UET_ENTITY_SOCKET, spec 2.2.4.1): the indirect JobID is the one the
// entity maps to this process's service, a direct or AV JobID opens only when the entity grants it, and an
// entity that does not answer is a clear refusal, never a hang. The test starts its own uet-entity and, as
// root (the launcher's part), maps its own pid.
#include <arpa/inet.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "fixture.hpp"
#include "uet/codec/decoded.hpp"
#include "uet/entity/client.hpp"

namespace softuet_test {
namespace {

namespace c = uet::control;
constexpr uint32_t kMapped = 0x3456, kOther = 0x3457;

// A uet-entity of the test's own, in a folder of its own, with this process's pid mapped to kMapped.
class Entity {
 public:
  // `uid`: the user it runs as (its folder is that user's then).
  explicit Entity(uid_t uid = 0) {
    dir_ = std::filesystem::temp_directory_path() / ("softuet-entity-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    // Another user runs a copy in a folder of its own (the checkout may sit in a folder only root can enter): the
    // entity keeps its store only where no other user may write.
    std::string binary = UET_ENTITY_BINARY;
    if (uid) {
      binary = (dir_ / "uet-entity").string();
      std::filesystem::copy_file(UET_ENTITY_BINARY, binary);
      std::filesystem::permissions(binary, std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                                              std::filesystem::perms::group_exec | std::filesystem::perms::others_read |
                                              std::filesystem::perms::others_exec);
      std::filesystem::permissions(dir_, std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                                             std::filesystem::perms::group_exec | std::filesystem::perms::others_read |
                                             std::filesystem::perms::others_exec);
      if (chown(dir_.c_str(), uid, uid) != 0) ADD_FAILURE() << "chown " << dir_ << ": " << std::strerror(errno);
    }
    socket_ = (dir_ / "control.sock").string();
    pid_ = fork();
    if (pid_ == 0) {
      if (uid && (setgid(uid) != 0 || setuid(uid) != 0)) _exit(126);
      const std::string store = (dir_ / "entity.db").string();
      execl(binary.c_str(), "uet-entity", "--socket", socket_.c_str(), "--store", store.c_str(), nullptr);
      _exit(127);
    }
  }
  ~Entity() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
    std::filesystem::remove_all(dir_);
  }
  // Connects (the entity is ready when it answers; 5 s at most) and maps this process to `jobs`.
  ::testing::AssertionResult Map(const std::string& service, std::initializer_list<uint32_t> jobs) {
    std::unique_ptr<uet::entity::Client> client;
    std::string why;
    for (int i = 0; i < 500 && !client; ++i) {
      client = uet::entity::Client::connect(socket_, &why);
      if (!client) usleep(10000);
    }
    if (!client) return ::testing::AssertionFailure() << why;
    auto w = uet::entity::Writer::command(c::Cmd::JOB_MAP, c::kFlagRequest | c::kFlagAck, 1);
    w.u32(c::attr::pid, static_cast<uint32_t>(getpid())).str(c::attr::service, service);
    for (uint32_t j : jobs) w.u32(c::attr::job_id, j);
    auto got = client->call(w.finish());
    if (auto* p = std::get_if<uet::entity::Problem>(&got)) return ::testing::AssertionFailure() << p->what;
    const auto& r = std::get<uet::entity::Reply>(got);
    if (r.err != 0) return ::testing::AssertionFailure() << r.what;
    return ::testing::AssertionSuccess();
  }
  const std::string& socket() const { return socket_; }

 private:
  std::filesystem::path dir_;
  std::string socket_;
  pid_t pid_ = -1;
};

// The environment a test runs softuet in, restored after it.
class Env {
 public:
  Env(const std::string& socket, const std::string& service) {
    setenv("UET_ENTITY_SOCKET", socket.c_str(), 1);
    setenv("SOFTUET_ENTITY_SERVICE", service.c_str(), 1);
  }
  ~Env() {
    unsetenv("UET_ENTITY_SOCKET");
    unsetenv("SOFTUET_ENTITY_SERVICE");
    unsetenv("SOFTUET_JOB_ID");
  }
};

std::string service() { return "svc-" + std::to_string(getpid()); }

// fi_endpoint's return code for an RDM endpoint with the given hints' auth key (size 0: the indirect method).
int OpenEndpoint(const uint8_t* key, size_t key_size) {
  fi_info* hints = fi_allocinfo();
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_MSG;
  hints->fabric_attr->prov_name = strdup("softuet");
  fi_info* info = nullptr;
  int r = fi_getinfo(FI_VERSION(2, 0), nullptr, nullptr, 0, hints, &info);
  fi_freeinfo(hints);
  if (r) return r;
  if (key_size) {
    info->ep_attr->auth_key = static_cast<uint8_t*>(malloc(key_size));
    std::memcpy(info->ep_attr->auth_key, key, key_size);
    info->ep_attr->auth_key_size = key_size;
  }
  fid_fabric* fabric = nullptr;
  fid_domain* domain = nullptr;
  fid_ep* ep = nullptr;
  r = fi_fabric(info->fabric_attr, &fabric, nullptr);
  if (!r) r = fi_domain(fabric, info, &domain, nullptr);
  if (!r) r = fi_endpoint(domain, info, &ep, nullptr);
  if (ep) fi_close(&ep->fid);
  if (domain) fi_close(&domain->fid);
  if (fabric) fi_close(&fabric->fid);
  fi_freeinfo(info);
  return r;
}

bool as_root() { return geteuid() == 0; }

TEST(SoftuetEntity, DirectJobIdOpensOnlyWhenGranted) {
  if (!as_root()) GTEST_SKIP() << "mapping a JobID to a process is the launcher's part and needs uid 0";
  Entity entity;
  ASSERT_TRUE(entity.Map(service(), {kMapped}));
  Env env(entity.socket(), service());
  const uint8_t granted[3] = {kMapped & 0xFF, (kMapped >> 8) & 0xFF, kMapped >> 16};
  const uint8_t other[3] = {kOther & 0xFF, (kOther >> 8) & 0xFF, kOther >> 16};
  EXPECT_EQ(OpenEndpoint(granted, 3), 0);
  EXPECT_EQ(OpenEndpoint(other, 3), -FI_EACCES);
}

TEST(SoftuetEntity, IndirectJobIdNeedsAMap) {
  if (!as_root()) GTEST_SKIP() << "mapping a JobID to a process is the launcher's part and needs uid 0";
  Entity entity;
  ASSERT_TRUE(entity.Map("another-service", {kMapped}));
  Env env(entity.socket(), service());
  EXPECT_EQ(OpenEndpoint(nullptr, 0), -FI_EACCES);  // nothing mapped to this service
  ASSERT_TRUE(entity.Map(service(), {kMapped}));
  EXPECT_EQ(OpenEndpoint(nullptr, 0), 0);
  // SOFTUET_JOB_ID, the test-only override, is taken without asking (no entity answers here).
  Env none("/nonexistent/control.sock", service());
  setenv("SOFTUET_JOB_ID", "77", 1);
  EXPECT_EQ(OpenEndpoint(nullptr, 0), 0);
}

TEST(SoftuetEntity, AnEntityNotRunningAsRootIsNotBelieved) {
  if (!as_root()) GTEST_SKIP() << "starting an entity as another user needs uid 0";
  Entity impostor(65534);
  ASSERT_TRUE(impostor.Map(service(), {kMapped}));  // it would grant
  Env env(impostor.socket(), service());
  const uint8_t granted[3] = {kMapped & 0xFF, (kMapped >> 8) & 0xFF, kMapped >> 16};
  EXPECT_EQ(OpenEndpoint(granted, 3), -FI_ECONNREFUSED);
  EXPECT_EQ(OpenEndpoint(nullptr, 0), -FI_ECONNREFUSED);
}

TEST(SoftuetEntity, NoEntityAnsweringIsARefusal) {
  Env env("/nonexistent/control.sock", service());
  const uint8_t key[3] = {1, 0, 0};
  EXPECT_EQ(OpenEndpoint(key, 3), -FI_ECONNREFUSED);
  EXPECT_EQ(OpenEndpoint(nullptr, 0), -FI_ECONNREFUSED);
}

// The wire carries the JobID the entity mapped (the indirect method), and the AV method's keys are granted
// or refused by it.
class SoftuetWithEntity : public SoftuetApi {
 protected:
  void SetUp() override {
    if (!as_root()) GTEST_SKIP() << "mapping a JobID to a process is the launcher's part and needs uid 0";
    entity_ = std::make_unique<Entity>();
    ASSERT_TRUE(entity_->Map(service(), {kMapped}));
    env_ = std::make_unique<Env>(entity_->socket(), service());
    SoftuetApi::SetUp();
  }
  void TearDown() override {
    if (info_) SoftuetApi::TearDown();
    env_.reset();
    entity_.reset();
  }
  std::unique_ptr<Entity> entity_;
  std::unique_ptr<Env> env_;
};

TEST_F(SoftuetWithEntity, RequestsCarryTheMappedJobId) {
  uet::codec::Decoded d;
  ASSERT_NO_FATAL_FAILURE(SendOneRequest(&d));
  EXPECT_EQ(d.get(uet::wire::Field::uet_ses_job_id), kMapped);
}

// The PIDonFEP and initiator ID of the address allocation response are the endpoint's (spec 2.2.5.3.5.1).
TEST_F(SoftuetWithEntity, RequestsCarryTheEntitysInitiatorId) {
  std::string why;
  auto client = uet::entity::Client::connect(entity_->socket(), &why);
  ASSERT_TRUE(client) << why;
  // The request softuet sends: this process, its service and the FEP's address (SOFTUET_ADDR).
  auto w = uet::entity::Writer::command(c::Cmd::ADDR_ALLOC, c::kFlagRequest, 1);
  w.str(c::attr::service, service());
  const char* text = std::getenv("SOFTUET_ADDR");
  ASSERT_TRUE(text) << "the test runs with SOFTUET_ADDR";
  uint8_t ip[16];
  const bool v6 = inet_pton(AF_INET6, text, ip) == 1;
  ASSERT_TRUE(v6 || inet_pton(AF_INET, text, ip) == 1) << text;
  const size_t at = w.begin_nest(c::attr::address);
  w.bytes(v6 ? c::fep_address::ip6 : c::fep_address::ip, std::span<const uint8_t>(ip, v6 ? 16 : 4));
  w.end_nest(at);
  auto got = client->call(w.finish());
  ASSERT_TRUE(std::holds_alternative<uet::entity::Reply>(got));
  const auto& r = std::get<uet::entity::Reply>(got);
  ASSERT_FALSE(r.is_error) << r.what;
  const auto addr = r.attrs.nests(c::attr::address);
  ASSERT_EQ(addr.size(), 1u);
  const uint64_t initiator = *addr[0].num(c::fep_address::initiator_id);
  uet::codec::Decoded d;
  ASSERT_NO_FATAL_FAILURE(SendOneRequest(&d));
  EXPECT_EQ(d.get(uet::wire::Field::uet_ses_initiator), initiator);
}

class SoftuetAvWithEntity : public SoftuetWithEntity {
 protected:
  void AdjustHints(fi_info* hints) override { hints->domain_attr->auth_key_size = FI_AV_AUTH_KEY; }
};

TEST_F(SoftuetAvWithEntity, AnAuthKeyIsInsertedOnlyWhenGranted) {
  const uint8_t granted[3] = {kMapped & 0xFF, (kMapped >> 8) & 0xFF, kMapped >> 16};
  const uint8_t other[3] = {kOther & 0xFF, (kOther >> 8) & 0xFF, kOther >> 16};
  fi_addr_t h = FI_ADDR_NOTAVAIL;
  EXPECT_EQ(fi_av_insert_auth_key(av_, granted, 3, &h, 0), 0);
  EXPECT_EQ(fi_av_insert_auth_key(av_, other, 3, &h, 0), -FI_EACCES);
}

}  // namespace
}  // namespace softuet_test
