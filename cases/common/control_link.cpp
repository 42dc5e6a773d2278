#include "control_link.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace uet::cases {

namespace {

// Requests and replies are small and go one at a time: Nagle's delay would add to every round trip.
void no_delay(int fd) {
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

bool parse(const std::string& spec, std::string* host, std::string* port) {
  if (spec.size() < 4 || spec[0] != '[') return false;
  const auto close = spec.find("]:");
  if (close == std::string::npos) return false;
  *host = spec.substr(1, close - 1);
  *port = spec.substr(close + 2);
  return !host->empty() && !port->empty();
}

}  // namespace

int control_listen(const std::string& address, std::string* connect_to, std::string* error) {
  addrinfo hints{}, *res = nullptr;
  hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE;
  hints.ai_socktype = SOCK_STREAM;
  if (const int rc = ::getaddrinfo(address.c_str(), "0", &hints, &res); rc != 0) {
    *error = "control address '" + address + "': " + gai_strerror(rc);
    return -1;
  }
  const int fd = ::socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || ::bind(fd, res->ai_addr, res->ai_addrlen) != 0 || ::listen(fd, 1) != 0) {
    *error = "control channel: cannot listen on " + address + ": " + std::strerror(errno);
    if (fd >= 0) ::close(fd);
    ::freeaddrinfo(res);
    return -1;
  }
  ::freeaddrinfo(res);
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  const uint16_t port = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                                          : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  *connect_to = "[" + address + "]:" + std::to_string(port);
  return fd;
}

int control_accept(int listen_fd, int timeout_ms, std::string* error) {
  pollfd pfd{listen_fd, POLLIN, 0};
  int r;
  do {
    r = ::poll(&pfd, 1, timeout_ms);
  } while (r < 0 && errno == EINTR);
  if (r <= 0) {
    *error = "the target did not connect its control channel within " + std::to_string(timeout_ms) + " ms";
    return -1;
  }
  const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) {
    *error = std::string("control channel: accept: ") + std::strerror(errno);
    return -1;
  }
  no_delay(fd);
  return fd;
}

int control_connect(const std::string& spec, int timeout_ms, std::string* error) {
  std::string host, port;
  if (!parse(spec, &host, &port)) {
    *error = "UET_CASES_CONTROL_CONNECT='" + spec + "' is not [address]:port";
    return -1;
  }
  addrinfo hints{}, *res = nullptr;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  hints.ai_socktype = SOCK_STREAM;
  if (const int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &res); rc != 0) {
    *error = "control address '" + spec + "': " + gai_strerror(rc);
    return -1;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  int fd = -1;
  for (;;) {
    fd = ::socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && ::connect(fd, res->ai_addr, res->ai_addrlen) == 0) break;
    const int err = errno;
    if (fd >= 0) ::close(fd);
    fd = -1;
    // The listener exists before this process starts; a refusal means the link is not up yet.
    if (std::chrono::steady_clock::now() >= deadline || (err != ECONNREFUSED && err != ENETUNREACH && err != EADDRNOTAVAIL)) {
      *error = "control channel: connect " + spec + ": " + std::strerror(err);
      break;
    }
    pollfd none{-1, 0, 0};
    ::poll(&none, 0, 20);  // the next attempt, bounded by the deadline above
  }
  ::freeaddrinfo(res);
  if (fd >= 0) no_delay(fd);
  return fd;
}

}  // namespace uet::cases
