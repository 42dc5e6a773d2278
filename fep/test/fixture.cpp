#include "fixture.hpp"

#include <chrono>
#include <cstring>

namespace softuet_test {

std::string fi_err(long ret) { return std::to_string(ret) + " (" + fi_strerror(static_cast<int>(-ret)) + ")"; }

void SoftuetApi::SetUp() {
  fi_info* hints = fi_allocinfo();
  ASSERT_NE(hints, nullptr);
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC;
  hints->fabric_attr->prov_name = strdup("softuet");
  AdjustHints(hints);
  const int ret = fi_getinfo(FI_VERSION(2, 0), nullptr, nullptr, 0, hints, &info_);
  fi_freeinfo(hints);
  ASSERT_EQ(ret, 0) << "fi_getinfo: " << fi_err(ret) << "; run through ctest, which sets FI_PROVIDER_PATH";
  ASSERT_NE(info_, nullptr);

  int r = fi_fabric(info_->fabric_attr, &fabric_, nullptr);
  ASSERT_EQ(r, 0) << "fi_fabric: " << fi_err(r);
  r = fi_domain(fabric_, info_, &domain_, nullptr);
  ASSERT_EQ(r, 0) << "fi_domain: " << fi_err(r);
  fi_cq_attr cq_attr{};
  cq_attr.format = FI_CQ_FORMAT_DATA;
  cq_attr.wait_obj = FI_WAIT_UNSPEC;
  cq_attr.size = 1024;
  r = fi_cq_open(domain_, &cq_attr, &cq_, nullptr);
  ASSERT_EQ(r, 0) << "fi_cq_open: " << fi_err(r);
  fi_av_attr av_attr{};
  av_attr.type = FI_AV_TABLE;
  r = fi_av_open(domain_, &av_attr, &av_, nullptr);
  ASSERT_EQ(r, 0) << "fi_av_open: " << fi_err(r);

  for (int i : {kA, kB}) {
    r = fi_endpoint(domain_, info_, &ep_[i], nullptr);
    ASSERT_EQ(r, 0) << "fi_endpoint: " << fi_err(r);
    r = fi_ep_bind(ep_[i], &cq_->fid, FI_TRANSMIT | FI_RECV);
    ASSERT_EQ(r, 0) << "bind CQ: " << fi_err(r);
    r = fi_ep_bind(ep_[i], &av_->fid, 0);
    ASSERT_EQ(r, 0) << "bind AV: " << fi_err(r);
    std::vector<uint8_t> name(256);
    size_t len = name.size();
    r = fi_getname(&ep_[i]->fid, name.data(), &len);
    ASSERT_EQ(r, 0) << "fi_getname: " << fi_err(r);
    r = fi_av_insert(av_, name.data(), 1, &addr_[i], 0, nullptr);
    ASSERT_EQ(r, 1) << "fi_av_insert: " << fi_err(r);
  }
}

void SoftuetApi::TearDown() {
  // Endpoints first: a counter (and the CQ and AV) they are bound to cannot go before them.
  auto close = [](fid* f) {
    if (!f) return;
    EXPECT_EQ(fi_close(f), 0) << "fi_close of fid class " << f->fclass;
  };
  for (fid_ep*& ep : ep_) {
    close(ep ? &ep->fid : nullptr);
    ep = nullptr;
  }
  for (fid_cntr* c : cntrs_) close(&c->fid);
  cntrs_.clear();
  close(av_ ? &av_->fid : nullptr);
  close(cq_ ? &cq_->fid : nullptr);
  close(domain_ ? &domain_->fid : nullptr);
  close(fabric_ ? &fabric_->fid : nullptr);
  if (info_) fi_freeinfo(info_);
}

void SoftuetApi::Enable() {
  for (int i : {kA, kB}) {
    const int r = fi_enable(ep_[i]);
    ASSERT_EQ(r, 0) << "fi_enable: " << fi_err(r);
  }
}

fid_cntr* SoftuetApi::OpenCntr(fi_cntr_events events, fi_wait_obj wait_obj) {
  fi_cntr_attr attr{};
  attr.events = events;
  attr.wait_obj = wait_obj;
  fid_cntr* c = nullptr;
  const int r = fi_cntr_open(domain_, &attr, &c, nullptr);
  EXPECT_EQ(r, 0) << "fi_cntr_open: " << fi_err(r);
  if (r == 0) cntrs_.push_back(c);
  return r == 0 ? c : nullptr;
}

void SoftuetApi::WaitCompletions(const std::vector<void*>& want, std::map<void*, fi_cq_data_entry>* got,
                                 int timeout_ms) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  auto missing = [&] {
    for (void* c : want)
      if (!got->count(c)) return true;
    return false;
  };
  while (missing()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    ASSERT_GT(left, 0) << "timed out with " << got->size() << " of " << want.size() << " completions";
    fi_cq_data_entry e{};
    const ssize_t r = fi_cq_sread(cq_, &e, 1, nullptr, static_cast<int>(left));
    if (r == -FI_EAGAIN) continue;
    if (r == -FI_EAVAIL) {
      fi_cq_err_entry err{};
      fi_cq_readerr(cq_, &err, 0);
      FAIL() << "error completion: err " << err.err << " (" << fi_strerror(err.err) << "), prov_errno "
             << err.prov_errno << ", flags 0x" << std::hex << err.flags;
    }
    ASSERT_EQ(r, 1) << "fi_cq_sread: " << fi_err(r);
    EXPECT_FALSE(got->count(e.op_context)) << "two completions for one context";
    (*got)[e.op_context] = e;
  }
}

fi_cq_err_entry SoftuetApi::Outcome(void* ctx) {
  fi_cq_err_entry e{};
  for (int i = 0; i < 1000; ++i) {
    fi_cq_data_entry c{};
    const ssize_t n = fi_cq_sread(cq_, &c, 1, nullptr, 10);
    if (n == 1) {
      EXPECT_EQ(c.op_context, ctx);
      return e;
    }
    if (n == -FI_EAVAIL) {
      EXPECT_EQ(fi_cq_readerr(cq_, &e, 0), 1);
      EXPECT_EQ(e.op_context, ctx);
      return e;
    }
  }
  ADD_FAILURE() << "no completion within 10 s";
  e.err = -1;
  return e;
}

}  // namespace softuet_test
