#include "uet/agent/stream.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#ifndef IPV6_FREEBIND
#define IPV6_FREEBIND 78  // linux/in6.h; glibc's netinet/in.h does not name it
#endif

namespace uet::agent {

namespace {

constexpr char kUnix[] = "unix:";

bool split_tcp(const std::string& spec, std::string* host, std::string* port) {
  if (spec.size() < 4 || spec[0] != '[') return false;
  const auto close = spec.find("]:");
  if (close == std::string::npos) return false;
  *host = spec.substr(1, close - 1);
  *port = spec.substr(close + 2);
  return !host->empty() && !port->empty();
}

bool unix_address(const std::string& spec, sockaddr_un* sa, std::string* error) {
  const std::string path = spec.substr(sizeof kUnix - 1);
  if (path.empty() || path.size() >= sizeof sa->sun_path)
    return *error = "'" + spec + "': a unix socket path must be 1.." + std::to_string(sizeof sa->sun_path - 1) + " bytes", false;
  *sa = {};
  sa->sun_family = AF_UNIX;
  std::memcpy(sa->sun_path, path.data(), path.size());
  return true;
}

bool is_unix(const std::string& spec) { return spec.rfind(kUnix, 0) == 0; }

void no_delay(int fd) {
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

}  // namespace

int listen_on(const std::string& spec, std::string* bound, std::string* error) {
  if (is_unix(spec)) {
    sockaddr_un sa;
    if (!unix_address(spec, &sa, error)) return -1;
    ::unlink(sa.sun_path);  // a socket file left by an agent that died
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    // 0600: only root and the agent's user may connect (the agent checks SO_PEERCRED as well).
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || ::chmod(sa.sun_path, 0600) != 0 ||
        ::listen(fd, 64) != 0) {
      *error = "cannot listen on " + spec + ": " + std::strerror(errno);
      if (fd >= 0) ::close(fd);
      return -1;
    }
    *bound = spec;
    return fd;
  }
  std::string host, port;
  if (!split_tcp(spec, &host, &port)) return *error = "'" + spec + "' is neither unix:PATH nor [address]:port", -1;
  addrinfo hints{}, *res = nullptr;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
  hints.ai_socktype = SOCK_STREAM;
  if (const int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &res); rc != 0)
    return *error = "'" + spec + "': " + gai_strerror(rc), -1;
  const int fd = ::socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  if (fd >= 0) ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  // The one address a run names may not be up yet (a container's control link is moved in after its
  // agent starts): bind to it all the same rather than to every address.
  if (fd >= 0) ::setsockopt(fd, res->ai_family == AF_INET6 ? IPPROTO_IPV6 : IPPROTO_IP,
                            res->ai_family == AF_INET6 ? IPV6_FREEBIND : IP_FREEBIND, &one, sizeof one);
  if (fd < 0 || ::bind(fd, res->ai_addr, res->ai_addrlen) != 0 || ::listen(fd, 64) != 0) {
    *error = "cannot listen on " + spec + ": " + std::strerror(errno);
    if (fd >= 0) ::close(fd);
    ::freeaddrinfo(res);
    return -1;
  }
  ::freeaddrinfo(res);
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
  const uint16_t p = ntohs(ss.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port
                                                    : reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  *bound = "[" + host + "]:" + std::to_string(p);
  return fd;
}

int connect_to(const std::string& spec, int timeout_ms, std::string* error) {
  sockaddr_storage ss{};
  socklen_t len = 0;
  int family = AF_UNIX;
  if (is_unix(spec)) {
    sockaddr_un sa;
    if (!unix_address(spec, &sa, error)) return -1;
    std::memcpy(&ss, &sa, sizeof sa);
    len = sizeof sa;
  } else {
    std::string host, port;
    if (!split_tcp(spec, &host, &port)) return *error = "'" + spec + "' is neither unix:PATH nor [address]:port", -1;
    addrinfo hints{}, *res = nullptr;
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
    hints.ai_socktype = SOCK_STREAM;
    if (const int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &res); rc != 0)
      return *error = "'" + spec + "': " + gai_strerror(rc), -1;
    std::memcpy(&ss, res->ai_addr, res->ai_addrlen);
    len = res->ai_addrlen;
    family = res->ai_family;
    ::freeaddrinfo(res);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    const int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&ss), len) == 0) {
      if (family != AF_UNIX) no_delay(fd);
      return fd;
    }
    const int err = errno;
    if (fd >= 0) ::close(fd);
    // A refusal or a missing socket file means the listener is not up yet: try again until the deadline.
    const bool not_yet = err == ECONNREFUSED || err == ENOENT || err == ENETUNREACH || err == EADDRNOTAVAIL;
    if (!not_yet || std::chrono::steady_clock::now() >= deadline)
      return *error = "connect " + spec + ": " + std::strerror(err), -1;
    ::poll(nullptr, 0, 20);  // the next attempt, bounded by the deadline above
  }
}

bool write_all(int fd, const std::string& data, std::string* error) {
  for (size_t done = 0; done < data.size();) {
    const ssize_t n = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return *error = std::string("write: ") + std::strerror(errno), false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace uet::agent
