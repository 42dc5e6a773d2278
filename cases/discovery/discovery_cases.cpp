// Discovery, addressing, address vectors and queues (UEC 1.0 §2.2.5.1–§2.2.5.3): what fi_getinfo
// reports and what the basic objects do, for every endpoint type the provider claims.
#include <rdma/fi_cm.h>

#include <cstring>
#include <memory>
#include <vector>

#include "area_traits.hpp"
#include "conformance.hpp"
#include "objects.hpp"
#include "uet/wire/wire_gen.hpp"

// What the harness must know of this area (common/claims/area_traits.hpp).
UET_AREA_TRAITS(.processes = 1);

namespace uet::cases {
namespace {

namespace w = uet::wire;

// `n` more endpoints in the domain of `o`, for their distinct names (an AV may fold repeated inserts of
// one address). Declared after `o`, so they close first.
class ExtraEndpoints {
 public:
  ExtraEndpoints(Objects& o, fi_info* info, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      fid_ep* ep = nullptr;
      EXPECT_EQ(fi_endpoint(o.domain, info, &ep, nullptr), 0);
      if (!ep) return;
      eps_.push_back(ep);
      EXPECT_EQ(fi_ep_bind(ep, &o.av->fid, 0), 0);
      EXPECT_EQ(fi_ep_bind(ep, &o.cq->fid, FI_TRANSMIT | FI_RECV), 0);
      EXPECT_EQ(fi_enable(ep), 0);
      std::vector<uint8_t> name(256);
      size_t len = name.size();
      EXPECT_EQ(fi_getname(&ep->fid, name.data(), &len), 0);
      name.resize(len);
      names.push_back(name);
    }
  }
  ~ExtraEndpoints() {
    for (fid_ep* ep : eps_) fi_close(&ep->fid);
  }
  std::vector<std::vector<uint8_t>> names;

 private:
  std::vector<fid_ep*> eps_;
};

// Table semantics (2.2.5.3.8-d): indices from 0, contiguous in insertion order, across insert calls.
void expect_table_indices(Objects& o, fi_info* info) {
  ExtraEndpoints extra(o, info, 3);
  ASSERT_EQ(extra.names.size(), 3u);
  const auto& names = extra.names;
  fi_addr_t first[2] = {FI_ADDR_NOTAVAIL, FI_ADDR_NOTAVAIL};
  std::vector<uint8_t> two(names[0]);
  two.insert(two.end(), names[1].begin(), names[1].end());
  ASSERT_EQ(fi_av_insert(o.av, two.data(), 2, first, 0, nullptr), 2);
  fi_addr_t third = FI_ADDR_NOTAVAIL;
  ASSERT_EQ(fi_av_insert(o.av, names[2].data(), 1, &third, 0, nullptr), 1);
  EXPECT_EQ(first[0], 0u);
  EXPECT_EQ(first[1], 1u);
  EXPECT_EQ(third, 2u);
}

class Discovery : public ::testing::TestWithParam<Kind> {
 protected:

