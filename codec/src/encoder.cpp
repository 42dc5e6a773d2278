// Table-driven encoder: the layouts of wire_gen.cpp, read the other way.
#include "uet/codec/encoder.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>

namespace uet::codec {

using wire::Field;
using wire::Node;

FieldValues& FieldValues::set(Field field, uint64_t value) {
  values_[index(field)] = value;
  set_[index(field)] = true;
  return *this;
}

FieldValues& FieldValues::set_bytes(Field field, std::vector<uint8_t> bytes) {
  set_[index(field)] = true;
  for (auto& [f, b] : bytes_) {
    if (f == field) {
      b = std::move(bytes);
      return *this;
    }
  }
  bytes_.emplace_back(field, std::move(bytes));
  return *this;
}

const std::vector<uint8_t>& FieldValues::bytes(Field field) const {
  static const std::vector<uint8_t> kNone;
  for (const auto& [f, b] : bytes_)
    if (f == field) return b;
  return kNone;
}

void put_bits(uint8_t* buf, size_t at, unsigned bit, unsigned bits, uint64_t value) {
  at += bit / 8;
  bit %= 8;
  if (bit == 0 && bits % 8 == 0) {  // most fields: whole bytes, big-endian
    for (unsigned i = bits / 8; i-- > 0; value >>= 8) buf[at + i] = static_cast<uint8_t>(value);
    return;
  }
  // A bit field: read the bytes it touches as one big-endian number, replace the field's bits, write
  // them back. Nine bytes (a 57- to 64-bit field off a byte boundary) need the wider word.
  const unsigned span = (bit + bits + 7) / 8;
  const unsigned shift = span * 8 - bit - bits;
  if (span <= 8) {
    uint64_t word = 0;
    for (unsigned i = 0; i < span; ++i) word = (word << 8) | buf[at + i];
    const uint64_t ones = (uint64_t{1} << bits) - 1;  // bits < 64: a 64-bit field here is off a byte boundary
    word = (word & ~(ones << shift)) | ((value & ones) << shift);
    for (unsigned i = span; i-- > 0; word >>= 8) buf[at + i] = static_cast<uint8_t>(word);
    return;
  }
  unsigned __int128 word = 0;
  for (unsigned i = 0; i < span; ++i) word = (word << 8) | buf[at + i];
  const unsigned __int128 ones = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  word = (word & ~(ones << shift)) | ((static_cast<unsigned __int128>(value) & ones) << shift);
  for (unsigned i = span; i-- > 0; word >>= 8) buf[at + i] = static_cast<uint8_t>(word);
}

namespace {

bool when_holds(int16_t when, const FieldValues& v) {
  if (when < 0) return true;
  const wire::WhenInfo& w = wire::kWhens[when];
  const uint64_t x = v.get(w.field);
  const bool in = std::find(w.values, w.values + w.n_values, x) != w.values + w.n_values;
  return w.op == wire::WhenOp::not_in ? !in : in;
}

}  // namespace

bool case_matches(const wire::CaseInfo& c, uint64_t x, uint16_t udp_port) {
  switch (c.op) {
    case wire::CaseOp::eq:
    case wire::CaseOp::in:
      return std::find(c.values, c.values + c.n_values, x) != c.values + c.n_values;
    case wire::CaseOp::range:
      return x >= c.values[0] && x <= c.values[1];
    case wire::CaseOp::param_udp_port:
      return x == udp_port;
  }
  return false;
}

namespace {

size_t node_size(const wire::NodeInfo& n, FieldValues& v) {
  if (n.dispatch) return 0;
  if (n.size_rule_field == Field::COUNT) return n.size;
  if (!v.has(n.size_rule_field)) v.set(n.size_rule_field, n.min_len / n.size_scale);
  return v.get(n.size_rule_field) * n.size_scale;
}

// Does the encoder write this layout at all? (Aggregates and fields the decoder does not emit are views
// of bytes other layouts write.)
bool written(const wire::FieldLayout& l) {
  return l.field != Field::COUNT && !l.aggregate && wire::field_info(l.field).emitted;
}

void write_value(const wire::FieldLayout& l, uint64_t x, uint8_t* node);

void write_layout(const wire::FieldLayout& l, const FieldValues& v, std::vector<uint8_t>& out, size_t start) {
  if (!when_holds(l.when, v)) return;
  uint8_t* at = out.data() + start + l.at;
  if (l.nbytes) {
    const std::vector<uint8_t>& b = v.bytes(l.field);
    std::copy_n(b.begin(), std::min<size_t>(b.size(), l.nbytes), at);
    return;
  }
  write_value(l, v.get(l.field), out.data() + start);
}

void write_value(const wire::FieldLayout& l, uint64_t x, uint8_t* node) {
  uint8_t* at = node + l.at;
  // The common widths of whole-byte fields as single big-endian stores.
  if (l.bit == 0) {
    switch (l.bits) {
      case 8: *at = static_cast<uint8_t>(x); return;
      case 16: { const uint16_t be = __builtin_bswap16(static_cast<uint16_t>(x)); std::memcpy(at, &be, 2); return; }
      case 32: { const uint32_t be = __builtin_bswap32(static_cast<uint32_t>(x)); std::memcpy(at, &be, 4); return; }
      case 64: { const uint64_t be = __builtin_bswap64(x); std::memcpy(at, &be, 8); return; }
      default: break;
    }
  }
  put_bits(node, l.at, l.bit, l.bits, x);
}

void write_node(const wire::NodeInfo& n, const FieldValues& v, std::vector<uint8_t>& out, size_t start) {
  for (unsigned i = 0; i < n.n_layouts; ++i) {
    const wire::FieldLayout& l = wire::kLayouts[n.first_layout + i];
    if (written(l)) write_layout(l, v, out, start);
  }
}

[[noreturn]] void no_value_for_edge(const wire::NodeInfo& n, Node to) {
  throw EncodeError(std::string("set ") + wire::field_name(n.select_field) + " to reach " + wire::node_info(to).id +
                    " from " + n.id);
}

// Does a value of 0 (an unset field) take some case of `n`, rather than its default edge?
bool zero_takes_a_case(const wire::NodeInfo& n, uint16_t udp_port) {
  for (unsigned k = 0; k < n.n_cases; ++k)
    if (case_matches(wire::kCases[n.first_case + k], 0, udp_port)) return true;
  return false;
}

}  // namespace

std::optional<uint64_t> edge_value(Node from, Node to, uint16_t udp_port) {
  const wire::NodeInfo& n = wire::node_info(from);
  for (unsigned i = 0; i < n.n_cases; ++i) {
    const wire::CaseInfo& c = wire::kCases[n.first_case + i];
    if (c.to == static_cast<int>(to)) return c.op == wire::CaseOp::param_udp_port ? udp_port : c.values[0];
  }
  if (n.default_to == static_cast<int>(to)) return std::nullopt;
  throw EncodeError(std::string("node ") + wire::node_info(to).id + " does not follow " + n.id);
}

std::vector<uint8_t> encode_path(std::span<const Node> path, FieldValues& v, std::span<const uint8_t> payload,
                                 uint16_t udp_port) {
  // Select fields first: a node's own fields may depend on them through `when`.
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    const wire::NodeInfo& n = wire::node_info(path[i]);
    const std::optional<uint64_t> want = edge_value(path[i], path[i + 1], udp_port);
    if (n.select_field == Field::COUNT || v.has(n.select_field)) continue;
    if (want) {
      v.set(n.select_field, *want);
    } else if (zero_takes_a_case(n, udp_port)) {
      no_value_for_edge(n, path[i + 1]);
    }
  }
  std::vector<uint8_t> out;
  out.reserve(256 + payload.size());  // headers are at most a few hundred bytes: one allocation per frame
  std::vector<size_t> starts;
  starts.reserve(path.size());
  for (Node node : path) {
    const wire::NodeInfo& n = wire::node_info(node);
    const size_t start = out.size();
    starts.push_back(start);
    out.resize(start + std::max<size_t>(node_size(n, v), n.min_len));
    write_node(n, v, out, start);
    if (n.dispatch) out.resize(start);  // a dispatch node's fields belong to the bytes that follow
  }
  // Re-write dispatch fields over the bytes of the node that follows them.
  for (size_t i = 0; i < path.size(); ++i) {
    const wire::NodeInfo& n = wire::node_info(path[i]);
    if (n.dispatch && starts[i] + n.min_len <= out.size()) write_node(n, v, out, starts[i]);
  }
  const size_t payload_at = out.size();
  out.insert(out.end(), payload.begin(), payload.end());
  for (size_t i = 0; i < path.size(); ++i) {
    const wire::NodeInfo& n = wire::node_info(path[i]);
    bool rewrite = false;
    if (n.bounds_field != Field::COUNT && !v.has(n.bounds_field)) {
      const size_t header = node_size(n, v);
      v.set(n.bounds_field, out.size() - starts[i] - (n.bounds_includes_header ? 0 : header));
      rewrite = true;
    }
    if (n.payload_length_field != Field::COUNT && !v.has(n.payload_length_field)) {
      v.set(n.payload_length_field, out.size() - payload_at);
      rewrite = true;
    }
    if (rewrite) write_node(n, v, out, starts[i]);
  }
  return out;
}

