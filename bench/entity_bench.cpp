// The privileged entity's benchmark, in one run on this machine (./uet bench entity):
//   - access through the daemon: CRED_ACCESS of N credentials, each a new reference (a store write), by
//     one process (its rate is the round trip's), and by --clients processes at once (the daemon's rate);
//   - cached repeat access: the same N again by one process, each served from the references held;
//   - token access: the HMAC check of a token against the caller's job, as a FEP's privileged side makes
//     it with no round trip to the daemon;
//   - endpoint open, as an application opens one: fi_fabric, fi_domain, CQ, AV, fi_endpoint, binds,
//     fi_enable, then the closes, of a softuet RDM endpoint; with the entity asked (UET_ENTITY_SOCKET: one
//     connection and the address allocation request) and without it, in alternating rounds. fi_endpoint
//     alone is timed too, to show the entity's added microseconds on their own.
// Ratios against the baselines of the same run: token / daemon (target >= 10), open with / without the
// entity (target <= 1.5); the daemon's rate against its target, 20,000 accesses/s.
// Usage: entity-bench ENTITY_BINARY [--count N] [--clients K] [--rounds R] [--json FILE]. Exit 0; 3 when it
// cannot run.
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "uet/entity/credentials.hpp"
#include "uet/entity/token.hpp"

namespace {

using Clock = std::chrono::steady_clock;
namespace c = uet::control;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "entity-bench: %s\n", why.c_str());
  std::exit(3);
}

