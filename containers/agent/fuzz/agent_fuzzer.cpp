// Bytes as a client would send them to uet-agent: split into lines, each parsed as a request and as an
// event, and each parsed request written back and parsed again to the same request.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "uet/agent/protocol.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  uet::agent::LineBuffer in;
  if (!in.append(reinterpret_cast<const char*>(data), size)) return 0;
  while (auto line = in.next()) {
    std::string error;
    if (const auto r = uet::agent::parse_request(*line, &error)) {
      const std::string again = uet::agent::request_line(*r);
      const auto back = uet::agent::parse_request(again.substr(0, again.size() - 1), &error);
      if (!back || back->op != r->op || back->spawn.argv != r->spawn.argv || back->spawn.env != r->spawn.env ||
          back->spawn.inputs != r->spawn.inputs || back->mac != r->mac)
        std::abort();
    }
    (void)uet::agent::parse_event(*line, &error);
  }
  return 0;
}
