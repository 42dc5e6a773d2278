#include "uet/entity/client.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace uet::entity {

std::string default_socket() {
  const char* env = std::getenv("UET_ENTITY_SOCKET");
  return env && *env ? env : "/run/uet-entity/control.sock";
}

std::unique_ptr<Client> Client::connect(const std::string& path, std::string* why) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.size() >= sizeof a.sun_path) {
    if (why) *why = "socket path " + path + " is too long";
    return nullptr;
  }
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0 || ::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
    if (why) *why = "no privileged entity answers at " + path + ": " + std::strerror(errno);
    if (fd >= 0) close(fd);
    return nullptr;
  }
  return std::unique_ptr<Client>(new Client(fd));
}

Client::~Client() { close(fd_); }

std::variant<Reply, Problem> Client::call(const std::vector<uint8_t>& request, int timeout_ms) {
  if (send(fd_, request.data(), request.size(), MSG_NOSIGNAL) < 0)
    return Problem{errno, std::string("cannot send to the entity: ") + std::strerror(errno)};
  pollfd p{fd_, POLLIN, 0};
  const int ready = poll(&p, 1, timeout_ms);
  if (ready <= 0)
    return Problem{ETIMEDOUT, "the entity did not answer within " + std::to_string(timeout_ms) + " ms"};
  buf_.resize(control::kMaxMessageBytes);
  const ssize_t n = recv(fd_, buf_.data(), buf_.size(), 0);
  if (n <= 0) return Problem{n == 0 ? ECONNRESET : errno, "the entity closed the connection"};
  buf_.resize(static_cast<size_t>(n));
  return parse_reply(buf_);
}

}  // namespace uet::entity
