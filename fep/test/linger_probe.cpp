// softuet-linger-probe: one message between two processes, the target closing its endpoint on command, for
// the close-linger test (pytest/fep/test_close_linger.py).
//
//   softuet-linger-probe serve      posts a receive, prints "addr HEX", then "received" once the message is
//                                   in; at a line on stdin closes its endpoint and domain, prints "closed"
//   softuet-linger-probe send HEX   sends one message to HEX and prints "sent" once it completes, or
//                                   "error ERR" for an error completion (FI_EIO: retransmissions gave up)
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "probe_fabric.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using softuet_probe::ProbeFabric;

constexpr size_t kMessage = 64;  // one packet: its ACK carries the SES response that completes the send
// A side whose test died does not outlive it for long; longer than softuet's retransmission give-up.
constexpr auto kDeadline = std::chrono::seconds(120);

int fail(const char* what, long ret) {
  std::fprintf(stderr, "%s: %ld (%s)\n", what, ret, fi_strerror(static_cast<int>(-ret)));
  return 1;
}

// One completion or error completion of `f`'s CQ: 1, -err, or 0 when the deadline passed.
int completion(ProbeFabric& f) {
  const auto until = Clock::now() + kDeadline;
  while (Clock::now() < until) {
    fi_cq_data_entry c{};
    const ssize_t n = fi_cq_sread(f.cq, &c, 1, nullptr, 100);
    if (n == 1) return 1;
    if (n == -FI_EAVAIL) {
      fi_cq_err_entry e{};
      if (fi_cq_readerr(f.cq, &e, 0) == 1) return -e.err;
    }
  }
  return 0;
}

int serve() {
  ProbeFabric f;
  if (f.open(FI_MSG)) return fail(f.failed.c_str(), 0);
  if (int r = fi_enable(f.ep)) return fail("fi_enable", r);
  std::vector<uint8_t> buf(kMessage);
  if (ssize_t r = fi_recv(f.ep, buf.data(), buf.size(), nullptr, FI_ADDR_UNSPEC, nullptr)) return fail("fi_recv", r);
  std::printf("addr %s\n", f.name_hex().c_str());
  std::fflush(stdout);
  const int got = completion(f);
  if (got != 1) return fail("receive", got);
  std::printf("received\n");
  std::fflush(stdout);
  pollfd p{STDIN_FILENO, POLLIN, 0};
  poll(&p, 1, static_cast<int>(std::chrono::milliseconds(kDeadline).count()));
  f.close();
  std::printf("closed\n");
  return 0;
}

int send(const std::string& hex) {
  ProbeFabric f;
  if (f.open(FI_MSG)) return fail(f.failed.c_str(), 0);
  if (int r = fi_enable(f.ep)) return fail("fi_enable", r);
  const fi_addr_t peer = f.insert_hex(hex);
  if (peer == FI_ADDR_NOTAVAIL) return fail("fi_av_insert", -FI_EINVAL);
  std::vector<uint8_t> msg(kMessage, 0x5a);
  ssize_t r;
  while ((r = fi_send(f.ep, msg.data(), msg.size(), nullptr, peer, nullptr)) == -FI_EAGAIN) {
  }
  if (r) return fail("fi_send", r);
  const int done = completion(f);
  if (done == 1) {
    std::printf("sent\n");
  } else {
    std::printf("error %d\n", -done);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && !std::strcmp(argv[1], "serve")) return serve();
  if (argc == 3 && !std::strcmp(argv[1], "send")) return send(argv[2]);
  std::fprintf(stderr, "usage: %s serve | send HEX\n", argv[0]);
  return 2;
}
