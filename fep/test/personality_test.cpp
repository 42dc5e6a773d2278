// The personality settings (fep/README.md "Personalities") that need no wire of their own: a bad value of
// any of them gives no info and no domain; SOFTUET_EP_TYPES leaves an endpoint type out; with
// SOFTUET_JOB_ID_METHODS=indirect every way to give a direct or AV JobID is refused with -FI_EOPNOTSUPP and
// the indirect method still carries messages; with SOFTUET_JOB_ID_METHODS=none no endpoint has a JobID and
// its requests carry JobID 0. The others: wide_address_test.cpp, own_port_test.cpp,
// close_wait_test.cpp and rendezvous_test.cpp (SOFTUET_LARGE_SENDS).
#include <rdma/fi_domain.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "fixture.hpp"

namespace softuet_test {
namespace {

constexpr std::pair<const char*, const char*> kBadValues[] = {
    {"SOFTUET_ADDR_LAYOUT", "wide"},        {"SOFTUET_ADDR_LAYOUT", ""},
    {"SOFTUET_EP_TYPES", ""},               {"SOFTUET_EP_TYPES", "rdm,msg"},
    {"SOFTUET_EP_TYPES", ","},              {"SOFTUET_LARGE_SENDS", "never"},
    {"SOFTUET_JOB_ID_METHODS", "direct"},   {"SOFTUET_JOB_ID_METHODS", "indirect,bogus"},
    {"SOFTUET_JOB_ID_METHODS", ""},         {"SOFTUET_JOB_ID_METHODS", "none,indirect"},
    {"SOFTUET_CLOSE", "wait"},
    {"SOFTUET_CLOSE_WAIT_MS", "0"},         {"SOFTUET_CLOSE_WAIT_MS", "600001"},
    {"SOFTUET_CLOSE_WAIT_MS", "5s"},        {"SOFTUET_CLOSE_WAIT_MS", ""},
    {"SOFTUET_UDP_PORT", "automatic"},      {"SOFTUET_UDP_PORT", "-1"},
    {"SOFTUET_UDP_PORT", "65536"},
    {"SOFTUET_ADDR_VERSION", "256"},        {"SOFTUET_ADDR_VERSION", "one"},
    {"SOFTUET_ADDR_VERSION", ""},           {"SOFTUET_ADDR_FA_FLAG", "unset"},
    {"SOFTUET_ADDR_FA_FLAG", "clear"},  // with the spec's version 0: an address with no FA
    {"SOFTUET_ATOMICS", "none"},
};

TEST(Personality, ABadValueGivesNoInfo) {
  for (const auto& [var, value] : kBadValues) {
    ScopedEnv bad(var, value);
    int rc = 0;
    fi_info* info = softuet_info(FI_EP_UNSPEC, 0, nullptr, &rc);
    EXPECT_EQ(info, nullptr) << var << "='" << value << "' was taken";
    EXPECT_EQ(rc, -FI_ENODATA) << var << "='" << value << "'";
    fi_freeinfo(info);
  }
}

TEST(Personality, ABadValueAtDomainOpenGivesNoDomain) {
  int rc = 0;
  fi_info* info = softuet_info(FI_EP_RDM, FI_MSG, nullptr, &rc);
  ASSERT_NE(info, nullptr) << fi_err(rc);
  fid_fabric* fabric = nullptr;
  ASSERT_EQ(fi_fabric(info->fabric_attr, &fabric, nullptr), 0);
  for (const auto& [var, value] : kBadValues) {
    ScopedEnv bad(var, value);
    fid_domain* domain = nullptr;
    EXPECT_EQ(fi_domain(fabric, info, &domain, nullptr), -FI_EINVAL) << var << "='" << value << "'";
    if (domain) fi_close(&domain->fid);
  }
  fi_close(&fabric->fid);
  fi_freeinfo(info);
}

// The endpoint types fi_getinfo lists with no hints.
std::vector<fi_ep_type> Offered() {
  int rc = 0;
  fi_info* info = softuet_info(FI_EP_UNSPEC, 0, nullptr, &rc);
  std::vector<fi_ep_type> types;
  for (fi_info* i = info; i; i = i->next) types.push_back(i->ep_attr->type);
  fi_freeinfo(info);
  return types;
}

TEST(Personality, EpTypesLeavesATypeOut) {
  EXPECT_EQ(Offered(), (std::vector<fi_ep_type>{FI_EP_RDM, FI_EP_DGRAM}));
  {
    ScopedEnv rdm("SOFTUET_EP_TYPES", "rdm");
    EXPECT_EQ(Offered(), std::vector<fi_ep_type>{FI_EP_RDM});
    int rc = 0;
    EXPECT_EQ(softuet_info(FI_EP_DGRAM, FI_MSG, nullptr, &rc), nullptr);
    EXPECT_EQ(rc, -FI_ENODATA);
    // An info made up for DGRAM does not open an endpoint either.
    fi_info* info = softuet_info(FI_EP_RDM, FI_MSG, nullptr, &rc);
    ASSERT_NE(info, nullptr) << fi_err(rc);
    fid_fabric* fabric = nullptr;
    fid_domain* domain = nullptr;
    ASSERT_EQ(fi_fabric(info->fabric_attr, &fabric, nullptr), 0);
    ASSERT_EQ(fi_domain(fabric, info, &domain, nullptr), 0);
    info->ep_attr->type = FI_EP_DGRAM;
    fid_ep* ep = nullptr;
    EXPECT_EQ(fi_endpoint(domain, info, &ep, nullptr), -FI_EINVAL);
    fi_close(&domain->fid);
    fi_close(&fabric->fid);
    fi_freeinfo(info);
  }
  ScopedEnv dgram("SOFTUET_EP_TYPES", "dgram");
  EXPECT_EQ(Offered(), std::vector<fi_ep_type>{FI_EP_DGRAM});
}

class IndirectOnly : public SoftuetApi {
 protected:
  ScopedEnv methods_{"SOFTUET_JOB_ID_METHODS", "indirect"};
};

// fi_getinfo asked for a JobID method: 0 or its error.
int InfoForMethod(size_t auth_key_size) {
  fi_info* hints = fi_allocinfo();
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_MSG;
  hints->fabric_attr->prov_name = strdup("softuet");
  hints->domain_attr->auth_key_size = auth_key_size;
  if (auth_key_size == 3) hints->domain_attr->auth_key = static_cast<uint8_t*>(calloc(1, 3));
  fi_info* info = nullptr;
  const int rc = fi_getinfo(FI_VERSION(2, 0), nullptr, nullptr, 0, hints, &info);
  fi_freeinfo(hints);
  fi_freeinfo(info);
  return rc;
}

TEST_F(IndirectOnly, GetinfoOffersNoDirectOrAvMethod) {
  EXPECT_EQ(InfoForMethod(3), -FI_ENODATA);
  EXPECT_EQ(InfoForMethod(FI_AV_AUTH_KEY), -FI_ENODATA);
  EXPECT_EQ(InfoForMethod(0), 0);
}

TEST_F(IndirectOnly, EveryOtherWayToAJobIdIsNotSupported) {
  // A domain of the AV method.
  fi_info* av_method = fi_dupinfo(info_);
  av_method->domain_attr->auth_key_size = FI_AV_AUTH_KEY;
  fid_domain* domain = nullptr;
  EXPECT_EQ(fi_domain(fabric_, av_method, &domain, nullptr), -FI_EOPNOTSUPP);
  fi_freeinfo(av_method);
  // An endpoint with a direct JobID.
  fi_info* direct = fi_dupinfo(info_);
  direct->ep_attr->auth_key = static_cast<uint8_t*>(calloc(1, 3));
  direct->ep_attr->auth_key[0] = 7;
  direct->ep_attr->auth_key_size = 3;
  fid_ep* ep = nullptr;
  EXPECT_EQ(fi_endpoint(domain_, direct, &ep, nullptr), -FI_EOPNOTSUPP);
  fi_freeinfo(direct);
  // An AV auth key, and an address inserted with one.
  const uint8_t key[3] = {7, 0, 0};
  fi_addr_t handle = FI_ADDR_NOTAVAIL;
  EXPECT_EQ(fi_av_insert_auth_key(av_, key, sizeof key, &handle, 0), -FI_EOPNOTSUPP);
  std::vector<uint8_t> b(256);
  size_t len = b.size();
  ASSERT_EQ(fi_getname(&ep_[kB]->fid, b.data(), &len), 0);
  fi_addr_t with_key = 0;
  EXPECT_EQ(fi_av_insert(av_, b.data(), 1, &with_key, FI_AUTH_KEY, nullptr), -FI_EOPNOTSUPP);
  // An MR for one JobID.
  char buf[64];
  iovec iov{buf, sizeof buf};
  fi_mr_attr attr{};
  attr.mr_iov = &iov;
  attr.iov_count = 1;
  attr.access = FI_REMOTE_WRITE;
  attr.requested_key = 0x77;
  attr.auth_key_size = 3;
  attr.auth_key = const_cast<uint8_t*>(key);
  fid_mr* mr = nullptr;
  EXPECT_EQ(fi_mr_regattr(domain_, &attr, 0, &mr), -FI_EOPNOTSUPP);
  // A receive for one JobID.
  ASSERT_NO_FATAL_FAILURE(Enable());
  fi_msg msg{};
  msg.msg_iov = &iov;
  msg.iov_count = 1;
  msg.addr = 0;
  EXPECT_EQ(fi_recvmsg(ep_[kB], &msg, FI_AUTH_KEY), -FI_EOPNOTSUPP);

  // The indirect method carries messages as ever.
  ASSERT_NO_FATAL_FAILURE(SendAToB("job"));
}

// SOFTUET_JOB_ID_METHODS=none: a provider with no JobID at all. No auth_key is taken, and whatever would give
// the indirect JobID (SOFTUET_JOB_ID here, the entity or the fallback elsewhere) is not asked: a request carries
// JobID 0, and a message between two such endpoints is delivered.
class NoJobId : public SoftuetApi {
 protected:
  ScopedEnv methods_{"SOFTUET_JOB_ID_METHODS", "none"};
  ScopedEnv job_{"SOFTUET_JOB_ID", "0x5A5A01"};
  ScopedEnv fallback_{"SOFTUET_FALLBACK_JOB_ID", "1"};
};

TEST_F(NoJobId, GetinfoOffersNoAuthKey) {
  EXPECT_EQ(InfoForMethod(3), -FI_ENODATA);
  EXPECT_EQ(InfoForMethod(FI_AV_AUTH_KEY), -FI_ENODATA);
  EXPECT_EQ(InfoForMethod(0), 0);
}

TEST_F(NoJobId, RequestsCarryJobIdZero) {
  uet::codec::Decoded d;
  ASSERT_NO_FATAL_FAILURE(SendOneRequest(&d));
  EXPECT_EQ(d.get(uet::wire::Field::uet_ses_job_id), 0u);
}

TEST_F(NoJobId, MessagesBetweenEndpointsWithoutJobIdArrive) {
  ASSERT_NO_FATAL_FAILURE(Enable());
  ASSERT_NO_FATAL_FAILURE(SendAToB("no job"));
}

}  // namespace
}  // namespace softuet_test
