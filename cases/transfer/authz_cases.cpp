// JobIDs and authorization between two processes (UEC 1.0 §2.2.4): the JobID on the wire for each
// method; an MR or receive buffer for one JobID refuses another and takes its own; one for any JobID
// takes every JobID; the fallback JobID needs UET_PROVIDER_INITIATOR_ID. The target uses the AV method
// with two JobIDs, A and B, so that it accepts requests of either and authorizes per buffer.
#include <rdma/fi_rma.h>

#include <cstring>

#include "capture.hpp"
#include "two_sided.hpp"
#include "uet/wire/wire_gen.hpp"

namespace uet::cases {
namespace {

namespace w = uet::wire;

constexpr uint32_t kJobA = 0x0A0A01;
constexpr uint32_t kJobB = 0x0B0B02;

class Authz : public TwoSided {
 protected:
  void SetUp() override {
    UET_REQUIRE_UET_PROVIDER();
    UET_NOT_APPLICABLE_IF(GetParam().ep_type != FI_EP_RDM, "authorization is checked on RDM endpoints");
  }
  // The initiator sends with `job` (direct method); the target holds auth keys A and B (AV method).
  void Open(uint32_t job, uint64_t caps = FI_MSG | FI_RMA) {
    EndpointSpec mine = Spec(caps), theirs = Spec(caps);
    mine.method = JobMethod::direct;
    mine.job = job;
    theirs.method = JobMethod::av;
    UET_OPEN_BOTH(mine, &theirs);
    key_a = target.insert_auth_key(kJobA);
    key_b = target.insert_auth_key(kJobB);
    ASSERT_NE(key_a, FI_ADDR_NOTAVAIL) << target.error();
    ASSERT_NE(key_b, FI_ADDR_NOTAVAIL) << target.error();
  }
  Outcome Write(const RemoteMr& mr, const std::vector<uint8_t>& src) {
    int ctx = 0;
    const ssize_t rc = me.post([&] { return fi_write(me.ep, src.data(), src.size(), nullptr, dest, mr.base, mr.key, &ctx); });
    EXPECT_EQ(rc, 0) << "fi_write: " << fi_err(rc);
    return rc ? Outcome{} : me.wait(&ctx, 15000);
  }
  Outcome Send(const char* text) {
    int ctx = 0;
    const ssize_t rc = me.post([&] { return fi_send(me.ep, text, std::strlen(text) + 1, nullptr, dest, &ctx); });
    EXPECT_EQ(rc, 0) << "fi_send: " << fi_err(rc);
    return rc ? Outcome{} : me.wait(&ctx, 15000);
  }
  fi_addr_t key_a = FI_ADDR_NOTAVAIL, key_b = FI_ADDR_NOTAVAIL;
};

TEST_P(Authz, MrForOneJobIdRefusesAnother) {
  covers({"2.2.4.3.3-g", "2.2.4.3.3-d", "2.2.4.3.3-e", "2.2.4.3-c", "2.2.4-c", "2.2.5.6-a", "2.2.5.6-c"});
  ASSERT_NO_FATAL_FAILURE(Open(kJobB));
  if (IsSkipped()) return;
  RemoteMr mr;
  ASSERT_TRUE(target.register_mr(1, 64, 0, "av:" + std::to_string(key_a), &mr)) << target.error();
  const Outcome o = Write(mr, std::vector<uint8_t>(32, 0xEE));
  expect_error_entry(o, w::ses_return_code::RC_PERM_VIOLATION);
  EXPECT_EQ(target.read_mr(1, 0, 64), std::vector<uint8_t>(64, 0)) << "data was written for the wrong JobID";
}

TEST_P(Authz, MrForOneJobIdTakesIt) {
  covers({"2.2.4.3.3-e", "2.2.4.3.3-g", "2.2.4.3-c"});
  ASSERT_NO_FATAL_FAILURE(Open(kJobA));
  if (IsSkipped()) return;
  RemoteMr mr;
  ASSERT_TRUE(target.register_mr(1, 64, 0, "av:" + std::to_string(key_a), &mr)) << target.error();
  const Outcome o = Write(mr, std::vector<uint8_t>(32, 0xEE));
  ASSERT_EQ(o.state, Outcome::completed) << "err " << o.error.err << ", prov_errno " << o.error.prov_errno;
  EXPECT_EQ(target.read_mr(1, 0, 32), std::vector<uint8_t>(32, 0xEE));
}

TEST_P(Authz, MrForAnyJobIdTakesEveryJobId) {
  covers({"2.2.4.3.3-f", "2.2.4.3-d"});
  ASSERT_NO_FATAL_FAILURE(Open(kJobB));
  if (IsSkipped()) return;
  RemoteMr mr;
  ASSERT_TRUE(target.register_mr(1, 64, 0, "any", &mr)) << target.error();
  const Outcome o = Write(mr, std::vector<uint8_t>(32, 0x5A));
  ASSERT_EQ(o.state, Outcome::completed) << "err " << o.error.err << ", prov_errno " << o.error.prov_errno;
  EXPECT_EQ(target.read_mr(1, 0, 32), std::vector<uint8_t>(32, 0x5A));
}

TEST_P(Authz, ReceiveBufferForOneJobIdTakesOnlyIt) {
  covers({"2.2.4.3.1-c", "2.2.4.3-c", "2.2.4.3-e", "2.2.4.1-n"});
  ASSERT_NO_FATAL_FAILURE(Open(kJobA, FI_MSG));
  if (IsSkipped()) return;
  ASSERT_EQ(target.post_recv(1, 64, false, 0, 0, FI_ADDR_UNSPEC, key_b), 0) << target.error();
  ASSERT_EQ(target.post_recv(2, 64, false, 0, 0, FI_ADDR_UNSPEC, key_a), 0) << target.error();
  ASSERT_EQ(Send("for job A").state, Outcome::completed);
  const RecvResult r = target.completion(2, kArrivalMs);
  EXPECT_EQ(r.state, RecvResult::completed) << "the buffer posted for the message's JobID " << target.error();
  EXPECT_EQ(target.completion(1, 0).state, RecvResult::none) << "a buffer posted for another JobID took the message";
}

TEST_P(Authz, PlainReceiveBufferTakesAnyJobId) {
  covers({"2.2.4.3.1-d", "2.2.4.3-d"});
  ASSERT_NO_FATAL_FAILURE(Open(kJobB, FI_MSG));
  if (IsSkipped()) return;
  ASSERT_EQ(target.post_recv(1, 64), 0) << target.error();
  ASSERT_EQ(Send("any job").state, Outcome::completed);
  EXPECT_EQ(target.completion(1, kArrivalMs).state, RecvResult::completed) << target.error();
}

TEST_P(Authz, DirectJobIdIsOnTheWire) {
  covers({"2.2.4.4-b", "2.2.4.1-q", "2.2.4.1-j"});
  ASSERT_NO_FATAL_FAILURE(Open(kJobB, FI_MSG));
  if (IsSkipped()) return;
  Capture cap;
  ASSERT_TRUE(cap.start()) << cap.error();
  ASSERT_EQ(target.post_recv(1, 64), 0) << target.error();
  const Outcome o = Send("direct");
  const auto f = cap.find([](const WireFrame& f) { return is_request(f); });
  ASSERT_TRUE(f) << "no SES request captured";
  EXPECT_EQ(f->get(w::Field::uet_ses_job_id), kJobB) << "ses.job_id is the endpoint's auth_key JobID";
  EXPECT_EQ(o.state, Outcome::completed) << "err " << o.error.err;
}

TEST_P(Authz, AvAuthKeyJobIdIsOnTheWire) {
  covers({"2.2.4.4-c", "2.2.4.1-g", "2.2.4.1-m", "2.2.4.1-t"});
  EndpointSpec mine = Spec(FI_MSG), theirs = Spec(FI_MSG);
  mine.method = theirs.method = JobMethod::av;
  UET_OPEN_BOTH(mine, &theirs);
  ASSERT_NE(target.insert_auth_key(kJobA), FI_ADDR_NOTAVAIL) << target.error();
  const fi_addr_t my_key = me.insert_auth_key(kJobA);
  ASSERT_NE(my_key, FI_ADDR_NOTAVAIL);
  const fi_addr_t dest_a = me.insert(target.name(), my_key);
  ASSERT_NE(dest_a, FI_ADDR_NOTAVAIL) << "fi_av_insert(FI_AUTH_KEY)";
  Capture cap;
  ASSERT_TRUE(cap.start()) << cap.error();
  ASSERT_EQ(target.post_recv(1, 64), 0) << target.error();
  int ctx = 0;
  ASSERT_EQ(me.post([&] { return fi_send(me.ep, "av", 3, nullptr, dest_a, &ctx); }), 0);
  const Outcome o = me.wait(&ctx, 15000);
  const auto f = cap.find([](const WireFrame& f) { return is_request(f); });
  ASSERT_TRUE(f) << "no SES request captured";
  EXPECT_EQ(f->get(w::Field::uet_ses_job_id), kJobA) << "ses.job_id is the auth key of dest_addr";
  EXPECT_EQ(o.state, Outcome::completed) << "err " << o.error.err;
}

UET_INSTANTIATE_TWO_SIDED(Authz);

// The fallback JobID (spec 2.2.4.2): configured as the manifest's fallback_job_id_environment says, an
// endpoint opens only with UET_PROVIDER_INITIATOR_ID, and then has that initiator ID. Checked in a
// peer process, so the configuration stays out of this one.
class Fallback : public ::testing::Test {
 protected:
  void SetUp() override {
    UET_REQUIRE_UET_PROVIDER();
    env = manifest_map("fallback_job_id_environment");
    UET_NOT_APPLICABLE_IF(env.empty(), "the manifest does not say how to enable the fallback JobID "
                                       "(fallback_job_id_environment)");
    for (auto it = env.begin(); it != env.end();) {
      if (it->second.empty()) {
        unset.push_back(it->first);
        it = env.erase(it);
      } else {
        ++it;
      }
    }
  }
  std::map<std::string, std::string> env;
  std::vector<std::string> unset;
};

TEST_F(Fallback, EndpointNeedsUetProviderInitiatorId) {
  covers({"2.2.4.2-d", "2.2.4.2-c", "2.2.4.2-a"});
  EndpointSpec spec;
  {
    Target t;
    auto without = unset;
    without.push_back("UET_PROVIDER_INITIATOR_ID");
    EXPECT_FALSE(t.start(spec, env, without)) << "an endpoint with the fallback JobID opened without "
                                                 "UET_PROVIDER_INITIATOR_ID";
    EXPECT_EQ(t.finish(), 0);
  }
  Target t;
  auto with = env;
  with["UET_PROVIDER_INITIATOR_ID"] = "77";
  ASSERT_TRUE(t.start(spec, with, unset)) << t.error();
  ASSERT_GE(t.name().size(), w::k_addr_offset_initiator_id + 4);
  uint32_t initiator = 0;
  std::memcpy(&initiator, t.name().data() + w::k_addr_offset_initiator_id, sizeof initiator);
  EXPECT_EQ(initiator, 77u) << "the initiator ID of the address is UET_PROVIDER_INITIATOR_ID";
  EXPECT_EQ(t.finish(), 0);
}

}  // namespace
}  // namespace uet::cases
