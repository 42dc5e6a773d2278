// Profile negotiation (UEC 1.0 §2.2.2.1): two FEPs operate in the common profile of highest priority
// their addresses advertise, and an AI Full FEP and an HPC FEP in AI Full. Run over every ordered pair of
// profile sets (the negotiation matrix of ./uet run), each case checks on the wire that the operations
// stay within that profile: a large send is a rendezvous only in HPC, a deferrable send only in AI
// Full, a plain send otherwise, and the target takes whatever it gets (an HPC target takes a deferrable
// send as a send); RUDI only in HPC. What the pair operates in comes from uet/wire/profiles.hpp, whose
// priorities are data (spec/wire.yaml constants profile_priority_*, choices profile-priority and
// no-common-profile): every verdict here rests on those choices and says so.
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include <cstdlib>
#include <sstream>

#include "area_traits.hpp"
#include "capture.hpp"
#include "two_sided.hpp"
#include "uet/wire/profiles.hpp"
#include "uet/wire/wire_gen.hpp"

// What the harness must know of this area (common/claims/area_traits.hpp).
UET_AREA_TRAITS(.processes = 2, .weight = 1.5, .profile_pairs = true);

namespace uet::cases {
namespace {

namespace w = uet::wire;
namespace op = w::ses_request_opcode;

std::string claims(const Manifest& m) {
  std::string out;
  for (const auto& p : m.profiles) out += (out.empty() ? "" : "+") + p;
  return m.name + " (" + (out.empty() ? "no profile" : out) + ")";
}

class Negotiation : public TwoSided {
 protected:
  void SetUp() override {
    UET_REQUIRE_UET_PROVIDER();
    UET_REQUIRE_PAIR_CLAIMS_KIND();
    mine = claimed_caps(manifest());
    theirs = claimed_caps(target_manifest());
    operating = w::operating_profile(mine, theirs);
    note("operating_profile", w::profile_name(operating));
    rests_on_choice("profile-priority");
    if (!(mine & theirs)) rests_on_choice("no-common-profile");
  }
  std::string Pair() const {
    return claims(manifest()) + " to " + claims(target_manifest()) + ", operating in " + w::profile_name(operating);
  }

  // A send of at least the rendezvous size from a region registered for remote read: the opcode of its
  // first request is the one the operating profile allows, and the target gets every byte.
  void LargeSend(bool tagged) {
    if (tagged) UET_NOT_APPLICABLE_IF(!tagged_required(), reason::kNotClaimedProfile, Pair() << ": a side claims neither AI Full nor HPC, so "
                                                                     "the pair has no fi_tagged (2.2.5.4.2-b)");
    const char* var = tagged ? "UET_PROVIDER_TAG_RENDEZVOUS_SIZE" : "UET_PROVIDER_MSG_RENDEZVOUS_SIZE";
    const size_t size = provider_size_or_default(var, w::k_rendezvous_size_default, "rendezvous-size-default") + 3001;
    if (HasFailure()) return;
    UET_OPEN_BOTH(Spec(FI_MSG | FI_RMA | (tagged ? FI_TAGGED : 0)));
    constexpr uint64_t kTag = 0x9E60;
    std::vector<uint8_t> data(size);
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 13 + 1);
    fid_mr* mr = nullptr;
    ASSERT_EQ(me.register_mr(data.data(), data.size(), 0x6E60, &mr), 0) << me.failed;
    // Posted first: a deferrable send finds its receive and is taken at once (no restart to wait for).
    ASSERT_EQ(target.post_recv(1, data.size(), tagged, kTag), 0) << target.error();
    Capture cap;
    ASSERT_TRUE(cap.start()) << cap.error();
    int ctx = 0;
    ASSERT_EQ(me.post([&] {
      return tagged ? fi_tsend(me.ep, data.data(), data.size(), fi_mr_desc(mr), dest, kTag, &ctx)
                    : fi_send(me.ep, data.data(), data.size(), fi_mr_desc(mr), dest, &ctx);
    }), 0);
    const Outcome o = me.wait(&ctx, 15000);
    ASSERT_EQ(o.state, Outcome::completed) << Pair() << ": err " << o.error.err << ", prov_errno " << o.error.prov_errno;
    const RecvResult r = target.completion(1, kArrivalMs);
    ASSERT_EQ(r.state, RecvResult::completed) << Pair() << ": the target's receive " << target.error();
    EXPECT_EQ(r.bytes, data) << Pair() << ": the bytes the target received";
    const w::LargeSend kind = w::large_send_kind(mine, theirs);
    const uint64_t want = kind == w::LargeSend::rendezvous ? (tagged ? op::UET_RENDEZVOUS_TSEND : op::UET_RENDEZVOUS_SEND)
                        : kind == w::LargeSend::deferrable ? (tagged ? op::UET_DEFERRABLE_TSEND : op::UET_DEFERRABLE_SEND)
                                                           : (tagged ? op::UET_TAGGED_SEND : op::UET_SEND);
    const auto first = cap.find([](const WireFrame& f) { return is_request(f) && f.get(w::Field::uet_ses_som) != 0u; });
    ASSERT_TRUE(first) << Pair() << ": no request of the " << size << "-byte send captured";
    EXPECT_EQ(first->get(w::Field::uet_ses_opcode), want)
        << Pair() << ": the first request's opcode (want " << w::enum_name(w::Enum::ses_request_opcode, want) << ", got "
        << w::enum_name(w::Enum::ses_request_opcode, first->get(w::Field::uet_ses_opcode).value_or(0)) << ")";
  }

