// JobIDs (spec 2.2.4): the AV method (fi_av_insert_auth_key, FI_AUTH_KEY inserts and receives) and the
// fallback JobID. The wire JobID is observed through what the target accepts: a buffer posted for one
// JobID takes only messages carrying it (spec 2.2.4.3.1-c).
#include <cstdlib>
#include <cstring>

#include "fixture.hpp"

namespace softuet_test {
namespace {

class SoftuetAvAuthKey : public SoftuetApi {
 protected:
  void AdjustHints(fi_info* hints) override { hints->domain_attr->auth_key_size = FI_AV_AUTH_KEY; }

  fi_addr_t InsertKey(uint32_t job) {
    const uint8_t key[3] = {static_cast<uint8_t>(job), static_cast<uint8_t>(job >> 8), static_cast<uint8_t>(job >> 16)};
    fi_addr_t handle = FI_ADDR_NOTAVAIL;
    const int r = fi_av_insert_auth_key(av_, key, sizeof key, &handle, 0);
    EXPECT_EQ(r, 0) << "fi_av_insert_auth_key: " << fi_err(r);
    return handle;
  }
  // B's address again, associated with an auth key: sends to it carry that key's JobID.
  fi_addr_t InsertBWithKey(fi_addr_t key) {
    std::vector<uint8_t> name(256);
    size_t len = name.size();
    EXPECT_EQ(fi_getname(&ep_[kB]->fid, name.data(), &len), 0);
    fi_addr_t a = key;
    EXPECT_EQ(fi_av_insert(av_, name.data(), 1, &a, FI_AUTH_KEY, nullptr), 1);
    return a;
  }
  ssize_t RecvForKey(void* buf, size_t len, fi_addr_t key, void* ctx) {
    iovec iov{buf, len};
    fi_msg msg{};
    msg.msg_iov = &iov;
    msg.iov_count = 1;
    msg.addr = key;
    msg.context = ctx;
    return fi_recvmsg(ep_[kB], &msg, FI_AUTH_KEY);
  }
};

TEST_F(SoftuetAvAuthKey, DomainReportsTheAvMethod) {
  EXPECT_EQ(info_->domain_attr->auth_key_size, FI_AV_AUTH_KEY);
  EXPECT_GE(info_->domain_attr->max_ep_auth_key, 2u);
}

TEST_F(SoftuetAvAuthKey, InsertedKeyLooksUpToTheSameJobId) {
  const fi_addr_t h = InsertKey(0x123456);
  uint8_t key[3] = {};
  size_t size = sizeof key;
  ASSERT_EQ(fi_av_lookup_auth_key(av_, h, key, &size), 0);
  EXPECT_EQ(size, 3u);
  EXPECT_EQ(key[0] | (key[1] << 8) | (key[2] << 16), 0x123456);
  size_t small = 2;
  EXPECT_EQ(fi_av_lookup_auth_key(av_, h, key, &small), -FI_ETOOSMALL);
  EXPECT_EQ(fi_av_lookup_auth_key(av_, h + 1, key, &size), -FI_EINVAL);
}

TEST_F(SoftuetAvAuthKey, BufferOfOneJobIdTakesOnlyThatJobId) {
  const fi_addr_t x = InsertKey(0x111), y = InsertKey(0x222);
  const fi_addr_t b_as_x = InsertBWithKey(x);
  ASSERT_NO_FATAL_FAILURE(Enable());
  char for_y[16] = {}, for_x[16] = {};
  int ctx_y = 0, ctx_x = 0, ctx_send = 0;
  ASSERT_EQ(RecvForKey(for_y, sizeof for_y, y, &ctx_y), 0);
  ASSERT_EQ(RecvForKey(for_x, sizeof for_x, x, &ctx_x), 0);
  char msg[16] = "job 0x111";
  ASSERT_EQ(fi_send(ep_[kA], msg, sizeof msg, nullptr, b_as_x, &ctx_send), 0);
  std::map<void*, fi_cq_data_entry> done;
  // The message carries JobID 0x111: it skips the buffer posted first (for 0x222) and fills the other.
  ASSERT_NO_FATAL_FAILURE(WaitCompletions({&ctx_send, &ctx_x}, &done));
  EXPECT_STREQ(for_x, "job 0x111");
  EXPECT_EQ(for_y[0], 0);
  EXPECT_EQ(done.count(&ctx_y), 0u);
}

TEST_F(SoftuetAvAuthKey, RecvWithAnUnknownKeyIsRefused) {
  ASSERT_NO_FATAL_FAILURE(Enable());
  char buf[8];
  int ctx = 0;
  EXPECT_EQ(RecvForKey(buf, sizeof buf, fi_addr_t{1} << 48, &ctx), -FI_EINVAL);  // no key inserted
}

// Fallback JobID (spec 2.2.4.2): without UET_PROVIDER_INITIATOR_ID an endpoint MUST NOT open.
TEST(SoftuetFallbackJobId, EndpointNeedsAnInitiatorId) {
  setenv("SOFTUET_FALLBACK_JOB_ID", "1", 1);
  unsetenv("UET_PROVIDER_INITIATOR_ID");
  fi_info* hints = fi_allocinfo();
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_MSG;
  hints->fabric_attr->prov_name = strdup("softuet");
  fi_info* info = nullptr;
  ASSERT_EQ(fi_getinfo(FI_VERSION(2, 0), nullptr, nullptr, 0, hints, &info), 0);
  fi_freeinfo(hints);
  fid_fabric* fabric = nullptr;
  fid_domain* domain = nullptr;
  fid_ep* ep = nullptr;
  ASSERT_EQ(fi_fabric(info->fabric_attr, &fabric, nullptr), 0);
  ASSERT_EQ(fi_domain(fabric, info, &domain, nullptr), 0);
  EXPECT_NE(fi_endpoint(domain, info, &ep, nullptr), 0);
  if (ep) fi_close(&ep->fid);
  fi_close(&domain->fid);
  setenv("UET_PROVIDER_INITIATOR_ID", "77", 1);
  ASSERT_EQ(fi_domain(fabric, info, &domain, nullptr), 0);
  ep = nullptr;
  EXPECT_EQ(fi_endpoint(domain, info, &ep, nullptr), 0);
  if (ep) fi_close(&ep->fid);
  fi_close(&domain->fid);
  fi_close(&fabric->fid);
  fi_freeinfo(info);
  unsetenv("SOFTUET_FALLBACK_JOB_ID");
  unsetenv("UET_PROVIDER_INITIATOR_ID");
}

}  // namespace
}  // namespace softuet_test
