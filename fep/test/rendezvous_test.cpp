// Large messages (choices rendezvous-protocol, deferrable-send-protocol): an HPC rendezvous lands whole with
// at most UET_PROVIDER_MAX_EAGER_SIZE eager bytes, small sends and sends without a remote-read MR keep
// UET_SEND, an AI Full deferrable send is delivered once whether its receive comes before or after it
// (the RTR restart), concurrent deferrable sends take distinct initiator tokens, and a FEP without AI Full
// takes a deferrable send as a send. The wire is seen through a UDP socket of the test standing in for the
// peer (fixture FakePeer); the FEP without AI Full is a second domain of this process on its own port.
#include <rdma/fi_tagged.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <thread>

#include "fixture.hpp"
#include "probe_fabric.hpp"
#include "softuet/fi_addr_uet.h"

namespace softuet_test {
namespace {

constexpr unsigned kUetSend = 0x05, kRendezvousSend = 0x06, kDeferrableSend = 0x08, kTaggedSend = 0x09,
                   kRendezvousTsend = 0x0A, kDeferrableTsend = 0x0B;
constexpr size_t kPds = 12;        // RUD request header
constexpr size_t kSesStd = 44;     // standard request header
constexpr size_t kRdvExt = 24;     // rendezvous extension header (choice rendezvous-ext-layout)
constexpr size_t kMaxEager = 2048;  // constants.max_eager_size_default
// The eager bytes a rendezvous request carries at most: they travel in its one packet, so no more than the
// path's payload MTU (smaller than the default on a path of SOFTUET_MTU=1280).
size_t eager_limit() { return std::min(kMaxEager, softuet_payload_mtu()); }
constexpr uint64_t kMrKey = 0xA11;
constexpr uint8_t kAllCaps = softuet::kCapAiBase | softuet::kCapAiFull | softuet::kCapHpc;
constexpr uint8_t kHpcOnly = softuet::kCapAiBase | softuet::kCapHpc;

uint32_t Be32(const std::vector<uint8_t>& f, size_t at) {
  return uint32_t{f[at]} << 24 | uint32_t{f[at + 1]} << 16 | uint32_t{f[at + 2]} << 8 | f[at + 3];
}
unsigned Opcode(const std::vector<uint8_t>& f) { return f.size() > kPds ? f[kPds] & 0x3F : 0; }
bool Som(const std::vector<uint8_t>& f) { return f.size() > kPds + 1 && (f[kPds + 1] & 1); }
constexpr uint8_t kRetx = 0x10;  // uet.pds.flags.retx: byte 1, bit 3 from the top

std::vector<uint8_t> Pattern(size_t len, uint8_t seed) {
  std::vector<uint8_t> v(len);
  for (size_t i = 0; i < len; ++i) v[i] = static_cast<uint8_t>(seed + i * 7 + (i >> 12));
  return v;
}

class SoftuetLarge : public SoftuetApi {
 protected:
  void TearDown() override {
    for (fid_mr* mr : mrs_) EXPECT_EQ(fi_close(&mr->fid), 0);
    SoftuetApi::TearDown();
  }
  // Registers `buf` on endpoint A (the sender), bound and enabled, with `access`; its fi_mr_desc.
  void* RegisterOnA(void* buf, size_t len, uint64_t access, uint64_t key = kMrKey) {
    fid_mr* mr = nullptr;
    const int r = fi_mr_reg(domain_, buf, len, access, 0, key, 0, &mr, nullptr);
    EXPECT_EQ(r, 0) << "fi_mr_reg: " << fi_err(r);
    if (r) return nullptr;
    mrs_.push_back(mr);
    EXPECT_EQ(fi_mr_bind(mr, &ep_[kA]->fid, 0), 0);
    EXPECT_EQ(fi_mr_enable(mr), 0);
    return fi_mr_desc(mr);
  }
  // Sends `data` from A to B (tagged with `tag` when non-zero), with its receive posted before or after.
  void Transfer(const std::vector<uint8_t>& data, void* desc, uint64_t tag, bool recv_first, const void* src = nullptr) {
    std::vector<uint8_t> got(data.size() + 16, 0);
    int send_ctx = 0, recv_ctx = 0;
    auto post = [&] {
      const ssize_t r = tag ? fi_trecv(ep_[kB], got.data(), got.size(), nullptr, FI_ADDR_UNSPEC, tag, 0, &recv_ctx)
                            : fi_recv(ep_[kB], got.data(), got.size(), nullptr, FI_ADDR_UNSPEC, &recv_ctx);
      ASSERT_EQ(r, 0) << fi_err(r);
    };
    if (recv_first) {
      ASSERT_NO_FATAL_FAILURE(post());
    }
    const void* buf = src ? src : data.data();
    const ssize_t s = tag ? fi_tsend(ep_[kA], buf, data.size(), desc, addr_[kB], tag, &send_ctx)
                          : fi_send(ep_[kA], buf, data.size(), desc, addr_[kB], &send_ctx);
    ASSERT_EQ(s, 0) << fi_err(s);
    std::map<void*, fi_cq_data_entry> done;
    if (!recv_first) {
      // The send cannot complete before the message is delivered, and no receive is posted yet.
      fi_cq_data_entry e{};
      const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(150);
      while (std::chrono::steady_clock::now() < until) {
        const ssize_t n = fi_cq_read(cq_, &e, 1);
        ASSERT_NE(n, 1) << "a completion before the receive was posted (context " << e.op_context << ")";
        ASSERT_EQ(n, -FI_EAGAIN);
      }
      ASSERT_NO_FATAL_FAILURE(post());
    }
    ASSERT_NO_FATAL_FAILURE(WaitCompletions({&send_ctx, &recv_ctx}, &done));
    EXPECT_EQ(done[&recv_ctx].len, data.size());
    EXPECT_EQ(done[&send_ctx].len, data.size());
    EXPECT_EQ(done[&recv_ctx].flags & (FI_RECV | FI_TAGGED | FI_MSG), FI_RECV | (tag ? FI_TAGGED : FI_MSG));
    EXPECT_EQ(std::memcmp(got.data(), data.data(), data.size()), 0) << data.size() << " bytes";
    EXPECT_EQ(got[data.size()], 0) << "bytes past the message were written";
  }
  // The first frame of the next message the fake peer receives: continuation packets and retransmissions
  // (the fake peer never ACKs) are skipped.
  std::vector<uint8_t> NextMessage() {
    for (int i = 0; i < 4096; ++i) {
      std::vector<uint8_t> f = Receive();
      if (f.empty()) return f;
      if (Som(f) && !(f[1] & kRetx)) return f;
    }
    return {};
  }
  std::vector<fid_mr*> mrs_;
};

// ---- HPC rendezvous ----

TEST_F(SoftuetLarge, RendezvousSendAndTsendLandWhole) {
  constexpr size_t kMax = size_t{1} << 20;
  std::vector<uint8_t> src(kMax + 100);
  void* desc = RegisterOnA(src.data(), src.size(), FI_SEND | FI_REMOTE_READ);
  ASSERT_NE(desc, nullptr);
  fid_cntr* reads = OpenCntr(FI_CNTR_EVENTS_BYTES);
  ASSERT_EQ(fi_ep_bind(ep_[kA], &reads->fid, FI_REMOTE_READ), 0);
  ASSERT_NO_FATAL_FAILURE(Enable());
  uint64_t read_total = 0;
  uint8_t seed = 1;
  for (const size_t len : {size_t{8192}, size_t{8193}, size_t{20000}, size_t{65536}, kMax}) {
    for (const uint64_t tag : {uint64_t{0}, uint64_t{0x7A6}}) {
      for (const bool recv_first : {true, false}) {
        SCOPED_TRACE(std::to_string(len) + " bytes, tag " + std::to_string(tag) + (recv_first ? ", receive first" : ", receive after"));
        const std::vector<uint8_t> data = Pattern(len, seed++);
        std::memcpy(src.data() + 100, data.data(), len);  // at an offset in the MR: read_offset 100
        ASSERT_NO_FATAL_FAILURE(Transfer(data, desc, tag, recv_first, src.data() + 100));
        // The target read all but the eager bytes, which were at most UET_PROVIDER_MAX_EAGER_SIZE
        // (2.2.5.4.1.2-e, 2.2.5.4.2.2-c): the initiator's remote-read byte counter says how much.
        read_total += len - std::min(len, eager_limit());
        EXPECT_EQ(fi_cntr_read(reads), read_total);
      }
    }
  }
}

TEST_F(SoftuetLarge, RendezvousRequestCarriesAtMostMaxEagerBytes) {
  std::vector<uint8_t> src(40000, 3);
  void* desc = RegisterOnA(src.data(), src.size(), FI_SEND | FI_REMOTE_READ);
  ASSERT_NO_FATAL_FAILURE(Enable());
  const fi_addr_t peer = FakePeer(kAllCaps);
  int ctx[2] = {};
  ASSERT_EQ(fi_send(ep_[kA], src.data() + 8, 20000, desc, peer, &ctx[0]), 0);
  ASSERT_EQ(fi_tsend(ep_[kA], src.data() + 8, 30000, desc, peer, 0x55, &ctx[1]), 0);
  for (const auto& [opcode, len] : {std::pair{kRendezvousSend, 20000u}, std::pair{kRendezvousTsend, 30000u}}) {
    const std::vector<uint8_t> f = NextMessage();
    ASSERT_EQ(Opcode(f), opcode);
    ASSERT_EQ(f.size(), kPds + kSesStd + kRdvExt + eager_limit()) << "one packet: headers and the eager bytes";
    EXPECT_EQ(f[kPds + 1] & 3, 3) << "SOM and EOM";
    EXPECT_EQ(Be32(f, kPds + 40), len) << "request_length is the whole message";
    const size_t ext = kPds + kSesStd;
    EXPECT_EQ(Be32(f, ext), eager_limit()) << "eager_length";
    EXPECT_EQ(Be32(f, ext + 8), 0u);
    EXPECT_EQ(Be32(f, ext + 12), 8u) << "read_offset: the message's offset in the MR";
    EXPECT_EQ(Be32(f, ext + 20), kMrKey) << "read_key";
  }
}

TEST_F(SoftuetLarge, SmallSendsAndSendsWithoutRemoteReadMrKeepUetSend) {
  std::vector<uint8_t> src(20000, 5), plain(20000, 6);
  void* desc = RegisterOnA(src.data(), src.size(), FI_SEND | FI_REMOTE_READ);
  void* no_read = RegisterOnA(plain.data(), plain.size(), FI_SEND, kMrKey + 1);
  ASSERT_NO_FATAL_FAILURE(Enable());
  // A peer with HPC and without AI Full: the common profile is HPC, so no deferrable send either.
  const fi_addr_t peer = FakePeer(kHpcOnly);
  int ctx[6] = {};
  // One at a time, each read off the wire before the next is posted: the fake peer never ACKs, and a
  // slow run (sanitizers, a loaded machine) must not let retransmissions of the earlier ones crowd it out.
  const auto expect_opcode = [&](ssize_t posted, unsigned want) {
    ASSERT_EQ(posted, 0);
    EXPECT_EQ(Opcode(NextMessage()), want);
  };
  expect_opcode(fi_send(ep_[kA], src.data(), 100, desc, peer, &ctx[0]), kUetSend);
  expect_opcode(fi_send(ep_[kA], src.data(), 8191, desc, peer, &ctx[1]), kUetSend);
  expect_opcode(fi_tsend(ep_[kA], src.data(), 8191, desc, peer, 9, &ctx[2]), kTaggedSend);
  expect_opcode(fi_send(ep_[kA], src.data(), 20000, nullptr, peer, &ctx[3]), kUetSend);
  expect_opcode(fi_send(ep_[kA], plain.data(), 20000, no_read, peer, &ctx[4]), kUetSend);
  expect_opcode(fi_send(ep_[kA], src.data(), 20000, desc, peer, &ctx[5]), kRendezvousSend);
}

class SoftuetSmallEager : public SoftuetLarge {
 protected:
  void SetUp() override {
    setenv("UET_PROVIDER_MAX_EAGER_SIZE", "0", 1);
    setenv("UET_PROVIDER_MSG_RENDEZVOUS_SIZE", "1000", 1);
    SoftuetLarge::SetUp();
  }
  void TearDown() override {
    SoftuetLarge::TearDown();
    unsetenv("UET_PROVIDER_MAX_EAGER_SIZE");
    unsetenv("UET_PROVIDER_MSG_RENDEZVOUS_SIZE");
  }
};

// The variables move the threshold and the eager part: a 1000-byte send is a rendezvous of 0 eager bytes.
TEST_F(SoftuetSmallEager, ThresholdAndEagerSizeFollowTheVariables) {
  std::vector<uint8_t> src(4096);
  void* desc = RegisterOnA(src.data(), src.size(), FI_SEND | FI_REMOTE_READ);
  ASSERT_NO_FATAL_FAILURE(Enable());
  const std::vector<uint8_t> data = Pattern(1000, 9);
  std::memcpy(src.data(), data.data(), data.size());
  ASSERT_NO_FATAL_FAILURE(Transfer(data, desc, 0, true, src.data()));
  const fi_addr_t peer = FakePeer(kAllCaps);
  int ctx[2] = {};
  ASSERT_EQ(fi_send(ep_[kA], src.data(), 999, desc, peer, &ctx[0]), 0);
  ASSERT_EQ(fi_send(ep_[kA], src.data(), 1000, desc, peer, &ctx[1]), 0);
  EXPECT_EQ(Opcode(NextMessage()), kUetSend);
  const std::vector<uint8_t> f = NextMessage();
  ASSERT_EQ(Opcode(f), kRendezvousSend);
  EXPECT_EQ(f.size(), kPds + kSesStd + kRdvExt);
  EXPECT_EQ(Be32(f, kPds + kSesStd), 0u);
}

// SOFTUET_LARGE_SENDS=eager: no rendezvous and no deferrable send, whatever the size and the profiles of the
// two FEPs: a large message goes whole, as the send or tagged send it is, and lands whole.
class SoftuetEagerOnly : public SoftuetLarge {
 protected:
  ScopedEnv eager_{"SOFTUET_LARGE_SENDS", "eager"};
};

TEST_F(SoftuetEagerOnly, LargeSendsStaySendsAndLandWhole) {
  std::vector<uint8_t> src(size_t{1} << 20);
  void* desc = RegisterOnA(src.data(), src.size(), FI_SEND | FI_REMOTE_READ);
  ASSERT_NO_FATAL_FAILURE(Enable());
  const std::vector<uint8_t> data = Pattern(src.size(), 4);
  std::memcpy(src.data(), data.data(), data.size());
  ASSERT_NO_FATAL_FAILURE(Transfer(data, desc, 0, true, src.data()));
  ASSERT_NO_FATAL_FAILURE(Transfer(data, desc, 0x42, true, src.data()));
  // A peer with every profile, a remote-read MR: what would be a rendezvous and a deferrable send.
  const fi_addr_t peer = FakePeer(kAllCaps);
  int ctx[2] = {};
  ASSERT_EQ(fi_send(ep_[kA], src.data(), 20000, desc, peer, &ctx[0]), 0);
  EXPECT_EQ(Opcode(NextMessage()), kUetSend);
  ASSERT_EQ(fi_tsend(ep_[kA], src.data(), 20000, desc, peer, 5, &ctx[1]), 0);
  EXPECT_EQ(Opcode(NextMessage()), kTaggedSend);
}

TEST(SoftuetLargeConfig, BadSizesRefuseTheProvider) {
  for (const auto& [var, value] : {std::pair{"UET_PROVIDER_MAX_EAGER_SIZE", "4097"},
                                   std::pair{"UET_PROVIDER_MSG_RENDEZVOUS_SIZE", "0"},
                                   std::pair{"UET_PROVIDER_TAG_RENDEZVOUS_SIZE", "lots"},
                                   std::pair{"UET_PROVIDER_MSG_RENDEZVOUS_SIZE", "4294967296"}}) {
    setenv(var, value, 1);
    fi_info* hints = fi_allocinfo();
    hints->fabric_attr->prov_name = strdup("softuet");
    fi_info* info = nullptr;
    const int r = fi_getinfo(FI_VERSION(2, 0), nullptr, nullptr, 0, hints, &info);
    fi_freeinfo(hints);
    unsetenv(var);
    EXPECT_NE(r, 0) << var << "=" << value << " was taken";
    if (info) fi_freeinfo(info);
  }
}

// ---- AI Full deferrable send ----

TEST_F(SoftuetLarge, DeferrableSendWithReceiveBeforeAndAfter) {
  ASSERT_NO_FATAL_FAILURE(Enable());
  uint8_t seed = 11;
  for (const size_t len : {size_t{8192}, size_t{20001}, size_t{1} << 20}) {
    for (const uint64_t tag : {uint64_t{0}, uint64_t{0xD1}}) {
      for (const bool recv_first : {true, false}) {
        SCOPED_TRACE(std::to_string(len) + " bytes, tag " + std::to_string(tag) + (recv_first ? ", receive first" : ", receive after"));
        ASSERT_NO_FATAL_FAILURE(Transfer(Pattern(len, seed++), nullptr, tag, recv_first));
      }
    }
  }
  // Every message was delivered once: nothing is left for another receive.
  std::vector<uint8_t> extra(64);
  int ctx = 0;
  ASSERT_EQ(fi_recv(ep_[kB], extra.data(), extra.size(), nullptr, FI_ADDR_UNSPEC, &ctx), 0);
  fi_cq_data_entry e{};
  EXPECT_EQ(fi_cq_sread(cq_, &e, 1, nullptr, 200), -FI_EAGAIN);
}

TEST_F(SoftuetLarge, ConcurrentDeferrableSendsAreEachDeliveredOnce) {
  ASSERT_NO_FATAL_FAILURE(Enable());
  constexpr int kN = 8;
  std::vector<std::vector<uint8_t>> data, got;
  int send_ctx[kN], recv_ctx[kN];
  for (int i = 0; i < kN; ++i) {
    data.push_back(Pattern(20000 + i * 1000, static_cast<uint8_t>(i)));
    got.emplace_back(data.back().size(), 0);
    ASSERT_EQ(fi_tsend(ep_[kA], data[i].data(), data[i].size(), nullptr, addr_[kB], 100 + i, &send_ctx[i]), 0);
  }
  // Every one is deferred; the receives come in reverse order, each for its own tag.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  for (int i = kN - 1; i >= 0; --i)
    ASSERT_EQ(fi_trecv(ep_[kB], got[i].data(), got[i].size(), nullptr, FI_ADDR_UNSPEC, 100 + i, 0, &recv_ctx[i]), 0);
  std::vector<void*> want;
  for (int i = 0; i < kN; ++i) want.insert(want.end(), {&send_ctx[i], &recv_ctx[i]});
  std::map<void*, fi_cq_data_entry> done;
  ASSERT_NO_FATAL_FAILURE(WaitCompletions(want, &done));
  for (int i = 0; i < kN; ++i) {
    EXPECT_EQ(got[i], data[i]) << "message " << i;
  }
}

TEST_F(SoftuetLarge, ActiveDeferrableSendsHaveDistinctInitiatorTokens) {
  ASSERT_NO_FATAL_FAILURE(Enable());
  const fi_addr_t peer = FakePeer(kAllCaps);  // never answers: every send stays active
  constexpr int kN = 6;
  std::vector<uint8_t> src(9000, 1);
  int ctx[kN] = {};
  for (int i = 0; i < kN; ++i) ASSERT_EQ(fi_send(ep_[kA], src.data(), src.size(), nullptr, peer, &ctx[i]), 0);
  std::set<uint32_t> tokens;
  for (int i = 0; i < kN; ++i) {
    const std::vector<uint8_t> f = NextMessage();
    ASSERT_EQ(Opcode(f), kDeferrableSend);
    const uint32_t initiator_token = Be32(f, kPds + 12), target_token = Be32(f, kPds + 16);
    EXPECT_NE(initiator_token, 0u);
    EXPECT_EQ(target_token, 0u) << "a first send carries target_restart_token 0";
    tokens.insert(initiator_token);
  }
  EXPECT_EQ(tokens.size(), size_t{kN}) << "2.2.10.4-h: active restart tokens are unique at the initiating FEP";
}

TEST_F(SoftuetLarge, HpcWithAiFullDoesNotSendDeferrableToHpcOnlyPeer) {
  ASSERT_NO_FATAL_FAILURE(Enable());
  const fi_addr_t peer = FakePeer(kHpcOnly);
  std::vector<uint8_t> src(9000, 1);
  int ctx = 0;
  ASSERT_EQ(fi_tsend(ep_[kA], src.data(), src.size(), nullptr, peer, 3, &ctx), 0);
  EXPECT_EQ(Opcode(NextMessage()), kTaggedSend);
}

// ---- a FEP without AI Full takes a deferrable send as a send (2.2.2.1-c/d) ----

// One FEP of its own: a domain opened with SOFTUET_PROFILES and SOFTUET_UDP_PORT set while it opens.
struct Fep {
  softuet_probe::ProbeFabric f;
  fid_ep* ep = nullptr;

