// UDP GSO super-datagrams (uet/codec/gso.hpp): one UDP datagram holding several UET packets at the stride of
// the first is decoded packet by packet; bytes that form no segment stay trailing_bytes; nothing else changes.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <memory>
#include <utility>

#include "graph_paths.hpp"
#include "uet/codec/gso.hpp"
#include "uet/codec/record.hpp"

namespace uet::codec::test {
namespace {

using wire::Field;
using wire::Node;

// A frame of `path` built with `payload` bytes, cut into its Ethernet/IP/UDP head and its UET packet.
struct Packet {
  std::vector<uint8_t> head, uet;
  size_t ip = 0, udp = 0;
};

Packet packet(const char* name, size_t payload, uint64_t seed) {
  for (const GraphPath& p : uet_paths_over_ethernet()) {
    if (p.name != name) continue;
    std::mt19937_64 rng(seed);
    const BuiltFrame built = build_frame(p, rng, payload);
    const std::vector<size_t> at = node_offsets(p, built.values);
    Packet out;
    for (size_t i = 0; i < p.steps.size(); ++i) {
      if (p.steps[i].node == Node::ip) out.ip = at[i];
      if (p.steps[i].node == Node::udp) out.udp = at[i];
      if (p.steps[i].node == Node::uet) {
        out.head.assign(built.bytes.begin(), built.bytes.begin() + static_cast<long>(at[i]));
        out.uet.assign(built.bytes.begin() + static_cast<long>(at[i]), built.bytes.end());
      }
    }
    return out;
  }
  throw std::runtime_error(std::string("no path ") + name);
}

constexpr const char* kSomZeroSend = "pds_rud_rod_req__ses_std__ses_std_buffer_offset__ses_std_cont";

// One datagram: the first packet's head, then the UET bytes of every part, IP and UDP lengths made to fit.
std::vector<uint8_t> datagram(const Packet& first, const std::vector<std::vector<uint8_t>>& parts) {
  std::vector<uint8_t> f = first.head;
  for (const auto& part : parts) f.insert(f.end(), part.begin(), part.end());
  put_bits(f.data(), first.ip + 2, 0, 16, f.size() - first.ip);
  put_bits(f.data(), first.udp + 4, 0, 16, f.size() - first.udp);
  return f;
}

// A frame's decode and its run; it keeps the frame's bytes, which its segments are decoded from.
struct Decode {
  std::vector<uint8_t> bytes;
  Decoded frame, scratch;
  std::optional<GsoRun> run;
  explicit Decode(std::vector<uint8_t> frame_bytes, uint32_t caplen = 0) : bytes(std::move(frame_bytes)) {
    const auto len = static_cast<uint32_t>(bytes.size());
    decode(bytes.data(), caplen ? caplen : len, len, Node::eth, DecodeOptions{}, frame);
    run = take_gso_run(frame, DecodeOptions{}, scratch);
  }
  Decoded segment(uint32_t i) {
    Decoded out;
    run->decode_segment(frame, i, out);
    return out;
  }
};

// The UET fields of a packet decoded alone, to compare a segment's with.
std::vector<std::pair<Field, uint64_t>> uet_fields(const Decoded& d) {
  std::vector<std::pair<Field, uint64_t>> out;
  for (unsigned i = 0; i < d.n_emitted; ++i) {
    const Field f = d.emitted[i].field;
    if (std::string(wire::field_name(f)).rfind("uet.", 0) == 0) out.emplace_back(f, d.values[static_cast<size_t>(f)]);
  }
  return out;
}

std::vector<std::pair<Field, uint64_t>> alone(const Packet& p) {
  const std::vector<uint8_t> bytes = datagram(p, {p.uet});
  Decoded d;
  decode(bytes.data(), static_cast<uint32_t>(bytes.size()), static_cast<uint32_t>(bytes.size()), Node::eth,
         DecodeOptions{}, d);
  return uet_fields(d);
}

TEST(Gso, ThreeSegmentsTheLastShorterAreDecodedOneByOne) {
  const Packet a = packet(kSomZeroSend, 32, 1), b = packet(kSomZeroSend, 32, 2), c = packet(kSomZeroSend, 20, 3);
  Decode d(datagram(a, {a.uet, b.uet, c.uet}));
  ASSERT_TRUE(d.run);
  EXPECT_EQ(d.run->offset, a.head.size());
  EXPECT_EQ(d.run->stride, a.uet.size());
  EXPECT_EQ(d.run->count, 3u);
  EXPECT_FALSE(d.run->malformed);
  EXPECT_EQ(d.frame.n_diags, 0) << "the trailing bytes were the run's segments";
  EXPECT_EQ(frame_status(d.frame, &*d.run), Status::uet);
  EXPECT_EQ(uet_fields(d.frame), alone(a));
  const Packet* later[] = {&b, &c};
  for (uint32_t i = 1; i < 3; ++i) {
    SCOPED_TRACE("segment " + std::to_string(i));
    const Decoded s = d.segment(i);
    EXPECT_EQ(s.status(), Status::uet);
    EXPECT_EQ(uet_fields(s), alone(*later[i - 1]));
    EXPECT_EQ(s.uet_offset, d.run->segment_offset(i)) << "offsets are the frame's";
    EXPECT_EQ(s.payload_offset + s.payload_len, d.run->segment_offset(i) + later[i - 1]->uet.size());
  }
}

TEST(Gso, AckRunsToo) {
  const Packet a = packet("pds_ack", 0, 4), b = packet("pds_ack", 0, 5);
  Decode d(datagram(a, {a.uet, b.uet, b.uet, a.uet}));
  ASSERT_TRUE(d.run);
  EXPECT_EQ(d.run->count, 4u);
  EXPECT_EQ(d.run->stride, a.uet.size());
}

TEST(Gso, AGarbageSecondSegmentStaysTrailingBytes) {
  const Packet a = packet(kSomZeroSend, 32, 1);
  const std::vector<uint8_t> bytes = datagram(a, {a.uet, std::vector<uint8_t>(a.uet.size(), 0)});
  Decoded plain;
  decode(bytes.data(), static_cast<uint32_t>(bytes.size()), static_cast<uint32_t>(bytes.size()), Node::eth,
         DecodeOptions{}, plain);
  Decode d(bytes);
  EXPECT_FALSE(d.run);
  ASSERT_EQ(d.frame.n_diags, 1);
  EXPECT_EQ(d.frame.diags[0].kind, DiagKind::trailing_bytes);
  EXPECT_EQ(d.frame.diags[0].offset, plain.diags[0].offset);
  EXPECT_EQ(d.frame.diags[0].value, plain.diags[0].value);
}

TEST(Gso, BytesAfterTheRunStayTrailingBytesWhereTheRunEnds) {
  const Packet a = packet(kSomZeroSend, 32, 1), b = packet(kSomZeroSend, 32, 2);
  const std::vector<uint8_t> junk(30, 0xFF);
  Decode d(datagram(a, {a.uet, b.uet, junk}));
  ASSERT_TRUE(d.run);
  EXPECT_EQ(d.run->count, 2u);
  ASSERT_EQ(d.frame.n_diags, 1);
  EXPECT_EQ(d.frame.diags[0].kind, DiagKind::trailing_bytes);
  EXPECT_EQ(d.frame.diags[0].field, Field::uet_ses_payload_length);
  EXPECT_EQ(d.frame.diags[0].offset, d.run->segment_offset(2));
  EXPECT_EQ(d.frame.diags[0].value, junk.size());
}

TEST(Gso, ASegmentWithADiagnosticOfItsOwnStaysInTheRunAndMakesTheFrameMalformed) {
  const Packet a = packet(kSomZeroSend, 32, 1);
  Packet b = packet(kSomZeroSend, 32, 2);
  put_bits(b.uet.data(), 12 + 5, 0, 24, 0);  // ses.job_id (choice job-id-zero-invalid)
  Decode d(datagram(a, {a.uet, b.uet}));
  ASSERT_TRUE(d.run);
  EXPECT_TRUE(d.run->malformed);
  EXPECT_EQ(d.frame.n_diags, 0);
  EXPECT_EQ(frame_status(d.frame, &*d.run), Status::malformed);
  const Decoded s = d.segment(1);
  ASSERT_EQ(s.n_diags, 1);
  EXPECT_EQ(s.diags[0].kind, DiagKind::job_id_zero);
  EXPECT_EQ(s.diags[0].offset, d.run->segment_offset(1) + 12 + 5);
}

TEST(Gso, NoRunWithoutASecondPacketOfTheSameLayout) {
  const Packet a = packet(kSomZeroSend, 32, 1), ack = packet("pds_ack", 0, 1);
  EXPECT_FALSE(Decode(datagram(a, {a.uet})).run) << "a single packet";
  EXPECT_EQ(Decode(datagram(a, {a.uet})).frame.n_diags, 0);
  std::vector<uint8_t> acks_of_send_length;
  while (acks_of_send_length.size() < a.uet.size())
    acks_of_send_length.insert(acks_of_send_length.end(), ack.uet.begin(), ack.uet.end());
  acks_of_send_length.resize(a.uet.size());
  EXPECT_FALSE(Decode(datagram(a, {a.uet, acks_of_send_length})).run) << "another header layout";
}

TEST(Gso, ACaptureCutInTheLastSegmentKeepsTheRun) {
  const Packet a = packet(kSomZeroSend, 32, 1);
  const std::vector<uint8_t> bytes = datagram(a, {a.uet, a.uet, a.uet});
  Decode d(bytes, static_cast<uint32_t>(bytes.size() - 10));
  ASSERT_TRUE(d.run);
  EXPECT_EQ(d.run->count, 3u);
  EXPECT_EQ(d.segment(2).payload_len, 22u);
}

TEST(Gso, TheRecordListsEachSegmentAndTheRunOnce) {
  const Packet a = packet(kSomZeroSend, 32, 1), b = packet(kSomZeroSend, 20, 2);
  const std::vector<uint8_t> bytes = datagram(a, {a.uet, b.uet});
  Decode d(bytes);
  ASSERT_TRUE(d.run);
  FrameMeta meta{1, 0, 0, false};
  meta.gso = &*d.run;
  RecordWriter w;
  w.write(d.frame, meta);
  const auto doc = nlohmann::json::parse(w.text());
  EXPECT_EQ(doc["status"], "uet");
  EXPECT_EQ(doc["gso"],
            nlohmann::json({{"segment", 0}, {"offset", a.head.size()}, {"stride", a.uet.size()}, {"count", 2}}));
  ASSERT_EQ(doc["segments"].size(), 1u);
  const auto& s = doc["segments"][0];
  EXPECT_EQ(s["gso"],
            nlohmann::json({{"segment", 1}, {"offset", a.head.size() + a.uet.size()}, {"stride", a.uet.size()}}));
  EXPECT_EQ(s["payload_len"], 20);
  EXPECT_EQ(s["layers"], nlohmann::json({"uet.pds.rud_rod_req", "uet.ses.std"}));
  EXPECT_EQ(s["status"], "uet");
  const std::string line = summary_line(d.frame, meta);
  EXPECT_NE(line.find("gso 2x" + std::to_string(a.uet.size())), std::string::npos) << line;
}

// Random bytes after a well-formed first packet, at strides down to the smallest packet: the run search
// ends, stays inside the frame (under ASan) and every segment it keeps lies within the datagram.
TEST(Gso, RandomBytesAfterAPacketNeverLeadOutsideTheFrame) {
  std::mt19937_64 rng(4793);
  const Packet ack = packet("pds_ack", 0, 1), send = packet(kSomZeroSend, 4, 1);
  unsigned runs = 0;
  for (int i = 0; i < 4000; ++i) {
    const Packet& first = i % 2 ? ack : send;
    std::vector<uint8_t> rest(rng() % 200);
    for (auto& x : rest) x = static_cast<uint8_t>(rng());
    if (rest.size() > first.uet.size() && rng() % 2) std::copy(first.uet.begin(), first.uet.end(), rest.begin());
    const std::vector<uint8_t> bytes = datagram(first, {first.uet, rest});
    std::unique_ptr<uint8_t[]> exact(new uint8_t[bytes.size()]);
    std::copy(bytes.begin(), bytes.end(), exact.get());
    Decoded frame, scratch, segment;
    decode(exact.get(), static_cast<uint32_t>(bytes.size()), static_cast<uint32_t>(bytes.size()), Node::eth,
           DecodeOptions{}, frame);
    const std::optional<GsoRun> run = take_gso_run(frame, DecodeOptions{}, scratch);
    if (!run) continue;
    ++runs;
    ASSERT_GE(run->count, 2u);
    for (uint32_t k = 1; k < run->count; ++k) {
      run->decode_segment(frame, k, segment);
      ASSERT_LE(segment.payload_offset + segment.payload_len, bytes.size());
    }
  }
  EXPECT_GT(runs, 500u) << "the frames should hold many runs";
}

}  // namespace
}  // namespace uet::codec::test
