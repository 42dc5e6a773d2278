// JobIDs and authorization between two processes (UEC 1.0 §2.2.4): the JobID on the wire for each
// method; an MR or receive buffer for one JobID refuses another and takes its own; one for any JobID
// takes every JobID; the fallback JobID needs UET_PROVIDER_INITIATOR_ID; a request no endpoint takes is
// answered with why (JobIdRefusal). The target uses the AV method with two JobIDs, A and B, so that it
// accepts requests of either and authorizes per buffer. The initiator's endpoint has a JobID each case
// chooses (job_id_methods.hpp kChosen: the direct method, else the AV method).
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include <cstring>

#include "address_translation.hpp"
#include "area_traits.hpp"
#include "capture.hpp"
#include "job_id_on_wire.hpp"
#include "two_sided.hpp"
#include "uet/wire/wire_gen.hpp"

// What the harness must know of this area (common/claims/area_traits.hpp).
UET_AREA_TRAITS(.processes = 2, .weight = 9);

namespace uet::cases {
namespace {

namespace w = uet::wire;

constexpr uint32_t kJobA = 0x0A0A01;
constexpr uint32_t kJobB = 0x0B0B02;

class Authz : public TwoSided {
 protected:
  void SetUp() override {
    UET_REQUIRE_UET_PROVIDER();
    UET_REQUIRE_PAIR_CLAIMS_KIND();
  }
  // Opens both sides, the initiator's endpoint sending with `my_job` (kChosen): by its auth_key (direct), or by
  // the auth key its AV gives the target's address (av). Call through ASSERT_NO_FATAL_FAILURE, then IsSkipped.
  void OpenWithMyJob(EndpointSpec mine, const EndpointSpec& theirs, uint32_t my_job,
                     const std::map<std::string, std::string>& target_env = {}) {
    UET_REQUIRE_JOB_METHOD(manifest(), kChosen, "the initiator");
    const bool direct = chosen_job_method(manifest()) == "direct";
    mine.method = direct ? JobMethod::direct : JobMethod::av;
    mine.job = my_job;
    UET_OPEN_BOTH(mine, &theirs, target_env);
    if (direct) return;
    my_key_ = me.insert_auth_key(my_job);
    ASSERT_NE(my_key_, FI_ADDR_NOTAVAIL) << "the initiator's fi_av_insert_auth_key of JobID " << my_job;
    dest = me.insert(target.name_for_initiator(me.name()), my_key_);
    ASSERT_NE(dest, FI_ADDR_NOTAVAIL) << "the initiator's fi_av_insert(FI_AUTH_KEY) of the target's address";
  }
  // The initiator sends with `job`; the target holds auth keys A and B (AV method).
  void Open(uint32_t job, uint64_t caps = FI_MSG | FI_RMA) {
    EndpointSpec theirs = Spec(caps);
    theirs.method = JobMethod::av;
    ASSERT_NO_FATAL_FAILURE(OpenWithMyJob(Spec(caps), theirs, job));
    if (IsSkipped()) return;
    key_a = target.insert_auth_key(kJobA);
    key_b = target.insert_auth_key(kJobB);
    ASSERT_NE(key_a, FI_ADDR_NOTAVAIL) << target.error();
    ASSERT_NE(key_b, FI_ADDR_NOTAVAIL) << target.error();
  }
  Outcome Write(const RemoteMr& mr, const std::vector<uint8_t>& src) {
    int ctx = 0;
    const ssize_t rc = me.post([&] { return fi_write(me.ep, src.data(), src.size(), nullptr, dest, mr.base, mr.key, &ctx); });
    EXPECT_EQ(rc, 0) << fi_refused("fi_write", rc);
    return rc ? Outcome{} : me.wait(&ctx, 15000);
  }
  Outcome Send(const char* text) {
    int ctx = 0;
    const ssize_t rc = me.post([&] { return fi_send(me.ep, text, std::strlen(text) + 1, nullptr, dest, &ctx); });
    EXPECT_EQ(rc, 0) << fi_refused("fi_send", rc);
    return rc ? Outcome{} : me.wait(&ctx, 15000);
  }
  // The JobID the manifest's indirect_job_id_environment assigns to the target's endpoint (indirect
  // method, in place of the privileged entity); the case is skipped when the target claims no indirect method
  // or its manifest does not say.
  void IndirectJobId(uint32_t* job) {
    UET_REQUIRE_JOB_METHOD(target_manifest(), "indirect", "the target");
    if (target_manifest().indirect_job_id_environment.empty() || !target_manifest().indirect_job_id) {
      UET_NOT_APPLICABLE(reason::kManifestLacksHook, "the manifest does not say how the indirect method's JobID is assigned "
                      "(indirect_job_id_environment, indirect_job_id)");
    }
    *job = *target_manifest().indirect_job_id;
  }
  // The target manifest's indirect_job_id_environment, as variables for the target process.
  static std::map<std::string, std::string> IndirectEnvironment() {
    std::map<std::string, std::string> set;
    split_env(target_manifest().indirect_job_id_environment, &set, nullptr);
    return set;
  }
  // The target's endpoint has one JobID of its own: `target_job` by the indirect method (the manifest's
  // environment) or a direct auth_key; the initiator sends with `my_job`.
  void OpenTargetWithOwnJobId(JobMethod target_method, uint32_t target_job, uint32_t my_job, uint64_t caps = FI_MSG) {
    EndpointSpec theirs = Spec(caps);
    theirs.method = target_method;
    theirs.job = target_job;
    ASSERT_NO_FATAL_FAILURE(OpenWithMyJob(Spec(caps), theirs, my_job,
                                          target_method == JobMethod::indirect ? IndirectEnvironment()
                                                                               : std::map<std::string, std::string>{}));
  }
  // A message of the target endpoint's JobID: the send completes and the buffer takes it.
  void ExpectTaken(const Outcome& o, int recv_id) {
    ASSERT_EQ(o.state, Outcome::completed) << "err " << o.error.err << ", prov_errno " << o.error.prov_errno;
    EXPECT_EQ(target.completion(recv_id, kArrivalMs).state, RecvResult::completed) << target.error();
  }
  // A message whose JobID the target endpoint does not take: the send fails, the buffer stays empty.
  void ExpectRefused(const Outcome& o, int recv_id) {
    EXPECT_EQ(o.state, Outcome::failed) << "a send with a JobID the target endpoint does not take did not fail";
    if (o.state == Outcome::failed) {
      EXPECT_EQ(o.error.err, w::libfabric::fi_errno_of_ses_rc(static_cast<uint64_t>(o.error.prov_errno)))
          << "err is the libfabric code of the SES return code in prov_errno";
    }
    EXPECT_EQ(target.completion(recv_id, 0).state, RecvResult::none) << "the buffer took a message of another JobID";
  }
  fi_addr_t key_a = FI_ADDR_NOTAVAIL, key_b = FI_ADDR_NOTAVAIL;
  fi_addr_t my_key_ = FI_ADDR_NOTAVAIL;  // the initiator's auth key of its JobID (AV method), else none
};

// Receive buffers of an endpoint with one JobID (spec 2.2.4.3.1-a indirect, -b direct; 2.2.4.3.2-a
// tagged), addressed absolutely ({PIDonFEP, RI} from the target's fi_getname, 2.2.4.3-a): a message of
// its JobID is taken, one of another JobID refused.
TEST_P(Authz, IndirectEndpointBufferTakesItsAssignedJobId) {
  covers({"2.2.4.3.1-a", "2.2.4.3-a", "2.2.4.3-c"});
  uint32_t job = 0;
  IndirectJobId(&job);
  if (IsSkipped()) return;
  ASSERT_NO_FATAL_FAILURE(OpenTargetWithOwnJobId(JobMethod::indirect, job, job));
  if (IsSkipped()) return;
  ASSERT_EQ(target.post_recv(1, 64), 0) << target.error();
  ExpectTaken(Send("indirect"), 1);
}

TEST_P(Authz, IndirectEndpointBufferRefusesAnotherJobId) {
  covers({"2.2.4.3.1-a", "2.2.4.3-a", "2.2.4.3-c", "2.2.4-c"});
  uint32_t job = 0;
  IndirectJobId(&job);
  if (IsSkipped()) return;
  ASSERT_NO_FATAL_FAILURE(OpenTargetWithOwnJobId(JobMethod::indirect, job, job ^ 0x100));
  if (IsSkipped()) return;
  ASSERT_EQ(target.post_recv(1, 64), 0) << target.error();
  ExpectRefused(Send("another job"), 1);
}

TEST_P(Authz, DirectEndpointBufferTakesItsJobId) {
  covers({"2.2.4.3.1-b", "2.2.4.3-a", "2.2.4.3-c"});
  ASSERT_NO_FATAL_FAILURE(OpenTargetWithOwnJobId(JobMethod::direct, kJobA, kJobA));
  if (IsSkipped()) return;
  ASSERT_EQ(target.post_recv(1, 64), 0) << target.error();
  ExpectTaken(Send("direct"), 1);
}

TEST_P(Authz, DirectEndpointBufferRefusesAnotherJobId) {
  covers({"2.2.4.3.1-b", "2.2.4.3-a", "2.2.4.3-c", "2.2.4-c"});
  ASSERT_NO_FATAL_FAILURE(OpenTargetWithOwnJobId(JobMethod::direct, kJobA, kJobB));
  if (IsSkipped()) return;
  ASSERT_EQ(target.post_recv(1, 64), 0) << target.error();
  ExpectRefused(Send("another job"), 1);
}

// An fi_inject that cannot be delivered (its JobID refused) still writes an error entry (2.2.5.4.1-f).
TEST_P(Authz, UndeliverableInjectWritesAnErrorEntry) {
  covers({"2.2.5.4.1-f"});
  ASSERT_NO_FATAL_FAILURE(OpenTargetWithOwnJobId(JobMethod::direct, kJobA, kJobB));
  if (IsSkipped()) return;
  ASSERT_EQ(target.post_recv(1, 64), 0) << target.error();
  const char text[] = "inject";
  ASSERT_EQ(me.post([&] { return fi_inject(me.ep, text, sizeof text, dest); }), 0);
  const Outcome o = me.wait(nullptr, 15000);
  EXPECT_EQ(o.state, Outcome::failed) << "no error entry for an inject that was refused";
  EXPECT_EQ(target.completion(1, 0).state, RecvResult::none) << "the buffer took a message of another JobID";
}

// Tagged receive buffers follow the untagged rules (2.2.4.3.2-a): one posted for JobID B (AV method)
// is passed over by a message of JobID A, which the one posted for A takes.
TEST_P(Authz, TaggedBufferForOneJobIdTakesOnlyIt) {
  covers({"2.2.4.3.2-a", "2.2.4.3.1-c"});
  UET_NOT_APPLICABLE_IF(!tagged_required(), reason::kNotClaimedProfile, "tagged receive buffers come with fi_tagged (AI Full, HPC)");
  ASSERT_NO_FATAL_FAILURE(Open(kJobA, FI_TAGGED));
  if (IsSkipped()) return;
  constexpr uint64_t kTag = 0x7A66;
  ASSERT_EQ(target.post_recv(1, 64, true, kTag, 0, FI_ADDR_UNSPEC, key_b), 0) << target.error();
  ASSERT_EQ(target.post_recv(2, 64, true, kTag, 0, FI_ADDR_UNSPEC, key_a), 0) << target.error();
  const char text[] = "tagged for job A";
  int ctx = 0;
  ASSERT_EQ(me.post([&] { return fi_tsend(me.ep, text, sizeof text, nullptr, dest, kTag, &ctx); }), 0);
  const Outcome o = me.wait(&ctx, 15000);
  ASSERT_EQ(o.state, Outcome::completed) << "err " << o.error.err << ", prov_errno " << o.error.prov_errno;
  EXPECT_EQ(target.completion(2, kArrivalMs).state, RecvResult::completed) << "the tagged buffer posted for the "
                                                                              "message's JobID " << target.error();
  EXPECT_EQ(target.completion(1, 0).state, RecvResult::none) << "a tagged buffer posted for another JobID took it";
}

// The indirect method's JobID is on the wire (2.2.4.4-a, 2.2.4.1-p): the target, configured as the
// manifest says, sends to this side (an endpoint of that JobID); its request carries the assigned JobID.
// Every UET provider has the indirect method: a target that claims none is judged here, once
// (job_id_methods.hpp kIndirectJudge), by what its endpoint without an auth key sends.
TEST_P(Authz, IndirectJobIdIsOnTheWire) {
  covers({"2.2.4.4-a", "2.2.4.1-p"});
  if (!target_manifest().claims_job_method("indirect")) {
    job_ids_may_differ_ = true;  // only what the target sends is judged
    UET_OPEN_BOTH(Spec(FI_MSG));
    claimed_but_unsupported("the indirect JobID method, which every UET provider has (2.2.4.1-p)");
    ASSERT_NO_FATAL_FAILURE(ExpectTargetSendsWithoutIndirectMethod(me, target));
    return;
  }
  uint32_t job = 0;
  IndirectJobId(&job);
  if (IsSkipped()) return;
  ASSERT_NO_FATAL_FAILURE(OpenWithMyJob(Spec(FI_MSG), Spec(FI_MSG), job, IndirectEnvironment()));
  if (IsSkipped()) return;
  ASSERT_NO_FATAL_FAILURE(ExpectTargetSendsJobId(me, target, job));
}

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
  std::string why;
  EXPECT_TRUE(cap.expect({{w::Field::uet_ses_job_id, kJobB}}, is_request, &why))
      << "no SES request carries the endpoint's auth_key JobID " << kJobB << ": " << why;
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
  const fi_addr_t dest_a = me.insert(target.name_for_initiator(me.name()), my_key);
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

UET_INSTANTIATE_TWO_SIDED_RDM(Authz);

// Requests that no endpoint of the target takes (choice endpoint-jobid-mismatch). The target FEP has two
// RDM endpoints: its first of JobID A (direct method, a receive posted) and another of JobID B. A send
// to it is answered with the code that names the first thing the target could not find: the JobID, the
// endpoint's JobID, the PID within the JobID, the resource index. The initiator's send fails with it
// (err its libfabric code, prov_errno the code), the SES response carries it on the wire, and the
// posted receive stays empty.
class JobIdRefusal : public Authz {
 protected:
  // The initiator sends with `job` (direct method).
  void OpenTwoJobIds(uint32_t job) {
    ASSERT_NO_FATAL_FAILURE(OpenTargetWithOwnJobId(JobMethod::direct, kJobA, job));
    if (IsSkipped()) return;
    other_ = target.open_another_endpoint(kJobB);
    ASSERT_TRUE(layout_of(target_manifest()).get(other_, AddrField::start_index))
        << "the target's second endpoint's fi_getname: " << target.error()
        << layout_of(target_manifest()).misfit(other_.size());
    ASSERT_EQ(target.post_recv(1, 64), 0) << target.error();
  }
  // The target's first endpoint's address with `field` set to `value` (through the target's layout), in the AV.
  fi_addr_t InsertTargetWith(AddrField field, uint16_t value) {
    std::vector<uint8_t> name = target.name();
    const bool set = layout_of(target_manifest()).set(name, field, value);
    EXPECT_TRUE(set) << "the target's fi_getname has no " << addr_field_name(field) << ": "
                     << layout_of(target_manifest()).misfit(name.size());
    if (!set) return FI_ADDR_NOTAVAIL;
    std::string why;
    const auto mine = address_for(name, target_manifest(), manifest(), me.name(), &why);
    EXPECT_TRUE(mine) << why;
    if (!mine) return FI_ADDR_NOTAVAIL;
    const fi_addr_t a = me.insert(*mine, my_key_);
    EXPECT_NE(a, FI_ADDR_NOTAVAIL) << "fi_av_insert of the changed address";
    return a;
  }
  static uint16_t TargetField(const std::vector<uint8_t>& name, AddrField field) {
    return static_cast<uint16_t>(layout_of(target_manifest()).get(name, field).value_or(0));
  }
  void ExpectRefusedWith(fi_addr_t to, uint64_t rc) {
    rests_on_choice("endpoint-jobid-mismatch");
    if (to == FI_ADDR_NOTAVAIL) return;
    Capture cap;
    const bool capturing = cap.start(Capture::Toward::initiator);
    if (!capturing) note("wire", "the SES response is not checked: " + cap.error());
    const char text[] = "refused";
    int ctx = 0;
    ASSERT_EQ(me.post([&] { return fi_send(me.ep, text, sizeof text, nullptr, to, &ctx); }), 0);
    const Outcome o = me.wait(&ctx, 15000);
    expect_error_entry(o, rc);
    if (capturing) {
      std::string why;
      EXPECT_TRUE(cap.expect({{w::Field::uet_ses_rsp_return_code, rc}}, is_response, &why))
          << "no SES response from the target carries return code " << rc << ": " << why;
    }
    EXPECT_EQ(target.completion(1, 0).state, RecvResult::none) << "the target's receive took a refused message";
  }
  std::vector<uint8_t> other_;  // the address of the target's endpoint of JobID B
};

constexpr uint32_t kJobC = 0x0C0C03;  // no endpoint of the target takes it

TEST_P(JobIdRefusal, JobIdNoEndpointTakesIsBadJobId) {
  covers({"2.2.4-c", "2.2.4.3-a", "2.2.4.3.1-b", "2.2.5.6-a", "2.2.5.6-c"});
  ASSERT_NO_FATAL_FAILURE(OpenTwoJobIds(kJobC));
  if (IsSkipped()) return;
  ExpectRefusedWith(dest, w::ses_return_code::RC_BAD_JOB_ID);
}

TEST_P(JobIdRefusal, JobIdOfAnotherEndpointIsPermViolation) {
  covers({"2.2.4-c", "2.2.4.3-a", "2.2.4.3.1-b", "2.2.4.1-j", "2.2.5.6-a", "2.2.5.6-c"});
  ASSERT_NO_FATAL_FAILURE(OpenTwoJobIds(kJobB));
  if (IsSkipped()) return;
  ExpectRefusedWith(dest, w::ses_return_code::RC_PERM_VIOLATION);
}

TEST_P(JobIdRefusal, PidOutsideTheJobIdIsBadPid) {
  covers({"2.2.4.3-a", "2.2.5.6-a", "2.2.5.6-c"});
  ASSERT_NO_FATAL_FAILURE(OpenTwoJobIds(kJobA));
  if (IsSkipped()) return;
  const uint16_t pid = TargetField(target.name(), AddrField::pid_on_fep);
  const uint16_t another_pid = static_cast<uint16_t>(pid % ((1u << w::k_pid_on_fep_bits) - 1) + 1);
  ExpectRefusedWith(InsertTargetWith(AddrField::pid_on_fep, another_pid), w::ses_return_code::RC_BAD_PID);
}

TEST_P(JobIdRefusal, ResourceIndexOutsideTheJobIdIsBadIndex) {
  covers({"2.2.4.3-a", "2.2.5.6-a", "2.2.5.6-c"});
  ASSERT_NO_FATAL_FAILURE(OpenTwoJobIds(kJobA));
  if (IsSkipped()) return;
  // A resource index neither endpoint has (RI 0 is reserved).
  const uint16_t first = TargetField(target.name(), AddrField::start_index);
  const uint16_t second = TargetField(other_, AddrField::start_index);
  uint16_t unused = 1;
  while (unused == first || unused == second) ++unused;
  ExpectRefusedWith(InsertTargetWith(AddrField::start_index, unused), w::ses_return_code::RC_BAD_INDEX);
}

UET_INSTANTIATE_TWO_SIDED_RDM(JobIdRefusal);

// The fallback JobID (spec 2.2.4.2): configured as the manifest's fallback_job_id_environment says, an
// endpoint opens only with UET_PROVIDER_INITIATOR_ID, and then has that initiator ID. Checked in a
// peer process, so the configuration stays out of this one.
class Fallback : public ::testing::Test {
 protected:
  void SetUp() override {
    UET_REQUIRE_UET_PROVIDER();
    UET_REQUIRE_TAKES_JOB_IDS(target_manifest(), "the target");
    UET_NOT_APPLICABLE_IF(target_manifest().fallback_job_id_environment.empty(), reason::kManifestLacksHook,
                          "the target manifest does not say how to enable the fallback JobID "
                          "(fallback_job_id_environment)");
    split_env(target_manifest().fallback_job_id_environment, &env, &unset);
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
    expect_clean_end(t.finish(), t.error());
  }
  Target t;
  auto with = env;
  with["UET_PROVIDER_INITIATOR_ID"] = "77";
  ASSERT_TRUE(t.start(spec, with, unset)) << t.error();
  const auto initiator = layout_of(target_manifest()).get(t.name(), AddrField::initiator_id);
  ASSERT_TRUE(initiator) << "the target's fi_getname: " << layout_of(target_manifest()).misfit(t.name().size());
  EXPECT_EQ(*initiator, 77u) << "the initiator ID of the address is UET_PROVIDER_INITIATOR_ID";
  expect_clean_end(t.finish(), t.error());
}

// An endpoint with the fallback JobID sends it on the wire (2.2.4.2-b): 16777215.
TEST_F(Fallback, FallbackJobIdIsOnTheWire) {
  covers({"2.2.4.2-b", "2.2.4.4-a"});
  // This side's endpoint takes the fallback JobID (kChosen): its auth_key, or an auth key in its AV.
  UET_REQUIRE_JOB_METHOD(manifest(), kChosen, "the initiator");
  const auto fallback = static_cast<uint32_t>(w::k_fallback_job_id);
  const bool direct = chosen_job_method(manifest()) == "direct";
  EndpointSpec mine;
  mine.method = direct ? JobMethod::direct : JobMethod::av;
  mine.job = fallback;
  Endpoint me;
  const int rc = me.open(mine);
  ASSERT_EQ(rc, 0) << fi_refused(me.failed, rc);
  if (!direct) {
    ASSERT_NE(me.insert_auth_key(fallback), FI_ADDR_NOTAVAIL);
  }
  Target t;
  auto with = env;
  with["UET_PROVIDER_INITIATOR_ID"] = "78";
  ASSERT_TRUE(t.start(EndpointSpec{}, with, unset)) << t.error();
  ASSERT_NO_FATAL_FAILURE(ExpectTargetSendsJobId(me, t, static_cast<uint32_t>(w::k_fallback_job_id)));
  expect_clean_end(t.finish(), t.error());
}

}  // namespace
}  // namespace uet::cases
