// Large messages between two processes (UEC 1.0 §2.2.5.4.1.2, §2.2.5.4.2.2, §2.2.10.4): HPC's rendezvous
// send (the target pulls what the eager part did not carry) and AI Full's deferrable send (the target
// may defer it and ask for a restart). The thresholds and the eager limit are the provider's
// UET_PROVIDER_* configuration (§2.2.3), read from this process's environment — set them in the
// manifest's `environment:` so both sides run with the values the case checks against.
#include <rdma/fi_tagged.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include "area_traits.hpp"
#include "capture.hpp"
#include "two_sided.hpp"
#include "uet/wire/profiles.hpp"
#include "uet/wire/wire_gen.hpp"

// What the harness must know of this area (common/claims/area_traits.hpp).
UET_AREA_TRAITS(.processes = 2, .weight = 2);

namespace uet::cases {
namespace {

namespace w = uet::wire;

// The rendezvous threshold and the eager size the provider's environment gives, or the spec's defaults.
uint64_t rendezvous_size(bool tagged) {
  return provider_size_or_default(tagged ? "UET_PROVIDER_TAG_RENDEZVOUS_SIZE" : "UET_PROVIDER_MSG_RENDEZVOUS_SIZE",
                                  w::k_rendezvous_size_default, "rendezvous-size-default");
}
uint64_t max_eager_size() {
  return provider_size_or_default("UET_PROVIDER_MAX_EAGER_SIZE", w::k_max_eager_size_default, "max-eager-size-default");
}

bool opcode_in(const WireFrame& f, std::initializer_list<uint64_t> ops) {
  const auto op = f.get(w::Field::uet_ses_opcode);
  if (!op) return false;
  for (uint64_t o : ops)
    if (*op == o) return true;
  return false;
}

class Rendezvous : public TwoSided {
 protected:
  void SetUp() override {
    UET_REQUIRE_UET_PROVIDER();
    UET_REQUIRE_PAIR_CLAIMS_KIND();
  }
  // The size of a message at `threshold` or above that ends in a partial packet.
  static size_t large(uint64_t threshold) { return threshold + 3001; }

  // Sends `data` (fi_tsend with `tag` when tagged) with `desc` and waits for its completion.
  void Send(const std::vector<uint8_t>& data, void* desc, bool tagged, uint64_t tag, int* ctx) {
    ASSERT_EQ(me.post([&] {
      return tagged ? fi_tsend(me.ep, data.data(), data.size(), desc, dest, tag, ctx)
                    : fi_send(me.ep, data.data(), data.size(), desc, dest, ctx);
    }), 0);
  }

  // HPC: a send at or above the threshold whose source is in an MR registered for remote read goes as
  // UET_RENDEZVOUS_SEND/TSEND with the extension header and at most UET_PROVIDER_MAX_EAGER_SIZE eager bytes;
  // the target gets every byte.
  void RendezvousSend(bool tagged) {
    UET_NOT_APPLICABLE_IF(w::large_send_kind(claimed_caps(manifest()), claimed_caps(target_manifest())) != w::LargeSend::rendezvous, reason::kNotClaimedProfile,
                          "the pair does not operate in HPC (rendezvous: 2.2.5.4.1.2-b; uet/wire/profiles.hpp)");
    const uint64_t threshold = rendezvous_size(tagged), max_eager = max_eager_size();
    if (HasFailure()) return;
    UET_OPEN_BOTH(Spec(FI_MSG | FI_TAGGED | FI_RMA));
    constexpr uint64_t kTag = 0x7E57;
    std::vector<uint8_t> data(large(threshold));
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7 + 3);
    fid_mr* mr = nullptr;
    ASSERT_EQ(me.register_mr(data.data(), data.size(), 0x5E17, &mr), 0) << me.failed;
    ASSERT_EQ(target.post_recv(1, data.size(), tagged, kTag), 0) << target.error();
    Capture cap;
    ASSERT_TRUE(cap.start()) << cap.error();
    int ctx = 0;
    ASSERT_NO_FATAL_FAILURE(Send(data, fi_mr_desc(mr), tagged, kTag, &ctx));
    const Outcome o = me.wait(&ctx);
    ASSERT_EQ(o.state, Outcome::completed) << "err " << o.error.err << ", prov_errno " << o.error.prov_errno;
    const RecvResult r = target.completion(1, kArrivalMs);
    ASSERT_EQ(r.state, RecvResult::completed) << target.error();
    EXPECT_EQ(r.bytes, data) << "the target's receive buffer after the rendezvous";
    const uint64_t want = tagged ? w::ses_request_opcode::UET_RENDEZVOUS_TSEND : w::ses_request_opcode::UET_RENDEZVOUS_SEND;
    const auto f = cap.find([want](const WireFrame& f) { return opcode_in(f, {want}); });
    if (!f) claimed_but_unsupported("HPC's rendezvous send (2.2.5.4.1.2-b): the initiator claims HPC");
    ASSERT_TRUE(f) << "no " << (tagged ? "UET_RENDEZVOUS_TSEND" : "UET_RENDEZVOUS_SEND") << " for a " << data.size()
                   << "-byte send from a region registered for remote read (threshold " << threshold << ")";
    const auto eager = f->get(w::Field::uet_ses_rdv_eager_length);
    rests_on_choice("rendezvous-ext-layout");  // the verdict rests on it, pass or fail
    ASSERT_TRUE(eager) << "the rendezvous send has no rendezvous extension header " << per_choice("rendezvous-ext-layout");
    EXPECT_LE(*eager, max_eager) << "eager bytes over UET_PROVIDER_MAX_EAGER_SIZE";
    EXPECT_EQ(f->get(w::Field::uet_ses_request_length), data.size());
    EXPECT_EQ(f->get(w::Field::uet_ses_rdv_read_key), fi_mr_key(mr))
        << "the target reads the rest through the initiator's key (Table 2-44 as rebuilt, choice rendezvous-ext-layout)";
    if (tagged) {
      EXPECT_EQ(f->get(w::Field::uet_ses_match_bits), kTag);
    }
  }