  InfoPtr info_for_kind() {
    int rc = 0;
    InfoPtr info = getinfo(hints_for(GetParam().ep_type).get(), &rc);
    EXPECT_TRUE(info) << manifest().provider << " claims " << GetParam().name
                      << " endpoints but fi_getinfo returned " << rc << " (" << fi_strerror(-rc) << ")";
    return info;
  }
};

// The rows of Table 2-4 the digest has (the table is partial: choice-free rows only): fi_msg on every
// endpoint type; fi_tagged on RDM exactly when a profile that has it (AI Full, HPC) is claimed; MRs bound
// to endpoints (FI_MR_ENDPOINT) wherever RMA is offered; the AV type TABLE.
TEST_P(Discovery, InfoOffersTheProfilesParameterSet) {
  covers({"2.2.2-a"});
  UET_REQUIRE_UET_PROVIDER();
  InfoPtr hints = hints_for(GetParam().ep_type);
  hints->caps = 0;  // everything the provider offers for this endpoint type
  int rc = 0;
  InfoPtr info = getinfo(hints.get(), &rc);
  ASSERT_TRUE(info) << "fi_getinfo: " << fi_strerror(-rc);
  EXPECT_TRUE(info->caps & FI_MSG) << "fi_msg on " << GetParam().name << " (Table 2-4)";
  const bool tagged_profile = manifest().claims_profile("ai_full") || manifest().claims_profile("hpc");
  if (GetParam().ep_type == FI_EP_RDM) {
    EXPECT_EQ(bool(info->caps & FI_TAGGED), tagged_profile)
        << "FI_TAGGED is offered exactly with AI Full or HPC (Table 2-4; claims " << manifest().profiles.size()
        << " profile(s))";
  }
  if (info->caps & FI_RMA) {
    EXPECT_TRUE(info->domain_attr->mr_mode & FI_MR_ENDPOINT) << "MRs are bound to endpoints (Table 2-4, 2.2.5)";
  }
  EXPECT_TRUE(info->domain_attr->av_type == FI_AV_TABLE || info->domain_attr->av_type == FI_AV_UNSPEC)
      << "av_type " << info->domain_attr->av_type << " (Table 2-4: FI_AV_TABLE)";
}

TEST_P(Discovery, AcceptsTheVersion2Api) {
  covers({"2.2.5-a", "2.2.5.2.1-a"});
  int rc = 0;
  InfoPtr info = getinfo(hints_for(GetParam().ep_type).get(), &rc, FI_VERSION(2, 0));
  ASSERT_TRUE(info) << "fi_getinfo(FI_VERSION(2,0)) for " << manifest().provider << ": " << fi_strerror(-rc);
  EXPECT_STREQ(info->fabric_attr->prov_name, manifest().provider.c_str());
}

TEST_P(Discovery, AddressFormatIsFiAddrUet) {
  covers({"2.2.5.1-a"});
  UET_REQUIRE_UET_PROVIDER();
  InfoPtr info = info_for_kind();
  ASSERT_TRUE(info);
  EXPECT_EQ(info->addr_format, static_cast<uint32_t>(w::k_fi_addr_uet))
      << "FI_ADDR_UET is " << w::k_fi_addr_uet << " per spec/wire.yaml choice fi-addr-uet-value";
}

TEST_P(Discovery, MemoryRegionsAreBoundToEndpoints) {
  covers({"2.2.5-c"});
  UET_REQUIRE_UET_PROVIDER();
  InfoPtr hints = hints_for(GetParam().ep_type);
  hints->domain_attr->mr_mode = FI_MR_ENDPOINT | FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
  InfoPtr info = getinfo(hints.get());
  ASSERT_TRUE(info);
  EXPECT_TRUE(info->domain_attr->mr_mode & FI_MR_ENDPOINT) << "mr_mode 0x" << std::hex << info->domain_attr->mr_mode;
}

TEST_P(Discovery, AddressVectorTableIsSupported) {
  covers({"2.2.5.3.8-a"});
  InfoPtr info = info_for_kind();
  ASSERT_TRUE(info);
  Objects o;
  ASSERT_EQ(o.open_endpoint(info.get(), FI_AV_TABLE), 0) << o.failed;
}

TEST_P(Discovery, AddressVectorUnspecBehavesAsTable) {
  covers({"2.2.5.3.8-b", "2.2.5.3.8-c", "2.2.5.3.8-d"});
  UET_REQUIRE_UET_PROVIDER();
  InfoPtr info = info_for_kind();
  ASSERT_TRUE(info);
  for (fi_av_type type : {FI_AV_UNSPEC, FI_AV_MAP, FI_AV_TABLE}) {
    SCOPED_TRACE(fi_tostr(&type, FI_TYPE_AV_TYPE));
    Objects o;
    ASSERT_EQ(o.open_endpoint(info.get(), type), 0) << o.failed;
    expect_table_indices(o, info.get());
  }
}

TEST_P(Discovery, TableIndicesAreContiguousInInsertionOrder) {
  covers({"2.2.5.3.8-d"});
  InfoPtr info = info_for_kind();
  ASSERT_TRUE(info);
  Objects o;
  ASSERT_EQ(o.open_endpoint(info.get(), FI_AV_TABLE), 0) << o.failed;
  expect_table_indices(o, info.get());
}

TEST_P(Discovery, GetnameReturnsTheCompleteUetAddress) {
  covers({"2.2.5.3.6-a", "2.2.5.3.5-c", "2.2.5.1-c", "2.2.5.1-e", "2.2.5.2.2-h"});
  UET_REQUIRE_UET_PROVIDER();
  InfoPtr info = info_for_kind();
  ASSERT_TRUE(info);
  Objects o;
  ASSERT_EQ(o.open_endpoint(info.get()), 0) << o.failed;
  std::vector<uint8_t> a(256);
  size_t len = a.size();
  ASSERT_EQ(fi_getname(&o.ep->fid, a.data(), &len), 0);
  const AddressLayout& layout = layout_of(manifest());  // the verdict rests on it, pass or fail
  ASSERT_EQ(layout.misfit(len), "") << "the Table 2-10 fields do not fit in fi_getname's bytes: " << to_hex(a.data(), len);
  EXPECT_EQ(layout.get(a.data(), len, AddrField::version), w::k_addr_version);
  const auto flags = static_cast<uint8_t>(layout.get(a.data(), len, AddrField::flags).value_or(0));
  for (uint64_t bit : {w::k_addr_flag_caps_valid, w::k_addr_flag_fa_valid, w::k_addr_flag_pid_valid,
                       w::k_addr_flag_index_valid, w::k_addr_flag_initiator_valid})
    EXPECT_TRUE(flags & (1u << bit)) << "valid flag bit " << bit << " is clear in flags 0x" << std::hex << +flags;
  // The capabilities the address advertises must be those the manifest claims: a claim is checked.
  const auto caps = static_cast<uint8_t>(layout.get(a.data(), len, AddrField::caps).value_or(0));
  EXPECT_EQ(bool(caps & (1u << w::k_cap_ai_base)), manifest().claims_profile("ai_base"));
  EXPECT_EQ(bool(caps & (1u << w::k_cap_ai_full)), manifest().claims_profile("ai_full"));
  EXPECT_EQ(bool(caps & (1u << w::k_cap_hpc)), manifest().claims_profile("hpc"));
  EXPECT_EQ(layout.get(a.data(), len, AddrField::num_indices), 1u)
      << "an fi_endpoint endpoint has exactly one application-visible resource index";
  EXPECT_NE(layout.get(a.data(), len, AddrField::start_index).value_or(0) & 0xFFF, 0u) << "resource index 0 is reserved for the provider-to-provider channel";
}

TEST_P(Discovery, EndpointsSupportAnEventQueue) {
  covers({"2.2.5.3.2-a", "2.2.5.3.2-b"});
  UET_REQUIRE_UET_PROVIDER();  // libfabric lets DGRAM endpoints of other providers refuse an EQ
  InfoPtr info = info_for_kind();
  ASSERT_TRUE(info);
  Objects o;
  ASSERT_EQ(o.open_endpoint(info.get()), 0) << o.failed;
  fid_eq* eq = nullptr;
  fi_eq_attr attr{};
  ASSERT_EQ(fi_eq_open(o.fabric, &attr, &eq, nullptr), 0);
  fid_ep* ep = nullptr;
  ASSERT_EQ(fi_endpoint(o.domain, info.get(), &ep, nullptr), 0);
  EXPECT_EQ(fi_ep_bind(ep, &eq->fid, 0), 0) << "binding an EQ to a " << GetParam().name << " endpoint";
  fi_close(&ep->fid);
  fi_close(&eq->fid);
}

TEST_P(Discovery, CompletionQueuesAreSupported) {
  covers({"2.2.5.3.7-a"});
  InfoPtr info = info_for_kind();
  ASSERT_TRUE(info);
  Objects o;
  ASSERT_EQ(o.open_domain(info.get()), 0) << o.failed;
  for (fi_cq_format format : {FI_CQ_FORMAT_CONTEXT, FI_CQ_FORMAT_MSG, FI_CQ_FORMAT_DATA, FI_CQ_FORMAT_TAGGED}) {
    fid_cq* cq = nullptr;
    fi_cq_attr attr{};
    attr.format = format;
    EXPECT_EQ(fi_cq_open(o.domain, &attr, &cq, nullptr), 0) << "CQ format " << format;
    if (cq) fi_close(&cq->fid);
  }
}

INSTANTIATE_TEST_SUITE_P(Claimed, Discovery, ::testing::ValuesIn(claimed_kinds()),
                         [](const auto& info) { return info.param.name; });

TEST(Discovery, BothEndpointTypesAreSupported) {
  covers({"2.2.5.3.5-e"});
  UET_REQUIRE_UET_PROVIDER();
  for (fi_ep_type type : {FI_EP_RDM, FI_EP_DGRAM}) {
    int rc = 0;
    InfoPtr info = getinfo(hints_for(type).get(), &rc);
    EXPECT_TRUE(info) << fi_tostr(&type, FI_TYPE_EP_TYPE) << ": " << fi_strerror(-rc);
  }
}

}  // namespace
}  // namespace uet::cases
