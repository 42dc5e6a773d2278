// Table-driven encoder: the layouts of wire_gen.cpp, read the other way.
#include "uet/codec/encoder.hpp"

#include <algorithm>
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
  if (bit == 0 && bits % 8 == 0) {  // most fields: whole bytes, big-endian
    for (unsigned i = bits / 8; i-- > 0; value >>= 8) buf[at + i] = static_cast<uint8_t>(value);
    return;
  }
  for (unsigned i = 0; i < bits; ++i) {
    const unsigned pos = bit + i;  // bit position from the MSB of buf[at]
    uint8_t& byte = buf[at + pos / 8];
    const uint8_t mask = static_cast<uint8_t>(0x80u >> (pos % 8));
    const bool on = (value >> (bits - 1 - i)) & 1u;
    byte = on ? (byte | mask) : (byte & ~mask);
  }
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

void write_node(const wire::NodeInfo& n, const FieldValues& v, std::vector<uint8_t>& out, size_t start) {
  for (unsigned i = 0; i < n.n_layouts; ++i) {
    const wire::FieldLayout& l = wire::kLayouts[n.first_layout + i];
    if (l.field == Field::COUNT || l.aggregate || !wire::field_info(l.field).emitted || !when_holds(l.when, v)) continue;
    if (l.nbytes) {
      const std::vector<uint8_t>& b = v.bytes(l.field);
      std::copy_n(b.begin(), std::min<size_t>(b.size(), l.nbytes), out.begin() + start + l.at);
    } else {
      put_bits(out.data(), start + l.at, l.bit, l.bits, v.get(l.field));
    }
  }
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
    } else {
      for (unsigned k = 0; k < n.n_cases; ++k)
        if (case_matches(wire::kCases[n.first_case + k], 0, udp_port))
          throw EncodeError(std::string("set ") + wire::field_name(n.select_field) + " to reach " +
                            wire::node_info(path[i + 1]).id + " from " + n.id);
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

}  // namespace uet::codec
