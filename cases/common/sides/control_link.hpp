// The control channel between a case and its target peer over TCP, for sides that do not share a host
// or a namespace: the initiator listens on its control address (the cell plan's control_listen, an address of
// the pair's control link, apart from the captured test link) and the target connects to what it is
// given (its --uet-cases-connect flag, "[address]:port"). Without them the two talk over an inherited
// socketpair (peer.cpp). Every wait is bounded.
#pragma once

#include <string>

namespace uet::cases {

// A listening TCP socket on `address` (IPv4 or IPv6, any port); `connect_to` gets "[address]:port".
// -1 with `error` set.
int control_listen(const std::string& address, std::string* connect_to, std::string* error);
// The first connection on `listen_fd` within `timeout_ms` (TCP_NODELAY set); -1 with `error` set.
int control_accept(int listen_fd, int timeout_ms, std::string* error);
// Connects to "[address]:port", retrying until `timeout_ms` pass; -1 with `error` set.
int control_connect(const std::string& spec, int timeout_ms, std::string* error);

}  // namespace uet::cases
