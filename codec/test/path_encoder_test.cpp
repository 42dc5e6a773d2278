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

TEST(PathEncoder, RewriteGivesTheFrameEncodedWithTheNewValue) {
  const Node path[] = {Node::uet, Node::uet_pds, Node::uet_pds_uud, Node::uet_pds_next,
                       Node::uet_ses_std, Node::uet_ses_std_buffer_offset, Node::uet_ses_std_som};
  PathEncoder enc(path);
  const uint8_t payload[5] = {1, 2, 3, 4, 5};
  FieldValues v;
  v.set(wire::Field::uet_ses_opcode, 7).set(wire::Field::uet_ses_message_id, 1).set(wire::Field::uet_ses_request_length, 5);
  v.set(wire::Field::uet_ses_job_id, 0xABCDEF).set(wire::Field::uet_ses_som, 1).set(wire::Field::uet_ses_eom, 1);
  std::vector<uint8_t> frame = enc.encode(v, payload);
  enc.rewrite(frame, wire::Field::uet_ses_message_id, 0xBEEF);
  enc.rewrite(frame, wire::Field::uet_ses_request_length, 0x12345);
  enc.rewrite(frame, wire::Field::uet_ses_pid_on_fep, 0xFFF);  // a 12-bit field beside reserved bits
  FieldValues w = v;
  w.set(wire::Field::uet_ses_message_id, 0xBEEF).set(wire::Field::uet_ses_request_length, 0x12345);
  w.set(wire::Field::uet_ses_pid_on_fep, 0xFFF);
  EXPECT_EQ(frame, enc.encode(w, payload));
  EXPECT_THROW(enc.rewrite(frame, wire::Field::uet_ses_header_data, 1), EncodeError);  // only when hd = 1
  EXPECT_THROW(enc.rewrite(frame, wire::Field::uet_ses_rsp_job_id, 1), EncodeError);   // not on the path
}

TEST(PathEncoder, RefusesNodesThatAreNotAPath) {
  const Node bad[] = {Node::uet, Node::uet_ses_response};
  EXPECT_THROW(PathEncoder{bad}, EncodeError);
}

}  // namespace
}  // namespace uet::codec::test
