// uet-entity: the privileged entity for software FEPs. It plays both roles the spec separates: the
// provider's "kernel driver" side of the UET Control API and the privileged process (job launcher or
// configuration system) that assigns JobIDs. spec/control.yaml is the message and attribute table.
//
// Exit status: 0 stopped by SIGINT/SIGTERM; 2 bad usage; 3 cannot open its store (or it is damaged), write its
// token key or trace, or serve its socket.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <optional>
#include <vector>

#include "handler.hpp"
#include "private_file.hpp"
#include "server.hpp"
#include "store.hpp"

namespace {
std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop.store(true); }

// The jobs the workload manager says run: one number per line of `command`'s output (e.g. squeue -h -t
// PD,CF,R,S -o %A: a completing job has ended for its processes).
std::vector<uint32_t> active_jobs(const std::string& command) {
  FILE* p = popen(command.c_str(), "r");
  if (!p) throw std::runtime_error("cannot run --active-jobs '" + command + "'");
  std::vector<uint32_t> jobs;
  unsigned long job = 0;
  while (std::fscanf(p, "%lu", &job) == 1) jobs.push_back(static_cast<uint32_t>(job));
  if (pclose(p) != 0) throw std::runtime_error("--active-jobs '" + command + "' failed; nothing was reconciled");
  return jobs;
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"uet-entity: assigns and checks UET JobIDs for the processes of this node (the UET Control API "
               "of spec/control.yaml over an AF_UNIX SOCK_SEQPACKET socket)"};
  std::string socket_path = "/run/uet-entity/control.sock";
  std::string store_path = "/var/lib/uet-entity/entity.db";
  app.add_option("--socket", socket_path, "the socket to serve (default " + socket_path + ")");
  app.add_option("--store", store_path, "the SQLite database of what outlives a restart (default " + store_path + ")");
  std::string token_key_path, active_command, trace_path;
  app.add_option("--trace", trace_path, "append every request and its replies to this file, a JSON line each "
                 "(mode 0600; secure-domain keys and tokens redacted)");
  uet::entity::TraceLimits limits;
  app.add_option("--trace-max-bytes", limits.max_bytes,
                 "the trace stops growing at this size, its last line saying so (default 64 MiB)")
      ->check(CLI::Range(uint64_t{256}, uint64_t{1} << 40));
  app.add_flag("--trace-keys", limits.keys, "record secure-domain keys and access tokens in the trace, in hex");
  app.add_option("--token-key", token_key_path, "where to write the token key (default: token.key beside the socket)");
  app.add_option("--active-jobs", active_command,
                 "a command printing the workload manager's running jobs, one per line, run at start: the references "
                 "of every other job go (e.g. 'squeue -h -t PD,CF,R,S -o %A')");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  struct sigaction sa{};
  sa.sa_handler = on_signal;  // no SA_RESTART: poll returns at once
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
  // Whatever a library makes here is the entity's alone; the socket, which others must reach, is opened by chmod.
  umask(077);
  try {
    uet::entity::Store store(store_path);
    uet::entity::Handler handler(store);
    if (token_key_path.empty()) token_key_path = socket_path.substr(0, socket_path.rfind('/') + 1) + "token.key";
    // The key is written whole into a new file of this entity's: never into a name another user made.
    uet::entity::write_private_file(token_key_path, handler.creds().token_key());
    if (const std::string open = uet::entity::others_may_replace(token_key_path); !open.empty())
      std::fprintf(stderr, "uet-entity: warning: the token key %s is written, but %s: another user may replace "
                   "it under its readers (keep it in a folder only root may write)\n", token_key_path.c_str(),
                   open.c_str());
    // Reconciliation after a restart: references of processes gone, and of jobs that ended meanwhile.
    const size_t dead = handler.creds().drop_dead_processes();
    const size_t ended = active_command.empty() ? 0 : handler.creds().reconcile(active_jobs(active_command));
    if (dead || ended)
      std::fprintf(stderr, "uet-entity: reconciled: references of %zu ended process(es) and %zu ended job(s) dropped\n",
                   dead, ended);
    std::optional<uet::entity::Trace> trace;
    if (!trace_path.empty()) trace.emplace(trace_path, limits);
    uet::entity::Server server(socket_path, handler, trace ? &*trace : nullptr);
    std::fprintf(stderr, "uet-entity: serving %s (store %s)\n", socket_path.c_str(), store_path.c_str());
    return server.run(g_stop);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "uet-entity: %s\n", e.what());
    return 3;
  }
}
