// The agent protocol: how a harness or a case asks the placement agent on a side (a container, a node) to
// start a process there, and hears of its start and its end. One JSON object per line over a stream
// socket (unix:PATH or [address]:port), one process per connection:
//
//   client -> agent   {"op":"hello"}
//                     {"op":"spawn","argv":[...],"env":{...},"cwd":"/","output":"/path/log"}
//                     {"op":"kill","signal":9}
//   agent -> client   {"event":"hello","pid":N,"hostname":"..."}
//                     {"event":"started","pid":N}
//                     {"event":"exited","status":S,"cpu_seconds":F}     (S: the wait status)
//                     {"event":"error","message":"..."}
//
// The spawned process gets exactly `env`, its own session (so a kill reaches everything it started) and
// `output` (appended to) for its stdout and stderr; stdin is /dev/null. A client that disconnects before
// the process ends takes the process with it (SIGKILL to its process group): nothing outlives its asker.
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
};

struct Request {
  enum class Op { hello, spawn, kill } op = Op::hello;
  Spawn spawn;
  int signal = 9;
};

struct Event {
  enum class Kind { hello, started, exited, error } kind = Kind::error;
  pid_t pid = -1;
  int status = 0;
  double cpu_seconds = 0;
  std::string hostname, message;
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
