// The privileged entity's server: one AF_UNIX SOCK_SEQPACKET socket, peers known by SO_PEERCRED,
// every request validated (spec/control.yaml) before it is acted on, one reply per request.
#pragma once

#include <atomic>
#include <string>

#include "handler.hpp"
#include "trace.hpp"

namespace uet::entity {

class Server {
 public:
  // Binds `socket_path` (mode 0666: any process may ask for itself; what it may do is decided per
  // request). Refuses a path another live entity serves; takes over a stale socket file.
  // `trace`, when given, records every request and its replies.
  Server(std::string socket_path, Handler& handler, Trace* trace = nullptr);
  ~Server();
  // Serves until `stop` is set (by a signal handler); returns 0, or 3 when the socket fails.
  int run(const std::atomic<bool>& stop);
 private:
  std::string path_;
  Handler& handler_;
  Trace* trace_;
  int listen_fd_ = -1;
};

}  // namespace uet::entity
