// The entity's answer to one request, apart from the socket that carries it (the fuzzer drives it directly).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <span>
#include <vector>

#include "store.hpp"

namespace uet::entity {

// Who sent a request, as the kernel says (SO_PEERCRED), never as the request says.
struct Peer {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
};

class Handler {
 public:
  explicit Handler(Store& store) : store_(store) {}
  // The reply to one whole message from `peer`: a command's reply, an acknowledgement, or an error
  // naming what was wrong. Nothing is changed unless the whole request is valid and allowed.
  std::vector<uint8_t> handle(std::span<const uint8_t> message, const Peer& peer);

 private:
  Store& store_;
};

}  // namespace uet::entity
