// A process started through a side's agent (protocol.hpp): the client half, for a case that starts its
// target on the other side of a placement. Every wait is bounded; destroying the object ends the process.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "uet/agent/protocol.hpp"

namespace uet::agent {

class RemoteProcess {
 public:
  RemoteProcess() = default;
  RemoteProcess(const RemoteProcess&) = delete;
  RemoteProcess& operator=(const RemoteProcess&) = delete;
  ~RemoteProcess() { close(); }

  // Asks the agent at `agent` ("unix:PATH" or "[address]:port"), answering its challenge with the run's
  // `secret` (auth.hpp), to start `spawn`; true once it started.
  bool start(const std::string& agent, const std::string& secret, const Spawn& spawn, int timeout_ms,
             std::string* error);
  // Its PID as the agent's side sees it.
  pid_t pid() const { return pid_; }
  // Its wait status once it ended within `timeout_ms`; nullopt with `error` on timeout or a lost agent
  // (`lost()` then says which).
  std::optional<int> wait(int timeout_ms, std::string* error);
  bool signal(int sig, std::string* error);
  // Closing the connection ends the process, if it still runs (the agent kills its process group).
  void close();
  bool lost() const { return lost_; }

 private:
  std::optional<Event> next_event(int timeout_ms, std::string* error);
  int fd_ = -1;
  pid_t pid_ = -1;
  bool lost_ = false;
  LineBuffer in_;
};

}  // namespace uet::agent
