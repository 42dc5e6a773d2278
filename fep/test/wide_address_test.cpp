// SOFTUET_ADDR_LAYOUT=wide52: every address blob softuet gives or takes is 52 bytes in the wide layout
// (fep/src/address_layout.cpp): fi_getname, fi_getinfo's src_addr, dest_addr, node and service, fi_av_insert,
// fi_av_lookup and fi_av_straddr, and the addresses directed receives and FI_SOURCE name (fi_addr_t values of
// the AV the blobs went into). Offsets here are the layout's, read independently of the provider's code.
#include <arpa/inet.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "fixture.hpp"
#include "softuet/fi_addr_uet.h"

namespace softuet_test {
namespace {

constexpr size_t kWide = 52;
constexpr size_t kSockaddrAt = 24;

uint32_t Be32(const std::vector<uint8_t>& b, size_t at) {
  return uint32_t{b[at]} << 24 | uint32_t{b[at + 1]} << 16 | uint32_t{b[at + 2]} << 8 | b[at + 3];
}
void SetBe32(std::vector<uint8_t>& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<uint8_t>(v >> (24 - 8 * i));
}
std::vector<uint8_t> Bytes(const void* p, size_t len) {
  const auto* b = static_cast<const uint8_t*>(p);
  return {b, b + len};
}

// What ctest gives the FEP: SOFTUET_ADDR (127.0.0.1 or ::1) and SOFTUET_UDP_PORT.
std::string FepAddr() { return std::getenv("SOFTUET_ADDR") ? std::getenv("SOFTUET_ADDR") : "127.0.0.1"; }
uint16_t FepPort() { return static_cast<uint16_t>(std::stoi(std::getenv("SOFTUET_UDP_PORT") ? std::getenv("SOFTUET_UDP_PORT") : "4793")); }
uint32_t PidOnFep() {
  const uint32_t pid = static_cast<uint32_t>(getpid()) & 0xFFF;
  return pid ? pid : 1;
}

class WideAddress : public SoftuetApi {
 protected:
  void AdjustHints(fi_info* hints) override { hints->caps |= FI_DIRECTED_RECV | FI_SOURCE; }
  void TearDown() override {
    for (fid_ep* ep : extra_) EXPECT_EQ(fi_close(&ep->fid), 0);
    SoftuetApi::TearDown();
  }
  std::vector<uint8_t> Name(fid_ep* ep) {
    std::vector<uint8_t> n(256);
    size_t len = n.size();
    EXPECT_EQ(fi_getname(&ep->fid, n.data(), &len), 0);
    n.resize(len);
    return n;
  }
  // fi_getinfo for RDM with `dest` as dest_addr, `node` (with FI_SOURCE) and `service`: 0 or the error.
  int Info(const std::vector<uint8_t>* dest, const std::vector<uint8_t>* node, const char* service, fi_info** out) {
    fi_info* hints = fi_allocinfo();
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG;
    hints->fabric_attr->prov_name = strdup("softuet");
    if (dest) {
      hints->dest_addr = malloc(dest->size());
      std::memcpy(hints->dest_addr, dest->data(), dest->size());
      hints->dest_addrlen = dest->size();
    }
    const char* node_text = node ? reinterpret_cast<const char*>(node->data()) : nullptr;
    const int rc = fi_getinfo(FI_VERSION(2, 0), node_text, service, node ? FI_SOURCE : 0, hints, out);
    fi_freeinfo(hints);
    return rc;
  }
  // The socket address in the blob names the FEP's IP address and port.
  void ExpectSockaddrOfTheFep(const std::vector<uint8_t>& n) {
    sa_family_t family;
    std::memcpy(&family, n.data() + kSockaddrAt, sizeof family);
    const bool v6 = FepAddr().find(':') != std::string::npos;
    ASSERT_EQ(family, v6 ? AF_INET6 : AF_INET);
    uint8_t want[16] = {};
    ASSERT_EQ(inet_pton(family, FepAddr().c_str(), want), 1);
    if (v6) {
      sockaddr_in6 s;
      std::memcpy(&s, n.data() + kSockaddrAt, sizeof s);
      EXPECT_EQ(ntohs(s.sin6_port), FepPort());
      EXPECT_EQ(std::memcmp(&s.sin6_addr, want, 16), 0);
    } else {
      sockaddr_in s;
      std::memcpy(&s, n.data() + kSockaddrAt, sizeof s);
      EXPECT_EQ(ntohs(s.sin_port), FepPort());
      EXPECT_EQ(std::memcmp(&s.sin_addr, want, 4), 0);
      for (size_t i = kSockaddrAt + sizeof s; i < kWide; ++i) EXPECT_EQ(n[i], 0) << "byte " << i;
    }
  }
  ScopedEnv layout_{"SOFTUET_ADDR_LAYOUT", "wide52"};
  std::vector<fid_ep*> extra_;
};

TEST_F(WideAddress, GetnameAndSrcAddrAreTheWideLayout) {
  const std::vector<uint8_t> a = Name(ep_[kA]), b = Name(ep_[kB]);
  ASSERT_EQ(a.size(), kWide);
  EXPECT_EQ(a[0], 0) << "version";
  EXPECT_TRUE(a[1] & softuet::kAddrFlagFaValid) << "flags";
  EXPECT_TRUE(a[1] & softuet::kAddrFlagPidValid) << "flags";
  EXPECT_TRUE(a[2] & softuet::kCapHpc) << "caps (ctest's FEP has every profile)";
  EXPECT_EQ(a[3], 0);
  EXPECT_EQ(Be32(a, 4), PidOnFep());
  EXPECT_EQ(Be32(a, 12), 1u) << "one resource index per endpoint";
  EXPECT_NE(Be32(a, 8), Be32(b, 8)) << "the two endpoints' resource indices";
  if (!std::getenv("UET_PROVIDER_INITIATOR_ID")) {
    // The low 20 bits of the address (1 for 127.0.0.1 and ::1), then the PIDonFEP.
    EXPECT_EQ(Be32(a, 16), (1u << 12) | PidOnFep());
  }
  EXPECT_EQ(Be32(a, 20), 0u);
  ASSERT_NO_FATAL_FAILURE(ExpectSockaddrOfTheFep(a));

  ASSERT_EQ(info_->src_addrlen, kWide);
  const std::vector<uint8_t> src = Bytes(info_->src_addr, info_->src_addrlen);
  EXPECT_EQ(Be32(src, 4), PidOnFep());
  EXPECT_EQ(Be32(src, 8), 0u) << "no resource index before an endpoint takes one";
  ASSERT_NO_FATAL_FAILURE(ExpectSockaddrOfTheFep(src));
}

TEST_F(WideAddress, AvLookupAndStraddrSpeakIt) {
  const std::vector<uint8_t> b = Name(ep_[kB]);
  std::vector<uint8_t> got(kWide);
  size_t len = got.size();
  ASSERT_EQ(fi_av_lookup(av_, addr_[kB], got.data(), &len), 0);
  EXPECT_EQ(len, kWide);
  EXPECT_EQ(got, b);
  len = sizeof(softuet_addr);
  EXPECT_EQ(fi_av_lookup(av_, addr_[kB], got.data(), &len), -FI_ETOOSMALL);
  EXPECT_EQ(len, kWide);

  char text[200];
  len = sizeof text;
  ASSERT_NE(fi_av_straddr(av_, b.data(), text, &len), nullptr);
  const bool v6 = FepAddr().find(':') != std::string::npos;
  const std::string host = v6 ? "[" + FepAddr() + "]" : FepAddr();
  EXPECT_EQ(std::string(text).rfind("fi_addr_uet://" + host + ":" + std::to_string(FepPort()) + "/", 0), 0u) << text;
  EXPECT_NE(std::string(text).find("pid=" + std::to_string(PidOnFep()) + ";"), std::string::npos) << text;
}

TEST_F(WideAddress, AvInsertRefusesWhatIsNotOne) {
  std::vector<uint8_t> b = Name(ep_[kB]);
  b[1] ^= softuet::kAddrFlagIpv6;  // the flag says one family, the socket address the other
  fi_addr_t fa = 0;
  EXPECT_EQ(fi_av_insert(av_, b.data(), 1, &fa, 0, nullptr), 0);
  EXPECT_EQ(fa, FI_ADDR_NOTAVAIL);
  b = Name(ep_[kB]);
  SetBe32(b, 4, 0x10000);  // a PIDonFEP of more than 16 bits
  EXPECT_EQ(fi_av_insert(av_, b.data(), 1, &fa, 0, nullptr), 0);
}

TEST_F(WideAddress, SourcesAndDirectedReceivesFollowTheInsertedBlobs) {
  ASSERT_NO_FATAL_FAILURE(Enable());
  // Another initiator on A's FEP: A's blob with the next initiator ID.
  std::vector<uint8_t> other = Name(ep_[kA]);
  SetBe32(other, 16, Be32(other, 16) + 1);
  fi_addr_t from_other = FI_ADDR_NOTAVAIL;
  ASSERT_EQ(fi_av_insert(av_, other.data(), 1, &from_other, 0, nullptr), 1);
  char for_other[16], for_a[16];
  int ctx_other = 0, ctx_a = 0, ctx_send = 0;
  ASSERT_EQ(fi_recv(ep_[kB], for_other, sizeof for_other, nullptr, from_other, &ctx_other), 0);
  ASSERT_EQ(fi_recv(ep_[kB], for_a, sizeof for_a, nullptr, addr_[kA], &ctx_a), 0);
  ASSERT_EQ(fi_send(ep_[kA], "wide", 5, nullptr, addr_[kB], &ctx_send), 0);
  fi_addr_t src_of_a = FI_ADDR_NOTAVAIL;
  bool sent = false, received = false;
  for (int i = 0; i < 1000 && !(sent && received); ++i) {
    fi_cq_data_entry e{};
    fi_addr_t src = FI_ADDR_NOTAVAIL;
    const ssize_t n = fi_cq_sreadfrom(cq_, &e, 1, &src, nullptr, 10);
    if (n == -FI_EAGAIN) continue;
    ASSERT_EQ(n, 1) << fi_err(n);
    ASSERT_NE(e.op_context, &ctx_other) << "the receive directed at another initiator took A's message";
    if (e.op_context == &ctx_send) sent = true;
    if (e.op_context == &ctx_a) {
      received = true;
      src_of_a = src;
    }
  }
  ASSERT_TRUE(sent && received);
  EXPECT_EQ(src_of_a, addr_[kA]) << "FI_SOURCE names A's AV entry";
  EXPECT_STREQ(for_a, "wide");
  EXPECT_EQ(fi_cancel(&ep_[kB]->fid, &ctx_other), 0);
}

TEST_F(WideAddress, GetinfoTakesDestAddrNodeAndServiceInIt) {
  const std::vector<uint8_t> a = Name(ep_[kA]), b = Name(ep_[kB]);
  fi_info* info = nullptr;
  ASSERT_EQ(Info(&b, nullptr, nullptr, &info), 0);
  ASSERT_EQ(info->dest_addrlen, kWide);
  EXPECT_EQ(Bytes(info->dest_addr, info->dest_addrlen), b);
  fi_freeinfo(info);

  const std::vector<uint8_t> short_dest(b.begin(), b.begin() + sizeof(softuet_addr));
  EXPECT_EQ(Info(&short_dest, nullptr, nullptr, &info), -FI_ENODATA) << "a 40-byte dest_addr is not a wide address";

  // node names a UET address (with FI_SOURCE): this FEP's matches, another PIDonFEP does not.
  ASSERT_EQ(Info(nullptr, &a, nullptr, &info), 0);
  fi_freeinfo(info);
  std::vector<uint8_t> elsewhere = a;
  SetBe32(elsewhere, 4, (Be32(a, 4) % 4095) + 1);
  EXPECT_EQ(Info(nullptr, &elsewhere, nullptr, &info), -FI_ENODATA);

  // service: the range travels in src_addr, and fi_endpoint takes its RI from there.
  ASSERT_EQ(Info(nullptr, nullptr, "17", &info), 0);
  const std::vector<uint8_t> src = Bytes(info->src_addr, info->src_addrlen);
  EXPECT_EQ(Be32(src, 8), 17u);
  EXPECT_EQ(Be32(src, 12), 1u);
  fid_ep* ep = nullptr;
  const int rc = fi_endpoint(domain_, info, &ep, nullptr);
  fi_freeinfo(info);
  ASSERT_EQ(rc, 0) << fi_err(rc);
  extra_.push_back(ep);
  EXPECT_EQ(Be32(Name(ep), 8), 17u);
}

}  // namespace
}  // namespace softuet_test
