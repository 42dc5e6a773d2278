// uet-cred: shared credentials from the shell (after Cray's DRC): acquire, grant, revoke, access, release
// and list credentials, set limits, and tell the entity which workload-manager jobs start and end (what
// Slurm's prolog and epilog call, entity/slurm/).
//
// Exit status: 0 done; 1 the entity (or the token check) refused, its reason printed; 2 bad usage;
// 3 no entity answered.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "uet/entity/credentials.hpp"
#include "uet/entity/hex.hpp"

namespace {

namespace c = uet::control;
using uet::entity::Problem;

int fail(const Problem& p) {
  if (!p.refused) {
    std::fprintf(stderr, "uet-cred: %s\n", p.what.c_str());
    return 3;
  }
  std::fprintf(stderr, "uet-cred: refused (%s): %s\n", std::strerror(p.err), p.what.c_str());
  return 1;
}
int done(const std::optional<Problem>& p) { return p ? fail(*p) : 0; }

std::string flag_names(uint32_t f) {
  std::string s;
  if (f & c::cred::kFlag_persistent) s += "persistent,";
  if (f & c::cred::kFlag_node_insecure) s += "node_insecure,";
  if (!s.empty()) s.pop_back();
  return s.empty() ? "-" : s;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"uet-cred: shared credentials of the privileged entity (uet-entity)"};
  app.require_subcommand(1);
  std::string socket_path = uet::entity::default_socket();
  app.add_option("--socket", socket_path, "the entity's socket (default $UET_ENTITY_SOCKET or " + socket_path + ")");
  uint32_t cred = 0, job = 0, value = 0;
  std::optional<uint32_t> uid, gid, wlm_job;
  bool persistent = false, insecure = false, token = false, local = false, full = false;
  std::string service, token_hex, key_path;
  std::vector<uint32_t> pids, jobs;
  const auto positive = CLI::Range(1u, 0xFFFFFFFFu);

