#include "uet/entity/client.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <utility>

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
  ucred cred{};
  socklen_t len = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    if (why) *why = std::string("cannot tell who serves ") + path + ": " + std::strerror(errno);
    close(fd);
    return nullptr;
  }
  return std::unique_ptr<Client>(new Client(fd, cred.uid));
}

Client::~Client() { close(fd_); }

std::variant<Reply, Problem> Client::receive(std::vector<uint8_t>& into, int timeout_ms) {
  pollfd p{fd_, POLLIN, 0};
  const int ready = poll(&p, 1, timeout_ms);
  if (ready <= 0)
    return Problem{ETIMEDOUT, "the entity did not answer within " + std::to_string(timeout_ms) + " ms"};
  into.resize(control::kMaxMessageBytes);
  const ssize_t n = recv(fd_, into.data(), into.size(), 0);
  if (n <= 0) return Problem{n == 0 ? ECONNRESET : errno, "the entity closed the connection"};
  into.resize(static_cast<size_t>(n));
  return parse_reply(into);
}

std::variant<Reply, Problem> Client::call(const std::vector<uint8_t>& request, int timeout_ms) {
  // Each call gets a sequence number of its own, and only the reply that echoes it is taken: a reply that
  // came after its caller gave up waiting is not mistaken for the next call's.
  std::vector<uint8_t> stamped = request;
  const uint32_t seq = next_seq();
  if (stamped.size() >= control::kNetlinkHeaderBytes) std::memcpy(stamped.data() + 8, &seq, 4);
  if (send(fd_, stamped.data(), stamped.size(), MSG_NOSIGNAL) < 0)
    return Problem{errno, std::string("cannot send to the entity: ") + std::strerror(errno)};
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
    auto got = receive(buf_, static_cast<int>(std::max<int64_t>(left.count(), 0)));
    const auto* r = std::get_if<Reply>(&got);
    if (!r || r->header.seq == seq || stamped.size() < control::kNetlinkHeaderBytes) return got;
    if (r->header.seq == 0 && !r->is_error) pushed_.push_back(buf_);
  }
}

std::vector<std::vector<uint8_t>> Client::take_pushed() {
  for (;;) {
    // The next message's length without taking it: nothing is allocated when nothing waits, which is the
    // common case of a sender that looks before every packet.
    const ssize_t len = recv(fd_, nullptr, 0, MSG_DONTWAIT | MSG_PEEK | MSG_TRUNC);
    if (len <= 0) break;
    std::vector<uint8_t> msg(static_cast<size_t>(len));
    const ssize_t n = recv(fd_, msg.data(), msg.size(), MSG_DONTWAIT);
    if (n <= 0) break;
    // A reply that came after its call gave up is not a push: only sequence number 0 is kept.
    uint32_t seq = 1;
    if (static_cast<size_t>(n) >= control::kNetlinkHeaderBytes) std::memcpy(&seq, msg.data() + 8, 4);
    if (seq == 0) pushed_.push_back(std::move(msg));
  }
  return std::exchange(pushed_, {});
}

std::variant<std::vector<Reply>, Problem> Client::call_all(const std::vector<uint8_t>& request,
                                                           std::vector<std::vector<uint8_t>>* buffers, int timeout_ms) {
  if (send(fd_, request.data(), request.size(), MSG_NOSIGNAL) < 0)
    return Problem{errno, std::string("cannot send to the entity: ") + std::strerror(errno)};
  std::vector<Reply> out;
  buffers->clear();
  buffers->reserve(1024);  // replies point into their buffer: the buffers must not move
  for (;;) {
    if (buffers->size() == buffers->capacity()) return Problem{E2BIG, "a dump of more than 1024 replies"};
    buffers->emplace_back();
    auto got = receive(buffers->back(), timeout_ms);
    if (auto* p = std::get_if<Problem>(&got)) return *p;
    Reply r = std::get<Reply>(got);
    if (r.is_done) return out;
    out.push_back(r);
    if (r.is_error) return out;
  }
}

}  // namespace uet::entity
