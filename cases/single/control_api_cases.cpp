// The UET Control API between a provider and its privileged entity (UEC 1.0 §2.2.5.3.5.1, §2.2.11, §2.2):
// at endpoint creation the provider sends an address allocation request naming the FEP's IP address, its
// process and its service; the entity's response (JobID, address mode, PIDonFEP, initiator ID) becomes the
// endpoint's address; every message is one of the UET family's; and an entity not running as root is not
// believed. What the provider asked and was told is read from the entity's trace (manifest
// privileged_entity.trace); the message table is spec/control.yaml (a stand-in for the spec's figures).
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <rdma/fi_cm.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "entity_fixture.hpp"
#include "impostor_folders.hpp"
#include "uet/control/control_gen.hpp"
#include "uet/wire/wire_gen.hpp"

namespace uet::cases {
namespace {

namespace w = uet::wire;
using nlohmann::json;

constexpr uint32_t kAddressJob = 0x5E0011, kImpostorJob = 0x5E0012;
constexpr auto kImpostorDeadline = std::chrono::seconds(10);

class ControlApi : public EntityCase {
 protected:
  void SetUp() override {
    EntityCase::SetUp();
    if (IsSkipped()) return;
    UET_NOT_APPLICABLE_IF(manifest().privileged_entity.trace.empty(), reason::kManifestLacksHook,
                          "the provider's entity keeps no trace of the Control API (privileged_entity.trace): what the "
                          "provider asks it cannot be seen");
  }
  // The records of this process's requests that arrived after the first `skip` records of the trace.
  static std::vector<json> Mine(size_t skip) {
    auto all = control_trace(manifest().privileged_entity.trace);
    std::vector<json> out;
    for (size_t i = skip; i < all.size(); ++i)
      if (all[i].value("pid", 0) == getpid()) out.push_back(std::move(all[i]));
    return out;
  }
  static size_t TraceLength() { return control_trace(manifest().privileged_entity.trace).size(); }
  // An enabled pair of the indirect method, with kAddressJob mapped; the trace's length before it opened.
  size_t OpenAddressed(Loopback& lb) {
    Grant(kAddressJob);
    const size_t before = TraceLength();
    const int rc = lb.open(Spec(0));
    EXPECT_EQ(rc, 0) << "the indirect method with JobID " << kAddressJob << " mapped: " << fi_refused(lb.failed, rc);
    if (rc == 0) {
      EXPECT_EQ(lb.enable(), 0);
    }
    return before;
  }
  // Endpoint 0's address (fi_getname): the Table 2-10 fields at spec/wire.yaml's offsets.
  static std::vector<uint8_t> Name(Loopback& lb) {
    std::vector<uint8_t> a(256);
    size_t len = a.size();
    EXPECT_EQ(fi_getname(&lb.ep[0]->fid, a.data(), &len), 0);
    a.resize(len);
    return a;
  }
};

TEST_F(ControlApi, EndpointCreationSendsAnAddressAllocationRequest) {
  covers({"2.2.5.3.5.1-a", "2.2.5.3.5.1-b", "2.2.5.3.5.1-o", "2.2.11-a", "2.2.11-b", "2.2-d"});
  Loopback lb;
  const size_t before = OpenAddressed(lb);
  if (HasFailure()) return;
  const auto mine = Mine(before);
  ASSERT_FALSE(mine.empty()) << "the provider sent the entity nothing while it opened two endpoints "
                             << per_choice("control-api-table");
  const auto name = Name(lb);
  const AddressLayout& layout = layout_of(manifest());
  ASSERT_EQ(layout.misfit(name.size()), "");
  const bool v6 = *layout.get(name, AddrField::flags) >> w::k_addr_flag_ipv6 & 1;
  const std::string fa = to_hex(layout.fa(name)->data(), v6 ? 16 : 4);
  size_t requests = 0;
  for (const json& r : mine) {
    // A message outside the UET family's table (spec/control.yaml) is no Control API message.
    EXPECT_FALSE(r["cmd"].is_null()) << "the provider sent a message the Control API table does not allow: "
                                     << r.value("invalid", "?") << " " << per_choice("control-api-table");
    EXPECT_EQ(r.value("family", 0), control::kFamilyId) << "a message of another netlink family";
    if (r["cmd"] != "ADDR_ALLOC") continue;
    ++requests;
    const json& a = r["attrs"];
    EXPECT_TRUE(a.contains("service")) << "the address allocation request names no service: " << a.dump();
    EXPECT_EQ(a.value("pid", 0), getpid()) << "the request does not name the process (Table 2-18): " << a.dump();
    const json addr = a.value("address", json::object());
    EXPECT_EQ(addr.value(v6 ? "ip6" : "ip", ""), fa)
        << "the request's FEP IP address is not the one in the endpoint's address: " << a.dump();
  }
  EXPECT_GE(requests, 1u) << "two endpoints opened without an address allocation request to the entity "
                          << per_choice("control-api-table");
}

TEST_F(ControlApi, TheAllocationResponseIsTheEndpointsAddress) {
  covers({"2.2.5.3.5.1-d", "2.2.5.3.5.1-e", "2.2.5.3.5.1-g", "2.2.4.1-c"});
  Loopback lb;
  const size_t before = OpenAddressed(lb);
  if (HasFailure()) return;
  json response;
  for (const json& r : Mine(before))
    if (r["cmd"] == "ADDR_ALLOC" && !r["replies"].empty() && r["replies"][0].contains("attrs"))
      response = r["replies"][0]["attrs"];
  ASSERT_FALSE(response.is_null()) << "no address allocation request of this process was answered "
                                   << per_choice("control-api-table");
  for (const char* field : {"job_id", "address_mode", "address"})
    EXPECT_TRUE(response.contains(field)) << "the response lacks " << field << ": " << response.dump();
  EXPECT_EQ(response.value("job_id", 0u), kAddressJob) << "the response's JobID is not the one mapped at job init";
  const json addr = response.value("address", json::object());
  ASSERT_TRUE(addr.contains("pid_on_fep") && addr.contains("initiator_id")) << response.dump();
  const auto name = Name(lb);
  const AddressLayout& layout = layout_of(manifest());
  ASSERT_EQ(layout.misfit(name.size()), "");
  EXPECT_EQ(layout.get(name, AddrField::pid_on_fep), addr["pid_on_fep"].get<uint32_t>())
      << "the endpoint's PIDonFEP is not the one the entity allocated (" << layout.basis() << ")";
  EXPECT_EQ(layout.get(name, AddrField::initiator_id), addr["initiator_id"].get<uint32_t>()) << "the endpoint's initiator ID is not the entity's";
}

// Whether something serves `path` (an AF_UNIX SOCK_SEQPACKET socket).
bool serving(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
  const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  const bool ok = fd >= 0 && connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0;
  if (fd >= 0) close(fd);
  return ok;
}

TEST_F(ControlApi, AnEntityNotRunningAsRootIsNotBelieved) {
  covers({"2.2.5.3.5.1-f"});
  const auto& pe = manifest().privileged_entity;
  UET_NOT_APPLICABLE_IF(!pe.impostor.declared, reason::kManifestLacksHook,
                        "the manifest declares no impostor entity (privileged_entity.impostor): the provider's Control "
                        "API is a kernel's, whose root check the suite cannot put an impostor in front of");
  const ImpostorFolders folders(pe.impostor.user);
  ASSERT_TRUE(folders.problem().empty()) << folders.problem();
  const std::map<std::string, std::string> where{{"dir", folders.own_dir()}, {"bin_dir", folders.bin_dir()},
                                                 {"uid", std::to_string(folders.uid())},
                                                 {"gid", std::to_string(folders.gid())}};
  const std::string socket = folders.own_dir() + "/control.sock";
  const pid_t impostor = start_command(pe.impostor.start, where);
  ASSERT_GT(impostor, 0) << "cannot start " << joined(pe.impostor.start);
  const auto end = std::chrono::steady_clock::now() + kImpostorDeadline;
  while (!serving(socket) && std::chrono::steady_clock::now() < end && waitpid(impostor, nullptr, WNOHANG) == 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  int rc = -1;
  std::string out;
  if (serving(socket)) {
    auto grant_values = where;
    grant_values.emplace("job", std::to_string(kImpostorJob));
    const int granted = run_command(pe.impostor.grant, grant_values, &out);
    EXPECT_EQ(granted, 0) << "the impostor's grant command failed: " << out;
    ScopedEnvironment at_impostor(pe.impostor.environment, where);
    Loopback lb;
    rc = lb.open(Spec(kImpostorJob));
    if (rc == 0) rc = lb.enable();
  } else {
    ADD_FAILURE() << "the impostor entity did not serve " << socket << " within 10 s: " << joined(pe.impostor.start);
  }
  kill(impostor, SIGTERM);
  waitpid(impostor, nullptr, 0);
  EXPECT_NE(rc, 0) << "an endpoint opened with JobID " << kImpostorJob
                   << ", granted by an entity that does not run as root (a kernel driver accepts responses only from "
                      "a privileged process running as root)";
}

}  // namespace
}  // namespace uet::cases