  void Open(const char* profiles, int port) {
    const char* old = std::getenv("SOFTUET_PROFILES");
    const char* old_port = std::getenv("SOFTUET_UDP_PORT");
    const std::string saved_profiles = old ? old : "", saved_port = old_port ? old_port : "";
    setenv("SOFTUET_PROFILES", profiles, 1);
    setenv("SOFTUET_UDP_PORT", std::to_string(port).c_str(), 1);
    const int r = f.open(FI_MSG | FI_TAGGED);
    if (old) setenv("SOFTUET_PROFILES", saved_profiles.c_str(), 1); else unsetenv("SOFTUET_PROFILES");
    if (old_port) setenv("SOFTUET_UDP_PORT", saved_port.c_str(), 1); else unsetenv("SOFTUET_UDP_PORT");
    ASSERT_EQ(r, 0) << f.failed;
    ASSERT_EQ(fi_enable(f.ep), 0);
    ep = f.ep;
  }
  fi_addr_t Insert(const Fep& peer) { return f.insert_hex(peer.f.name_hex()); }
  // The outcome of one operation: 0, or the error entry's err (-1 when nothing came within 10 s).
  int Wait(void* ctx) {
    for (int i = 0; i < 1000; ++i) {
      fi_cq_data_entry e{};
      const ssize_t n = fi_cq_sread(f.cq, &e, 1, nullptr, 10);
      if (n == 1) return e.op_context == ctx ? 0 : -2;
      if (n == -FI_EAVAIL) {
        fi_cq_err_entry err{};
        fi_cq_readerr(f.cq, &err, 0);
        return err.err;
      }
    }
    return -1;
  }
  ~Fep() { f.close(); }
};

TEST(SoftuetDeferrableToHpc, HpcTargetTakesDeferrableSendsAsSends) {
  // Ports of this test's own (47994/47995; 47996/47997 for the IPv6 run of this binary).
  const char* addr = std::getenv("SOFTUET_ADDR");
  const int base = addr && std::strchr(addr, ':') ? 47996 : 47994;
  Fep aif, hpc;
  ASSERT_NO_FATAL_FAILURE(aif.Open("ai_base,ai_full", base));
  ASSERT_NO_FATAL_FAILURE(hpc.Open("ai_base,hpc", base + 1));
  const fi_addr_t to_hpc = aif.Insert(hpc);
  uint8_t seed = 40;
  for (const uint64_t tag : {uint64_t{0}, uint64_t{0x44}}) {
    for (const bool recv_first : {true, false}) {
      SCOPED_TRACE(std::string(tag ? "tagged" : "untagged") + (recv_first ? ", receive first" : ", receive after"));
      const std::vector<uint8_t> data = Pattern(65536, seed++);
      std::vector<uint8_t> got(data.size(), 0);
      int send_ctx = 0, recv_ctx = 0;
      auto post = [&] {
        return tag ? fi_trecv(hpc.ep, got.data(), got.size(), nullptr, FI_ADDR_UNSPEC, tag, 0, &recv_ctx)
                   : fi_recv(hpc.ep, got.data(), got.size(), nullptr, FI_ADDR_UNSPEC, &recv_ctx);
      };
      if (recv_first) {
        ASSERT_EQ(post(), 0);
      }
      ASSERT_EQ(tag ? fi_tsend(aif.ep, data.data(), data.size(), nullptr, to_hpc, tag, &send_ctx)
                    : fi_send(aif.ep, data.data(), data.size(), nullptr, to_hpc, &send_ctx),
                0);
      // The HPC FEP keeps an unexpected deferrable send like a send: the initiator completes without waiting
      // for the receive.
      ASSERT_EQ(aif.Wait(&send_ctx), 0);
      if (!recv_first) {
        ASSERT_EQ(post(), 0);
      }
      EXPECT_EQ(hpc.Wait(&recv_ctx), 0);
      EXPECT_EQ(got, data);
    }
  }
}

}  // namespace
}  // namespace softuet_test
