// The Reassembler: fragments of an IPv4 UET datagram, in any order, give back the datagram; the limit
// on datagrams held drops the oldest; overlapping fragments are refused with a diagnostic.
#include <gtest/gtest.h>

#include <algorithm>

#include "graph_paths.hpp"
#include "uet/codec/reassembly.hpp"

namespace uet::codec::test {
namespace {

using wire::Field;
using wire::Node;

struct Datagram {
  std::vector<uint8_t> frame;  // the unfragmented frame
  size_t ip = 0, data = 0;     // where its IP header and the IP payload start
};

Datagram send_datagram(uint16_t id) {
  for (const GraphPath& p : uet_paths_over_ethernet()) {
    if (p.name != "pds_rud_rod_req__ses_std__ses_std_buffer_offset__ses_std_som") continue;
    std::mt19937_64 rng(9);
    Datagram out;
    const BuiltFrame built = build_frame(p, rng, 100);
    out.frame = built.bytes;
    const std::vector<size_t> at = node_offsets(p, built.values);
    for (size_t i = 0; i < p.steps.size(); ++i) {
      if (p.steps[i].node == Node::ip) out.ip = at[i];
      if (p.steps[i].node == Node::udp) out.data = at[i];
    }
    put_bits(out.frame.data(), out.ip + 4, 0, 16, id);
    return out;
  }
  throw std::runtime_error("no send path");
}

// The fragment of `d` holding IP payload bytes [start, start + len), as the kernel would cut it.
std::vector<uint8_t> fragment(const Datagram& d, size_t start, size_t len, bool more) {
  std::vector<uint8_t> f(d.frame.begin(), d.frame.begin() + static_cast<long>(d.data));
  f.insert(f.end(), d.frame.begin() + static_cast<long>(d.data + start),
           d.frame.begin() + static_cast<long>(d.data + start + len));
  put_bits(f.data(), d.ip + 2, 0, 16, f.size() - d.ip);
  put_bits(f.data(), d.ip + 6, 2, 1, more);
  put_bits(f.data(), d.ip + 6, 3, 13, start / 8);
  return f;
}

class Feed {
 public:
  explicit Feed(size_t limit = Reassembler::kDefaultMaxDatagrams) : r_(limit) {}
  // Decodes frame `number` and hands it to the reassembler; the decode of the datagram when it completes.
  std::optional<Decoded> add(uint64_t number, const std::vector<uint8_t>& frame) {
    const auto n = static_cast<uint32_t>(frame.size());
    decode(frame.data(), n, n, Node::eth, DecodeOptions{}, last_);
    const Reassembled* whole = r_.add(number, last_);
    if (!whole) return std::nullopt;
    frame_ = whole->frame;
    from_ = whole->from;
    Decoded d;
    decode(frame_.data(), static_cast<uint32_t>(frame_.size()), static_cast<uint32_t>(frame_.size()), Node::eth,
           DecodeOptions{}, d);
    return d;
  }
  const Decoded& last() const { return last_; }
  const std::vector<uint64_t>& from() const { return from_; }
  const std::vector<uint8_t>& frame() const { return frame_; }
  size_t held() const { return r_.held(); }

 private:
  Reassembler r_;
  Decoded last_;
  std::vector<uint8_t> frame_;
  std::vector<uint64_t> from_;
};

TEST(Reassembly, ThreeFragmentsInAnyOrderGiveTheDatagramBack) {
  const Datagram d = send_datagram(0x1234);
  const size_t total = d.frame.size() - d.data;
  const std::vector<std::vector<uint8_t>> parts = {fragment(d, 0, 48, true), fragment(d, 48, 48, true),
                                                   fragment(d, 96, total - 96, false)};
  for (const std::vector<int>& order : {std::vector{0, 1, 2}, std::vector{2, 0, 1}, std::vector{1, 2, 0}}) {
    Feed feed;
    std::optional<Decoded> whole;
    for (size_t i = 0; i < order.size(); ++i) {
      whole = feed.add(i + 1, parts[static_cast<size_t>(order[i])]);
      EXPECT_EQ(whole.has_value(), i + 1 == order.size());
      if (!whole) {
        EXPECT_EQ(feed.last().status(), Status::fragment);
      }
    }
    ASSERT_TRUE(whole);
    EXPECT_EQ(whole->status(), Status::uet);
    EXPECT_EQ(whole->payload_len, 100u);
    // The datagram as sent, but for the IP checksum (the frame was built with none).
    std::vector<uint8_t> want = d.frame;
    std::copy(feed.frame().begin() + static_cast<long>(d.ip + 10), feed.frame().begin() + static_cast<long>(d.ip + 12),
              want.begin() + static_cast<long>(d.ip + 10));
    EXPECT_EQ(feed.frame(), want);
    std::vector<uint64_t> by_offset(3);
    for (size_t i = 0; i < order.size(); ++i) by_offset[static_cast<size_t>(order[i])] = i + 1;
    EXPECT_EQ(feed.from(), by_offset);
    EXPECT_EQ(feed.held(), 0u);
  }
}

TEST(Reassembly, TheLimitDropsTheDatagramHeldLongest) {
  Feed feed(2);
  const Datagram a = send_datagram(1), b = send_datagram(2), c = send_datagram(3);
  const size_t total = a.frame.size() - a.data;
  feed.add(1, fragment(a, 0, 96, true));
  feed.add(2, fragment(b, 0, 96, true));
  feed.add(3, fragment(c, 0, 96, true));  // a third datagram: a's first fragment is dropped
  EXPECT_EQ(feed.held(), 2u);
  EXPECT_FALSE(feed.add(4, fragment(a, 96, total - 96, false)));
  EXPECT_EQ(feed.last().status(), Status::fragment);
  EXPECT_TRUE(feed.add(5, fragment(c, 96, total - 96, false)));
  EXPECT_EQ(feed.from(), (std::vector<uint64_t>{3, 5}));
}

TEST(Reassembly, OverlapsAndContradictionsAreDiagnosedAndNotUsed) {
  const Datagram d = send_datagram(7);
  const size_t total = d.frame.size() - d.data;
  Feed feed;
  feed.add(1, fragment(d, 0, 96, true));
  EXPECT_FALSE(feed.add(2, fragment(d, 48, 48, true)));
  ASSERT_EQ(feed.last().n_diags, 1);
  EXPECT_EQ(feed.last().diags[0].kind, DiagKind::fragment_overlap);
  EXPECT_EQ(feed.last().diags[0].header, wire::Header::ip);
  EXPECT_EQ(feed.last().status(), Status::malformed);
  EXPECT_FALSE(feed.add(3, fragment(d, 96, 20, true)));  // not a multiple of 8, yet more follow
  EXPECT_EQ(feed.last().diags[0].kind, DiagKind::fragment_inconsistent);
  EXPECT_TRUE(feed.add(4, fragment(d, 96, total - 96, false)));
  EXPECT_EQ(feed.from(), (std::vector<uint64_t>{1, 4}));
}

TEST(Reassembly, FramesThatAreNotFragmentsPassUntouched) {
  const Datagram d = send_datagram(9);
  Feed feed;
  EXPECT_FALSE(feed.add(1, d.frame));
  EXPECT_EQ(feed.last().status(), Status::uet);
  EXPECT_EQ(feed.held(), 0u);
}

}  // namespace
}  // namespace uet::codec::test