  uint8_t mine = 0, theirs = 0;
  w::Profile operating = w::Profile::none;
};

// 2.2.2.1-a: the common profile of highest priority; -b: AI Full with HPC is limited to AI Full
// operations; -c: an HPC target takes a deferrable send as a send (it arrives whole).
TEST_P(Negotiation, LargeSendStaysWithinTheOperatingProfile) {
  covers({"2.2.2.1-a", "2.2.2.1-b", "2.2.2.1-c"});
  LargeSend(false);
}

// -d: an HPC target takes a deferrable tagged send as a tagged send.
TEST_P(Negotiation, LargeTaggedSendStaysWithinTheOperatingProfile) {
  covers({"2.2.2.1-a", "2.2.2.1-b", "2.2.2.1-d"});
  LargeSend(true);
}

// RUDI is an HPC delivery mode (2.2.6-b): a write to an IDEMPOTENT_SAFE key uses it only when the pair
// operates in HPC, where it SHOULD (2.2.5.3.4.1-m, choice rudi-criteria).
TEST_P(Negotiation, IdempotentWriteUsesRudiOnlyInHpc) {
  covers({"2.2.2.1-a", "2.2.6-b", "2.2.6-h"});
  rests_on_choice("rudi-criteria");
  UET_OPEN_BOTH(Spec(FI_MSG | FI_RMA));
  RemoteMr safe;
  ASSERT_TRUE(target.register_mr(1, 256, 0, "idempotent+any", &safe)) << target.error();
  constexpr uint64_t kSafe = uint64_t{1} << w::k_mr_key_idempotent_safe_bit;
  UET_NOT_APPLICABLE_IF(!(safe.key & kSafe), reason::kNotObservable, "the target's key lost IDEMPOTENT_SAFE (2.2.5.3.4.1-o checks that)");
  Capture cap;
  ASSERT_TRUE(cap.start()) << cap.error();
  const std::vector<uint8_t> src(64, 0x3C);
  int ctx = 0;
  ASSERT_EQ(me.post([&] { return fi_write(me.ep, src.data(), src.size(), nullptr, dest, safe.base, safe.key, &ctx); }), 0);
  const Outcome o = me.wait(&ctx);
  ASSERT_EQ(o.state, Outcome::completed) << Pair() << ": err " << o.error.err << ", prov_errno " << o.error.prov_errno;
  EXPECT_EQ(target.read_mr(1, 0, src.size()), src) << Pair();
  const auto f = cap.find([&](const WireFrame& f) {
    return f.get(w::Field::uet_ses_opcode) == op::UET_WRITE && f.get(w::Field::uet_ses_memory_key) == safe.key;
  });
  ASSERT_TRUE(f) << Pair() << ": no UET_WRITE to the IDEMPOTENT_SAFE key captured";
  const bool rudi = f->get(w::Field::uet_pds_type) == w::pds_type::RUDI_REQ;
  if (!w::rudi_allowed(mine, theirs)) {
    EXPECT_FALSE(rudi) << Pair() << ": RUDI outside HPC";
  } else {
    should(rudi, Pair() + ": a write to an IDEMPOTENT_SAFE key uses RUDI " + per_choice("rudi-criteria"));
  }
}

UET_INSTANTIATE_TWO_SIDED_RDM(Negotiation);

}  // namespace
}  // namespace uet::cases
