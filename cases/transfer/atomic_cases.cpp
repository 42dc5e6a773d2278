// fi_atomic between two processes (UEC 1.0 §2.2.5.4.4): the *valid calls, bulk non-fetching, one-element
// fetching and compare-swap atomics give the right values at both ends; the atomic opcode and datatype
// on the wire are those of Table 2-26 for every operation the provider reports valid, and atomics take
// the SES header a write in their place takes (§2.2.10.4).
#include <rdma/fi_atomic.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "area_traits.hpp"
#include "capture.hpp"
#include "two_sided.hpp"
#include "uet/wire/libfabric_gen.hpp"
#include "uet/wire/wire_gen.hpp"

// What the harness must know of this area (common/claims/area_traits.hpp).
UET_AREA_TRAITS(.processes = 2, .weight = 3.5);

namespace uet::cases {
namespace {

namespace w = uet::wire;

std::vector<uint8_t> bytes_of(const std::vector<uint64_t>& v) {
  std::vector<uint8_t> b(v.size() * 8);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

class Atomic : public TwoSided {
 protected:
  void SetUp() override {
    UET_REQUIRE_PAIR_CLAIMS_KIND();
  }
  // Target MR 1 holding `values` (uint64).
  void Holding(const std::vector<uint64_t>& values, RemoteMr* mr) {
    ASSERT_TRUE(target.register_mr(1, values.size() * 8, 0, "any", mr)) << target.error();
    ASSERT_TRUE(target.write_mr(1, 0, bytes_of(values))) << target.error();
  }
  std::vector<uint8_t> TargetValues(size_t n) { return target.read_mr(1, 0, n * 8); }
  // A provider says which atomics it does through the valid queries (2.2.2-d; which a profile needs is
  // MISSING, digest A): one the initiator's query reports it does not do makes the case not applicable,
  // naming it; one it reports and then refuses is its own failure (DomainObjects::post).
  void RequireInitiatorOffers(int valid_rc, const char* what) {
    UET_NOT_APPLICABLE_IF(valid_rc == -FI_EOPNOTSUPP || valid_rc == -FI_ENOSYS, reason::kNotClaimedFeature,
                          "the initiator, " << manifest().name << ", does not offer " << what << ": its valid query returned "
                                            << fi_err(valid_rc));
  }
  void RequireFetchingSum() {
    size_t count = 0;
    RequireInitiatorOffers(fi_fetch_atomicvalid(me.ep, FI_UINT64, FI_SUM, &count), "fetching FI_SUM on FI_UINT64");
  }
  void RequireCompareSwap() {
    size_t count = 0;
    RequireInitiatorOffers(fi_compare_atomicvalid(me.ep, FI_UINT64, FI_CSWAP, &count), "FI_CSWAP on FI_UINT64");
  }
};

TEST_P(Atomic, ValidCallsReportUint64Operations) {
  covers({"2.2.5.4.4-b", "2.2.5.4.4-c", "2.2.2-d"});
  UET_OPEN_BOTH(Spec(FI_MSG | FI_ATOMIC));
  size_t count = 0;
  ASSERT_EQ(fi_atomicvalid(me.ep, FI_UINT64, FI_SUM, &count), 0);
  EXPECT_GE(count, 2u) << "bulk non-fetching atomics take more than one element";
  // Fetching and compare atomics are the provider's to offer (2.2.2-d); where offered, one element (-c).
  const int fetching = fi_fetch_atomicvalid(me.ep, FI_UINT64, FI_SUM, &count);
  if (fetching != -FI_EOPNOTSUPP) {
    ASSERT_EQ(fetching, 0);
    if (manifest().uet) {
      EXPECT_EQ(count, 1u) << "fetching atomics are limited to one element";
    }
  }
  const int compare = fi_compare_atomicvalid(me.ep, FI_UINT64, FI_CSWAP, &count);
  if (compare != -FI_EOPNOTSUPP) {
    ASSERT_EQ(compare, 0);
    EXPECT_GE(count, 1u);
  }
}

TEST_P(Atomic, BulkSumAddsEveryElement) {
  covers({"2.2.5.4.4-b", "2.2.5.4.4-d"});
  UET_OPEN_BOTH(Spec(FI_MSG | FI_ATOMIC));
  RemoteMr mr;
  ASSERT_NO_FATAL_FAILURE(Holding({1, 2, 3, 4}, &mr));
  Capture cap;
  const bool wire = manifest().uet && cap.start();
  const uint64_t add[4] = {10, 20, 30, 40};
  int ctx = 0;
  ASSERT_EQ(me.post([&] { return fi_atomic(me.ep, add, 4, nullptr, dest, mr.base, mr.key, FI_UINT64, FI_SUM, &ctx); }), 0);
  const Outcome o = me.wait(&ctx);
  ASSERT_EQ(o.state, Outcome::completed) << "err " << o.error.err << ", prov_errno " << o.error.prov_errno;
  EXPECT_EQ(TargetValues(4), bytes_of({11, 22, 33, 44}));
  if (manifest().uet) {
    ASSERT_TRUE(wire) << cap.error();
    const auto f = cap.find([](const WireFrame& f) { return is_request(f); });
    ASSERT_TRUE(f) << "no SES request captured";
    EXPECT_EQ(f->get(w::Field::uet_ses_opcode), w::ses_request_opcode::UET_ATOMIC);
    EXPECT_EQ(f->get(w::Field::uet_ses_atomic_opcode), *w::libfabric::amo_opcode_of(FI_SUM));
    EXPECT_EQ(f->get(w::Field::uet_ses_atomic_datatype), *w::libfabric::amo_datatype_of(FI_UINT64));
  }
}

TEST_P(Atomic, FetchingSumReturnsTheOldValue) {
  covers({"2.2.5.4.4-c", "2.2.5.4.4-d"});
  UET_OPEN_BOTH(Spec(FI_MSG | FI_ATOMIC));
  RequireFetchingSum();
  if (IsSkipped()) return;
  RemoteMr mr;
  ASSERT_NO_FATAL_FAILURE(Holding({40, 7}, &mr));
  uint64_t add = 2, old = 0;
  int ctx = 0;
  ASSERT_EQ(me.post([&] { return fi_fetch_atomic(me.ep, &add, 1, nullptr, &old, nullptr, dest, mr.base, mr.key, FI_UINT64, FI_SUM, &ctx); }), 0);
  ASSERT_EQ(me.wait(&ctx).state, Outcome::completed);
  EXPECT_EQ(old, 40u);
  EXPECT_EQ(TargetValues(2), bytes_of({42, 7})) << "only the one element changes";
}

TEST_P(Atomic, CompareSwapSwapsOnlyOnEquality) {
  covers({"2.2.5.4.4-c", "2.2.5.4.4-d"});
  UET_OPEN_BOTH(Spec(FI_MSG | FI_ATOMIC));
  RequireCompareSwap();
  if (IsSkipped()) return;
  RemoteMr mr;
  ASSERT_NO_FATAL_FAILURE(Holding({7, 8}, &mr));
  uint64_t compare = 7, swap = 99, old = 0;
  int c1 = 0, c2 = 0;
  ASSERT_EQ(me.post([&] { return fi_compare_atomic(me.ep, &swap, 1, nullptr, &compare, nullptr, &old, nullptr, dest, mr.base, mr.key,
                              FI_UINT64, FI_CSWAP, &c1); }), 0);
  ASSERT_EQ(me.wait(&c1).state, Outcome::completed);
  EXPECT_EQ(old, 7u);
  // The second element (8) differs from compare (7): it keeps its value.
  ASSERT_EQ(me.post([&] { return fi_compare_atomic(me.ep, &swap, 1, nullptr, &compare, nullptr, &old, nullptr, dest, mr.base + 8, mr.key,
                              FI_UINT64, FI_CSWAP, &c2); }), 0);
  ASSERT_EQ(me.wait(&c2).state, Outcome::completed);
  EXPECT_EQ(old, 8u);
  EXPECT_EQ(TargetValues(2), bytes_of({99, 8}));
}

UET_INSTANTIATE_TWO_SIDED_RDM(Atomic);

// ---- What the wire shows of atomics: the SES header they take and their extension header
// (2.2.10.4-b/e/j/k). UET statements, so UET providers only.

// The captured request of one operation.
struct Sent {
  std::string op;
  WireFrame frame;
};

class AtomicWire : public Atomic {
 protected:
  // One fi_write of 8 bytes and one of each atomic family (fi_atomic, fi_fetch_atomic, fi_compare_atomic;
  // FI_UINT64, one element) to MR `id` (`mr`, at least 32 bytes of zeros), each completed, with the
  // request each sent. The write comes first: the atomics' headers are compared with its header.
  void WriteAndEachAtomic(int id, const RemoteMr& mr, std::vector<Sent>* out) {
    RequireFetchingSum();
    RequireCompareSwap();
    if (IsSkipped()) return;
    Capture cap;
    ASSERT_TRUE(cap.start()) << cap.error();
    namespace op = w::ses_request_opcode;
    const uint64_t written = 0x3C3C3C3C3C3C3C3Cull, add = 5, fetch_add = 7, compare = 0, swap = 9;
    uint64_t old_fetch = ~0ull, old_cas = ~0ull;
    std::set<uint64_t> psns;  // requests already matched (a retransmission repeats its PSN)
    const auto run = [&](const std::string& name, uint64_t opcode, const std::function<ssize_t(void*)>& call) {
      int ctx = 0;
      ASSERT_EQ(me.post([&] { return call(&ctx); }), 0) << name;
      const Outcome o = me.wait(&ctx);
      ASSERT_EQ(o.state, Outcome::completed) << name << ": err " << o.error.err << ", prov_errno " << o.error.prov_errno;
      const auto f = cap.find([&](const WireFrame& f) {
        return f.get(w::Field::uet_ses_opcode) == opcode && !psns.count(f.get(w::Field::uet_pds_psn).value_or(~0ull));
      });
      ASSERT_TRUE(f) << "no request of " << name << " captured";
      if (const auto psn = f->get(w::Field::uet_pds_psn)) psns.insert(*psn);
      out->push_back({name, *f});
    };
    ASSERT_NO_FATAL_FAILURE(run("fi_write of 8 bytes", op::UET_WRITE, [&](void* c) {
      return fi_write(me.ep, &written, 8, nullptr, dest, mr.base, mr.key, c);
    }));
    ASSERT_NO_FATAL_FAILURE(run("fi_atomic FI_SUM", op::UET_ATOMIC, [&](void* c) {
      return fi_atomic(me.ep, &add, 1, nullptr, dest, mr.base + 8, mr.key, FI_UINT64, FI_SUM, c);
    }));
    ASSERT_NO_FATAL_FAILURE(run("fi_fetch_atomic FI_SUM", op::UET_FETCHING_ATOMIC, [&](void* c) {
      return fi_fetch_atomic(me.ep, &fetch_add, 1, nullptr, &old_fetch, nullptr, dest, mr.base + 16, mr.key, FI_UINT64, FI_SUM, c);
    }));
    ASSERT_NO_FATAL_FAILURE(run("fi_compare_atomic FI_CSWAP", op::UET_FETCHING_ATOMIC, [&](void* c) {
      return fi_compare_atomic(me.ep, &swap, 1, nullptr, &compare, nullptr, &old_cas, nullptr, dest, mr.base + 24, mr.key,
                               FI_UINT64, FI_CSWAP, c);
    }));
    EXPECT_EQ(old_fetch, 0u);
    EXPECT_EQ(old_cas, 0u);
    EXPECT_EQ(target.read_mr(id, 0, 32), bytes_of({written, add, fetch_add, swap})) << "the target's MR after the four operations";
  }

  // 2.2.10.4-j: the atomic extension header follows the standard, small RMA or optimized header and
  // carries ses.atomic_opcode and ses.atomic_datatype, those of the call (Table 2-26, spec/wire.yaml
  // libfabric tables). Breaks with knobs wrong_amo_opcode and wrong_amo_datatype.
  static void ExpectAtomicExtension(const Sent& s, fi_op op, fi_datatype dt) {
    const auto next = s.frame.get(w::Field::uet_pds_next_hdr);
    EXPECT_TRUE(next == w::pds_next_hdr::UET_HDR_REQUEST_STD || next == w::pds_next_hdr::UET_HDR_REQUEST_MEDIUM ||
                next == w::pds_next_hdr::UET_HDR_REQUEST_SMALL)
        << s.op << ": the atomic extension follows the standard or an optimized header; next_hdr " << next.value_or(~0ull);
    ASSERT_TRUE(s.frame.get(w::Field::uet_ses_atomic_opcode)) << s.op << ": no atomic extension header";
    EXPECT_EQ(s.frame.get(w::Field::uet_ses_atomic_opcode), *w::libfabric::amo_opcode_of(op)) << s.op << ": ses.atomic_opcode";
    EXPECT_EQ(s.frame.get(w::Field::uet_ses_atomic_datatype), *w::libfabric::amo_datatype_of(dt)) << s.op << ": ses.atomic_datatype";
  }
  static void ExpectExtensions(const std::vector<Sent>& sent) {
    ASSERT_EQ(sent.size(), 4u);
    ExpectAtomicExtension(sent[1], FI_SUM, FI_UINT64);
    ExpectAtomicExtension(sent[2], FI_SUM, FI_UINT64);
    ExpectAtomicExtension(sent[3], FI_CSWAP, FI_UINT64);
  }
};

// A one-packet atomic to a plain key (no remote CQ data) meets the small RMA criteria as a one-packet
// write does (choice small-rma-criteria), and atomics follow the RMA criteria (2.2.10.4-e, a MUST): each
// atomic takes the header the write took; that header SHOULD be the small RMA header (2.2.10.4-f). A bulk
// atomic of several packets meets neither criteria and takes the standard header, as a write of several
// packets does (2.2.5.3.4.1-l). Knob std_header_for_small_rma turns the SHOULD into a warning (it moves
// writes and atomics alike, so the MUST holds); wrong_amo_opcode and wrong_amo_datatype break 2.2.10.4-j.
TEST_P(AtomicWire, AtomicsTakeTheHeaderOfAWriteToTheSameKey) {
  covers({"2.2.10.4-e", "2.2.10.4-j"});
  UET_REQUIRE_UET_PROVIDER();
  rests_on_choice("small-rma-criteria");
  UET_OPEN_BOTH(Spec(FI_MSG | FI_RMA | FI_ATOMIC));
  constexpr size_t kBulk = 1024;  // uint64 elements: 8 KiB, more than one payload MTU
  RemoteMr mr;
  ASSERT_TRUE(target.register_mr(1, 64 + kBulk * 8, 0, "any", &mr)) << target.error();
  std::vector<Sent> sent;
  ASSERT_NO_FATAL_FAILURE(WriteAndEachAtomic(1, mr, &sent));
  if (IsSkipped()) return;
  const auto write_hdr = sent[0].frame.get(w::Field::uet_pds_next_hdr);
  for (size_t i = 1; i < sent.size(); ++i)
    EXPECT_EQ(sent[i].frame.get(w::Field::uet_pds_next_hdr), write_hdr)
        << sent[i].op << " to a plain key takes another SES header than a one-packet fi_write to it (next_hdr)";
  should(write_hdr == w::pds_next_hdr::UET_HDR_REQUEST_MEDIUM,
         std::string("one-packet RMA and atomics to a plain key use the small RMA header ") + per_choice("small-rma-criteria"));
  ASSERT_NO_FATAL_FAILURE(ExpectExtensions(sent));

  size_t count = 0;
  ASSERT_EQ(fi_atomicvalid(me.ep, FI_UINT64, FI_SUM, &count), 0);
  if (count < kBulk) {
    RecordProperty("bulk", "not checked: fi_atomicvalid allows " + std::to_string(count) + " elements");
    return;
  }
  Capture cap;
  ASSERT_TRUE(cap.start()) << cap.error();
  const std::vector<uint8_t> ones(kBulk * 8, 0x01);
  const std::vector<uint64_t> add(kBulk, 1);
  int c1 = 0, c2 = 0;
  ASSERT_EQ(me.post([&] { return fi_write(me.ep, ones.data(), ones.size(), nullptr, dest, mr.base + 64, mr.key, &c1); }), 0);
  ASSERT_EQ(me.wait(&c1).state, Outcome::completed);
  const auto write = cap.find([](const WireFrame& f) {
    return f.get(w::Field::uet_ses_opcode) == w::ses_request_opcode::UET_WRITE && f.get(w::Field::uet_ses_som) == 1u;
  });
  ASSERT_TRUE(write) << "no first packet of the 8 KiB fi_write captured";
  ASSERT_EQ(me.post([&] { return fi_atomic(me.ep, add.data(), add.size(), nullptr, dest, mr.base + 64, mr.key, FI_UINT64, FI_SUM, &c2); }), 0);
  const Outcome o = me.wait(&c2);
  ASSERT_EQ(o.state, Outcome::completed) << "err " << o.error.err << ", prov_errno " << o.error.prov_errno;
  const auto bulk = cap.find([](const WireFrame& f) {
    return f.get(w::Field::uet_ses_opcode) == w::ses_request_opcode::UET_ATOMIC && f.get(w::Field::uet_ses_som) == 1u;
  });
  ASSERT_TRUE(bulk) << "no first packet of the " << kBulk << "-element fi_atomic captured";
  EXPECT_EQ(write->get(w::Field::uet_pds_next_hdr), w::pds_next_hdr::UET_HDR_REQUEST_STD) << "an fi_write of several packets";
  EXPECT_EQ(bulk->get(w::Field::uet_pds_next_hdr), w::pds_next_hdr::UET_HDR_REQUEST_STD)
      << "an atomic of several packets meets neither the small RMA nor the optimized criteria: the standard header";
  ASSERT_NO_FATAL_FAILURE(ExpectAtomicExtension({"the bulk fi_atomic", *bulk}, FI_SUM, FI_UINT64));
  std::vector<uint64_t> want(kBulk, 0x0101010101010102ull);
  EXPECT_EQ(target.read_mr(1, 64, kBulk * 8), bytes_of(want)) << "every element of the bulk atomic";
}

// A one-packet atomic to an OPTIMIZED key of a FEP that takes the optimized header meets the optimized
// non-matching criteria as a one-packet write does (choice optimized-header-criteria), and atomics follow
// the RMA criteria (2.2.10.4-b, a MUST): each atomic takes the write's header; it SHOULD be the optimized
// one (2.2.10.4-c), and then the RKEY/INDEX is in ses.resource_index. Knob no_optimized_header turns the
// SHOULD into a warning (writes and atomics alike); wrong_amo_opcode and wrong_amo_datatype break 2.2.10.4-j.
TEST_P(AtomicWire, AtomicsToAnOptimizedKeyTakeTheHeaderOfAWrite) {
  covers({"2.2.10.4-b", "2.2.10.4-j"});
  UET_REQUIRE_UET_PROVIDER();
  rests_on_choice("optimized-header-criteria");
  UET_OPEN_BOTH(Spec(FI_MSG | FI_RMA | FI_ATOMIC));
  RemoteMr mr;
  ASSERT_TRUE(target.register_mr(5, 64, 0, "optimized+any", &mr)) << target.error();
  constexpr uint64_t kOptimized = uint64_t{1} << w::k_mr_key_optimized_bit;
  UET_NOT_APPLICABLE_IF(!(mr.key & kOptimized), reason::kNotObservable, "the target's key is not OPTIMIZED (a SHOULD of 2.2.5.3.4.1-o, checked there)");
  const std::vector<uint8_t> name = target.name();
  const auto caps = layout_of(target_manifest()).get(name, AddrField::caps);
  ASSERT_TRUE(caps) << "the target's fi_getname: " << layout_of(target_manifest()).misfit(name.size());
  UET_NOT_APPLICABLE_IF(!(*caps & (1u << w::k_cap_optimized_header)), reason::kNotObservable,
                        "the target FEP does not take the optimized header (address capability bit 7)");
  std::vector<Sent> sent;
  ASSERT_NO_FATAL_FAILURE(WriteAndEachAtomic(5, mr, &sent));
  if (IsSkipped()) return;
  const auto write_hdr = sent[0].frame.get(w::Field::uet_pds_next_hdr);
  for (size_t i = 1; i < sent.size(); ++i)
    EXPECT_EQ(sent[i].frame.get(w::Field::uet_pds_next_hdr), write_hdr)
        << sent[i].op << " to an OPTIMIZED key takes another SES header than a one-packet fi_write to it (next_hdr)";
  should(write_hdr == w::pds_next_hdr::UET_HDR_REQUEST_SMALL,
         std::string("one-packet RMA and atomics to an OPTIMIZED key use the optimized non-matching header ") + per_choice("optimized-header-criteria"));
  for (const Sent& s : sent) {
    if (s.frame.get(w::Field::uet_pds_next_hdr) == w::pds_next_hdr::UET_HDR_REQUEST_SMALL) {
      EXPECT_EQ(s.frame.get(w::Field::uet_ses_resource_index), mr.key & w::k_mr_key_optimized_rkey_mask)
          << s.op << ": the RKEY/INDEX in ses.resource_index (2.2.5.3.4.1-j)";
    }
  }
  ASSERT_NO_FATAL_FAILURE(ExpectExtensions(sent));
}

// Every atomic operation and datatype the provider reports valid (fi_atomicvalid, fi_fetch_atomicvalid,
// fi_compare_atomicvalid) travels with the SES mnemonics Table 2-26 maps it to (spec/wire.yaml
// `libfabric:` atomic_op and atomic_datatype): UET_ATOMIC for fi_atomic, UET_FETCHING_ATOMIC for the
// fetching and compare calls, and ses.atomic_opcode/atomic_datatype of the call. One that has no SES
// mnemonic (FI_FLOAT8_*) must not be valid. Breaks with knobs wrong_amo_opcode and wrong_amo_datatype.
TEST_P(AtomicWire, EveryValidOperationMapsToItsSesMnemonics) {
  covers({"2.2.10.4-k"});
  UET_REQUIRE_UET_PROVIDER();
  UET_OPEN_BOTH(Spec(FI_MSG | FI_ATOMIC));
  RemoteMr mr;
  ASSERT_TRUE(target.register_mr(1, 64, 0, "any", &mr)) << target.error();
  Capture cap;
  ASSERT_TRUE(cap.start()) << cap.error();
  enum Family { plain, fetching, compare };
  const char* const family_name[] = {"fi_atomic", "fi_fetch_atomic", "fi_compare_atomic"};
  alignas(16) uint8_t operand[32] = {}, comparand[32] = {}, result[32] = {};
  std::set<uint64_t> psns;  // requests already matched to an operation (a retransmission repeats its PSN)
  std::vector<std::string> mismatches;
  int issued = 0, missing = 0;
  // Every fi_op and fi_datatype value this libfabric defines (and a margin), whatever their names.
  // Three operations that did not complete or sent no request end the sweep (the rest would only wait
  // out their deadlines too, past the case's).
  for (int dt_value = 0; dt_value < 32 && missing < 3; ++dt_value) {
    for (int op_value = 0; op_value < 32 && missing < 3; ++op_value) {
      const auto dt = static_cast<fi_datatype>(dt_value);
      const auto op = static_cast<fi_op>(op_value);
      for (Family family : {plain, fetching, compare}) {
        if (missing >= 3) break;
        size_t count = 0;
        const int valid = family == plain      ? fi_atomicvalid(me.ep, dt, op, &count)
                          : family == fetching ? fi_fetch_atomicvalid(me.ep, dt, op, &count)
                                               : fi_compare_atomicvalid(me.ep, dt, op, &count);
        if (valid != 0 || count == 0) continue;
        // fi_tostr returns one buffer: one call per statement.
        std::string what = std::string(family_name[family]) + " ";
        what += fi_tostr(&op, FI_TYPE_ATOMIC_OP);
        what += " ";
        what += fi_tostr(&dt, FI_TYPE_ATOMIC_TYPE);
        const auto want_op = w::libfabric::amo_opcode_of(op);
        const auto want_dt = w::libfabric::amo_datatype_of(dt);
        if (!want_op || !want_dt) {
          mismatches.push_back(what + ": reported valid, but Table 2-26 has no SES mnemonic for it");
          continue;
        }
        int ctx = 0;
        const ssize_t rc = me.post([&]() -> ssize_t {
          switch (family) {
            case plain: return fi_atomic(me.ep, operand, 1, nullptr, dest, mr.base, mr.key, dt, op, &ctx);
            case fetching:
              return fi_fetch_atomic(me.ep, operand, 1, nullptr, result, nullptr, dest, mr.base, mr.key, dt, op, &ctx);
            case compare:
              return fi_compare_atomic(me.ep, operand, 1, nullptr, comparand, nullptr, result, nullptr, dest, mr.base,
                                       mr.key, dt, op, &ctx);
          }
          return -FI_EINVAL;
        });
        if (rc != 0) {
          mismatches.push_back(what + ": reported valid, but the call returned " + fi_err(rc));
          continue;
        }
        ++issued;
        const Outcome o = me.wait(&ctx);
        if (o.state != Outcome::completed) {
          mismatches.push_back(what + (o.state == Outcome::failed ? ": failed (err " + std::to_string(o.error.err) +
                                                                          ", prov_errno " + std::to_string(o.error.prov_errno) + ")"
                                                                    : std::string(": no completion within the deadline")));
          ++missing;
        }
        const auto f = cap.find([&](const WireFrame& f) {
          const auto opcode = f.get(w::Field::uet_ses_opcode);
          return (opcode == w::ses_request_opcode::UET_ATOMIC || opcode == w::ses_request_opcode::UET_FETCHING_ATOMIC) &&
                 !psns.count(f.get(w::Field::uet_pds_psn).value_or(~0ull));
        });
        if (!f) {
          ++missing;
          mismatches.push_back(what + ": no request captured");
          continue;
        }
        if (const auto psn = f->get(w::Field::uet_pds_psn)) psns.insert(*psn);
        const uint64_t want_opcode =
            family == plain ? w::ses_request_opcode::UET_ATOMIC : w::ses_request_opcode::UET_FETCHING_ATOMIC;
        const auto got_opcode = f->get(w::Field::uet_ses_opcode);
        const auto got_op = f->get(w::Field::uet_ses_atomic_opcode);
        const auto got_dt = f->get(w::Field::uet_ses_atomic_datatype);
        if (got_opcode != want_opcode || got_op != *want_op || got_dt != *want_dt) {
          char line[256];
          std::snprintf(line, sizeof line, ": ses.opcode 0x%llx atomic_opcode 0x%llx atomic_datatype 0x%llx, want 0x%llx 0x%x 0x%x",
                        static_cast<unsigned long long>(got_opcode.value_or(~0ull)),
                        static_cast<unsigned long long>(got_op.value_or(~0ull)),
                        static_cast<unsigned long long>(got_dt.value_or(~0ull)), static_cast<unsigned long long>(want_opcode),
                        static_cast<unsigned>(*want_op), static_cast<unsigned>(*want_dt));
          mismatches.push_back(what + line);
        }
      }
    }
  }
  RecordProperty("operations_checked", issued);
  ASSERT_GT(issued, 0) << "the endpoint has FI_ATOMIC but reports no atomic operation valid";
  if (missing >= 3) mismatches.push_back("(the sweep stopped: three operations did not complete or sent no request)");
  std::string first;
  for (size_t i = 0; i < mismatches.size() && i < 12; ++i) first += "\n  " + mismatches[i];
  EXPECT_TRUE(mismatches.empty()) << mismatches.size() << " problems in " << issued << " operations reported valid:" << first;
}

UET_INSTANTIATE_TWO_SIDED_RDM(AtomicWire);

}  // namespace
}  // namespace uet::cases
