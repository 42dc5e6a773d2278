// PathEncoder is encode_path with the graph walk done once; on every UET path it accepts, it must give
// the bytes encode_path gives, and it must accept the paths the reference FEP sends on.
#include <gtest/gtest.h>

#include <cstdio>

#include "graph_paths.hpp"

namespace uet::codec::test {
namespace {

using wire::Node;

TEST(PathEncoder, GivesTheBytesOfEncodePathOnEveryUetPathItAccepts) {
  size_t accepted = 0, refused = 0;
  for (const GraphPath& path : paths_from(Node::uet)) {
    const std::vector<Node> nodes = path.nodes();
    std::optional<PathEncoder> enc;
    try {
      enc.emplace(nodes);
    } catch (const EncodeError&) {
      ++refused;
      continue;
    }
    ++accepted;
    for (uint64_t seed = 1; seed <= 8; ++seed) {
      std::mt19937_64 rng(seed);
      BuiltFrame built = build_frame(path, rng, seed * 13);
      FieldValues values = built.values;
      EXPECT_EQ(enc->encode(values, built.payload), built.bytes) << path.name << " seed " << seed;
    }
  }
  EXPECT_GT(accepted, 20u) << refused << " refused";
  std::printf("PathEncoder: %zu UET paths accepted, %zu refused\n", accepted, refused);
}

TEST(PathEncoder, AcceptsTheReferenceFepPaths) {
  const Node request[] = {Node::uet, Node::uet_pds, Node::uet_pds_rud_rod_req, Node::uet_pds_next,
                          Node::uet_ses_std, Node::uet_ses_std_buffer_offset, Node::uet_ses_std_som};
  const Node continuation[] = {Node::uet, Node::uet_pds, Node::uet_pds_rud_rod_req, Node::uet_pds_next,
                               Node::uet_ses_std, Node::uet_ses_std_buffer_offset, Node::uet_ses_std_cont};
  const Node ack[] = {Node::uet, Node::uet_pds, Node::uet_pds_ack, Node::uet_pds_next, Node::uet_ses_response};
  EXPECT_NO_THROW(PathEncoder{request});
  EXPECT_NO_THROW(PathEncoder{continuation});
  EXPECT_NO_THROW(PathEncoder{ack});
}

TEST(PathEncoder, RefusesNodesThatAreNotAPath) {
  const Node bad[] = {Node::uet, Node::uet_ses_response};
  EXPECT_THROW(PathEncoder{bad}, EncodeError);
}

}  // namespace
}  // namespace uet::codec::test
