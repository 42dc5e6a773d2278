// The entity's answer to one request, apart from the socket that carries it (the fuzzer drives it directly).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "store.hpp"

namespace uet::entity {

struct Header;
struct Attrs;
struct Request;

// Who sent a request, as the kernel says (SO_PEERCRED), never as the request says.
struct Peer {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
};

class Handler {
 public:
  explicit Handler(Store& store) : store_(store) {}
  // The replies to one whole message from `peer`: a command's reply, an acknowledgement, or an error
  // naming what was wrong; a dump (JOB_LIST) is several replies flagged multi, then NLMSG_DONE.
  // Nothing is changed unless the whole request is valid and allowed.
  std::vector<std::vector<uint8_t>> handle(std::span<const uint8_t> message, const Peer& peer);

 private:
  std::vector<uint8_t> one(const Request& req, const Peer& peer);
  std::vector<std::vector<uint8_t>> list(const Request& req);
  std::vector<uint8_t> allocate(const Header& h, const Attrs& a, const Peer& peer, const std::string& service);
  Store& store_;
};

}  // namespace uet::entity
