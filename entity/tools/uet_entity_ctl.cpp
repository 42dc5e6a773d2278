// uet-entity-ctl: talk to the privileged entity (uet-entity) from the shell: map and unmap JobIDs
// (the launcher's part, as root), list the maps, and ask as a process what it may use.
//
// Exit status: 0 done; 1 the entity refused (its reason is printed); 2 bad usage; 3 no entity answered.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "uet/entity/client.hpp"
#include "uet/entity/hex.hpp"

namespace {

namespace c = uet::control;
using uet::entity::Client;
using uet::entity::Problem;
using uet::entity::Reply;
using uet::entity::Writer;

int report(const std::variant<Reply, Problem>& got, Reply* out) {
  if (const auto* p = std::get_if<Problem>(&got)) {
    std::fprintf(stderr, "uet-entity-ctl: %s\n", p->what.c_str());
    return 3;
  }
  const Reply& r = std::get<Reply>(got);
  if (r.is_error && r.err != 0) {
    std::fprintf(stderr, "uet-entity-ctl: refused (%s): %s\n", std::strerror(-r.err), r.what.c_str());
    return 1;
  }
  if (out) *out = r;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"uet-entity-ctl: ask the privileged entity (uet-entity) to map, unmap, list or check UET JobIDs"};
  app.require_subcommand(1);
  std::string socket_path = uet::entity::default_socket();
  app.add_option("--socket", socket_path, "the entity's socket (default $UET_ENTITY_SOCKET or " + socket_path + ")");
  uint32_t pid = 0;
  std::string service;
  std::vector<uint32_t> jobs;
  const auto job_range = CLI::Range(1u, 0xFFFFFFu);
  auto* map = app.add_subcommand("map", "(root) map JobIDs to a process's service: the job launcher's part");
  map->add_option("--pid", pid, "the process")->required()->check(CLI::Range(1u, 0xFFFFFFFFu));
  map->add_option("--service", service, "its service name")->required();
  map->add_option("--job", jobs, "a JobID (repeat for several)")->required()->check(job_range);
  uint32_t wlm_job = 0, alloc_job = 0;
  map->add_option("--wlm-job", wlm_job, "the workload-manager job the map belongs to: its end (uet-cred job-end) withdraws it")
      ->check(CLI::Range(1u, 0xFFFFFFFFu));
  map->add_option("--alloc-job", alloc_job,
                  "the JobID address allocation answers with instead of --job's (a configuration system's)")
      ->check(job_range);
  std::vector<uint32_t> sdis;
  const auto sdi_range = CLI::Range(0u, 0xFFFFFFu);
  map->add_option("--sdi", sdis, "a secure domain bound to the first --job's traffic (repeat for several)")
      ->check(sdi_range);
  auto* key_update = app.add_subcommand("key-update", "(root) set a secure domain's key: its processes are sent it");
  std::string key_hex;
  uint32_t epoch = 0;
  key_update->add_option("--sdi", sdis, "the secure domain")->required()->expected(1)->check(sdi_range);
  key_update->add_option("--key", key_hex, "the key, as hex")->required();
  key_update->add_option("--epoch", epoch, "its epoch")->required()->check(CLI::Range(0u, 0xFFFFu));
  key_update->add_option("--job", jobs, "the JobID the domain is bound to (only its processes get the key)")
      ->expected(1)->check(job_range);
  auto* unmap = app.add_subcommand("unmap", "(root) withdraw a process's JobIDs (all of them without --job)");
  unmap->add_option("--pid", pid, "the process")->required()->check(CLI::Range(1u, 0xFFFFFFFFu));
  unmap->add_option("--service", service, "its service name")->required();
  unmap->add_option("--job", jobs, "a JobID to withdraw (repeat for several)")->check(job_range);
  auto* list = app.add_subcommand("list", "(root) the maps in force, one 'pid service job' line each");
  list->add_option("--pid", pid, "only this process");
  list->add_option("--service", service, "only this service name");
  auto* get = app.add_subcommand("get", "the JobIDs mapped to this process (the indirect method)");
  get->add_option("--service", service, "the service name")->required();
  auto* check = app.add_subcommand("check", "is this JobID granted to this process? (the direct and AV methods)");
  check->add_option("--service", service, "the service name")->required();
  check->add_option("--job", jobs, "the JobID")->required()->expected(1)->check(job_range);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  const auto key = uet::entity::unhex(key_hex);
  if (*key_update && (!key || key->size() != c::policy_of(c::attr::key)->len)) {
    std::fprintf(stderr, "uet-entity-ctl: --key %s is not %u bytes of hex\n", key_hex.c_str(),
                 static_cast<unsigned>(c::policy_of(c::attr::key)->len));
    return 2;
  }
  std::string why;
  auto client = Client::connect(socket_path, &why);
  if (!client) {
    std::fprintf(stderr, "uet-entity-ctl: %s\n", why.c_str());
    return 3;
  }
  const uint16_t flags = c::kFlagRequest | c::kFlagAck;
  Reply reply;
  if (*map || *unmap) {
    Writer w = Writer::command(*map ? c::Cmd::JOB_MAP : c::Cmd::JOB_UNMAP, flags, client->next_seq());
    w.u32(c::attr::pid, pid).str(c::attr::service, service);
    for (uint32_t j : jobs) w.u32(c::attr::job_id, j);
    if (*map && wlm_job) w.u32(c::attr::wlm_job, wlm_job);
    if (*map && alloc_job) w.u32(c::attr::alloc_job_id, alloc_job);
    for (uint32_t sdi : *map ? sdis : std::vector<uint32_t>{}) {
      const size_t at = w.begin_nest(c::attr::sec_bindings);
      w.u32(c::security_binding::sdi, sdi).u32(c::security_binding::job_id, jobs.at(0));
      w.end_nest(at);
    }
    return report(client->call(w.finish()), nullptr);
  }
  if (*key_update) {
    Writer w = Writer::command(c::Cmd::KEY_UPDATE, flags, client->next_seq());
    w.u32(c::attr::sdi, sdis.at(0)).bytes(c::attr::key, *key).u16(c::attr::epoch, static_cast<uint16_t>(epoch));
    if (!jobs.empty()) w.u32(c::attr::job_id, jobs.at(0));
    return report(client->call(w.finish()), nullptr);
  }
  if (*list) {
    Writer w = Writer::command(c::Cmd::JOB_LIST, flags, client->next_seq());
    if (pid) w.u32(c::attr::pid, pid);
    if (!service.empty()) w.str(c::attr::service, service);
    std::vector<std::vector<uint8_t>> buffers;
    auto got = client->call_all(w.finish(), &buffers);
    if (const auto* p = std::get_if<Problem>(&got)) return report(*p, nullptr);
    for (const Reply& part : std::get<std::vector<Reply>>(got)) {
      if (const int rc = report(part, nullptr)) return rc;
      for (const auto& m : part.attrs.nests(c::attr::map))
        std::printf("%llu %s %llu\n", static_cast<unsigned long long>(m.num(c::job_map::pid).value_or(0)),
                    m.str(c::job_map::service).value_or("").c_str(),
                    static_cast<unsigned long long>(m.num(c::job_map::job_id).value_or(0)));
    }
    return 0;
  }
  if (*get) {
    Writer w = Writer::command(c::Cmd::JOB_GET, flags, client->next_seq());
    w.str(c::attr::service, service);
    if (const int rc = report(client->call(w.finish()), &reply)) return rc;
    for (uint64_t j : reply.attrs.nums(c::attr::job_id)) std::printf("%llu\n", static_cast<unsigned long long>(j));
    return 0;
  }
  Writer w = Writer::command(c::Cmd::JOB_CHECK, flags, client->next_seq());
  w.str(c::attr::service, service).u32(c::attr::job_id, jobs.at(0));
  return report(client->call(w.finish()), nullptr);
}
