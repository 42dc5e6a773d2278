// A process's side of the Control API: connect to the entity, send a request, wait for its reply.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "uet/entity/message.hpp"

namespace uet::entity {

// $UET_ENTITY_SOCKET, else /run/uet-entity/control.sock.
std::string default_socket();

class Client {
 public:
  // nullptr, with the reason in `why`, when no entity answers at `path`.
  static std::unique_ptr<Client> connect(const std::string& path, std::string* why);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Sends one request and waits at most `timeout_ms` for its reply. The reply's attributes point into
  // this client's buffer: valid until the next call.
  std::variant<Reply, Problem> call(const std::vector<uint8_t>& request, int timeout_ms = 2000);
  // A request answered by a dump: every reply up to NLMSG_DONE (or the first error), each within
  // `timeout_ms`. The replies' attributes point into `*buffers`, one buffer per reply.
  std::variant<std::vector<Reply>, Problem> call_all(const std::vector<uint8_t>& request,
                                                     std::vector<std::vector<uint8_t>>* buffers, int timeout_ms = 2000);
  uint32_t next_seq() { return seq_++; }
  // The messages the entity sent unasked (sequence number 0: unsolicited key updates), oldest first: those
  // read while a call waited for its reply and those waiting in the socket (read without blocking). Each is
  // one whole message, for parse_reply.
  std::vector<std::vector<uint8_t>> take_pushed();
  // Who serves the socket, as the kernel says (SO_PEERCRED at connect): a provider takes answers only
  // from root (spec 2.2.5.3.5.1).
  uid_t server_uid() const { return server_uid_; }

 private:
  Client(int fd, uid_t uid) : fd_(fd), server_uid_(uid) {}
  int fd_;
  uid_t server_uid_;
  uint32_t seq_ = 1;
  std::variant<Reply, Problem> receive(std::vector<uint8_t>& into, int timeout_ms);
  std::vector<uint8_t> buf_;
  std::vector<std::vector<uint8_t>> pushed_;
};

}  // namespace uet::entity
