#include "graph_paths.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <set>

namespace uet::codec::test {

using wire::Field;
using wire::Node;

namespace {

const wire::CaseInfo& case_of(const wire::NodeInfo& n, int k) { return wire::kCases[n.first_case + k]; }

bool holds_in(const wire::CaseInfo& c, wire::SpecVersion v) {
  return static_cast<unsigned>(v) >= c.since && static_cast<unsigned>(v) < c.before;
}

// Does x take edge `edge` of node n in spec version v (first matching case wins; default when none matches)?
bool takes_edge(const wire::NodeInfo& n, int edge, uint64_t x, wire::SpecVersion v) {
  for (int k = 0; k < n.n_cases; ++k)
    if (holds_in(case_of(n, k), v) && case_matches(case_of(n, k), x)) return k == edge;
  return edge == -1;
}

// The version a path is decoded in: the default when every case it takes holds there, else the oldest
// version they all hold in; nullopt when there is none.
std::optional<wire::SpecVersion> version_of(const std::vector<Step>& steps) {
  auto all_hold = [&](wire::SpecVersion v) {
    for (const Step& s : steps)
      if (s.edge >= 0 && !holds_in(case_of(wire::node_info(s.node), s.edge), v)) return false;
    return true;
  };
  if (all_hold(wire::kSpecVersionDefault)) return wire::kSpecVersionDefault;
  for (size_t i = 0; i < wire::kSpecVersionCount; ++i)
    if (all_hold(static_cast<wire::SpecVersion>(i))) return static_cast<wire::SpecVersion>(i);
  return std::nullopt;
}

void dfs(Node node, std::vector<Step>& cur, std::vector<GraphPath>& out) {
  const wire::NodeInfo& n = wire::node_info(node);
  auto follow = [&](int edge, int to) {
    cur.push_back({node, edge});
    if (to == -1) {
      if (const auto v = version_of(cur)) out.push_back({cur, {}, *v});
    } else if (to >= 0) {
      dfs(static_cast<Node>(to), cur, out);
    }
    cur.pop_back();
  };
  for (int k = 0; k < n.n_cases; ++k) follow(k, case_of(n, k).to);
  follow(-1, n.default_to);
}

std::string name_of(const std::vector<Step>& steps) {
  std::string name;
  for (const Step& s : steps) {
    const wire::NodeInfo& n = wire::node_info(s.node);
    if (n.dispatch) continue;
    std::string id = n.id;
    if (id.rfind("uet.", 0) == 0) id = id.substr(4);
    std::replace_if(id.begin(), id.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
    name += (name.empty() ? "" : "__") + id;
  }
  return name;
}

void name_uniquely(std::vector<GraphPath>& paths) {
  std::map<std::string, int> seen;
  for (GraphPath& p : paths) {
    p.name = name_of(p.steps);
    if (int n = seen[p.name]++) p.name += "_" + std::to_string(n);
  }
}

bool solve_selects(const GraphPath& path, std::mt19937_64& rng, FieldValues& v);

uint64_t mask(unsigned bits) { return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; }

const wire::FieldLayout* layout_of(Node node, Field field) {
  const wire::NodeInfo& n = wire::node_info(node);
  for (unsigned i = 0; i < n.n_layouts; ++i)
    if (wire::kLayouts[n.first_layout + i].field == field) return &wire::kLayouts[n.first_layout + i];
  return nullptr;
}

uint64_t random_enum_value(wire::Enum e, unsigned bits, std::mt19937_64& rng) {
  const wire::EnumInfo& info = wire::kEnums[static_cast<size_t>(e)];
  std::vector<uint64_t> pool(info.values, info.values + info.n_values);
  for (unsigned i = 0; i < info.n_ranges; ++i) pool.push_back(info.ranges[2 * i + 1]);
  std::erase_if(pool, [&](uint64_t v) { return v > mask(bits); });
  if (pool.empty()) return 0;
  return pool[rng() % pool.size()];
}

}  // namespace

std::vector<Node> GraphPath::nodes() const {
  std::vector<Node> out;
  for (const Step& s : steps) out.push_back(s.node);
  return out;
}

std::vector<GraphPath> paths_from(Node root) {
  std::vector<GraphPath> out;
  std::vector<Step> cur;
  dfs(root, cur, out);
  // Drop paths no frame can follow (e.g. a deferrable-send opcode that would also need an atomic one).
  std::mt19937_64 rng(1);
  std::erase_if(out, [&](const GraphPath& p) {
    FieldValues v;
    return !solve_selects(p, rng, v);
  });
  name_uniquely(out);
  return out;
}

std::vector<GraphPath> uet_paths_over_ethernet() {
  GraphPath prefix;
  for (const GraphPath& p : paths_from(Node::eth)) {
    for (size_t i = 0; i < p.steps.size() && prefix.steps.empty(); ++i)
      if (p.steps[i].node == Node::uet) prefix.steps.assign(p.steps.begin(), p.steps.begin() + static_cast<long>(i));
    if (!prefix.steps.empty()) break;
  }
  std::vector<GraphPath> out;
  for (const GraphPath& suffix : paths_from(Node::uet)) {
    GraphPath p = join(prefix, suffix);
    p.name = suffix.name;
    out.push_back(p);
  }
  return out;
}

GraphPath join(const GraphPath& prefix, const GraphPath& suffix) {
  GraphPath p{prefix.steps, {}};
  p.steps.insert(p.steps.end(), suffix.steps.begin(), suffix.steps.end());
  p.name = name_of(p.steps);
  p.version = version_of(p.steps).value_or(suffix.version);
  return p;
}

std::vector<size_t> node_offsets(const GraphPath& path, const FieldValues& values) {
  std::vector<size_t> out;
  size_t at = 0;
  for (const Step& s : path.steps) {
    const wire::NodeInfo& n = wire::node_info(s.node);
    out.push_back(at);
    if (n.dispatch) continue;
    at += n.size_rule_field == Field::COUNT ? n.size : values.get(n.size_rule_field) * n.size_scale;
  }
  out.push_back(at);  // where the payload starts
  return out;
}

unsigned field_bits(Node node, Field field) {
  const wire::FieldLayout* l = layout_of(node, field);
  return l ? l->bits : 0;
}

namespace {

// Values for the select fields of the path that take every edge the path takes; false if none exist.
bool solve_selects(const GraphPath& path, std::mt19937_64& rng, FieldValues& v) {
  std::map<Field, std::vector<Step>> constraints;
  for (const Step& s : path.steps) {
    const wire::NodeInfo& n = wire::node_info(s.node);
    if (n.select_field != Field::COUNT) constraints[n.select_field].push_back(s);
  }
  for (const auto& [field, steps] : constraints) {
    std::vector<uint64_t> candidates = {0, 1};
    for (const Step& s : steps) {
      const wire::NodeInfo& n = wire::node_info(s.node);
      for (int k = 0; k < n.n_cases; ++k) {
        const wire::CaseInfo& c = case_of(n, k);
        if (c.op == wire::CaseOp::param_udp_port) candidates.push_back(wire::kUdpPort);
        candidates.insert(candidates.end(), c.values, c.values + c.n_values);
        if (c.op == wire::CaseOp::range) candidates.push_back(c.values[0] - 1), candidates.push_back(c.values[1] + 1);
      }
    }
    const wire::FieldInfo& info = wire::field_info(field);
    const wire::EnumInfo& e = wire::kEnums[static_cast<size_t>(info.enumeration)];
    candidates.insert(candidates.end(), e.values, e.values + e.n_values);
    for (int i = 0; i < 8; ++i) candidates.push_back(rng() & 0xffff);
    std::shuffle(candidates.begin(), candidates.end(), rng);
    unsigned bits = 0;  // as laid out by whichever node of the path decodes the field
    for (const Step& s : path.steps) bits = std::max(bits, field_bits(s.node, field));
    for (uint64_t x : candidates) {
      if (bits && x > mask(bits)) continue;
      if (info.enumeration != wire::Enum::none && !wire::enum_valid(info.enumeration, x)) continue;
      bool ok = true;
      for (const Step& s : steps) ok = ok && takes_edge(wire::node_info(s.node), s.edge, x, path.version);
      if (ok) {
        v.set(field, x);
        break;
      }
    }
    if (!v.has(field)) return false;
  }
  return true;
}

}  // namespace

namespace {
BuiltFrame draw_frame(const GraphPath& path, std::mt19937_64& rng, size_t payload_len);
}  // namespace

// The encoder's tables keep the values a field's layout forbids, not the `checks:` of spec/wire.yaml
// (rules between fields, e.g. no datagram in the medium header before spec 1.0.3): a frame a check
// rejects (invalid_value, the one diagnostic a check gives) is drawn again.
BuiltFrame build_frame(const GraphPath& path, std::mt19937_64& rng, size_t payload_len) {
  for (int attempt = 0;; ++attempt) {
    BuiltFrame out = draw_frame(path, rng, payload_len);
    auto d = std::make_unique<Decoded>();
    const auto size = static_cast<uint32_t>(out.bytes.size());
    decode(out.bytes.data(), size, size, path.steps.front().node, path.options(), *d);
    bool rejected = false;
    for (unsigned i = 0; i < d->n_diags; ++i) rejected |= d->diags[i].kind == DiagKind::invalid_value;
    if (!rejected || attempt == 32) return out;
  }
}

namespace {
BuiltFrame draw_frame(const GraphPath& path, std::mt19937_64& rng, size_t payload_len) {
  BuiltFrame out;
  FieldValues& v = out.values;
  // 1. Select fields: a value that takes every edge of the path that reads the field.
  if (!solve_selects(path, rng, v)) throw EncodeError("no frame follows path " + path.name);
  // 2. An internal dispatch field is an alias of the bits of the node after it: copy its value there.
  for (size_t i = 0; i < path.steps.size(); ++i) {
    const wire::NodeInfo& n = wire::node_info(path.steps[i].node);
    if (n.select_field == Field::COUNT || wire::field_info(n.select_field).emitted || !n.dispatch) continue;
    const wire::FieldLayout* alias = layout_of(path.steps[i].node, n.select_field);
    for (size_t j = i + 1; j < path.steps.size() && alias; ++j) {
      const wire::NodeInfo& m = wire::node_info(path.steps[j].node);
      for (unsigned k = 0; k < m.n_layouts; ++k) {
        const wire::FieldLayout& l = wire::kLayouts[m.first_layout + k];
        if (l.field != Field::COUNT && l.at == alias->at && l.bit == alias->bit && l.bits == alias->bits &&
            !v.has(l.field))
          v.set(l.field, v.get(n.select_field));
      }
      if (!m.dispatch) break;
    }
  }
  // 3. Everything else: random values that are valid, except what the encoder derives.
  std::set<Field> derived;
  for (const Step& s : path.steps) {
    const wire::NodeInfo& n = wire::node_info(s.node);
    if (n.bounds_field != Field::COUNT) derived.insert(n.bounds_field);
    if (n.payload_length_field != Field::COUNT) derived.insert(n.payload_length_field);
    if (n.size_rule_field != Field::COUNT && !v.has(n.size_rule_field))
      v.set(n.size_rule_field, n.min_len / n.size_scale);
  }
  for (const Step& s : path.steps) {
    const wire::NodeInfo& n = wire::node_info(s.node);
    for (unsigned k = 0; k < n.n_layouts; ++k) {
      const wire::FieldLayout& l = wire::kLayouts[n.first_layout + k];
      if (l.field == Field::COUNT || l.aggregate || v.has(l.field) || derived.count(l.field)) continue;
      const wire::FieldInfo& info = wire::field_info(l.field);
      if (l.nbytes) {
        std::vector<uint8_t> b(l.nbytes);
        for (auto& x : b) x = static_cast<uint8_t>(rng());
        v.set_bytes(l.field, b);
        continue;
      }
      uint64_t x;
      if (l.require >= 0) {
        x = static_cast<uint64_t>(l.require);
      } else if (info.enumeration != wire::Enum::none) {
        x = random_enum_value(info.enumeration, l.bits, rng);
      } else {
        do x = rng() & mask(l.bits);
        while (std::find(l.invalid, l.invalid + l.n_invalid, x) != l.invalid + l.n_invalid);
      }
      v.set(l.field, x);
    }
  }
  // A path that ends at a `payload: none` node is a complete UET packet: bytes after it are not payload.
  if (wire::node_info(path.steps.back().node).payload_none) payload_len = 0;
  out.payload.resize(payload_len);
  for (auto& x : out.payload) x = static_cast<uint8_t>(rng());
  const std::vector<Node> nodes = path.nodes();
  out.bytes = encode_path(nodes, v, out.payload);
  return out;
}
}  // namespace

std::vector<Field> expected_fields(const GraphPath& path, const FieldValues& values) {
  std::vector<Field> out;
  for (const Step& s : path.steps) {
    const wire::NodeInfo& n = wire::node_info(s.node);
    for (unsigned k = 0; k < n.n_layouts; ++k) {
      const wire::FieldLayout& l = wire::kLayouts[n.first_layout + k];
      if (l.field == Field::COUNT || !wire::field_info(l.field).emitted) continue;
      if (l.when >= 0) {
        const wire::WhenInfo& w = wire::kWhens[l.when];
        const bool in = std::find(w.values, w.values + w.n_values, values.get(w.field)) != w.values + w.n_values;
        if (in == (w.op == wire::WhenOp::not_in)) continue;
      }
      out.push_back(l.field);
    }
  }
  return out;
}

std::vector<wire::Header> expected_layers(const GraphPath& path) {
  std::vector<wire::Header> out;
  for (const Step& s : path.steps) {
    const wire::NodeInfo& n = wire::node_info(s.node);
    if (!n.dispatch && (out.empty() || out.back() != n.header)) out.push_back(n.header);
  }
  return out;
}

}  // namespace uet::codec::test
