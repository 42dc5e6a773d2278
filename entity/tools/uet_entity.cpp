// uet-entity: the privileged entity for software FEPs. It plays both roles the spec separates: the
// provider's "kernel driver" side of the UET Control API and the privileged process (job launcher or
// configuration system) that assigns JobIDs. spec/control.yaml is the message and attribute table.
//
// Exit status: 0 stopped by SIGINT/SIGTERM; 2 bad usage; 3 cannot open its store or serve its socket.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "server.hpp"
#include "store.hpp"

namespace {
std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop.store(true); }
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"uet-entity: assigns and checks UET JobIDs for the processes of this node (the UET Control API "
               "of spec/control.yaml over an AF_UNIX SOCK_SEQPACKET socket)"};
  std::string socket_path = "/run/uet-entity/control.sock";
  std::string store_path = "/var/lib/uet-entity/entity.db";
  app.add_option("--socket", socket_path, "the socket to serve (default " + socket_path + ")");
  app.add_option("--store", store_path, "the SQLite database of what outlives a restart (default " + store_path + ")");
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
  try {
    uet::entity::Store store(store_path);
    uet::entity::Handler handler(store);
    uet::entity::Server server(socket_path, handler);
    std::fprintf(stderr, "uet-entity: serving %s (store %s)\n", socket_path.c_str(), store_path.c_str());
    return server.run(g_stop);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "uet-entity: %s\n", e.what());
    return 3;
  }
}
