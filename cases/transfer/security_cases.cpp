// Security bindings and key updates between two processes (UEC 1.0 §2.2.9, §2.2.4.1, §2.2.10.2). Each side's
// JobID is granted to its process by its privileged entity with a secure domain bound to it (manifest
// privileged_entity.security), and the domain's key is set in the entity first. A provider that implements
// security seals the packets of that JobID in the secure domain: the suite opens what it captured with the
// key it gave (choices tss-layout and tss-crypto) and finds the JobID inside. Its FEP asks its entity for the
// key (the trace shows the request and the answer), and when the key changes, the next packets are under
// the new key and epoch.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "area_traits.hpp"
#include "capture.hpp"
#include "entity_grants.hpp"
#include "uet/codec/decoded.hpp"
#include "uet/entity/hex.hpp"
#include "uet/tss/seal.hpp"
#include "uet/wire/wire_gen.hpp"

// What the harness must know of this area (common/claims/area_traits.hpp).
UET_AREA_TRAITS(.processes = 2, .entity = true, .weight = 1.2);

namespace uet::cases {
namespace {

namespace w = uet::wire;
using w::Field;

constexpr uint32_t kSecureJob = 0x5E0121;
constexpr uint32_t kSdi = 0x00ABCD;
// Two keys of the secure domain.
const std::string kKey1 = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
const std::string kKey2 = "f0e1d2c3b4a5968778695a4b3c2d1e0f00112233445566778899aabbccddeeff";
// Each key a case sets gets an epoch no case used before: a FEP keeps the domain's keys by epoch from one case
// to the next and seals under the newest, so a case that went back to an epoch another had passed would not be
// setting the key in use (the cases held only in the binary's own order).
uint16_t NewEpoch() {
  static uint16_t next = 1;
  return next++;
}

class Security : public EntityGrants {
 protected:
  void SetUp() override {
    EntityGrants::SetUp();
    if (IsSkipped()) return;
    UET_NOT_APPLICABLE_IF(manifest().privileged_entity.security.bind.empty() ||
                              target_manifest().privileged_entity.security.bind.empty(), reason::kManifestLacksHook,
                          "a side's manifest declares no privileged_entity.security: the suite cannot bind a secure "
                          "domain to a JobID or give its key");
  }
  // Secure domain kSdi's key is `key` with `epoch` at each side's entity (once when both sides share one).
  void SetKey(const std::string& key, uint16_t epoch) {
    const std::map<std::string, std::string> values{
        {"sdi", std::to_string(kSdi)}, {"key", key}, {"epoch", std::to_string(epoch)}, {"job", std::to_string(kSecureJob)}};
    std::set<std::string> done;
    for (const Manifest* side : {&manifest(), &target_manifest()}) {
      const auto& cmd = side->privileged_entity.security.key_update;
      if (!done.insert(joined(cmd)).second) continue;
      std::string out;
      ASSERT_EQ(run_command(cmd, values, &out), 0) << "the key update command failed: " << joined(cmd) << ": " << out;
    }
  }
  static Granting Binding() {
    return {[](const Manifest& m) -> const std::vector<std::string>& { return m.privileged_entity.security.bind; },
            {{"sdi", std::to_string(kSdi)}}};
  }
  uint16_t first_epoch_ = 0;
  // Both sides open with kSecureJob, kSdi bound to it, under kKey1 of a new epoch (first_epoch_).
  void OpenSecure() {
    first_epoch_ = NewEpoch();
    ASSERT_NO_FATAL_FAILURE(SetKey(kKey1, first_epoch_));
    ASSERT_NO_FATAL_FAILURE(Open(Placement::two_nodes, {kSecureJob}, kSecureJob, FI_MSG, Binding(), Binding()));
  }
  // A message from this side to the target arrives, and the request that carried it was sealed in kSdi under
  // `key` of `epoch`, with kSecureJob inside.
  void ExpectSealedMessage(const std::string& key, uint16_t epoch) {
    Capture cap;
    ASSERT_TRUE(cap.start(Capture::Toward::target)) << cap.error();
    ASSERT_EQ(target.post_recv(1, 64), 0) << target.error();
    const Outcome o = Send("sealed");
    ASSERT_EQ(o.state, Outcome::completed) << "err " << o.error.err << ", prov_errno " << o.error.prov_errno;
    EXPECT_EQ(target.completion(1, kArrivalMs).state, RecvResult::completed) << target.error();
    const auto first = cap.find([epoch](const WireFrame& f) { return f.get(Field::uet_tss_epoch) == epoch; });
    if (!first) {
      size_t sealed = 0;
      for (const WireFrame& f : cap.seen()) sealed += f.get(Field::uet_tss_sdi).has_value();
      FAIL() << "no packet under epoch " << epoch << " of secure domain " << kSdi << ": of " << cap.seen().size()
             << " UET frames, " << sealed << " had a TSS header (a JobID with a security binding must travel "
             << "sealed, under the key in force) " << per_choice("tss-layout");
    }
    const auto k = *uet::entity::unhex(key);
    bool request_seen = false;
    for (const WireFrame& f : cap.seen()) {
      if (f.get(Field::uet_tss_epoch) != epoch) continue;
      EXPECT_EQ(f.get(Field::uet_tss_sdi), kSdi) << "the TSS header names another secure domain than the binding's";
      std::string why;
      const auto plain = uet::tss::open(f.sealed, k, {f.src_ip, f.dst_ip}, nullptr, &why);
      ASSERT_TRUE(plain) << "a packet under epoch " << epoch << " does not open under that epoch's key: " << why << " "
                         << per_choice("tss-crypto");
      codec::Decoded d;
      const auto n = static_cast<uint32_t>(plain->size());
      codec::decode(plain->data(), n, n, w::Node::uet, codec::DecodeOptions{}, d);
      EXPECT_EQ(d.status(), codec::Status::uet) << "the packet inside a sealed frame is not clean UET";
      if (d.get(Field::uet_ses_opcode)) {
        request_seen = true;
        EXPECT_EQ(d.get(Field::uet_ses_job_id), kSecureJob) << "the sealed request carries another JobID";
      }
    }
    EXPECT_TRUE(request_seen) << "no sealed SES request toward the target under epoch " << epoch;
  }
};

// Packets of a JobID with a security binding are sealed in its secure domain (2.2.9-a): the binding given
// with the map (2.2.4.1-d) selects the TSS fields (2.2.10.2-a).
TEST_P(Security, PacketsOfABoundJobIdAreSealedInItsSecureDomain) {
  covers({"2.2.9-a", "2.2.4.1-d", "2.2.10.2-a"});
  ASSERT_NO_FATAL_FAILURE(OpenSecure());
  if (IsSkipped()) return;
  ExpectSealedMessage(kKey1, first_epoch_);
}

// The FEP asks its entity for the secure domain's key (2.2.9-d) with the domain's index (2.2.9-h), and the
// entity answers with the key's parameters (2.2.9-e), in the messages of spec/control.yaml (2.2.9-i).
TEST_P(Security, TheFepAsksItsEntityForTheKey) {
  covers({"2.2.9-d", "2.2.9-e", "2.2.9-h", "2.2.9-i"});
  UET_NOT_APPLICABLE_IF(manifest().privileged_entity.trace.empty(), reason::kManifestLacksHook,
                        "the provider's entity keeps no trace of the Control API (privileged_entity.trace): its key "
                        "requests cannot be seen");
  const size_t before = control_trace(manifest().privileged_entity.trace).size();
  ASSERT_NO_FATAL_FAILURE(OpenSecure());
  if (IsSkipped()) return;
  const auto trace = control_trace(manifest().privileged_entity.trace);
  bool asked = false;
  for (size_t i = before; i < trace.size(); ++i) {
    const auto& r = trace[i];
    if (r.value("pid", 0) != getpid() || r.value("cmd", std::string()) != "KEY_REQUEST") continue;
    asked = true;
    const auto attrs = r.value("attrs", nlohmann::json::object());
    ASSERT_TRUE(attrs.contains("sdi")) << "a key-update request without the secure domain's index: " << r.dump()
                                       << " " << per_choice("control-api-table");
    EXPECT_EQ(attrs["sdi"], kSdi);
    ASSERT_EQ(r["replies"].size(), 1u) << "the entity did not answer the key-update request: " << r.dump();
    const auto& reply = r["replies"][0];
    ASSERT_TRUE(reply.contains("attrs")) << "the entity refused the key-update request: " << reply.dump();
    for (const char* field : {"sdi", "key", "epoch"})
      EXPECT_TRUE(reply["attrs"].contains(field)) << "the key-update parameters lack " << field << ": " << reply.dump();
  }
  EXPECT_TRUE(asked) << "the FEP opened an endpoint whose JobID has a security binding without asking its entity "
                     << "for the secure domain's key";
}

// A key update the entity sends unasked is taken (2.2.9-f) and programmed (2.2.9-g): the next packets are
// sealed under the new key and epoch (2.2.9-b, 2.2.9-c).
TEST_P(Security, AKeyUpdateSealsTheNextPacketsUnderTheNewKey) {
  covers({"2.2.9-b", "2.2.9-c", "2.2.9-f", "2.2.9-g"});
  ASSERT_NO_FATAL_FAILURE(OpenSecure());
  if (IsSkipped()) return;
  ASSERT_NO_FATAL_FAILURE(ExpectSealedMessage(kKey1, first_epoch_));
  const uint16_t next_epoch = NewEpoch();
  ASSERT_NO_FATAL_FAILURE(SetKey(kKey2, next_epoch));
  ExpectSealedMessage(kKey2, next_epoch);
}

UET_INSTANTIATE_TWO_SIDED_RDM(Security);

}  // namespace
}  // namespace uet::cases
