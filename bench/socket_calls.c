// What one UDP socket call costs on this machine, by the form of the call: the figures behind softuet's
// choice of recvfrom for a quiet socket and sendto for a small datagram (fep/DESIGN.md, "Progress and
// threading"). Reads are empty reads of a bound non-blocking socket (what a polling provider makes while
// it waits); sends are 108-byte datagrams (a 44-byte UET header and 64 bytes of payload) from a socket
// connected to a second one on loopback, as header and payload in two iovec entries (sendmsg) or copied
// into one buffer first (sendto). Prints nanoseconds per call, the median of --repeat rounds, and each
// form's ratio against the first of its group (above 1.0: faster than recvmsg, or than sendmsg).
//
// usage: socket-calls [--calls N] [--repeat R]     exit 0, 2 on bad usage, 3 when a socket cannot be made
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { kHeader = 44, kPayload = 64, kMaxRepeat = 99 };

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp_double(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static long parse_count(const char* name, const char* text, long max) {
  char* end;
  errno = 0;
  const long v = strtol(text, &end, 10);
  if (errno || *end || v < 1 || v > max) {
    fprintf(stderr, "socket-calls: %s must be an integer in 1..%ld, not '%s'\n", name, max, text);
    exit(2);
  }
  return v;
}

static int bound_socket(struct sockaddr_in* addr) {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  socklen_t len = sizeof *addr;
  memset(addr, 0, sizeof *addr);
  addr->sin_family = AF_INET;
  addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || bind(fd, (struct sockaddr*)addr, sizeof *addr) != 0 ||
      getsockname(fd, (struct sockaddr*)addr, &len) != 0) {
    perror("socket-calls: a bound loopback UDP socket");
    exit(3);
  }
  return fd;
}

static char buf[16384];
static struct sockaddr_in6 from;

// One round of `calls` calls of form `form`; returns ns per call.
static double round_of(int form, int rx, int tx, long calls) {
  static unsigned char header[kHeader], payload[kPayload], flat[kHeader + kPayload];
  struct iovec rx_iov = {buf, sizeof buf};
  struct msghdr rx_msg = {.msg_name = &from, .msg_iov = &rx_iov, .msg_iovlen = 1};
  struct mmsghdr rx_mmsg = {.msg_hdr = rx_msg};
  struct iovec tx_iov[2] = {{header, kHeader}, {payload, kPayload}};
  struct msghdr tx_msg = {.msg_iov = tx_iov, .msg_iovlen = 2};
  socklen_t fromlen;
  const double t0 = now_ns();
  for (long i = 0; i < calls; ++i) {
    switch (form) {
      case 0:
        rx_msg.msg_namelen = sizeof from;
        (void)recvmsg(rx, &rx_msg, MSG_DONTWAIT);
        break;
      case 1:
        fromlen = sizeof from;
        (void)recvfrom(rx, buf, sizeof buf, MSG_DONTWAIT | MSG_TRUNC, (struct sockaddr*)&from, &fromlen);
        break;
      case 2:
        rx_mmsg.msg_hdr.msg_namelen = sizeof from;
        (void)recvmmsg(rx, &rx_mmsg, 1, MSG_DONTWAIT, NULL);
        break;
      case 3:
        (void)sendmsg(tx, &tx_msg, 0);
        break;
      default:
        memcpy(flat, header, kHeader);
        memcpy(flat + kHeader, payload, kPayload);
        (void)sendto(tx, flat, sizeof flat, 0, NULL, 0);
        break;
    }
    // The sink must stay empty for the reads and must not fill for the sends: drain what the sends left.
    if (form >= 3 && (i & 63) == 63)
      while (recv(rx, buf, sizeof buf, MSG_DONTWAIT) >= 0) {
      }
  }
  return (now_ns() - t0) / (double)calls;
}

int main(int argc, char** argv) {
  long calls = 2000000, repeat = 5;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--calls") && i + 1 < argc) {
      calls = parse_count("--calls", argv[++i], 100000000);
    } else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) {
      repeat = parse_count("--repeat", argv[++i], kMaxRepeat);
    } else {
      fprintf(stderr, "usage: socket-calls [--calls N] [--repeat R] (unknown or incomplete option '%s')\n", argv[i]);
      return 2;
    }
  }
  static const char* const names[] = {"recvmsg (empty)", "recvfrom (empty)", "recvmmsg (empty)",
                                      "sendmsg (2 iovecs)", "sendto (copied)"};
  enum { kForms = sizeof names / sizeof names[0] };
  struct sockaddr_in sink_addr, src_addr;
  const int rx = bound_socket(&sink_addr);
  const int tx = bound_socket(&src_addr);
  if (connect(tx, (struct sockaddr*)&sink_addr, sizeof sink_addr) != 0) {
    perror("socket-calls: connect");
    return 3;
  }
  // Rounds take turns form by form, so a slow spell of the machine falls on every form.
  double ns[kForms][kMaxRepeat];
  for (long r = 0; r < repeat; ++r)
    for (int f = 0; f < kForms; ++f) ns[f][r] = round_of(f, rx, tx, calls);
  double median[kForms];
  printf("%-20s %12s %10s   (%ld calls, median of %ld rounds)\n", "call", "ns per call", "ratio", calls, repeat);
  for (int f = 0; f < kForms; ++f) {
    qsort(ns[f], (size_t)repeat, sizeof(double), cmp_double);
    median[f] = ns[f][repeat / 2];
    const double base = median[f < 3 ? 0 : 3];
    printf("%-20s %12.1f %10.3f\n", names[f], median[f], base / median[f]);
  }
  close(tx);
  close(rx);
  return 0;
}