  auto* acquire = app.add_subcommand("acquire", "a new credential; prints its id and JobID");
  acquire->add_flag("--persistent", persistent, "lives until released, not with the job that acquired it");
  acquire->add_flag("--node-insecure", insecure, "several jobs on a node may hold it at once");
  auto* grant = app.add_subcommand("grant", "(its acquirer or root) add a uid, gid or job to the access list");
  auto* revoke = app.add_subcommand("revoke", "(its acquirer or root) take a uid, gid or job off the access list");
  for (auto* s : {grant, revoke}) {
    s->add_option("--cred", cred, "the credential")->required()->check(positive);
    auto* g = s->add_option_group("who", "exactly one of");
    g->add_option("--uid", uid, "a user id");
    g->add_option("--gid", gid, "a group id");
    g->add_option("--job", wlm_job, "a workload-manager job")->check(positive);
    g->require_option(1);
  }
  auto* access = app.add_subcommand("access", "take a reference; prints the JobID (and, with --token, the token)");
  access->add_option("--cred", cred, "the credential")->required()->check(positive);
  access->add_option("--service", service, "map the JobID to this process's service, for its endpoints");
  access->add_flag("--token", token, "also print a token the job's other processes access with");
  auto* token_access = app.add_subcommand("token-access", "access with a token, without asking the entity; prints the JobID");
  token_access->add_option("--token", token_hex, "the token, in hex")->required();
  token_access->add_option("--key", key_path, "the entity's token key (default: token.key beside the socket)");
  auto* release = app.add_subcommand("release", "drop this process's reference");
  release->add_option("--cred", cred, "the credential")->required()->check(positive);
  release->add_flag("--local", local, "every reference of this process's job (or uid) on this node");
  release->add_flag("--full", full, "(its acquirer or root) give the credential up");
  auto* list = app.add_subcommand("list", "(root) the credentials, a line each");
  list->add_option("--uid", uid, "only those this user acquired");
  list->add_option("--job", wlm_job, "only those acquired in this job")->check(positive);
  auto* limit = app.add_subcommand("limit", "(root) most credentials held at once: global, per user, group or job");
  std::string scope;
  limit->add_option("scope", scope, "global, user, group or job")->required()->check(CLI::IsMember({"global", "user", "group", "job"}));
  limit->add_option("value", value, "the limit")->required();
  limit->add_option("--id", uid, "that user's, group's or job's own limit (else the scope's default)");
  auto* start = app.add_subcommand("job-start", "(root) a workload-manager job runs (Slurm's prolog)");
  start->add_option("--job", job, "the job")->required()->check(positive);
  start->add_option("--pid", pids, "a process of the job (and its children); repeat for several")->check(positive);
  auto* end = app.add_subcommand("job-end", "(root) a job ended (Slurm's epilog): its references go");
  end->add_option("--job", job, "the job")->required()->check(positive);
  auto* active = app.add_subcommand("jobs-active", "(root) these jobs, and no other, run now (reconciliation)");
  active->add_option("jobs", jobs, "the jobs")->check(positive);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  if (*token_access) {
    const auto bytes = uet::entity::unhex(token_hex);
    if (!bytes) {
      std::fprintf(stderr, "uet-cred: --token is not hex\n");
      return 2;
    }
    if (key_path.empty()) key_path = socket_path.substr(0, socket_path.rfind('/') + 1) + "token.key";
    auto key = uet::entity::read_token_key(key_path);
    if (auto* p = std::get_if<Problem>(&key)) return fail(*p);
    auto got = uet::entity::Credentials::access_with_token(*bytes, std::get<std::vector<uint8_t>>(key));
    if (auto* p = std::get_if<Problem>(&got)) {
      Problem refused = *p;
      refused.refused = true;
      return fail(refused);
    }
    std::printf("%u\n", std::get<uet::entity::TokenClaims>(got).job_id);
    return 0;
  }
  std::string why;
  auto client = uet::entity::Client::connect(socket_path, &why);
  if (!client) {
    std::fprintf(stderr, "uet-cred: %s\n", why.c_str());
    return 3;
  }
  uet::entity::Credentials creds(*client);
  using uet::entity::Subject;
  const Subject who = uid ? Subject::uid : gid ? Subject::gid : Subject::job;
  const uint32_t id = uid ? *uid : gid ? *gid : wlm_job.value_or(0);
  if (*acquire) {
    auto got = creds.acquire((persistent ? c::cred::kFlag_persistent : 0) | (insecure ? c::cred::kFlag_node_insecure : 0));
    if (auto* p = std::get_if<Problem>(&got)) return fail(*p);
    std::printf("%u %u\n", std::get<uet::entity::CredGrant>(got).cred, std::get<uet::entity::CredGrant>(got).job_id);
    return 0;
  }
  if (*grant) return done(creds.grant(cred, who, id));
  if (*revoke) return done(creds.revoke(cred, who, id));
  if (*access) {
    auto got = creds.access(cred, service, token);
    if (auto* p = std::get_if<Problem>(&got)) return fail(*p);
    const auto& g = std::get<uet::entity::CredGrant>(got);
    std::printf("%u\n", g.job_id);
    if (token) std::printf("%s\n", uet::entity::hex(g.token).c_str());
    return 0;
  }
  if (*release) return done(creds.release(cred, (local ? c::cred::kFlag_local : 0) | (full ? c::cred::kFlag_full : 0)));
  if (*list) {
    auto got = creds.list(uid, wlm_job);
    if (auto* p = std::get_if<Problem>(&got)) return fail(*p);
    std::printf("cred job_id uid gid job flags refs state grants\n");
    for (const auto& e : std::get<std::vector<uet::entity::CredInfo>>(got))
      std::printf("%u %u %u %u %u %s %u %s %s\n", e.cred, e.job_id, e.uid, e.gid, e.wlm_job, flag_names(e.flags).c_str(),
                  e.refs, e.released ? "released" : "active", e.grants.empty() ? "-" : e.grants.c_str());
    return 0;
  }
  if (*limit) {
    const auto sc = scope == "global" ? c::cred::Scope::global : scope == "user" ? c::cred::Scope::user
                    : scope == "group" ? c::cred::Scope::group : c::cred::Scope::job;
    return done(creds.limit(sc, uid, value));
  }
  if (*start) return done(creds.job_start(job, pids));
  if (*end) return done(creds.job_end(job));
  return done(creds.jobs_active(jobs));
}
