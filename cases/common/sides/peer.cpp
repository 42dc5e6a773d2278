#include "peer.hpp"

#include "cell_plan.hpp"
#include "conformance.hpp"
#include "control_link.hpp"
#include "liveness.hpp"
#include "uet/agent/auth.hpp"
#include "uet/agent/remote_process.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace uet::cases {

namespace {

constexpr size_t kMaxMessage = 1 << 20;

std::map<std::string, PeerRole>& roles() {
  static std::map<std::string, PeerRole> r;
  return r;
}

}  // namespace

Channel::~Channel() { close(); }

void Channel::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool Channel::send(const std::string& message) {
  if (fd_ < 0) return error_ = "channel closed", false;
  const uint32_t len = static_cast<uint32_t>(message.size());
  std::string frame(reinterpret_cast<const char*>(&len), sizeof len);
  frame += message;
  for (size_t done = 0; done < frame.size();) {
    const ssize_t n = ::send(fd_, frame.data() + done, frame.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return error_ = std::string("the peer is gone: ") + std::strerror(errno), false;
    done += static_cast<size_t>(n);
  }
  return true;
}

bool Channel::read_exact(char* p, size_t n, int timeout_ms) {
  LivenessDeadline deadline(timeout_ms);
  while (n) {
    pollfd pfd{fd_, POLLIN, 0};
    const int r = ::poll(&pfd, 1, deadline.left_ms());
    if (r < 0 && errno == EINTR) continue;
    if (r == 0 && deadline.expired()) {
      const std::string busy = deadline.timed_out();
      return error_ = "no message from the peer within " + std::to_string(timeout_ms) + " ms" +
                      (busy.empty() ? "" : " (" + busy + ")"),
             false;
    }
    if (r == 0) continue;
    const ssize_t got = ::read(fd_, p, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return error_ = "the peer closed the channel (it exited or crashed)", false;
    p += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

bool Channel::recv(std::string* message, int timeout_ms) {
  if (fd_ < 0) return error_ = "channel closed", false;
  uint32_t len = 0;
  if (!read_exact(reinterpret_cast<char*>(&len), sizeof len, timeout_ms)) return false;
  if (len > kMaxMessage) return error_ = "a frame of " + std::to_string(len) + " bytes from the peer", false;
  message->assign(len, '\0');
  return read_exact(message->data(), len, timeout_ms);
}

std::map<std::string, std::string> target_environment(const std::map<std::string, std::string>& inherited) {
  std::map<std::string, std::string> env = inherited;
  for (const auto& [k, v] : manifest().environment) env.erase(k);
  for (const auto& [k, v] : target_manifest().environment) {
    if (v) env[k] = *v;
    else env.erase(k);
  }
  env["FI_PROVIDER"] = target_manifest().provider;
  return env;  // UET_CASES_PLAN stays: the target reads the same plan, as the target (its role flag)
}

PeerRole find_peer_role(const std::string& name) {
  const auto it = roles().find(name);
  return it == roles().end() ? nullptr : it->second;
}

bool register_peer_role(const std::string& name, PeerRole role) {
  roles()[name] = role;
  return true;
}

bool Peer::start(const std::string& role, const TargetPlace& where, const std::map<std::string, std::string>& extra_env,
                 const std::vector<std::string>& unset_env) {
  // Everything the child needs is prepared here: between fork and exec only async-signal-safe calls.
  std::map<std::string, std::string> inherited;
  for (char** e = environ; *e; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq) inherited[std::string(*e, static_cast<size_t>(eq - *e))] = eq + 1;
  }
  std::map<std::string, std::string> env = target_environment(inherited);
  for (const auto& [k, v] : extra_env) env[k] = v;
  for (const auto& k : unset_env) env.erase(k);
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  const CellPlan& plan = cell_plan();
  // The target side's own binary when the plan names one (built against its own libfabric), else this one.
  std::string exe = plan.target_binary;
  if (exe.empty()) {
    exe.assign(4096, '\0');
    const ssize_t n = ::readlink("/proc/self/exe", exe.data(), exe.size() - 1);
    if (n <= 0) return error_ = "cannot find this binary (/proc/self/exe)", false;
    exe.resize(static_cast<size_t>(n));
  } else if (where.kind != TargetPlace::Kind::agent && ::access(exe.c_str(), X_OK) != 0) {
    // Checked here, where the error can be told: after fork the child could only exit 127.
    return error_ = "the cell plan's target binary " + exe + ": " + std::strerror(errno), false;
  }
  // Over TCP on the pair's control link when the target runs elsewhere and the plan gives one, else over an
  // inherited socketpair (a target beside this process needs nothing else).
  int listen_fd = -1;
  std::string connect_arg;
  if (where.kind != TargetPlace::Kind::beside && !plan.control_listen.empty()) {
    std::string connect_to;
    listen_fd = control_listen(plan.control_listen, &connect_to, &error_);
    if (listen_fd < 0) return false;
    connect_arg = kPeerConnectFlag + connect_to;
  }
  std::string role_arg = kPeerRoleFlag + role;
  std::vector<char*> argv = {exe.data(), role_arg.data()};
  if (!connect_arg.empty()) argv.push_back(connect_arg.data());
  argv.push_back(nullptr);

  // On another container or node: its agent starts the target, which connects back over TCP.
  if (where.kind == TargetPlace::Kind::agent) {
    if (listen_fd < 0)
      return error_ = "the cell plan puts the target behind an agent but gives no control_listen (the channel to a "
                      "peer elsewhere is TCP)",
             false;
    agent::Spawn spawn;
    spawn.argv = {exe, role_arg, connect_arg};
    spawn.env = env;
    spawn.output = plan.target_log;
    // The agent answers only its run: the run's secret is in a 0600 file the placement names.
    const auto secret = agent::read_secret_file(where.secret_file, &error_);
    if (!secret) {
      ::close(listen_fd);
      return error_ = "the cell plan's agent secret_file: " + error_, false;
    }
    remote_ = std::make_unique<agent::RemoteProcess>();
    if (!remote_->start(where.agent, *secret, spawn, 10000, &error_)) {
      ::close(listen_fd);
      remote_.reset();
      return false;
    }
    pid_ = remote_->pid();
    const int fd = control_accept(listen_fd, 10000, &error_);
    ::close(listen_fd);
    if (fd < 0) return false;  // finish() ends the peer
    channel_.reset(fd);
    return true;
  }

  int netns_fd = -1;
  if (where.kind == TargetPlace::Kind::netns) {
    netns_fd = ::open(("/run/netns/" + where.netns).c_str(), O_RDONLY | O_CLOEXEC);
    if (netns_fd < 0) {
      if (listen_fd >= 0) ::close(listen_fd);
      return error_ = "the cell plan's target netns: cannot open /run/netns/" + where.netns + ": " + std::strerror(errno),
             false;
    }
  }
  // The target's own output goes to a file of its own when the plan names one, so each side's log stays
  // apart; opened here, before fork.
  int log_fd = -1;
  if (!plan.target_log.empty()) {
    log_fd = ::open(plan.target_log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0) {
      if (netns_fd >= 0) ::close(netns_fd);
      if (listen_fd >= 0) ::close(listen_fd);
      return error_ = "the cell plan's target_log: cannot open " + plan.target_log + ": " + std::strerror(errno), false;
    }
  }
  int sv[2] = {-1, -1};
  if (listen_fd < 0 && ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    if (netns_fd >= 0) ::close(netns_fd);
    if (log_fd >= 0) ::close(log_fd);
    return error_ = std::string("socketpair: ") + std::strerror(errno), false;
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (netns_fd >= 0 && ::setns(netns_fd, CLONE_NEWNET) != 0) _exit(126);
    if (sv[1] >= 0 && ::dup2(sv[1], kPeerChannelFd) < 0) _exit(126);  // dup2 clears close-on-exec
    if (log_fd >= 0 && (::dup2(log_fd, STDOUT_FILENO) < 0 || ::dup2(log_fd, STDERR_FILENO) < 0)) _exit(126);
    ::execve(exe.c_str(), argv.data(), envp.data());
    _exit(127);
  }
  if (netns_fd >= 0) ::close(netns_fd);
  if (log_fd >= 0) ::close(log_fd);
  if (sv[1] >= 0) ::close(sv[1]);
  if (pid < 0) {
    if (sv[0] >= 0) ::close(sv[0]);
    if (listen_fd >= 0) ::close(listen_fd);
    return error_ = std::string("fork: ") + std::strerror(errno), false;
  }
  pid_ = pid;
  // Its threads' run delay counts in the case's waits (liveness.hpp); a peer behind an agent has a PID of
  // another namespace, and its replies carry its own evidence instead.
  watch_process(pid, "the " + role);
  if (listen_fd >= 0) {
    const int fd = control_accept(listen_fd, 10000, &error_);
    ::close(listen_fd);
    if (fd < 0) return false;  // finish() reaps the peer
    channel_.reset(fd);
    return true;
  }
  channel_.reset(sv[0]);
  return true;
}

int Peer::finish(int timeout_ms) {
  if (pid_ <= 0) return 0;
  channel_.close();  // the peer's read ends: it closes its objects and exits
  if (remote_) {
    std::string why;
    std::optional<int> status = remote_->wait(timeout_ms, &why);
    if (!status && !remote_->lost()) {
      remote_->signal(SIGKILL, &why);
      remote_->wait(2000, &why);
    }
    if (!status) error_ = "the target's agent: " + why;
    remote_.reset();
    pid_ = -1;
    return status ? *status : -1;
  }
  unwatch_process(pid_);
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
  int status = 0;
  if (pidfd >= 0) {
    pollfd pfd{pidfd, POLLIN, 0};
    ::poll(&pfd, 1, timeout_ms);
    ::close(pidfd);
  }
  pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status, 0);
    status = -1;
  }
  pid_ = -1;
  return status;
}

Peer::~Peer() { finish(); }

}  // namespace uet::cases
