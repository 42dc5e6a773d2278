#include "uet/agent/remote_process.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "uet/agent/auth.hpp"
#include "uet/agent/stream.hpp"

namespace uet::agent {

bool RemoteProcess::start(const std::string& agent, const std::string& secret, const Spawn& spawn, int timeout_ms,
                          std::string* error) {
  close();
  lost_ = false;
  in_ = LineBuffer{};
  fd_ = connect_to(agent, timeout_ms, error);
  if (fd_ < 0) return *error = "the agent at " + agent + " is not reachable: " + *error, false;
  const auto challenge = next_event(timeout_ms, error);
  if (!challenge || challenge->kind != Event::Kind::challenge)
    return close(), *error = "agent " + agent + ": no challenge" + (challenge ? std::string() : ": " + *error), false;
  Request auth;
  auth.op = Request::Op::auth;
  auth.mac = auth_mac(secret, challenge->nonce);
  Request r;
  r.op = Request::Op::spawn;
  r.spawn = spawn;
  if (!write_all(fd_, request_line(auth) + request_line(r), error))
    return close(), *error = "agent " + agent + ": " + *error, false;
  const auto e = next_event(timeout_ms, error);
  if (!e) return close(), *error = "agent " + agent + ": " + *error, false;
  if (e->kind == Event::Kind::error) return close(), *error = "agent " + agent + ": " + e->message, false;
  if (e->kind != Event::Kind::started) return close(), *error = "agent " + agent + ": no start event", false;
  pid_ = e->pid;
  return true;
}

std::optional<Event> RemoteProcess::next_event(int timeout_ms, std::string* error) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    if (auto line = in_.next()) {
      auto e = parse_event(*line, error);
      if (!e) *error = "a bad event from the agent: " + *error;
      return e;
    }
    if (fd_ < 0) return *error = "not connected", std::nullopt;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) return *error = "no answer within " + std::to_string(timeout_ms) + " ms", std::nullopt;
    pollfd p{fd_, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(left));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    char buf[4096];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      lost_ = true;
      return *error = "the agent closed the connection (it, or its side, is gone)", std::nullopt;
    }
    if (!in_.append(buf, static_cast<size_t>(n))) return *error = "an event line too long", std::nullopt;
  }
}

std::optional<int> RemoteProcess::wait(int timeout_ms, std::string* error) {
  if (pid_ <= 0) return *error = "no process", std::nullopt;
  for (;;) {
    const auto e = next_event(timeout_ms, error);
    if (!e) return std::nullopt;
    if (e->kind == Event::Kind::exited) {
      pid_ = -1;
      close();
      return e->status;
    }
    if (e->kind == Event::Kind::error) return *error = "agent: " + e->message, std::nullopt;
  }
}

bool RemoteProcess::signal(int sig, std::string* error) {
  if (fd_ < 0) return *error = "not connected", false;
  Request r;
  r.op = Request::Op::kill;
  r.signal = sig;
  return write_all(fd_, request_line(r), error);
}

void RemoteProcess::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

}  // namespace uet::agent
