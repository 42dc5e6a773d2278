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

class Trace {
 public:
  // Appends to `path`; throws std::runtime_error naming the file when it cannot be opened.
  explicit Trace(const std::string& path);
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
  FILE* out_ = nullptr;
};

}  // namespace uet::entity
