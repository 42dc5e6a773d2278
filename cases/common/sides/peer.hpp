// Two-process cases: the case (initiator side) starts its target side as a second process, the same
// binary exec'ed with a role flag, and the two talk over an inherited socketpair in small framed text
// messages (addresses, MR keys, "ready", observations). Every read has a timeout; a peer that died or
// closed the channel is an error, never a hang.
//
// The peer runs with the target side's own manifest (the cell plan's target: provider, environment,
// claims): a pair of different providers, or of one provider configured two ways, is a pair like any
// other. Where it runs is the plan's (TargetPlace): beside this process, in a network namespace (needs
// root), or started by the agent of another container or node (containers/agent); a case may put it beside
// the initiator whatever the plan says (one node).
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cell_plan.hpp"
#include "uet/agent/remote_process.hpp"

namespace uet::cases {

// One end of the out-of-band channel: length-prefixed messages over a stream socket.
class Channel {
 public:
  explicit Channel(int fd = -1) : fd_(fd) {}
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
  ~Channel();
  // False (with error()) when the peer is gone.
  bool send(const std::string& message);
  // False (with error()) on timeout, end of stream or a broken frame.
  bool recv(std::string* message, int timeout_ms);
  const std::string& error() const { return error_; }
  int fd() const { return fd_; }
  void close();
  void reset(int fd) {
    close();
    fd_ = fd;
    error_.clear();
  }

 private:
  bool read_exact(char* p, size_t n, int timeout_ms);
  int fd_;
  std::string error_;
};

// The environment a target peer starts with: this process's, without what this side's manifest set,
// with the target manifest's `environment` (a null value unsets), its provider and its manifest.
std::map<std::string, std::string> target_environment(const std::map<std::string, std::string>& inherited);

// The peer process, started by start() and reaped (with a bounded wait) by finish() or the destructor.
class Peer {
 public:
  Peer() = default;
  Peer(const Peer&) = delete;
  Peer& operator=(const Peer&) = delete;
  ~Peer();
  // Starts this binary in `role` at `where` with `extra_env` over the peer environment; false with error().
  bool start(const std::string& role, const TargetPlace& where, const std::map<std::string, std::string>& extra_env = {},
             const std::vector<std::string>& unset_env = {});
  // Closes the channel and waits for the peer to exit; its wait status, or -1 when it had to be killed.
  int finish(int timeout_ms = 10000);
  Channel& channel() { return channel_; }
  const std::string& error() const { return error_; }
  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  std::unique_ptr<agent::RemoteProcess> remote_;  // a target started by another side's agent
  Channel channel_;
  std::string error_;
};

// The role a peer process runs: its body gets the channel and returns the exit status.
using PeerRole = int (*)(Channel&);
// Registers a role under a name (static initialisers of the case binaries' common code).
bool register_peer_role(const std::string& name, PeerRole role);
// The role registered under `name`, or nullptr.
PeerRole find_peer_role(const std::string& name);

// How a peer process is started: this flag names its role, and it finds its end of the channel here, or
// connects to the initiator's control-link address the second flag gives ("[address]:port").
inline constexpr char kPeerRoleFlag[] = "--uet-cases-peer=";
inline constexpr char kPeerConnectFlag[] = "--uet-cases-connect=";
inline constexpr int kPeerChannelFd = 100;

}  // namespace uet::cases
