#include "control_link.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "uet/agent/stream.hpp"

namespace uet::cases {

int control_listen(const std::string& address, std::string* connect_to, std::string* error) {
  const int fd = agent::listen_on("[" + address + "]:0", connect_to, error);
  if (fd < 0) *error = "control channel: " + *error;
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
  // Requests and replies are small and go one at a time: Nagle's delay would add to every round trip.
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

int control_connect(const std::string& spec, int timeout_ms, std::string* error) {
  if (spec.empty() || spec[0] != '[') {
    *error = "the control address '" + spec + "' is not [address]:port";
    return -1;
  }
  const int fd = agent::connect_to(spec, timeout_ms, error);
  if (fd < 0) *error = "control channel: " + *error;
  return fd;
}

}  // namespace uet::cases
