// Stream sockets named the way the agent and the control channel name them: "unix:PATH" or
// "[address]:port" (numeric IPv4 or IPv6). Every wait is bounded.
#pragma once

#include <string>

namespace uet::agent {

// A listening socket on `spec` (port 0: any port); `bound` gets the spec to connect to. -1 with `error`.
int listen_on(const std::string& spec, std::string* bound, std::string* error);
// Connects to `spec`, retrying a refusal (the listener may not be up yet) until `timeout_ms` pass;
// TCP_NODELAY on TCP. -1 with `error` set.
int connect_to(const std::string& spec, int timeout_ms, std::string* error);
// Writes all of `data` (no SIGPIPE); false with `error` set.
bool write_all(int fd, const std::string& data, std::string* error);

}  // namespace uet::agent
