// The entity's record of the Control API as it happened: one JSON line per request (who sent it, as the
// kernel says; the command and its attributes by their spec/control.yaml names, or what was wrong with
// it) and the replies; and each message it sent a process unasked. The conformance cases read it to see what a provider asked and was answered.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "handler.hpp"

namespace uet::entity {

// What a trace may hold.
struct TraceLimits {
  // The file's size stops there: the line that would pass it is replaced by {"trace_capped_at_bytes": N}
  // (once), and nothing is written after it. Its readers keep their line numbers (no rotation).
  uint64_t max_bytes = uint64_t{64} << 20;
  // Secure-domain keys and access tokens in hex; else "redacted: N bytes (--trace-keys records it)".
  bool keys = false;
};

class Trace {
 public:
  // Appends to `path`, created mode 0600 (an existing file of this entity's user is made 0600); throws
  // std::runtime_error naming the file when it cannot be opened, is a symlink or not a regular file, or
  // belongs to another user (another user's file is never written into).
  explicit Trace(const std::string& path, TraceLimits limits = {});
  ~Trace();
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;
  // One line, written whole and flushed, so that a reader never waits for a buffer.
  // `parsed` is parse_request of the request's `bytes` bytes.
  void record(const Peer& peer, const std::variant<Request, Problem>& parsed, size_t bytes,
              const std::vector<std::vector<uint8_t>>& replies);
  // A message the entity sent process `to` unasked (an unsolicited key update): "push_to" instead of "pid".
  void record_push(pid_t to, std::span<const uint8_t> message);

 private:
  void write(const nlohmann::json& line);
  nlohmann::json named(const Attrs& attrs, const control::AttrPolicy* table, size_t count) const;
  std::string path_;
  TraceLimits limits_;
  int fd_ = -1;
  uint64_t size_ = 0;
  bool capped_ = false;
};

}  // namespace uet::entity
