// Completions within one process (UEC 1.0 §2.2.5.3.2, §2.2.5.3.7, §2.2.5.6): every CQ format reports a
// send and its receive, sends complete (reliably, for RDM) within a deadline, failed operations give
// error entries with err and prov_errno, counters count completions and bytes, EQs carry events.
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <numeric>
#include <set>
#include <vector>

#include "area_traits.hpp"
#include "conformance.hpp"
#include "loopback.hpp"
#include "two_sided.hpp"
#include "uet/wire/wire_gen.hpp"

// What the harness must know of this area (common/claims/area_traits.hpp).
UET_AREA_TRAITS(.processes = 1, .weight = 4.5);

namespace uet::cases {
namespace {

namespace w = uet::wire;

// How long a case waits for a completion that must come: a lost ACK must show as a failure, not a hang.
constexpr int kCompletionMs = 3000;

class Completion : public ::testing::TestWithParam<Kind> {
 protected:
  void Open(LoopbackSpec spec = {}, bool enable = true) { Open(lb, spec, enable); }
  void Open(Loopback& l, LoopbackSpec spec, bool enable) {
    spec.type = GetParam().ep_type;
    open_pair(l, spec, enable);
  }
  // Sends `msg` from endpoint 0 to endpoint 1 of `lb` into `rbuf` (posted first); the two outcomes.
  std::pair<Outcome, Outcome> SendRecv(const std::vector<uint8_t>& msg, std::vector<uint8_t>& rbuf, bool with_data = false) {
    return SendRecv(lb, msg, rbuf, with_data);
  }
  static std::pair<Outcome, Outcome> SendRecv(Loopback& lb, const std::vector<uint8_t>& msg, std::vector<uint8_t>& rbuf,
                                              bool with_data) {
    int sctx = 0, rctx = 0;
    EXPECT_EQ(fi_recv(lb.ep[1], rbuf.data(), rbuf.size(), nullptr, FI_ADDR_UNSPEC, &rctx), 0);
    const ssize_t rc = lb.post([&] {
      return with_data ? fi_senddata(lb.ep[0], msg.data(), msg.size(), nullptr, 0x5EED, lb.addr[1], &sctx)
                       : fi_send(lb.ep[0], msg.data(), msg.size(), nullptr, lb.addr[1], &sctx);
    });
    EXPECT_EQ(rc, 0) << fi_refused("fi_send", rc);
    if (rc) return {};
    Outcome s = lb.wait(&sctx, kCompletionMs);
    Outcome r = lb.wait(&rctx, kCompletionMs);
    return {s, r};
  }
  void CountThreeSends(fi_cntr_events events, uint64_t want);
  Loopback lb;
};

TEST_P(Completion, EveryCqFormatReportsASendAndItsReceive) {
  covers({"2.2.5.3.7-a", "2.2.5.4.1-a"});
  for (const fi_cq_format format : {FI_CQ_FORMAT_CONTEXT, FI_CQ_FORMAT_MSG, FI_CQ_FORMAT_DATA, FI_CQ_FORMAT_TAGGED}) {
    SCOPED_TRACE(fi_tostr(&format, FI_TYPE_CQ_FORMAT));
    Loopback fresh;  // one pair per CQ format
    LoopbackSpec spec;
    spec.cq_format = format;
    UET_LOOPBACK(Open(fresh, spec, true));
    std::vector<uint8_t> msg(20), rbuf(64, 0);
    std::iota(msg.begin(), msg.end(), uint8_t{1});
    const bool with_data = format >= FI_CQ_FORMAT_DATA && fresh.info->domain_attr->cq_data_size > 0;
    const auto [s, r] = SendRecv(fresh, msg, rbuf, with_data);
    ASSERT_EQ(s.state, Outcome::completed) << "the send did not complete within " << kCompletionMs << " ms";
    ASSERT_EQ(r.state, Outcome::completed) << "the receive did not complete within " << kCompletionMs << " ms";
    EXPECT_EQ(std::vector<uint8_t>(rbuf.begin(), rbuf.begin() + msg.size()), msg);
    if (format == FI_CQ_FORMAT_CONTEXT) continue;
    EXPECT_TRUE(s.entry.flags & FI_SEND) << "send entry flags 0x" << std::hex << s.entry.flags;
    EXPECT_TRUE(r.entry.flags & FI_RECV) << "receive entry flags 0x" << std::hex << r.entry.flags;
    EXPECT_EQ(r.entry.len, msg.size()) << "the receive entry's len";
    if (with_data) {
      EXPECT_TRUE(r.entry.flags & FI_REMOTE_CQ_DATA) << "receive entry flags 0x" << std::hex << r.entry.flags;
      EXPECT_EQ(r.entry.data, 0x5EEDu) << "the remote CQ data";
    }
  }
}

TEST_P(Completion, AnEmptyQueueSaysSo) {
  covers({"2.2.5.3.7-a"});
  UET_LOOPBACK(Open());
  fi_cq_tagged_entry e;
  EXPECT_EQ(fi_cq_read(lb.cq, &e, 1), -FI_EAGAIN);
  const ssize_t rc = fi_cq_sread(lb.cq, &e, 1, nullptr, 20);
  EXPECT_TRUE(rc == -FI_EAGAIN || rc == -FI_ETIMEDOUT) << "fi_cq_sread of an empty CQ: " << fi_err(rc);
  fi_cq_err_entry err{};
  EXPECT_EQ(fi_cq_readerr(lb.cq, &err, 0), -FI_EAGAIN) << "fi_cq_readerr with no error";
}

TEST_P(Completion, EverySendOfABurstCompletesAndArrives) {
  covers({"2.2.5.3.7-a", "2.2.5.4.1-a"});
  UET_LOOPBACK(Open());
  // Messages of several packets each for RDM (a FEP's PDC numbers every packet), one packet for DGRAM.
  const size_t n = 12, len = GetParam().ep_type == FI_EP_RDM ? 9000 : 512;
  std::vector<std::vector<uint8_t>> msgs(n), bufs(n, std::vector<uint8_t>(len));
  std::vector<int> sctx(n), rctx(n);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(fi_recv(lb.ep[1], bufs[i].data(), len, nullptr, FI_ADDR_UNSPEC, &rctx[i]), 0);
  for (size_t i = 0; i < n; ++i) {
    msgs[i].assign(len, static_cast<uint8_t>(0xA0 + i));
    ASSERT_EQ(lb.post([&] { return fi_send(lb.ep[0], msgs[i].data(), len, nullptr, lb.addr[1], &sctx[i]); }), 0);
  }
  std::set<uint8_t> arrived;
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(lb.wait(&sctx[i], kCompletionMs).state, Outcome::completed) << "send " << i << " did not complete";
    const Outcome r = lb.wait(&rctx[i], kCompletionMs);
    ASSERT_EQ(r.state, Outcome::completed) << "receive " << i << " of " << n << " did not complete";
    EXPECT_EQ(std::set<uint8_t>(bufs[i].begin(), bufs[i].end()).size(), 1u) << "receive " << i << " mixes messages";
    arrived.insert(bufs[i][0]);
  }
  EXPECT_EQ(arrived.size(), n) << "some message arrived twice, some never";
}

UET_RDM_ONLY(Completion, FailedOperationsGiveErrorEntries, "fi_rma is not available on DGRAM endpoints (2.2.5.4.3-a)");
TEST_P(Completion, FailedOperationsGiveErrorEntries) {
  covers({"2.2.5.6-a", "2.2.5.6-b", "2.2.5.6-c", "2.2.5.3.4-a"});
  UET_REQUIRE_UET_PROVIDER();  // the SES return codes in prov_errno are UET's
  LoopbackSpec spec;
  spec.caps = FI_MSG | FI_RMA;
  UET_LOOPBACK(Open(spec, false));
  fi_cntr_attr attr{};
  attr.events = FI_CNTR_EVENTS_COMP;
  fid_cntr* writes = nullptr;
  ASSERT_EQ(fi_cntr_open(lb.domain, &attr, &writes, nullptr), 0);
  lb.cntrs.push_back(writes);
  ASSERT_EQ(fi_ep_bind(lb.ep[0], &writes->fid, FI_WRITE), 0);
  ASSERT_EQ(lb.enable(), 0) << lb.failed;
  std::vector<uint8_t> target(256), src(64, 0x3C);
  fid_mr* mr = nullptr;
  ASSERT_EQ(lb.register_mr(1, target.data(), target.size(), 0x77, &mr), 0);
  const uint64_t key = fi_mr_key(mr);
  const struct {
    uint64_t key, off, rc;
    const char* what;
  } rows[] = {{key + 1, 0, w::ses_return_code::RC_BAD_MKEY, "a key no MR has"},
              {key, target.size() - 10, w::ses_return_code::RC_BAD_ADDR, "a write beyond the end of the MR"}};
  uint64_t failures = 0;
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    int ctx = 0;
    ASSERT_EQ(lb.post([&] { return fi_write(lb.ep[0], src.data(), src.size(), nullptr, lb.addr[1], lb.remote_addr(target.data(), row.off), row.key, &ctx); }), 0);
    const Outcome o = lb.wait(&ctx, kCompletionMs);
    expect_error_entry(o, row.rc);
    if (o.state == Outcome::failed) {
      ++failures;
      EXPECT_EQ(o.error.op_context, &ctx) << "the error entry's op_context";
      EXPECT_TRUE(o.error.flags & FI_WRITE) << "error entry flags 0x" << std::hex << o.error.flags;
    }
  }
  EXPECT_EQ(std::vector<uint8_t>(target), std::vector<uint8_t>(256, 0)) << "a refused write changed the target";
  EXPECT_EQ(fi_cntr_readerr(writes), failures) << "the FI_WRITE counter's error count";
  EXPECT_EQ(fi_cntr_read(writes), 0u) << "a failed write counted as a success";
}

