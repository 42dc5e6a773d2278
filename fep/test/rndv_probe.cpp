// softuet-rndv-probe: large sends between two processes, for the wire tests of rendezvous and deferrable send
// (pytest/fep/test_rendezvous.py). fabtests cannot choose whether a send's buffer is in a remote-read MR,
// nor post the receives after the sends on demand.
//
//   softuet-rndv-probe recv early|late [--tagged] SIZE...
//       prints "addr HEX"; early: the receives are posted before that line; late: they are posted when a
//       line "post [HEX]" comes on stdin (HEX: the sender's address, inserted into the AV first). With
//       --tagged message i goes to the receive of tag i + 1; untagged messages may arrive in any order (RUD),
//       so each receive holds the largest and a message is known by its length (the SIZEs differ). Prints
//       "ok SIZE" per message whose bytes match, then
//       "extra N": messages that arrived for one more receive within 300 ms (0 when each came once). Then
//       serves until stdin closes. Exit status 0 when every message matched and none came twice.
//   softuet-rndv-probe send HEX [--mr] [--tagged] SIZE...
//       prints "addr HEX" (its own), sends every SIZE to HEX at once (with --mr from one buffer registered
//       FI_SEND|FI_REMOTE_READ with key 0x5afe, message i at offset 4096 * i + the sizes before it rounded up
//       to 4096, and its fi_mr_desc), then waits for the completions and prints "sent SIZE" for each.
#include <poll.h>
#include <rdma/fi_tagged.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "probe_fabric.hpp"

namespace {

using softuet_probe::ProbeFabric;

constexpr uint64_t kMrKey = 0x5afe;
constexpr int kServeSeconds = 300;  // a receiver whose test died does not outlive it for long
constexpr int kWaitSeconds = 120;

int fail(const std::string& what) {
  std::fprintf(stderr, "%s\n", what.c_str());
  return 1;
}

uint8_t pattern(size_t msg, size_t j) { return static_cast<uint8_t>(msg * 31 + j * 7 + (j >> 12)); }

// Where message i starts in the sender's buffer: each at a 4096-byte boundary.
std::vector<size_t> offsets(const std::vector<size_t>& sizes, size_t* total) {
  std::vector<size_t> at;
  size_t off = 0;
  for (size_t s : sizes) {
    at.push_back(off);
    off += (s + 4095) / 4096 * 4096;
  }
  *total = off;
  return at;
}

// Waits for one completion per context of `want` (in any order), noting each one's length in `len` when
// given; false on an error entry or a timeout.
bool wait_all(ProbeFabric& f, std::vector<void*> want, int seconds, std::map<void*, size_t>* len = nullptr) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (!want.empty()) {
    if (std::chrono::steady_clock::now() > deadline) return !fail("timed out waiting for completions");
    fi_cq_data_entry c{};
    const ssize_t n = fi_cq_sread(f.cq, &c, 1, nullptr, 100);
    if (n == -FI_EAVAIL) {
      fi_cq_err_entry e{};
      fi_cq_readerr(f.cq, &e, 0);
      return !fail("error completion: err " + std::to_string(e.err) + " (" + fi_strerror(e.err) + "), prov_errno " +
                   std::to_string(e.prov_errno));
    }
    if (n != 1) continue;
    for (auto it = want.begin(); it != want.end(); ++it)
      if (*it == c.op_context) {
        if (len) (*len)[c.op_context] = c.len;
        want.erase(it);
        break;
      }
  }
  return true;
}

struct Args {
  bool tagged = false, mr = false;
  std::vector<size_t> sizes;
};

Args parse(int argc, char** argv, int from) {
  Args a;
  for (int i = from; i < argc; ++i) {
    if (std::strcmp(argv[i], "--tagged") == 0) a.tagged = true;
    else if (std::strcmp(argv[i], "--mr") == 0) a.mr = true;
    else a.sizes.push_back(std::strtoull(argv[i], nullptr, 0));
  }
  return a;
}

ssize_t post_recv(ProbeFabric& f, bool tagged, std::vector<uint8_t>& buf, uint64_t tag, void* ctx) {
  ssize_t r;
  do {
    r = tagged ? fi_trecv(f.ep, buf.data(), buf.size(), nullptr, FI_ADDR_UNSPEC, tag, 0, ctx)
               : fi_recv(f.ep, buf.data(), buf.size(), nullptr, FI_ADDR_UNSPEC, ctx);
  } while (r == -FI_EAGAIN);
  return r;
}

