// Endpoints within one process (UEC 1.0 §2.2.2, §2.2.5.1, §2.2.5.3.5-§2.2.5.3.6, §2.2.7): the maximum RMA
// size option and its range, the address fi_getname gives (when, how complete, how distinct), the
// traffic class a domain takes, and bad calls refused with the proper FI_E* code.
#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "area_traits.hpp"
#include "conformance.hpp"
#include "loopback.hpp"
#include "uet/wire/wire_gen.hpp"

// What the harness must know of this area (common/claims/area_traits.hpp).
UET_AREA_TRAITS(.processes = 1);

namespace uet::cases {
namespace {

namespace w = uet::wire;

class Ep : public ::testing::TestWithParam<Kind> {
 protected:
  // The pair of the kind under test, not enabled (options are set before fi_enable).
  void Open(uint64_t caps = FI_MSG) {
    LoopbackSpec spec;
    spec.type = GetParam().ep_type;
    spec.caps = caps;
    open_pair(lb, spec, false);
  }
  // A field of this provider's address, read through its manifest's layout (0 where the blob is too short).
  static uint64_t Field(const std::vector<uint8_t>& a, AddrField f) { return layout_of(manifest()).get(a, f).value_or(0); }
  static std::string FaHex(const uint8_t* a, size_t len) {
    const auto fa = layout_of(manifest()).fa(a, len);
    return fa ? to_hex(fa->data(), fa->size()) : "(none)";
  }
  Loopback lb;
};

UET_RDM_ONLY(Ep, MaxRmaSizeStaysWithinItsRange, "fi_rma is not available on DGRAM endpoints (2.2.5.4.3-a)");
TEST_P(Ep, MaxRmaSizeStaysWithinItsRange) {
  covers({"2.2.2-f"});
  UET_REQUIRE_UET_PROVIDER();
  UET_LOOPBACK(Open(FI_MSG | FI_RMA));
  const size_t lo = w::k_max_rma_size_min, hi = w::k_max_rma_size_max;
  size_t v = 0, len = sizeof v;
  ASSERT_EQ(fi_getopt(&lb.ep[0]->fid, FI_OPT_ENDPOINT, FI_OPT_MAX_RMA_SIZE, &v, &len), 0);
  EXPECT_GE(v, lo) << "the default maximum RMA size";
  EXPECT_LE(v, hi) << "the default maximum RMA size";
  for (const size_t ok : {lo, hi, lo + 12345}) {
    EXPECT_EQ(fi_setopt(&lb.ep[0]->fid, FI_OPT_ENDPOINT, FI_OPT_MAX_RMA_SIZE, &ok, sizeof ok), 0) << "set " << ok;
    len = sizeof v;
    ASSERT_EQ(fi_getopt(&lb.ep[0]->fid, FI_OPT_ENDPOINT, FI_OPT_MAX_RMA_SIZE, &v, &len), 0);
    EXPECT_EQ(v, ok) << "the maximum RMA size read back";
  }
  for (const size_t bad : {lo - 1, hi + 1, size_t{0}, size_t{4096}}) {
    EXPECT_EQ(fi_setopt(&lb.ep[0]->fid, FI_OPT_ENDPOINT, FI_OPT_MAX_RMA_SIZE, &bad, sizeof bad), -FI_EINVAL)
        << "a maximum RMA size of " << bad << " was taken";
  }
  len = sizeof v;
  ASSERT_EQ(fi_getopt(&lb.ep[0]->fid, FI_OPT_ENDPOINT, FI_OPT_MAX_RMA_SIZE, &v, &len), 0);
  EXPECT_EQ(v, lo + 12345) << "a refused setting changed the option";
}

TEST_P(Ep, BadOptionsAreRefused) {
  covers({"2.2.5-b"});
  UET_REQUIRE_UET_PROVIDER();
  UET_LOOPBACK(Open());
  size_t v = 0, len = sizeof v;
  EXPECT_EQ(fi_getopt(&lb.ep[0]->fid, 12345, FI_OPT_MAX_MSG_SIZE, &v, &len), -FI_ENOPROTOOPT) << "an unknown level";
  EXPECT_EQ(fi_getopt(&lb.ep[0]->fid, FI_OPT_ENDPOINT, 12345, &v, &len), -FI_ENOPROTOOPT) << "an unknown option";
  EXPECT_EQ(fi_setopt(&lb.ep[0]->fid, FI_OPT_ENDPOINT, 12345, &v, sizeof v), -FI_ENOPROTOOPT) << "an unknown option";
  if (GetParam().ep_type == FI_EP_RDM) {
    const size_t ok = w::k_max_rma_size_min;
    EXPECT_EQ(fi_setopt(&lb.ep[0]->fid, FI_OPT_ENDPOINT, FI_OPT_MAX_RMA_SIZE, &ok, 2), -FI_EINVAL) << "optlen 2";
  }
}

TEST_P(Ep, BadBindingsAreRefused) {
  covers({"2.2.5-b"});
  UET_REQUIRE_UET_PROVIDER();
  UET_LOOPBACK(Open());
  fid_ep* ep = nullptr;
  ASSERT_EQ(fi_endpoint(lb.domain, lb.info, &ep, nullptr), 0);
  fi_cq_attr attr{};
  attr.format = FI_CQ_FORMAT_CONTEXT;
  fid_cq* cq = nullptr;
  ASSERT_EQ(fi_cq_open(lb.domain, &attr, &cq, nullptr), 0);
  EXPECT_EQ(fi_ep_bind(ep, &cq->fid, kNoSuchFlag | FI_TRANSMIT), -FI_EBADFLAGS) << "a CQ bound with a bad flag";
  EXPECT_EQ(fi_ep_bind(ep, &cq->fid, 0), -FI_EBADFLAGS) << "a CQ bound for neither transmit nor receive";
  EXPECT_EQ(fi_ep_bind(ep, &lb.av->fid, kNoSuchFlag), -FI_EBADFLAGS) << "an AV bound with a bad flag";
  EXPECT_EQ(fi_enable(ep), -FI_ENOAV) << "an endpoint enabled without an AV";
  fi_close(&ep->fid);
  fi_close(&cq->fid);
}

TEST_P(Ep, AddressIsAssignedAtOpenAndComplete) {
  covers({"2.2.5.1-c", "2.2.5.1-e", "2.2.5.3.5-c", "2.2.5.3.6-a"});
  UET_REQUIRE_UET_PROVIDER();
  UET_LOOPBACK(Open());
  // Before fi_enable: fi_endpoint assigned the address (2.2.5.1-e).
  const std::vector<uint8_t> before = lb.name(0);
  ASSERT_EQ(layout_of(manifest()).misfit(before.size()), "") << "fi_getname right after fi_endpoint";
  ASSERT_EQ(lb.enable(), 0) << lb.failed;
  const std::vector<uint8_t> after = lb.name(0);
  EXPECT_EQ(to_hex(after.data(), after.size()), to_hex(before.data(), before.size())) << "the address changed at fi_enable";
  const auto flags = static_cast<uint8_t>(Field(after, AddrField::flags));
  EXPECT_TRUE(flags & (1u << w::k_addr_flag_caps_valid)) << "the FEP-capabilities-valid flag is clear: flags 0x" << std::hex << +flags;
  EXPECT_EQ(Field(after, AddrField::version), w::k_addr_version);
  // The Table 2-10 fields, all valid: an FA of this FEP (not zero), an initiator ID, one resource index.
  EXPECT_NE(FaHex(after.data(), after.size()), std::string(32, '0')) << "the FA of the address is zero";
  EXPECT_EQ(Field(after, AddrField::num_indices), 1u);
  // A buffer too small for it: -FI_ETOOSMALL and the size it needs.
  uint8_t small[8];
  size_t len = sizeof small;
  EXPECT_EQ(fi_getname(&lb.ep[0]->fid, small, &len), -FI_ETOOSMALL);
  EXPECT_EQ(len, after.size()) << "the address length a short fi_getname reports";
}

TEST_P(Ep, EndpointsOfADomainHaveDistinctResourceIndices) {
  covers({"2.2.5.1-d", "2.2.5.2.2-h", "2.2.2-e"});
  UET_REQUIRE_UET_PROVIDER();
  UET_LOOPBACK(Open());
  const std::vector<uint8_t> a = lb.name(0), b = lb.name(1);
  ASSERT_EQ(layout_of(manifest()).misfit(a.size()), "");
  ASSERT_EQ(layout_of(manifest()).misfit(b.size()), "");
  const uint64_t ra = Field(a, AddrField::start_index) & 0xFFF, rb = Field(b, AddrField::start_index) & 0xFFF;
  EXPECT_NE(ra, rb) << "two endpoints of one domain share resource index " << ra;
  EXPECT_NE(ra, 0u) << "resource index 0 is the provider-to-provider channel";
  EXPECT_NE(rb, 0u) << "resource index 0 is the provider-to-provider channel";
}

TEST_P(Ep, AnEndpointHasExactlyOneType) {
  covers({"2.2.5.3.5-f", "2.2.5.3.5-e"});
  UET_REQUIRE_UET_PROVIDER();
  UET_LOOPBACK(Open());
  InfoPtr other(fi_dupinfo(lb.info), fi_freeinfo);
  other->ep_attr->type = FI_EP_MSG;
  fid_ep* ep = nullptr;
  EXPECT_LT(fi_endpoint(lb.domain, other.get(), &ep, nullptr), 0) << "an FI_EP_MSG endpoint was opened";
  if (ep) fi_close(&ep->fid);
  EXPECT_EQ(lb.info->ep_attr->type, GetParam().ep_type) << "fi_getinfo answered another endpoint type";
}

TEST_P(Ep, DomainTakesTheTrafficClassAsked) {
  covers({"2.2.7-d"});
  UET_REQUIRE_UET_PROVIDER();
  for (const uint32_t tclass : {uint32_t{FI_TC_UNSPEC}, uint32_t{FI_TC_DSCP | 26}, uint32_t{FI_TC_BEST_EFFORT}}) {
    InfoPtr hints = hints_for(GetParam().ep_type);
    hints->domain_attr->tclass = tclass;
    int rc = 0;
    InfoPtr info = getinfo(hints.get(), &rc);
    ASSERT_TRUE(info) << "fi_getinfo with tclass 0x" << std::hex << tclass << ": " << fi_err(rc);
    if (tclass != FI_TC_UNSPEC) {
      EXPECT_EQ(info->domain_attr->tclass, tclass) << "the domain's tclass (fi_domain_attr.tclass selects the data TC)";
    }
    fid_fabric* fabric = nullptr;
    fid_domain* domain = nullptr;
    ASSERT_EQ(fi_fabric(info->fabric_attr, &fabric, nullptr), 0);
    EXPECT_EQ(rc = fi_domain(fabric, info.get(), &domain, nullptr), 0) << "fi_domain with tclass 0x" << std::hex << tclass << ": " << fi_err(rc);
    if (domain) fi_close(&domain->fid);
    fi_close(&fabric->fid);
  }
}

TEST_P(Ep, GetinfoNodeIsAUetAddress) {
  covers({"2.2.5.2.2-a", "2.2.5.2.2-b", "2.2.5.2.2-c"});
  UET_REQUIRE_UET_PROVIDER();
  UET_LOOPBACK(Open());
  std::vector<uint8_t> own = lb.name(0);
  const AddressLayout& layout = layout_of(manifest());
  ASSERT_EQ(layout.misfit(own.size()), "");
  InfoPtr hints = hints_for(GetParam().ep_type);
  const char* node = reinterpret_cast<const char*>(own.data());
  int rc = 0;
  InfoPtr mine = getinfo(hints.get(), &rc, FI_VERSION(2, 0), node, FI_SOURCE);
  ASSERT_TRUE(mine) << "fi_getinfo(node = this FEP's own UET address, FI_SOURCE): " << fi_err(rc);
  ASSERT_NE(mine->src_addr, nullptr);
  ASSERT_EQ(layout.misfit(mine->src_addrlen), "") << "src_addr";
  const auto* src = static_cast<const uint8_t*>(mine->src_addr);
  EXPECT_EQ(FaHex(src, mine->src_addrlen), FaHex(own.data(), own.size())) << "the FA of src_addr";
  // Another initiator ID, marked valid: the FEP of this domain is not that address (`node` points into `own`).
  layout.set(own, AddrField::initiator_id, *layout.get(own, AddrField::initiator_id) + 1);
  layout.set(own, AddrField::flags, *layout.get(own, AddrField::flags) | uint64_t{1} << w::k_addr_flag_initiator_valid);
  InfoPtr other = getinfo(hints.get(), &rc, FI_VERSION(2, 0), node, FI_SOURCE);
  should(!other, "fi_getinfo filters by the valid fields of node (another initiator ID matched)");
  InfoPtr no_source = getinfo(hints.get(), &rc, FI_VERSION(2, 0), node, 0);
  should(!no_source, "fi_getinfo with node and without FI_SOURCE returns no information");
}

// fi_getinfo's service from a UET_PROVIDER_SERVICE_PATH file (spec 2.2.3, 2.2.5.2.2): the range the
// file gives a name is the one src_addr names. The file is written for the case and the variable set in
// this process for as long as the case runs.
class ServiceFile {
 public:
  explicit ServiceFile(const std::string& lines) {
    char path[] = "/tmp/uet-cases-services-XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0) return;
    path_ = path;
    const ssize_t n = ::write(fd, lines.data(), lines.size());
    ::close(fd);
    if (n != static_cast<ssize_t>(lines.size())) return;
    const char* old = std::getenv("UET_PROVIDER_SERVICE_PATH");
    if (old) old_ = old;
    setenv("UET_PROVIDER_SERVICE_PATH", path_.c_str(), 1);
    ok_ = true;
  }
  ~ServiceFile() {
    if (old_) {
      setenv("UET_PROVIDER_SERVICE_PATH", old_->c_str(), 1);
    } else {
      unsetenv("UET_PROVIDER_SERVICE_PATH");
    }
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  bool ok() const { return ok_; }

 private:
  std::string path_;
  std::optional<std::string> old_;
  bool ok_ = false;
};

// The {start_index, num_indices} of the src_addr fi_getinfo gives for `service`; false when it gives none.
bool RangeOfService(fi_ep_type type, const std::string& service, uint16_t* start, uint16_t* count, std::string* why) {
  InfoPtr hints = hints_for(type);
  fi_info* info = nullptr;
  const int rc = fi_getinfo(FI_VERSION(2, 0), nullptr, service.c_str(), FI_SOURCE, hints.get(), &info);
  InfoPtr got(rc == 0 ? info : nullptr, fi_freeinfo);
  if (!got) return *why = "fi_getinfo(service \"" + service + "\"): " + fi_err(rc), false;
  const AddressLayout& layout = layout_of(manifest());
  if (!got->src_addr || !layout.misfit(got->src_addrlen).empty())
    return *why = "no UET address in src_addr: " + layout.misfit(got->src_addrlen), false;
  const auto* a = static_cast<const uint8_t*>(got->src_addr);
  *start = static_cast<uint16_t>(*layout.get(a, got->src_addrlen, AddrField::start_index));
  *count = static_cast<uint16_t>(*layout.get(a, got->src_addrlen, AddrField::num_indices));
  return true;
}

TEST_P(Ep, ServiceFileNameGivesItsRange) {
  covers({"2.2.5.2.2-d", "2.2.5.2.2-f"});
  UET_REQUIRE_UET_PROVIDER();
  ServiceFile file("# written by uet-cases-ep\nuetcases_svc 3001 2\n");
  ASSERT_TRUE(file.ok()) << "cannot write the service file";
  uint16_t start = 0, count = 0;
  std::string why;
  ASSERT_TRUE(RangeOfService(GetParam().ep_type, "uetcases_svc", &start, &count, &why)) << why;
  EXPECT_EQ(start, 3001) << "start_index of the service file's range";
  EXPECT_EQ(count, 2) << "num_indices of the service file's range (a service may have several RIs)";
}

// A predefined service name (Table 2-12) that the service file also names takes the file's range
// (2.2.5.2.2-e). The manifest lists the provider's predefined names (`predefined_service_names`).
TEST_P(Ep, ServiceFileWinsOverAPredefinedName) {
  covers({"2.2.5.2.2-e"});
  UET_REQUIRE_UET_PROVIDER();
  const std::vector<std::string> names = manifest().predefined_service_names;
  UET_NOT_APPLICABLE_IF(names.empty(), reason::kNotClaimedFeature, "the manifest lists no predefined service names (predefined_service_names); "
                                       "Table 2-12 is MISSING from the digest and softuet predefines none "
                                       "(spec/wire.yaml choice predefined-service-names)");
  std::string lines;
  for (size_t i = 0; i < names.size(); ++i) lines += names[i] + " " + std::to_string(3001 + 3 * i) + " 3\n";
  ServiceFile file(lines);
  ASSERT_TRUE(file.ok()) << "cannot write the service file";
  for (size_t i = 0; i < names.size(); ++i) {
    uint16_t start = 0, count = 0;
    std::string why;
    ASSERT_TRUE(RangeOfService(GetParam().ep_type, names[i], &start, &count, &why)) << why;
    EXPECT_EQ(start, 3001 + 3 * i) << names[i] << ": the service file's start_index, not the predefined one";
    EXPECT_EQ(count, 3) << names[i] << ": the service file's num_indices";
  }
}

TEST_P(Ep, ScalableEndpointsGiveEachReceiveContextAnIndex) {
  covers({"2.2.5.2.2-g"});
  UET_REQUIRE_UET_PROVIDER();
  UET_LOOPBACK(Open());
  fid_ep* sep = nullptr;
  const int rc = fi_scalable_ep(lb.domain, lb.info, &sep, nullptr);
  UET_NOT_APPLICABLE_IF(rc == -FI_ENOSYS || rc == -FI_EOPNOTSUPP, reason::kNotClaimedFeature, "the provider offers no scalable endpoints");
  ASSERT_EQ(rc, 0) << fi_refused("fi_scalable_ep", rc);
  std::vector<fid_ep*> rx(2, nullptr);
  for (size_t i = 0; i < rx.size(); ++i) {
    EXPECT_EQ(fi_rx_context(sep, static_cast<int>(i), nullptr, &rx[i], nullptr), 0);
  }
  std::vector<uint8_t> a(256);
  size_t len = a.size();
  EXPECT_EQ(fi_getname(&sep->fid, a.data(), &len), 0);
  if (layout_of(manifest()).misfit(len).empty()) {
    EXPECT_GE(layout_of(manifest()).get(a.data(), len, AddrField::num_indices), rx.size()) << "one resource index per receive context";
  }
  for (fid_ep* r : rx)
    if (r) fi_close(&r->fid);
  fi_close(&sep->fid);
}

INSTANTIATE_TEST_SUITE_P(Claimed, Ep, ::testing::ValuesIn(claimed_kinds()), [](const auto& i) { return i.param.name; });

}  // namespace
}  // namespace uet::cases