// Three sends of 100, 200 and 300 bytes from endpoint 0 to 1, counted by a counter of `events` bound to
// endpoint 0 for FI_SEND and one bound to endpoint 1 for FI_RECV.
void Completion::CountThreeSends(fi_cntr_events events, uint64_t want) {
  ASSERT_NO_FATAL_FAILURE(Open({}, false));
  if (IsSkipped()) return;
  fid_cntr* cntr[2] = {};
  for (fid_cntr*& c : cntr) {
    fi_cntr_attr attr{};
    attr.events = events;
    attr.wait_obj = FI_WAIT_UNSPEC;
    const int rc = fi_cntr_open(lb.domain, &attr, &c, nullptr);
    UET_NOT_APPLICABLE_IF(rc != 0 && !manifest().uet, reason::kNonUetProviderLacks, manifest().provider << " offers no counter of events " << events);
    ASSERT_EQ(rc, 0) << "fi_cntr_open(events " << events << "): " << fi_err(rc);
    lb.cntrs.push_back(c);
  }
  ASSERT_EQ(fi_ep_bind(lb.ep[0], &cntr[0]->fid, FI_SEND), 0);
  ASSERT_EQ(fi_ep_bind(lb.ep[1], &cntr[1]->fid, FI_RECV), 0);
  ASSERT_EQ(lb.enable(), 0) << lb.failed;
  for (const size_t len : {100u, 200u, 300u}) {
    std::vector<uint8_t> msg(len, 7), rbuf(len);
    const auto [s, r] = SendRecv(msg, rbuf);
    ASSERT_EQ(s.state, Outcome::completed);
    ASSERT_EQ(r.state, Outcome::completed);
  }
  for (int i = 0; i < 2; ++i) {
    SCOPED_TRACE(i == 0 ? "the FI_SEND counter" : "the FI_RECV counter");
    EXPECT_EQ(fi_cntr_wait(cntr[i], want, kCompletionMs), 0) << "did not reach " << want;
    EXPECT_EQ(fi_cntr_read(cntr[i]), want);
    EXPECT_EQ(fi_cntr_readerr(cntr[i]), 0u);
  }
}