int receive(bool late, const Args& a) {
  ProbeFabric f;
  if (f.open(FI_MSG | FI_TAGGED) || fi_enable(f.ep)) return fail("open: " + f.failed);
  const size_t n = a.sizes.size();
  std::vector<std::vector<uint8_t>> bufs;
  std::vector<int> ctx(n);
  size_t largest = 0;
  for (size_t s : a.sizes) largest = std::max(largest, s);
  for (size_t s : a.sizes) bufs.emplace_back((a.tagged ? s : largest) + 64, 0);
  auto post_all = [&] {
    for (size_t i = 0; i < n; ++i)
      if (post_recv(f, a.tagged, bufs[i], i + 1, &ctx[i])) return false;
    return true;
  };
  if (!late && !post_all()) return fail("posting the receives failed");
  std::printf("addr %s\n", f.name_hex().c_str());
  std::fflush(stdout);
  if (late) {
    std::string line;
    if (!std::getline(std::cin, line) || line.rfind("post", 0) != 0) return fail("no post line");
    if (line.size() > 5 && f.insert_hex(line.substr(5)) == FI_ADDR_NOTAVAIL) return fail("bad address to insert");
    if (!post_all()) return fail("posting the receives failed");
  }
  std::vector<void*> want;
  for (size_t i = 0; i < n; ++i) want.push_back(&ctx[i]);
  std::map<void*, size_t> lens;
  if (!wait_all(f, want, kWaitSeconds, &lens)) return 1;
  int status = 0;
  for (size_t i = 0; i < n; ++i) {
    // The buffer that holds message i: its own (tagged), or the one whose completion had its length.
    size_t b = i;
    if (!a.tagged)
      for (size_t k = 0; k < n; ++k)
        if (lens[&ctx[k]] == a.sizes[i]) b = k;
    bool same = lens[&ctx[b]] == a.sizes[i] && bufs[b][a.sizes[i]] == 0;  // nothing past the message
    for (size_t j = 0; j < a.sizes[i] && same; ++j) same = bufs[b][j] == pattern(i, j);
    std::printf("%s %zu\n", same ? "ok" : "MISMATCH", a.sizes[i]);
    status |= same ? 0 : 1;
  }
  // Exactly once: one more receive for each message (its tag) finds nothing.
  std::vector<std::vector<uint8_t>> extra(n, std::vector<uint8_t>(64));
  std::vector<int> extra_ctx(n);
  for (size_t i = 0; i < n; ++i) post_recv(f, a.tagged, extra[i], i + 1, &extra_ctx[i]);
  int got = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  while (std::chrono::steady_clock::now() < until) {
    fi_cq_data_entry c{};
    const ssize_t r = fi_cq_sread(f.cq, &c, 1, nullptr, 50);
    if (r == 1) ++got;
    if (r == -FI_EAVAIL) {
      fi_cq_err_entry e{};
      fi_cq_readerr(f.cq, &e, 0);
      ++got;
    }
  }
  std::printf("extra %d\n", got);
  std::fflush(stdout);
  pollfd p{STDIN_FILENO, POLLIN, 0};
  poll(&p, 1, kServeSeconds * 1000);  // EOF (the test is done) or the time limit
  f.close();
  return status | (got ? 1 : 0);
}

int send(const char* hex, const Args& a) {
  ProbeFabric f;
  if (f.open(FI_MSG | FI_TAGGED)) return fail("open: " + f.failed);
  size_t total = 0;
  const std::vector<size_t> at = offsets(a.sizes, &total);
  std::vector<uint8_t> buf(total ? total : 1);
  for (size_t i = 0; i < a.sizes.size(); ++i)
    for (size_t j = 0; j < a.sizes[i]; ++j) buf[at[i] + j] = pattern(i, j);
  fid_mr* mr = nullptr;
  void* desc = nullptr;
  if (a.mr) {
    if (fi_mr_reg(f.domain, buf.data(), buf.size(), FI_SEND | FI_REMOTE_READ, 0, kMrKey, 0, &mr, nullptr) ||
        fi_mr_bind(mr, &f.ep->fid, 0) || fi_mr_enable(mr))
      return fail("registering the MR failed");
    desc = fi_mr_desc(mr);
  }
  if (fi_enable(f.ep)) return fail("fi_enable failed");
  std::printf("addr %s\n", f.name_hex().c_str());
  std::fflush(stdout);
  const fi_addr_t peer = f.insert_hex(hex);
  if (peer == FI_ADDR_NOTAVAIL) return fail("fi_av_insert failed");
  std::vector<int> ctx(a.sizes.size());
  std::vector<void*> want;
  for (size_t i = 0; i < a.sizes.size(); ++i) {
    ssize_t r;
    do {
      r = a.tagged ? fi_tsend(f.ep, buf.data() + at[i], a.sizes[i], desc, peer, i + 1, &ctx[i])
                   : fi_send(f.ep, buf.data() + at[i], a.sizes[i], desc, peer, &ctx[i]);
    } while (r == -FI_EAGAIN);
    if (r) return fail("send failed: " + std::to_string(r));
    want.push_back(&ctx[i]);
  }
  if (!wait_all(f, want, kWaitSeconds)) return 1;
  for (size_t s : a.sizes) std::printf("sent %zu\n", s);
  std::fflush(stdout);
  if (mr) fi_close(&mr->fid);
  f.close();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "recv") == 0 && (!std::strcmp(argv[2], "early") || !std::strcmp(argv[2], "late")))
    return receive(std::strcmp(argv[2], "late") == 0, parse(argc, argv, 3));
  if (argc >= 4 && std::strcmp(argv[1], "send") == 0) return send(argv[2], parse(argc, argv, 3));
  std::fprintf(stderr, "usage: %s recv early|late [--tagged] SIZE... | send HEX [--mr] [--tagged] SIZE...\n", argv[0]);
  return 2;
}