  // AI Full: a send at or above the threshold goes as UET_DEFERRABLE_SEND/TSEND. Sent before the target
  // posts its receives, each carries an initiator restart token unique among the active ones; when the
  // target asks for a restart (UET_DEFERRABLE_RTR) it names both tokens and the restarted request carries
  // the target's. Every message arrives once, whole.
  void DeferrableSend(bool tagged) {
    // Between FEPs operating in HPC, a send without a readable region is deferrable where both share AI Full.
    const uint8_t mine = claimed_caps(manifest()), theirs = claimed_caps(target_manifest());
    const bool deferrable = w::large_send_kind(mine, theirs) == w::LargeSend::deferrable ||
                            (w::large_send_kind(mine, theirs) == w::LargeSend::rendezvous && manifest().claims_profile("ai_full") &&
                             target_manifest().claims_profile("ai_full"));
    UET_NOT_APPLICABLE_IF(!deferrable, reason::kNotClaimedProfile, "the pair does not operate in AI Full (deferrable send: 2.2.5.4.1.2-a; "
                                       "uet/wire/profiles.hpp)");
    const uint64_t threshold = rendezvous_size(tagged);
    if (HasFailure()) return;
    UET_OPEN_BOTH(Spec(FI_MSG | FI_TAGGED));
    constexpr int kMessages = 3;
    constexpr uint64_t kTag = 0xDEF0;
    Capture to_target, to_me;
    ASSERT_TRUE(to_target.start()) << to_target.error();
    ASSERT_TRUE(to_me.start(Capture::Toward::initiator)) << to_me.error();
    std::vector<std::vector<uint8_t>> data;
    int ctx[kMessages] = {};
    for (int i = 0; i < kMessages; ++i) {
      data.emplace_back(large(threshold), static_cast<uint8_t>(0xA0 + i));
      ASSERT_NO_FATAL_FAILURE(Send(data.back(), nullptr, tagged, kTag + i, &ctx[i]));
    }
    const uint64_t want = tagged ? w::ses_request_opcode::UET_DEFERRABLE_TSEND : w::ses_request_opcode::UET_DEFERRABLE_SEND;
    // The target answered every first request before any receive exists: each was deferred.
    std::set<uint64_t> tokens;
    for (int i = 0; i < kMessages; ++i) {
      const auto f = to_target.find([&](const WireFrame& f) {
        return opcode_in(f, {want}) && f.get(w::Field::uet_ses_som) == 1u &&
               f.get(w::Field::uet_ses_match_bits) == (tagged ? kTag + i : 0) &&
               !tokens.count(f.get(w::Field::uet_ses_initiator_restart_token).value_or(~0ull));
      }, kArrivalMs);
      if (!f && tokens.empty()) claimed_but_unsupported("AI Full's deferrable send (2.2.5.4.1.2-a): the initiator claims AI Full");
      ASSERT_TRUE(f) << "no " << (tagged ? "UET_DEFERRABLE_TSEND" : "UET_DEFERRABLE_SEND") << " for message " << i
                     << " of " << data[i].size() << " bytes (threshold " << threshold
                     << ") with an initiator restart token of its own (active tokens so far: " << tokens.size() << ")";
      tokens.insert(*f->get(w::Field::uet_ses_initiator_restart_token));
    }
    EXPECT_EQ(tokens.size(), static_cast<size_t>(kMessages)) << "active initiator restart tokens are not unique";
    ASSERT_TRUE(to_me.find([](const WireFrame& f) { return !is_request(f); }, kArrivalMs))
        << "the target did not answer the deferrable send";
    for (int i = 0; i < kMessages; ++i)
      ASSERT_EQ(target.post_recv(1 + i, data[i].size(), tagged, kTag + i), 0) << target.error();
    for (int i = 0; i < kMessages; ++i) {
      const Outcome o = me.wait(&ctx[i]);
      ASSERT_EQ(o.state, Outcome::completed) << "message " << i << ": err " << o.error.err << ", prov_errno " << o.error.prov_errno;
      const RecvResult r = target.completion(1 + i, kArrivalMs);
      ASSERT_EQ(r.state, RecvResult::completed) << "message " << i << " " << target.error();
      EXPECT_EQ(r.bytes, data[i]) << "message " << i;
    }
    EXPECT_EQ(target.completion(1 + kMessages, 0).state, RecvResult::none);
    // A restart (if the target asked for one) names both tokens; the restarted request carries them.
    to_me.find([](const WireFrame&) { return false; }, 0);  // reads what the capture holds
    for (const WireFrame& rtr : to_me.seen()) {
      if (!opcode_in(rtr, {w::ses_request_opcode::UET_DEFERRABLE_RTR})) continue;
      const auto mine = rtr.get(w::Field::uet_ses_initiator_restart_token);
      const auto theirs = rtr.get(w::Field::uet_ses_target_restart_token);
      ASSERT_TRUE(mine && theirs) << "UET_DEFERRABLE_RTR without its restart tokens";
      EXPECT_TRUE(tokens.count(*mine)) << "an RTR names initiator token " << *mine << " that no deferrable send carried";
      const auto restarted = [&](const WireFrame& f) {
        return opcode_in(f, {want}) && f.get(w::Field::uet_ses_initiator_restart_token) == mine &&
               f.get(w::Field::uet_ses_target_restart_token) == theirs;
      };
      const auto& seen = to_target.seen();
      EXPECT_TRUE(std::any_of(seen.begin(), seen.end(), restarted) || to_target.find(restarted, kArrivalMs))
          << "no restarted request carries the RTR's tokens " << *mine << "/" << *theirs;
    }
  }
};

TEST_P(Rendezvous, LargeSendFromAReadableRegionGoesAsRendezvous) {
  covers({"2.2.5.4.1.2-b", "2.2.5.4.1.2-d", "2.2.5.4.1.2-e", "2.2.10.4-i"});
  RendezvousSend(false);
}

TEST_P(Rendezvous, LargeTaggedSendFromAReadableRegionGoesAsRendezvous) {
  covers({"2.2.5.4.1.2-b", "2.2.5.4.2.2-b", "2.2.5.4.2.2-c", "2.2.10.4-i"});
  RendezvousSend(true);
}

TEST_P(Rendezvous, LargeSendIsDeferrableAndRestartsWithItsTokens) {
  covers({"2.2.5.4.1.2-a", "2.2.5.4.1.2-c", "2.2.10.4-g", "2.2.10.4-h"});
  DeferrableSend(false);
}

TEST_P(Rendezvous, LargeTaggedSendIsDeferrableAndRestartsWithItsTokens) {
  covers({"2.2.5.4.1.2-a", "2.2.5.4.2.2-a", "2.2.10.4-g", "2.2.10.4-h"});
  DeferrableSend(true);
}

UET_INSTANTIATE_TWO_SIDED_RDM(Rendezvous);

}  // namespace
}  // namespace uet::cases