TEST_P(Completion, CountersCountCompletions) {
  covers({"2.2.5.3.7-b", "2.2.5.3.7-c", "2.2.2-g"});
  CountThreeSends(FI_CNTR_EVENTS_COMP, 3);
}

TEST_P(Completion, ByteCountersCountBytes) {
  covers({"2.2.5.3.7-c"});
  // FI_CNTR_EVENTS_BYTES is UET's requirement (Table 2-20 profiles); other providers may take the
  // attribute and count otherwise.
  UET_REQUIRE_UET_PROVIDER();
  CountThreeSends(FI_CNTR_EVENTS_BYTES, 600);
}

TEST_P(Completion, EventQueuesCarryEvents) {
  covers({"2.2.5.3.2-a"});
  UET_LOOPBACK(Open());
  fi_eq_attr attr{};
  attr.wait_obj = FI_WAIT_UNSPEC;
  fid_eq* eq = nullptr;
  ASSERT_EQ(fi_eq_open(lb.fabric, &attr, &eq, nullptr), 0);
  fi_eq_entry in{};
  in.fid = &lb.ep[0]->fid;
  in.context = &in;
  in.data = 0xC0FFEE;
  ASSERT_EQ(fi_eq_write(eq, FI_NOTIFY, &in, sizeof in, 0), static_cast<ssize_t>(sizeof in));
  fi_eq_entry out{};
  uint32_t event = 0;
  EXPECT_EQ(fi_eq_sread(eq, &event, &out, sizeof out, kCompletionMs, 0), static_cast<ssize_t>(sizeof out));
  EXPECT_EQ(event, static_cast<uint32_t>(FI_NOTIFY));
  EXPECT_EQ(out.data, in.data);
  EXPECT_EQ(out.context, in.context);
  const ssize_t rc = fi_eq_sread(eq, &event, &out, sizeof out, 20, 0);
  EXPECT_TRUE(rc == -FI_EAGAIN || rc == -FI_ETIMEDOUT) << "fi_eq_sread of an empty EQ: " << fi_err(rc);
  fi_close(&eq->fid);
}

