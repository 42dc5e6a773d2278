// Control API messages (spec/control.yaml): netlink-style headers and type-length-value attributes,
// parsed and validated against the generated policy tables before anything acts on them.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "uet/control/control_gen.hpp"

namespace uet::entity {

// What was wrong with a message: an errno for the reply, words for people, and where.
struct Problem {
  int err = 0;
  std::string what;
  uint32_t offset = 0;  // byte offset in the message of the attribute (or header field) concerned
  uint16_t attr = 0;    // its attribute type, 0 when the header is concerned
  bool refused = false; // the entity answered no (rather than: no answer, or an unreadable one)
};

// An attribute list whose values have passed their policy. Values point into the message's bytes.
struct Attrs {
  struct Item {
    uint16_t id;
    uint32_t offset;                     // of the attribute's header in the message
    std::span<const uint8_t> value;
  };
  std::vector<Item> items;
  uint64_t present = 0;                  // bit N: attribute N appears

  bool has(uint16_t id) const { return present >> id & 1; }
  std::optional<uint64_t> num(uint16_t id) const;
  std::vector<uint64_t> nums(uint16_t id) const;
  std::optional<std::string> str(uint16_t id) const;
  std::optional<std::span<const uint8_t>> bytes(uint16_t id) const;
  // The attribute lists of a (top-level) nested attribute's occurrences, already validated.
  std::vector<Attrs> nests(uint16_t id) const;
};

struct Header {
  uint32_t len = 0;
  uint16_t type = 0;
  uint16_t flags = 0;
  uint32_t seq = 0;
  uint32_t port = 0;
};

struct Request {
  Header header;
  const control::CmdInfo* cmd = nullptr;
  Attrs attrs;
};

// The netlink header of a message, when it is long enough to hold one (what an error reply echoes).
std::optional<Header> header_of(std::span<const uint8_t> bytes);

// A request as a process sends it to the entity: every rule of spec/control.yaml checked.
std::variant<Request, Problem> parse_request(std::span<const uint8_t> bytes);

// A reply as the entity sends it: an NLMSG_ERROR (err, and the ack attributes) or a command's reply.
struct Reply {
  Header header;
  bool is_error = false;
  bool is_done = false;     // NLMSG_DONE: the end of a dump
  int err = 0;              // NLMSG_ERROR: 0 acknowledges, else -errno
  std::string what;         // its ack attribute msg
  uint16_t attr = 0;        // its ack attribute attr
  uint8_t cmd = 0;          // a command's reply
  Attrs attrs;              // a command's reply attributes (checked against the attribute policies)
};
std::variant<Reply, Problem> parse_reply(std::span<const uint8_t> bytes);

// Builds one message; attributes in the order written, nests closed in order.
class Writer {
 public:
  Writer(uint16_t type, uint16_t flags, uint32_t seq, uint32_t port);
  // A Control API message of command `cmd` (the generic-netlink header).
  static Writer command(control::Cmd cmd, uint16_t flags, uint32_t seq, uint32_t port = 0);
  Writer& u8(uint16_t id, uint8_t v) { return put(id, &v, 1); }
  Writer& u16(uint16_t id, uint16_t v) { return put(id, &v, 2); }
  Writer& u32(uint16_t id, uint32_t v) { return put(id, &v, 4); }
  Writer& u64(uint16_t id, uint64_t v) { return put(id, &v, 8); }
  Writer& str(uint16_t id, const std::string& s) { return put(id, s.c_str(), s.size() + 1); }
  Writer& bytes(uint16_t id, std::span<const uint8_t> b) { return put(id, b.data(), b.size()); }
  Writer& raw(const void* data, size_t n);  // bytes as they are (headers of hand-made messages)
  size_t begin_nest(uint16_t id);
  void end_nest(size_t at);
  std::vector<uint8_t> finish();
  size_t size() const { return buf_.size(); }

 private:
  Writer& put(uint16_t id, const void* data, size_t n);
  std::vector<uint8_t> buf_;
};

// The NLMSG_ERROR answering `req`: err 0 acknowledges; otherwise the problem's words and attribute.
std::vector<uint8_t> error_reply(const Header& req, int err, const Problem* problem = nullptr);

}  // namespace uet::entity