struct Entity {
  std::filesystem::path dir;
  pid_t pid = -1;
  std::string socket;
  Entity(const char* binary) {
    dir = std::filesystem::temp_directory_path() / ("uet-entity-bench-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    socket = (dir / "control.sock").string();
    pid = fork();
    if (pid == 0) {
      const std::string store = (dir / "entity.db").string();
      execl(binary, "uet-entity", "--socket", socket.c_str(), "--store", store.c_str(), nullptr);
      _exit(127);
    }
  }
  ~Entity() {
    kill(pid, SIGTERM);
    waitpid(pid, nullptr, 0);
    std::filesystem::remove_all(dir);
  }
  std::unique_ptr<uet::entity::Client> connect() {
    std::string why;
    for (int i = 0; i < 1000; ++i) {
      if (auto cl = uet::entity::Client::connect(socket, &why)) return cl;
      usleep(5000);
    }
    die("the entity did not answer: " + why);
  }
};

fi_info* softuet_info() {
  fi_info* hints = fi_allocinfo();
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_MSG;
  hints->fabric_attr->prov_name = strdup("softuet");
  fi_info* info = nullptr;
  if (fi_getinfo(FI_VERSION(2, 0), nullptr, nullptr, 0, hints, &info)) die("fi_getinfo found no softuet");
  fi_freeinfo(hints);
  return info;
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// Microseconds of an application's whole endpoint open and close (median of `n`), softuet reading the
// environment as it is now.
double full_open_us(fi_info* info, int n) {
  std::vector<double> us;
  for (int i = 0; i < n; ++i) {
    fid_fabric* fabric = nullptr;
    fid_domain* domain = nullptr;
    fid_cq* cq = nullptr;
    fid_av* av = nullptr;
    fid_ep* ep = nullptr;
    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_CONTEXT;
    fi_av_attr av_attr{};
    const auto t = Clock::now();
    int rc = fi_fabric(info->fabric_attr, &fabric, nullptr);
    if (!rc) rc = fi_domain(fabric, info, &domain, nullptr);
    if (!rc) rc = fi_cq_open(domain, &cq_attr, &cq, nullptr);
    if (!rc) rc = fi_av_open(domain, &av_attr, &av, nullptr);
    if (!rc) rc = fi_endpoint(domain, info, &ep, nullptr);
    if (!rc) rc = fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV);
    if (!rc) rc = fi_ep_bind(ep, &av->fid, 0);
    if (!rc) rc = fi_enable(ep);
    if (rc) die("opening an endpoint: " + std::string(fi_strerror(-rc)));
    fi_close(&ep->fid);
    fi_close(&av->fid);
    fi_close(&cq->fid);
    fi_close(&domain->fid);
    fi_close(&fabric->fid);
    us.push_back(seconds_since(t) * 1e6);
  }
  return median(us);
}

// Microseconds of fi_endpoint + fi_close alone (median of `n`) in one domain.
double endpoint_only_us(fi_info* info, int n) {
  fid_fabric* fabric = nullptr;
  fid_domain* domain = nullptr;
  if (fi_fabric(info->fabric_attr, &fabric, nullptr) || fi_domain(fabric, info, &domain, nullptr))
    die("softuet opens no domain");
  std::vector<double> us;
  for (int i = 0; i < n; ++i) {
    fid_ep* ep = nullptr;
    const auto t = Clock::now();
    const int rc = fi_endpoint(domain, info, &ep, nullptr);
    if (rc) die("fi_endpoint: " + std::string(fi_strerror(-rc)));
    fi_close(&ep->fid);
    us.push_back(seconds_since(t) * 1e6);
  }
  fi_close(&domain->fid);
  fi_close(&fabric->fid);
  return median(us);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) die("usage: entity-bench ENTITY_BINARY [--count N] [--rounds R] [--json FILE]");
  int count = 20000, rounds = 5, clients = 4;
  std::string json_path;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--count")) count = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--rounds")) rounds = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--clients")) clients = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--json")) json_path = argv[i + 1];
    else die(std::string("unknown option ") + argv[i]);
  }
  if (count < 2 || rounds < 1 || clients < 1) die("--count (2 or more), --clients and --rounds must be positive");
  if (geteuid() != 0) die("the benchmark maps JobIDs (the launcher's part) and needs uid 0");
  Entity entity(argv[1]);
  auto client = entity.connect();
  uet::entity::Credentials creds(*client);
  constexpr uint32_t kJob = 77;
  if (auto p = creds.job_start(kJob, {static_cast<uint32_t>(getpid())})) die(p->what);
  std::vector<uint32_t> ids;
  for (int i = 0; i < count; ++i) {
    auto got = creds.acquire(c::cred::kFlag_persistent | c::cred::kFlag_node_insecure);
    if (auto* p = std::get_if<uet::entity::Problem>(&got)) die("acquire: " + p->what);
    ids.push_back(std::get<uet::entity::CredGrant>(got).cred);
  }
  auto rate = [&](const std::vector<uint32_t>& which, auto&& one) {
    const auto t = Clock::now();
    for (uint32_t id : which) one(id);
    return which.size() / seconds_since(t);
  };
  auto access_ok = [&](uet::entity::Credentials& cr, uint32_t id) {
    const auto got = cr.access(id);
    if (const auto* p = std::get_if<uet::entity::Problem>(&got)) die("access: " + p->what);
  };
  // One process: the first half of the credentials, each a new reference, then each again (cached).
  const std::vector<uint32_t> first(ids.begin(), ids.begin() + count / 2), second(ids.begin() + count / 2, ids.end());
  const double daemon_one = rate(first, [&](uint32_t id) { access_ok(creds, id); });
  const double cached = rate(first, [&](uint32_t id) { access_ok(creds, id); });
  // `clients` processes at once, the second half between them: every access a new reference.
  const auto t_many = Clock::now();
  std::vector<pid_t> kids;
  for (int k = 0; k < clients; ++k) {
    const pid_t kid = fork();
    if (kid == 0) {
      std::string why;
      auto own = uet::entity::Client::connect(entity.socket, &why);
      if (!own) _exit(3);
      uet::entity::Credentials mine(*own);
      for (size_t i = k; i < second.size(); i += clients)
        if (std::holds_alternative<uet::entity::Problem>(mine.access(second[i]))) _exit(1);
      _exit(0);
    }
    kids.push_back(kid);
  }
  for (pid_t kid : kids) {
    int status = 0;
    waitpid(kid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) die("a client process failed its accesses");
  }
  const double daemon = second.size() / seconds_since(t_many);
  auto with_token = creds.access(ids[0], "", true);
  if (auto* p = std::get_if<uet::entity::Problem>(&with_token)) die("token: " + p->what);
  const auto token = std::get<uet::entity::CredGrant>(with_token).token;
  auto key = uet::entity::read_token_key((entity.dir / "token.key").string());
  if (auto* p = std::get_if<uet::entity::Problem>(&key)) die(p->what);
  const auto& k = std::get<std::vector<uint8_t>>(key);
  const double tokens = rate(first, [&](uint32_t) {
    const auto now = static_cast<uint64_t>(std::time(nullptr));
    if (!std::holds_alternative<uet::entity::TokenClaims>(uet::entity::verify_token(token, k, kJob, now)))
      die("token refused");
  });

  // Endpoint open: the indirect method's JobID mapped to this process for softuet's service.
  const std::string service = "bench";
  auto w = uet::entity::Writer::command(c::Cmd::JOB_MAP, c::kFlagRequest | c::kFlagAck, client->next_seq());
  w.u32(c::attr::pid, static_cast<uint32_t>(getpid())).str(c::attr::service, service).u32(c::attr::job_id, 0x123);
  if (std::get<uet::entity::Reply>(client->call(w.finish())).err) die("JOB_MAP refused");
  setenv("SOFTUET_ENTITY_SERVICE", service.c_str(), 1);
  unsetenv("SOFTUET_JOB_ID");
  fi_info* info = softuet_info();
  std::vector<double> without, with, ep_without, ep_with;
  for (int r = 0; r < rounds; ++r) {  // alternating, so a slow spell of the machine falls on both
    unsetenv("UET_ENTITY_SOCKET");
    without.push_back(full_open_us(info, 50));
    ep_without.push_back(endpoint_only_us(info, 200));
    setenv("UET_ENTITY_SOCKET", entity.socket.c_str(), 1);
    with.push_back(full_open_us(info, 50));
    ep_with.push_back(endpoint_only_us(info, 200));
  }
  fi_freeinfo(info);
  const double open_without = median(without), open_with = median(with);
  const double ep_plain = median(ep_without), ep_entity = median(ep_with);
  std::printf("privileged entity benchmark: %d credentials, %d client processes, endpoint opens 50 x %d rounds (medians)\n",
              count, clients, rounds);
  std::printf("  access through the daemon, %d processes %8.0f /s   target >= 20000: %s\n", clients, daemon,
              daemon >= 20000 ? "met" : "MISSED");
  std::printf("  access through the daemon, 1 process   %8.0f /s   (one round trip at a time)\n", daemon_one);
  std::printf("  cached repeat access, 1 process        %8.0f /s   %.1fx one process's daemon path\n", cached,
              cached / daemon_one);
  std::printf("  token access (no daemon), 1 process    %8.0f /s   %.1fx the daemon's rate; target >= 10x: %s\n", tokens,
              tokens / daemon, tokens / daemon >= 10 ? "met" : "MISSED");
  std::printf("  endpoint open, no entity               %8.1f us\n", open_without);
  std::printf("  endpoint open, entity                  %8.1f us   %.2fx; target <= 1.5x: %s\n", open_with,
              open_with / open_without, open_with / open_without <= 1.5 ? "met" : "MISSED");
  std::printf("  fi_endpoint alone: %.1f us without the entity, %.1f us with it (the request's round trip)\n", ep_plain,
              ep_entity);
  if (!json_path.empty()) {
    std::ofstream out(json_path);
    out << "{\"count\": " << count << ", \"clients\": " << clients << ", \"rounds\": " << rounds
        << ", \"access_per_s\": " << daemon << ", \"access_one_process_per_s\": " << daemon_one
        << ", \"cached_per_s\": " << cached << ", \"token_per_s\": " << tokens << ", \"open_us_without\": " << open_without
        << ", \"open_us_with\": " << open_with << ", \"fi_endpoint_us_without\": " << ep_plain
        << ", \"fi_endpoint_us_with\": " << ep_entity << "}\n";
  }
  return 0;
}
