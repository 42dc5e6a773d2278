// fi_getinfo's service (spec 2.2.5.2.2, 2.2.3): a resource-index number or a name from the
// UET_PROVIDER_SERVICE_PATH file gives the endpoints their RIs; a bad number, an unknown name or a bad
// file gives no info (-FI_ENODATA); an RI already taken is -FI_EADDRINUSE.
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "fixture.hpp"
#include "softuet/fi_addr_uet.h"

namespace softuet_test {
namespace {

class Service : public SoftuetApi {
 protected:
  void TearDown() override {
    for (fid_ep* ep : extra_) EXPECT_EQ(fi_close(&ep->fid), 0);
    for (fi_info* i : infos_) fi_freeinfo(i);
    unsetenv("UET_PROVIDER_SERVICE_PATH");
    if (!file_.empty()) unlink(file_.c_str());
    SoftuetApi::TearDown();
  }
  // fi_getinfo with `service`: the RDM info, or nullptr with *rc.
  fi_info* Info(const char* service, int* rc) {
    fi_info* info = softuet_info(FI_EP_RDM, FI_MSG, service, rc);
    if (info) infos_.push_back(info);
    return info;
  }
  // An endpoint of the fixture's domain from `info`; its RI, or the negative fi_endpoint code.
  int Open(fi_info* info) {
    fid_ep* ep = nullptr;
    const int rc = fi_endpoint(domain_, info, &ep, nullptr);
    if (rc) return rc;
    extra_.push_back(ep);
    softuet_addr a{};
    size_t len = sizeof a;
    EXPECT_EQ(fi_getname(&ep->fid, &a, &len), 0);
    return a.uet.start_index;
  }
  void WriteFile(const std::string& text) {
    char path[] = "/tmp/softuet-services-XXXXXX";
    const int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    close(fd);
    file_ = path;
    std::ofstream(file_) << text;
    setenv("UET_PROVIDER_SERVICE_PATH", file_.c_str(), 1);
  }
  std::vector<fid_ep*> extra_;
  std::vector<fi_info*> infos_;
  std::string file_;
};

TEST_F(Service, ANumberIsOneResourceIndex) {
  int rc = 0;
  fi_info* info = Info("17", &rc);
  ASSERT_NE(info, nullptr) << fi_err(rc);
  const auto* src = static_cast<const softuet_addr*>(info->src_addr);
  EXPECT_EQ(src->uet.start_index, 17);
  EXPECT_EQ(src->uet.num_indices, 1);
  EXPECT_EQ(Open(info), 17);
  EXPECT_EQ(Open(info), -FI_EADDRINUSE) << "a second endpoint on RI 17";
}

TEST_F(Service, NumbersOutsideOneTo4095GiveNoInfo) {
  int rc = 0;
  for (const char* bad : {"0", "4096", "99999"}) {
    EXPECT_EQ(Info(bad, &rc), nullptr) << bad;
    EXPECT_EQ(rc, -FI_ENODATA) << bad;
  }
}

TEST_F(Service, ANameFromTheServiceFileGivesItsRange) {
  ASSERT_NO_FATAL_FAILURE(WriteFile("# services of this test\nmpi 100 2\n\nccl 200 1  # trailing comment\n"));
  int rc = 0;
  fi_info* mpi = Info("mpi", &rc);
  ASSERT_NE(mpi, nullptr) << fi_err(rc);
  EXPECT_EQ(Open(mpi), 100);
  EXPECT_EQ(Open(mpi), 101);
  EXPECT_EQ(Open(mpi), -FI_EADDRINUSE) << "the range has two RIs";
  fi_info* ccl = Info("ccl", &rc);
  ASSERT_NE(ccl, nullptr) << fi_err(rc);
  EXPECT_EQ(Open(ccl), 200);
  EXPECT_EQ(Info("shmem", &rc), nullptr);
  EXPECT_EQ(rc, -FI_ENODATA) << "a name in neither the file nor the (empty) predefined table";
}

TEST_F(Service, ABadServiceFileGivesNoInfo) {
  for (const char* text : {"mpi 100\n", "mpi x 1\n", "mpi 4095 2\n", "mpi 0 1\n", "mpi 1 0\n", "mpi 1 1\nmpi 2 1\n",
                           "mpi 1 1 extra\n"}) {
    ASSERT_NO_FATAL_FAILURE(WriteFile(std::string("ok 10 1\n") + text));
    int rc = 0;
    EXPECT_EQ(Info("ok", &rc), nullptr) << "one bad line refuses the whole file: " << text;
    EXPECT_EQ(rc, -FI_ENODATA);
    unlink(file_.c_str());
  }
  setenv("UET_PROVIDER_SERVICE_PATH", "/nonexistent/services", 1);
  int rc = 0;
  EXPECT_EQ(Info("ok", &rc), nullptr);
  EXPECT_EQ(rc, -FI_ENODATA);
}

TEST_F(Service, EndpointsWithoutAServiceSkipTakenIndices) {
  int rc = 0;
  fi_info* plain = Info(nullptr, &rc);
  ASSERT_NE(plain, nullptr);
  const int first = Open(plain);
  ASSERT_GT(first, 0);
  fi_info* next = Info(std::to_string(first + 1).c_str(), &rc);
  ASSERT_NE(next, nullptr);
  EXPECT_EQ(Open(next), first + 1);
  EXPECT_EQ(Open(plain), first + 2) << "the RI a service took is skipped";
}

}  // namespace
}  // namespace softuet_test
