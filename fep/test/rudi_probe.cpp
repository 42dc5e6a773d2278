// softuet-rudi-probe: RMA writes and reads between two processes to an MR of a chosen key, for the wire
// tests of RUDI (pytest/fep/test_rudi.py). fi_rma_bw cannot ask for the IDEMPOTENT_SAFE key bit.
//
//   softuet-rudi-probe serve KEY          registers 1 MiB + 64 B under KEY, prints "addr HEX", and serves
//                                         until its stdin closes (the FEP thread answers the requests)
//   softuet-rudi-probe run HEX KEY SIZE.. for each SIZE: writes a pattern at offset 64, reads it back and
//                                         compares; prints "ok SIZE"; exit status 0 when every size matched
#include <poll.h>
#include <rdma/fi_rma.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "probe_fabric.hpp"

namespace {

constexpr size_t kMrSize = (size_t{1} << 20) + 64;
constexpr uint64_t kOffset = 64;
constexpr int kServeSeconds = 300;  // a server whose test died does not outlive it for long

int fail(const char* what, long ret) {
  std::fprintf(stderr, "%s: %ld (%s)\n", what, ret, fi_strerror(static_cast<int>(-ret)));
  return 1;
}

using softuet_probe::ProbeFabric;

int open_fabric(ProbeFabric& f) {
  if (f.open(FI_RMA) == 0) return 0;
  std::fprintf(stderr, "%s\n", f.failed.c_str());
  return 1;
}

int serve(uint64_t key) {
  ProbeFabric f;
  if (open_fabric(f)) return 1;
  std::vector<uint8_t> mem(kMrSize, 0);
  fid_mr* mr = nullptr;
  int r = fi_mr_reg(f.domain, mem.data(), mem.size(), FI_REMOTE_READ | FI_REMOTE_WRITE, 0, key, 0, &mr, nullptr);
  if (r) return fail("fi_mr_reg", r);
  if ((r = fi_mr_bind(mr, &f.ep->fid, 0))) return fail("fi_mr_bind", r);
  if ((r = fi_mr_enable(mr))) return fail("fi_mr_enable", r);
  if ((r = fi_enable(f.ep))) return fail("fi_enable", r);
  std::printf("addr %s\n", f.name_hex().c_str());
  std::fflush(stdout);
  pollfd p{STDIN_FILENO, POLLIN, 0};
  poll(&p, 1, kServeSeconds * 1000);  // EOF (the test is done) or the time limit
  f.close_ep();
  fi_close(&mr->fid);
  return 0;
}

int wait_one(ProbeFabric& f, void* ctx) {
  for (int i = 0; i < 30000; ++i) {
    fi_cq_data_entry c{};
    const ssize_t n = fi_cq_sread(f.cq, &c, 1, nullptr, 10);
    if (n == 1) return c.op_context == ctx ? 0 : fail("a completion for another context", 0);
    if (n == -FI_EAVAIL) {
      fi_cq_err_entry e{};
      fi_cq_readerr(f.cq, &e, 0);
      std::fprintf(stderr, "error completion: err %d (%s), prov_errno %d\n", e.err, fi_strerror(e.err), e.prov_errno);
      return 1;
    }
  }
  return fail("no completion within 300 s", 0);
}

int run(const char* hex, uint64_t key, const std::vector<size_t>& sizes) {
  ProbeFabric f;
  if (open_fabric(f)) return 1;
  int r = fi_enable(f.ep);
  if (r) return fail("fi_enable", r);
  const fi_addr_t peer = f.insert_hex(hex);
  if (peer == FI_ADDR_NOTAVAIL) return fail("fi_av_insert", -FI_EINVAL);
  int status = 0;
  uint8_t seed = 3;
  for (size_t size : sizes) {
    std::vector<uint8_t> src(size), back(size, 0);
    for (size_t i = 0; i < size; ++i) src[i] = static_cast<uint8_t>(seed + i * 7);
    ++seed;
    int ctx_w = 0, ctx_r = 0;
    while ((r = static_cast<int>(fi_write(f.ep, src.data(), size, nullptr, peer, kOffset, key, &ctx_w))) == -FI_EAGAIN) {
    }
    if (r) return fail("fi_write", r);
    if (wait_one(f, &ctx_w)) return 1;
    while ((r = static_cast<int>(fi_read(f.ep, back.data(), size, nullptr, peer, kOffset, key, &ctx_r))) == -FI_EAGAIN) {
    }
    if (r) return fail("fi_read", r);
    if (wait_one(f, &ctx_r)) return 1;
    const bool same = back == src;
    std::printf("%s %zu\n", same ? "ok" : "MISMATCH", size);
    status |= same ? 0 : 1;
  }
  std::fflush(stdout);
  f.close_ep();
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "serve") == 0) return serve(std::strtoull(argv[2], nullptr, 0));
  if (argc >= 5 && std::strcmp(argv[1], "run") == 0) {
    std::vector<size_t> sizes;
    for (int i = 4; i < argc; ++i) sizes.push_back(std::strtoull(argv[i], nullptr, 0));
    return run(argv[2], std::strtoull(argv[3], nullptr, 0), sizes);
  }
  std::fprintf(stderr, "usage: %s serve KEY | run ADDR_HEX KEY SIZE...\n", argv[0]);
  return 2;
}