PathEncoder::PathEncoder(std::span<const Node> path, uint16_t udp_port) : udp_port_(udp_port) {
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    const wire::NodeInfo& n = wire::node_info(path[i]);
    const std::optional<uint64_t> want = edge_value(path[i], path[i + 1], udp_port);  // throws off the graph
    if (n.select_field != Field::COUNT) selects_.push_back({n.select_field, want, path[i], path[i + 1]});
  }
  std::vector<std::pair<size_t, const wire::NodeInfo*>> dispatch;
  for (Node node : path) {
    const wire::NodeInfo& n = wire::node_info(node);
    if (n.size_rule_field != Field::COUNT || n.bounds_field != Field::COUNT)
      throw EncodeError(std::string("node ") + n.id + " has a size or bounds that depend on the frame: use encode_path");
    if (n.payload_length_field != Field::COUNT) payload_lengths_.push_back(n.payload_length_field);
    if (n.dispatch) {
      dispatch.emplace_back(header_size_, &n);
      continue;
    }
    for (unsigned i = 0; i < n.n_layouts; ++i) {
      const wire::FieldLayout& l = wire::kLayouts[n.first_layout + i];
      if (written(l)) slots_.push_back({static_cast<uint32_t>(header_size_ + l.at), &l});
    }
    header_size_ += std::max<size_t>(n.size, n.min_len);
  }
  // As in encode_path, a dispatch node's fields go over the bytes that follow it, once they are written.
  for (const auto& [start, n] : dispatch) {
    if (start + n->min_len > header_size_) continue;
    for (unsigned i = 0; i < n->n_layouts; ++i) {
      const wire::FieldLayout& l = wire::kLayouts[n->first_layout + i];
      if (written(l)) slots_.push_back({static_cast<uint32_t>(start + l.at), &l});
    }
  }
}

