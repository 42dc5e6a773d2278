// One test body over every path of the parse graph: a frame encoded to follow the path must decode
// back to exactly the fields, values and layers that went in, with no diagnostic.
#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "graph_paths.hpp"

namespace uet::codec::test {
namespace {

using wire::Field;
using wire::Node;

bool enters_uet(const GraphPath& p) {
  for (const Step& s : p.steps)
    if (std::strncmp(wire::node_info(s.node).id, "uet", 3) == 0) return true;
  return false;
}

void check_roundtrip(const GraphPath& path, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const BuiltFrame built = build_frame(path, rng);
  Decoded d;
  const Node root = path.steps.front().node;
  decode(built.bytes.data(), static_cast<uint32_t>(built.bytes.size()), static_cast<uint32_t>(built.bytes.size()),
         root, path.options(), d);
  for (unsigned i = 0; i < d.n_diags; ++i)
    ADD_FAILURE() << "unexpected " << diag_kind_name(d.diags[i].kind) << " in " << wire::header_name(d.diags[i].header)
                  << (d.diags[i].detail ? d.diags[i].detail : "")
                  << (d.diags[i].field != kNoField ? wire::field_name(d.diags[i].field) : "");
  EXPECT_EQ(d.status(), enters_uet(path) ? Status::uet : Status::non_uet);

  const std::vector<wire::Header> layers = expected_layers(path);
  ASSERT_EQ(d.n_layers, layers.size());
  for (size_t i = 0; i < layers.size(); ++i)
    EXPECT_EQ(d.layers[i], layers[i]) << "layer " << i << " is " << wire::header_name(d.layers[i]);

  const std::vector<Field> fields = expected_fields(path, built.values);
  ASSERT_EQ(d.n_emitted, fields.size());
  for (size_t i = 0; i < fields.size(); ++i) {
    const Field f = fields[i];
    ASSERT_EQ(d.emitted[i].field, f) << "field " << i << " is " << wire::field_name(d.emitted[i].field)
                                     << ", expected " << wire::field_name(f);
    const wire::FieldInfo& info = wire::field_info(f);
    if (info.nbytes) {
      EXPECT_EQ(0, std::memcmp(d.bytes_of(f), built.values.bytes(f).data(), info.nbytes)) << info.name;
      continue;
    }
    bool aggregate = false;
    for (const Step& s : path.steps) {
      const wire::NodeInfo& n = wire::node_info(s.node);
      for (unsigned k = 0; k < n.n_layouts; ++k) aggregate |= wire::kLayouts[n.first_layout + k].field == f && wire::kLayouts[n.first_layout + k].aggregate;
    }
    if (aggregate) continue;  // spans fields compared one by one
    unsigned bits = 64;
    for (const Step& s : path.steps) {
      if (unsigned b = field_bits(s.node, f)) bits = b;
    }
    const uint64_t mask = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
    EXPECT_EQ(d.values[static_cast<size_t>(f)] & mask, built.values.get(f) & mask) << info.name;
  }
  if (enters_uet(path)) {
    EXPECT_EQ(d.payload_len, built.payload.size());
  }
}

void check_roundtrip_with_seeds(const GraphPath& path) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    check_roundtrip(path, seed);
  }
}

class EveryUetPath : public ::testing::TestWithParam<GraphPath> {};

TEST_P(EveryUetPath, DecodesExactlyWhatWasEncoded) { check_roundtrip_with_seeds(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Codec, EveryUetPath, ::testing::ValuesIn(uet_paths_over_ethernet()),
                         [](const auto& info) { return info.param.name; });

// Every way to reach the UET layer (and every way to end before it), with one UET suffix.
class EveryEncapsulation : public ::testing::TestWithParam<GraphPath> {};

TEST_P(EveryEncapsulation, DecodesExactlyWhatWasEncoded) { check_roundtrip_with_seeds(GetParam()); }

std::vector<GraphPath> encapsulations() {
  const std::vector<GraphPath> uet = paths_from(Node::uet);
  GraphPath std_send;
  for (const GraphPath& p : uet)
    if (p.name == "pds_rud_rod_req__ses_std__ses_std_buffer_offset__ses_std_som") std_send = p;
  std::vector<GraphPath> out;
  std::set<std::string> names;
  for (int linktype : {1, 101, 228, 229, 113, 276}) {
    const Node root = *wire::root_for_linktype(linktype);
    for (const GraphPath& p : paths_from(root)) {
      GraphPath cut{{}, {}};
      for (const Step& s : p.steps) {
        if (s.node == Node::uet) break;
        cut.steps.push_back(s);
      }
      GraphPath full = cut.steps.size() < p.steps.size() ? join(cut, std_send) : p;
      const std::string name = "link" + std::to_string(linktype) + "__" + join(cut, GraphPath{}).name;
      if (names.insert(name).second) {
        full.name = name;
        out.push_back(full);
      }
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Codec, EveryEncapsulation, ::testing::ValuesIn(encapsulations()),
                         [](const auto& info) { return info.param.name; });

TEST(GraphCoverage, EveryNodeIsOnSomeTestedPath) {
  std::set<Node> seen;
  for (const GraphPath& p : uet_paths_over_ethernet())
    for (const Step& s : p.steps) seen.insert(s.node);
  for (const GraphPath& p : encapsulations())
    for (const Step& s : p.steps) seen.insert(s.node);
  for (size_t i = 0; i < wire::kNodeCount; ++i)
    EXPECT_TRUE(seen.count(static_cast<Node>(i))) << wire::kNodes[i].id << " is on no tested path";
}

}  // namespace
}  // namespace uet::codec::test
