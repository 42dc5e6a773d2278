// Parsing and building Control API messages. Every length, type, range, nesting and presence rule
// comes from the generated tables (spec/control.yaml); a message is refused whole at its first problem.
#include "uet/entity/message.hpp"

#include <cerrno>
#include <cstring>

namespace uet::entity {
namespace {

namespace c = control;

size_t align_up(size_t n) { return (n + c::kAlign - 1) & ~(c::kAlign - 1); }

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

Header read_header(std::span<const uint8_t> b) {
  return {load<uint32_t>(b.data()), load<uint16_t>(b.data() + 4), load<uint16_t>(b.data() + 6),
          load<uint32_t>(b.data() + 8), load<uint32_t>(b.data() + 12)};
}

uint64_t read_uint(std::span<const uint8_t> v) {
  switch (v.size()) {
    case 1: return v[0];
    case 2: return load<uint16_t>(v.data());
    case 4: return load<uint32_t>(v.data());
    case 8: return load<uint64_t>(v.data());
  }
  return 0;
}

size_t width(c::AttrType t) {
  switch (t) {
    case c::AttrType::u8: return 1;
    case c::AttrType::u16: return 2;
    case c::AttrType::u32: return 4;
    case c::AttrType::u64: return 8;
    default: return 0;
  }
}

Problem problem(int err, std::string what, uint32_t offset, uint16_t attr = 0) {
  return {err, std::move(what), offset, attr};
}

// One value against its policy; nests are parsed (and so checked) with their own table.
std::optional<Problem> check_value(const c::AttrPolicy& p, std::span<const uint8_t> v, uint32_t at, bool nested_flag,
                                   uint32_t base);

// An attribute list: `bytes` starts at offset `base` of the message. `allowed` (bit per id) limits the
// top level to what a command takes; nested lists take any attribute of their table.
std::optional<Problem> parse_attrs(std::span<const uint8_t> bytes, uint32_t base, const c::AttrPolicy* table,
                                   size_t count, const char* where, uint64_t allowed, uint64_t repeated, Attrs& out) {
  size_t pos = 0;
  while (pos < bytes.size()) {
    const auto at = static_cast<uint32_t>(base + pos);
    if (bytes.size() - pos < 4)
      return problem(EINVAL, std::to_string(bytes.size() - pos) + " trailing bytes in " + where +
                     " are too few for an attribute header (4)", at);
    const uint16_t len = load<uint16_t>(bytes.data() + pos);
    const uint16_t type = load<uint16_t>(bytes.data() + pos + 2);
    const uint16_t id = type & ~c::kNestedFlag;
    if (len < 4 || len > bytes.size() - pos)
      return problem(EINVAL, "attribute " + std::to_string(id) + " in " + where + " says it is " + std::to_string(len) +
                     " bytes, " + std::to_string(bytes.size() - pos) + " remain", at, id);
    const c::AttrPolicy* p = c::policy_of(table, count, id);
    if (!p) return problem(EINVAL, "unknown attribute " + std::to_string(id) + " in " + where, at, id);
    if (id >= 64 || !(allowed >> id & 1))
      return problem(EINVAL, std::string("attribute ") + p->name + " is not taken by " + where, at, id);
    if ((out.present >> id & 1) && !(repeated >> id & 1))
      return problem(EINVAL, std::string("attribute ") + p->name + " appears twice in " + where, at, id);
    const auto value = bytes.subspan(pos + 4, len - 4u);
    if (auto bad = check_value(*p, value, at, type & c::kNestedFlag, at + 4)) return bad;
    out.items.push_back({id, at, value});
    out.present |= uint64_t{1} << id;
    pos += align_up(len);
  }
  return std::nullopt;
}

std::optional<Problem> check_value(const c::AttrPolicy& p, std::span<const uint8_t> v, uint32_t at, bool nested_flag,
                                   uint32_t base) {
  const std::string name = p.name;
  if (nested_flag != (p.type == c::AttrType::nest))
    return problem(EINVAL, name + (nested_flag ? " is marked nested and is not a nest" : " is a nest not marked nested"),
                   at, p.id);
  switch (p.type) {
    case c::AttrType::u8:
    case c::AttrType::u16:
    case c::AttrType::u32:
    case c::AttrType::u64: {
      if (v.size() != width(p.type))
        return problem(EINVAL, name + " must be " + std::to_string(width(p.type)) + " bytes, not " +
                       std::to_string(v.size()), at, p.id);
      const uint64_t x = read_uint(v);
      if (x < p.min || x > p.max)
        return problem(ERANGE, name + " = " + std::to_string(x) + " is outside " + std::to_string(p.min) + ".." +
                       std::to_string(p.max), at, p.id);
      return std::nullopt;
    }
    case c::AttrType::string: {
      const void* nul = v.empty() ? nullptr : std::memchr(v.data(), 0, v.size());
      if (!nul) return problem(EINVAL, name + " is not a NUL-terminated string", at, p.id);
      const size_t n = static_cast<const uint8_t*>(nul) - v.data();
      if (n > p.max)
        return problem(ENAMETOOLONG, name + " is " + std::to_string(n) + " bytes, at most " + std::to_string(p.max), at,
                       p.id);
      if (n + 1 != v.size()) return problem(EINVAL, name + " has bytes after its NUL", at, p.id);
      return std::nullopt;
    }
    case c::AttrType::binary:
      if ((p.len && v.size() != p.len) || (!p.len && v.size() > p.max))
        return problem(EINVAL, name + " is " + std::to_string(v.size()) + " bytes, must be " +
                       (p.len ? std::to_string(p.len) : "at most " + std::to_string(p.max)), at, p.id);
      return std::nullopt;
    case c::AttrType::nest: {
      const c::NestInfo& n = c::kNests[p.nest];
      Attrs inner;
      if (auto bad = parse_attrs(v, base, n.attrs, n.count, p.name, ~uint64_t{0}, 0, inner)) return bad;
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::string names_of(uint64_t mask) {
  std::string out;
  for (const c::AttrPolicy& p : c::kAttrs)
    if (mask >> p.id & 1) out += (out.empty() ? "" : ", ") + std::string(p.name);
  return out;
}

}  // namespace

std::optional<uint64_t> Attrs::num(uint16_t id) const {
  for (const Item& i : items)
    if (i.id == id) return read_uint(i.value);
  return std::nullopt;
}

std::vector<uint64_t> Attrs::nums(uint16_t id) const {
  std::vector<uint64_t> out;
  for (const Item& i : items)
    if (i.id == id) out.push_back(read_uint(i.value));
  return out;
}

std::optional<std::string> Attrs::str(uint16_t id) const {
  for (const Item& i : items)
    if (i.id == id && !i.value.empty()) return std::string(reinterpret_cast<const char*>(i.value.data()));
  return std::nullopt;
}

std::optional<std::span<const uint8_t>> Attrs::bytes(uint16_t id) const {
  for (const Item& i : items)
    if (i.id == id) return i.value;
  return std::nullopt;
}

std::vector<Attrs> Attrs::nests(uint16_t id) const {
  std::vector<Attrs> out;
  const c::AttrPolicy* p = c::policy_of(id);
  if (!p || p->nest == c::kNoNest) return out;
  const c::NestInfo& n = c::kNests[p->nest];
  for (const Item& i : items) {
    if (i.id != id) continue;
    Attrs inner;
    parse_attrs(i.value, i.offset + 4, n.attrs, n.count, n.name, ~uint64_t{0}, 0, inner);
    out.push_back(std::move(inner));
  }
  return out;
}

std::optional<Header> header_of(std::span<const uint8_t> bytes) {
  if (bytes.size() < c::kNetlinkHeaderBytes) return std::nullopt;
  return read_header(bytes);
}

std::variant<Request, Problem> parse_request(std::span<const uint8_t> bytes) {
  const size_t head = c::kNetlinkHeaderBytes + c::kGenlHeaderBytes;
  if (bytes.size() < head)
    return problem(EINVAL, "a message of " + std::to_string(bytes.size()) + " bytes is shorter than its headers (" +
                   std::to_string(head) + ")", 0);
  if (bytes.size() > c::kMaxMessageBytes)
    return problem(EMSGSIZE, "a message of " + std::to_string(bytes.size()) + " bytes is over " +
                   std::to_string(c::kMaxMessageBytes), 0);
  Request req;
  req.header = read_header(bytes);
  if (req.header.len != bytes.size())
    return problem(EINVAL, "the netlink length says " + std::to_string(req.header.len) + " bytes, the message has " +
                   std::to_string(bytes.size()), 0);
  if (req.header.type != c::kFamilyId)
    return problem(EINVAL, "message type " + std::to_string(req.header.type) + " is not the UET family (" +
                   std::to_string(c::kFamilyId) + ")", 4);
  if (!(req.header.flags & c::kFlagRequest)) return problem(EINVAL, "the request flag is not set", 6);
  const uint8_t cmd = bytes[c::kNetlinkHeaderBytes];
  const uint8_t version = bytes[c::kNetlinkHeaderBytes + 1];
  req.cmd = c::command_info(cmd);
  if (!req.cmd) return problem(EOPNOTSUPP, "unknown command " + std::to_string(cmd), c::kNetlinkHeaderBytes);
  if (version != c::kFamilyVersion)
    return problem(EPROTONOSUPPORT, "family version " + std::to_string(version) + ", this entity speaks " +
                   std::to_string(c::kFamilyVersion), c::kNetlinkHeaderBytes + 1);
  const uint64_t allowed = req.cmd->required | req.cmd->optional;
  if (auto bad = parse_attrs(bytes.subspan(head), head, c::kAttrs, std::size(c::kAttrs), req.cmd->name, allowed,
                             req.cmd->repeated, req.attrs))
    return *bad;
  if (const uint64_t missing = req.cmd->required & ~req.attrs.present)
    return problem(EINVAL, std::string(req.cmd->name) + " needs " + names_of(missing), 0);
  return req;
}

std::variant<Reply, Problem> parse_reply(std::span<const uint8_t> bytes) {
  if (bytes.size() < c::kNetlinkHeaderBytes)
    return problem(EINVAL, "a reply of " + std::to_string(bytes.size()) + " bytes is shorter than its header", 0);
  Reply r;
  r.header = read_header(bytes);
  if (r.header.len != bytes.size()) return problem(EINVAL, "the reply's netlink length is not its size", 0);
  if (r.header.type == c::kDoneType) {
    r.is_done = true;
    return r;
  }
  if (r.header.type == c::kErrorType) {
    const size_t head = c::kNetlinkHeaderBytes + 4 + c::kNetlinkHeaderBytes;
    if (bytes.size() < head) return problem(EINVAL, "an error reply shorter than its headers", 0);
    r.is_error = true;
    r.err = load<int32_t>(bytes.data() + c::kNetlinkHeaderBytes);
    Attrs ack;
    if (auto bad = parse_attrs(bytes.subspan(head), head, c::kAckAttrs, std::size(c::kAckAttrs), "an error reply",
                               ~uint64_t{0}, 0, ack))
      return *bad;
    r.what = ack.str(c::ack_attr::msg).value_or("");
    r.attr = static_cast<uint16_t>(ack.num(c::ack_attr::attr).value_or(0));
    return r;
  }
  if (r.header.type != c::kFamilyId || bytes.size() < c::kNetlinkHeaderBytes + c::kGenlHeaderBytes)
    return problem(EINVAL, "a reply that is neither an error nor a UET message", 4);
  r.cmd = bytes[c::kNetlinkHeaderBytes];
  const c::CmdInfo* info = c::command_info(r.cmd);
  if (!info) return problem(EINVAL, "a reply to unknown command " + std::to_string(r.cmd), c::kNetlinkHeaderBytes);
  const size_t head = c::kNetlinkHeaderBytes + c::kGenlHeaderBytes;
  if (auto bad = parse_attrs(bytes.subspan(head), head, c::kAttrs, std::size(c::kAttrs), "a reply", info->reply,
                             info->reply_repeated, r.attrs))
    return *bad;
  return r;
}

Writer::Writer(uint16_t type, uint16_t flags, uint32_t seq, uint32_t port) {
  buf_.resize(c::kNetlinkHeaderBytes);
  std::memcpy(buf_.data() + 4, &type, 2);
  std::memcpy(buf_.data() + 6, &flags, 2);
  std::memcpy(buf_.data() + 8, &seq, 4);
  std::memcpy(buf_.data() + 12, &port, 4);
}

Writer Writer::command(control::Cmd cmd, uint16_t flags, uint32_t seq, uint32_t port) {
  Writer w(c::kFamilyId, flags, seq, port);
  const uint8_t genl[4] = {static_cast<uint8_t>(cmd), c::kFamilyVersion, 0, 0};
  w.raw(genl, sizeof genl);
  return w;
}

Writer& Writer::raw(const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  buf_.insert(buf_.end(), p, p + n);
  return *this;
}

Writer& Writer::put(uint16_t id, const void* data, size_t n) {
  const auto len = static_cast<uint16_t>(4 + n);
  raw(&len, 2).raw(&id, 2).raw(data, n);
  buf_.resize(align_up(buf_.size()));
  return *this;
}

size_t Writer::begin_nest(uint16_t id) {
  const size_t at = buf_.size();
  const uint16_t zero = 0, type = id | c::kNestedFlag;
  raw(&zero, 2).raw(&type, 2);
  return at;
}

void Writer::end_nest(size_t at) {
  const auto len = static_cast<uint16_t>(buf_.size() - at);
  std::memcpy(buf_.data() + at, &len, 2);
}

std::vector<uint8_t> Writer::finish() {
  const auto len = static_cast<uint32_t>(buf_.size());
  std::memcpy(buf_.data(), &len, 4);
  return std::move(buf_);
}

std::vector<uint8_t> error_reply(const Header& req, int err, const Problem* problem) {
  Writer w(c::kErrorType, 0, req.seq, req.port);
  const int32_t e = -err;
  w.raw(&e, 4);
  uint8_t head[c::kNetlinkHeaderBytes];
  std::memcpy(head, &req.len, 4);
  std::memcpy(head + 4, &req.type, 2);
  std::memcpy(head + 6, &req.flags, 2);
  std::memcpy(head + 8, &req.seq, 4);
  std::memcpy(head + 12, &req.port, 4);
  w.raw(head, sizeof head);
  if (problem) {
    std::string what = problem->what.substr(0, c::policy_of(c::kAckAttrs, std::size(c::kAckAttrs), c::ack_attr::msg)->max);
    w.str(c::ack_attr::msg, what).u32(c::ack_attr::offs, problem->offset);
    if (problem->attr) w.u16(c::ack_attr::attr, problem->attr);
  }
  return w.finish();
}

}  // namespace uet::entity
