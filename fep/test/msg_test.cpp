// fi_send / fi_senddata between the two endpoints of one domain: single-packet, exactly one MTU (4096),
// one byte over, and a multi-packet message, checking the bytes, the length and the CQ data.
#include <algorithm>
#include <cstdint>
#include <set>
#include <tuple>
#include <vector>

#include "fixture.hpp"

namespace softuet_test {
namespace {

// Offset by the size so that a message delivered into the wrong test's buffer would not look right.
std::vector<uint8_t> pattern(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 7 + n + i / 251);
  return v;
}

class SendRecv : public SoftuetApi, public ::testing::WithParamInterface<std::tuple<size_t, bool>> {};

TEST_P(SendRecv, DataArrivesIntact) {
  const auto [size, with_data] = GetParam();
  ASSERT_NO_FATAL_FAILURE(Enable());
  constexpr uint64_t kCqData = 0x0123456789abcdefULL;
  constexpr size_t kSlack = 64;  // room past the message: the receive must not write there
  std::vector<uint8_t> rx(size + kSlack, 0xa5);
  const std::vector<uint8_t> tx = pattern(size);
  int rx_ctx = 0, tx_ctx = 0;

  ssize_t r = fi_recv(ep_[kB], rx.data(), rx.size(), nullptr, FI_ADDR_UNSPEC, &rx_ctx);
  ASSERT_EQ(r, 0) << "fi_recv: " << fi_err(r);
  r = with_data ? fi_senddata(ep_[kA], tx.data(), tx.size(), nullptr, kCqData, addr_[kB], &tx_ctx)
                : fi_send(ep_[kA], tx.data(), tx.size(), nullptr, addr_[kB], &tx_ctx);
  ASSERT_EQ(r, 0) << "send: " << fi_err(r);

  std::map<void*, fi_cq_data_entry> got;
  ASSERT_NO_FATAL_FAILURE(WaitCompletions({&rx_ctx, &tx_ctx}, &got));
  const fi_cq_data_entry& re = got[&rx_ctx];
  EXPECT_EQ(re.len, size);
  EXPECT_EQ(re.buf, rx.data());
  EXPECT_EQ(re.flags & (FI_RECV | FI_MSG), FI_RECV | FI_MSG);
  EXPECT_EQ(re.flags & FI_SEND, 0u);
  if (with_data) {
    EXPECT_TRUE(re.flags & FI_REMOTE_CQ_DATA) << "flags 0x" << std::hex << re.flags;
    EXPECT_EQ(re.data, kCqData);
  } else {
    EXPECT_FALSE(re.flags & FI_REMOTE_CQ_DATA) << "flags 0x" << std::hex << re.flags;
  }
  EXPECT_EQ(got[&tx_ctx].flags & (FI_SEND | FI_MSG), FI_SEND | FI_MSG);
  EXPECT_EQ(got[&tx_ctx].flags & FI_RECV, 0u);

  EXPECT_TRUE(std::equal(tx.begin(), tx.end(), rx.begin())) << "payload differs";
  EXPECT_EQ(std::vector<uint8_t>(rx.begin() + size, rx.end()), std::vector<uint8_t>(kSlack, 0xa5))
      << "written past the message";
}

INSTANTIATE_TEST_SUITE_P(Sizes, SendRecv,
                         ::testing::Combine(::testing::Values<size_t>(1, 4096, 4097, 100000), ::testing::Bool()),
                         [](const auto& p) {
                           return std::to_string(std::get<0>(p.param)) + (std::get<1>(p.param) ? "_senddata" : "_send");
                         });

// Several messages in flight at once each arrive whole. RUD does not order messages, so each is found by
// its (distinct) length, not by which receive it landed in.
TEST_F(SoftuetApi, SeveralMessagesInFlight) {
  ASSERT_NO_FATAL_FAILURE(Enable());
  constexpr int kCount = 4;
  const size_t sizes[kCount] = {10, 9000, 1, 20000};
  std::vector<std::vector<uint8_t>> tx, rx;
  int rx_ctx[kCount], tx_ctx[kCount];
  std::vector<void*> want;
  for (int i = 0; i < kCount; ++i) {
    tx.push_back(pattern(sizes[i]));
    rx.emplace_back(20000, 0);
    ASSERT_EQ(fi_recv(ep_[kB], rx[i].data(), rx[i].size(), nullptr, FI_ADDR_UNSPEC, &rx_ctx[i]), 0);
    want.push_back(&rx_ctx[i]);
    want.push_back(&tx_ctx[i]);
  }
  for (int i = 0; i < kCount; ++i) {
    const ssize_t r = fi_send(ep_[kA], tx[i].data(), tx[i].size(), nullptr, addr_[kB], &tx_ctx[i]);
    ASSERT_EQ(r, 0) << "fi_send " << i << ": " << fi_err(r);
  }
  std::map<void*, fi_cq_data_entry> got;
  ASSERT_NO_FATAL_FAILURE(WaitCompletions(want, &got));
  std::set<size_t> seen;
  for (int i = 0; i < kCount; ++i) {
    const fi_cq_data_entry& e = got[&rx_ctx[i]];
    const auto* buf = static_cast<const uint8_t*>(e.buf);
    EXPECT_EQ(buf, rx[i].data());
    const int j = static_cast<int>(std::find(std::begin(sizes), std::end(sizes), e.len) - std::begin(sizes));
    ASSERT_LT(j, kCount) << "receive " << i << ": no message of " << e.len << " bytes was sent";
    EXPECT_TRUE(seen.insert(e.len).second) << e.len << " bytes received twice";
    EXPECT_TRUE(std::equal(tx[j].begin(), tx[j].end(), rx[i].begin())) << "message of " << e.len << " bytes";
  }
}

}  // namespace
}  // namespace softuet_test
