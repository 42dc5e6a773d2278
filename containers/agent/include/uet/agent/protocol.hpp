// The agent protocol: how a harness or a case asks the placement agent on a side (a container, a node) to
// start a process there, and hears of its start and its end. One JSON object per line over a stream
// socket (unix:PATH or [address]:port), one process per connection:
//
//   agent -> client   {"event":"challenge","nonce":"<hex>"}                 (first, on every connection)
//   client -> agent   {"op":"auth","mac":"<hex>"}                           (first: auth.hpp's answer)
//                     {"op":"hello"}
//                     {"op":"lease"}                                        (this connection holds the agent)
//                     {"op":"spawn","argv":[...],"env":{...},"cwd":"/","output":"/path/log",
//                      "inputs":{"3":"bytes"}}
//                     {"op":"kill","signal":9}
//   agent -> client   {"event":"hello","pid":N,"hostname":"..."}
//                     {"event":"started","pid":N}
//                     {"event":"exited","status":S,"cpu_seconds":F}     (S: the wait status)
//                     {"event":"error","message":"..."}
//
// Nothing but a correct auth is answered before it: a client without the run's secret starts nothing. An
// agent started with a lease ends (with everything it started) when its last lease connection closes, so
// it never outlives the harness that placed it. The spawned process gets exactly `env`, its own session
// (so a kill reaches everything it started) and `output` (appended to) for its stdout and stderr; stdin is
// /dev/null; each of `inputs` is a pipe on that descriptor holding those bytes (a key handed over without
// a file or the environment). A client that disconnects before the process ends takes the process with it
// (SIGKILL to its process group): nothing outlives its asker.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace uet::agent {

// A line longer than this is refused: requests carry an environment, not data.
inline constexpr size_t kMaxLine = 1 << 20;

struct Spawn {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;
  std::string cwd = "/";
  std::string output;  // empty: /dev/null
  std::map<int, std::string> inputs;  // descriptor (3..kMaxInputFd) -> the bytes a pipe there holds
};

inline constexpr int kMaxInputFd = 9;
inline constexpr size_t kMaxInputBytes = 4096;  // within a pipe's buffer: written before the child starts

struct Request {
  enum class Op { auth, hello, lease, spawn, kill } op = Op::hello;
  Spawn spawn;
  int signal = 9;
  std::string mac;  // auth
};

struct Event {
  enum class Kind { challenge, hello, started, exited, error } kind = Kind::error;
  pid_t pid = -1;
  int status = 0;
  double cpu_seconds = 0;
  std::string hostname, message, nonce;
};

// One request line; nullopt with `error` naming what is wrong (never throws, on any input).
std::optional<Request> parse_request(std::string_view line, std::string* error);
std::optional<Event> parse_event(std::string_view line, std::string* error);

// The lines each side writes, with their newline.
std::string request_line(const Request& request);
std::string event_line(const Event& event);

// Complete lines out of a byte stream, each at most kMaxLine bytes.
class LineBuffer {
 public:
  // Appends bytes; false when a line grows past kMaxLine (the stream is then unusable).
  bool append(const char* data, size_t n);
  // The next complete line without its newline, if one is there.
  std::optional<std::string> next();

 private:
  std::string buf_;
};

}  // namespace uet::agent