TEST_P(Completion, InjectLeavesNoCompletionAndItsBufferFree) {
  covers({"2.2.5.4.1-e"});
  UET_LOOPBACK(Open());
  std::vector<uint8_t> msg(16, 0x5A), rbuf(16, 0);
  size_t inject = lb.info->tx_attr->inject_size;
  UET_NOT_APPLICABLE_IF(inject < msg.size() && !manifest().uet, reason::kNonUetProviderLacks, manifest().provider << " injects " << inject << " bytes");
  ASSERT_GE(inject, msg.size()) << "tx_attr->inject_size";
  int rctx = 0;
  ASSERT_EQ(fi_recv(lb.ep[1], rbuf.data(), rbuf.size(), nullptr, FI_ADDR_UNSPEC, &rctx), 0);
  ASSERT_EQ(lb.post([&] { return fi_inject(lb.ep[0], msg.data(), msg.size(), lb.addr[1]); }), 0);
  std::fill(msg.begin(), msg.end(), 0xEE);  // the buffer is the caller's again on return
  const Outcome r = lb.wait(&rctx, kCompletionMs);
  ASSERT_EQ(r.state, Outcome::completed) << "the injected message did not arrive";
  EXPECT_EQ(rbuf, std::vector<uint8_t>(16, 0x5A)) << "the receiver saw the buffer after fi_inject returned";
  // A success writes no entry: the receive's was the only one.
  EXPECT_EQ(lb.unclaimed(200), 0u) << "fi_inject wrote a completion entry";
}

INSTANTIATE_TEST_SUITE_P(Claimed, Completion, ::testing::ValuesIn(claimed_kinds()), [](const auto& i) { return i.param.name; });

}  // namespace
}  // namespace uet::cases