std::vector<uint8_t> PathEncoder::encode(FieldValues& v, std::span<const uint8_t> payload) const {
  for (const Select& s : selects_) {
    if (v.has(s.field)) continue;
    if (s.value) {
      v.set(s.field, *s.value);
    } else {
      const wire::NodeInfo& n = wire::node_info(s.from);
      if (zero_takes_a_case(n, udp_port_)) no_value_for_edge(n, s.to);
    }
  }
  for (Field f : payload_lengths_)
    if (!v.has(f)) v.set(f, payload.size());
  // Only the header starts as zeros (fields are written into it bit by bit, and every slot lies inside it);
  // the payload is copied in once, not zeroed first: softuet encodes every 4 KiB segment it sends, and
  // zeroing them was 10 % of its user-space instructions in a bandwidth run.
  std::vector<uint8_t> out;
  out.reserve(header_size_ + payload.size());
  out.resize(header_size_);
  for (const Slot& s : slots_) write_layout(*s.layout, v, out, s.at - s.layout->at);
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

PathEncoder::Place PathEncoder::place_of(Field field) const {
  Place place;
  for (const Slot& s : slots_) {
    if (s.layout->field != field) continue;
    if (s.layout->when >= 0 || s.layout->nbytes)
      throw EncodeError(std::string("cannot rewrite ") + wire::field_name(field) + ": conditional or a byte string");
    if (place.count == place.slots.size())
      throw EncodeError(std::string("the path lays out ") + wire::field_name(field) + " more than twice");
    place.slots[place.count++] = s;
    place.end = std::max<uint32_t>(place.end, s.at + (s.layout->bit + s.layout->bits + 7) / 8);
  }
  if (!place.count) throw EncodeError(std::string("the path does not lay out ") + wire::field_name(field));
  return place;
}

void PathEncoder::rewrite(std::span<uint8_t> frame, const Place& place, uint64_t value) {
  if (place.end > frame.size())
    throw EncodeError(std::string("frame too short to rewrite ") + wire::field_name(place.slots[0].layout->field));
  for (uint8_t i = 0; i < place.count; ++i) {
    const Slot& s = place.slots[i];
    write_value(*s.layout, value, frame.data() + s.at - s.layout->at);
  }
}

void PathEncoder::rewrite(std::span<uint8_t> frame, Field field, uint64_t value) const {
  rewrite(frame, place_of(field), value);
}

}  // namespace uet::codec
