// The FEP's UDP socket: opened on IP:port for the domain, read in batches (recvfrom on a quiet socket,
// recvmmsg in a burst), each datagram handed to the target side (receive.cpp) or, sealed, opened first
// (tss.cpp); progress, and how long a blocking wait may sleep before a retransmission is due.
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "softuet.hpp"
#include "transport_shared.hpp"
#include "uet/codec/decoded.hpp"

namespace softuet {

namespace wire = uet::wire;
using pds::Clock;
using transport::handle_packet;
using transport::run_timers;

// One recvmmsg takes every frame waiting (up to kRecvBatch): a batch that comes back short means the socket
// is drained, so the common case of one frame costs one system call, not a second that fails.
constexpr size_t kRecvBatch = 16;
// A UET packet is one payload MTU and its headers; anything larger is not a packet this FEP can take.
constexpr size_t kRecvSlot = 16384;

struct RecvBatch {
  std::vector<uint8_t> bufs = std::vector<uint8_t>(kRecvBatch * kRecvSlot);
  SockAddr from[kRecvBatch];
  iovec iov[kRecvBatch];
  mmsghdr msgs[kRecvBatch] = {};
  uet::codec::Decoded pkt;
  InRequest req;  // the request of the frame being handled
  bool burst = false;  // the last look found frames: read the next ones in batches
  RecvBatch() {
    for (size_t i = 0; i < kRecvBatch; ++i) {
      iov[i] = {bufs.data() + i * kRecvSlot, kRecvSlot};
      msgs[i].msg_hdr.msg_name = &from[i].u;
      msgs[i].msg_hdr.msg_namelen = sizeof from[i].u;
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
    }
  }
};

void RecvBatchDeleter::operator()(RecvBatch* b) const { delete b; }

void transport_receive(Domain* d, const uint8_t* buf, size_t len, const UdpPeer& from) {
  // A sealed packet (the first 5 bits: a TSS header) is handled as what it seals.
  if (len && (buf[0] >> 3) == wire::pds_type::UET_TSS) {
    if (tss_open(d, buf, len, from)) handle_packet(d, d->tss_plain.data(), d->tss_plain.size(), from, d->rx->pkt, d->rx->req);
    return;
  }
  handle_packet(d, buf, len, from, d->rx->pkt, d->rx->req);
}

int transport_open(Domain* d) {
  d->rx.reset(new RecvBatch);
  outbox_open(d);
  // SOFTUET_UDP_PORT=auto: the socket fi_getinfo bound, whose port its src_addr named (local_port.cpp).
  const int reserved = d->cfg.udp_port_auto ? take_reserved_socket(d->ip.ip) : -1;
  d->sock = reserved >= 0 ? reserved : socket(d->ip.ip.v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (d->sock < 0) return -FI_ENOMEM;
  // Bursts of RDM segments arrive faster than manual progress drains them; a larger buffer keeps the
  // kernel from dropping them (each drop costs a retransmission).
  int rcvbuf = 4 << 20;
  setsockopt(d->sock, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  // The data traffic class.
  if (set_dscp(d, d->sock) != 0)
    FI_WARN(&g_prov, FI_LOG_DOMAIN, "cannot set DSCP %u: %s\n", d->dscp, strerror(errno));
  // Packets are sized to the path (payload_mtu.cpp); one that is not must fail to send, not leave in fragments.
  if (forbid_fragments(d->sock, d->ip.ip.v6) != 0)
    FI_WARN(&g_prov, FI_LOG_DOMAIN, "cannot forbid IP fragmentation: %s\n", strerror(errno));
  SockAddr a = sockaddr_of(UdpPeer{d->ip.ip, d->cfg.udp_port});
  if (reserved < 0 && bind(d->sock, &a.u.sa, a.len) != 0) {
    const int err = errno;
    FI_WARN(&g_prov, FI_LOG_DOMAIN, "cannot bind the FEP socket to %s:%u: %s (set SOFTUET_UDP_PORT?)\n",
            d->ip.text.c_str(), d->cfg.udp_port, strerror(err));
    close(d->sock);
    d->sock = -1;
    return err == EADDRINUSE ? -FI_EADDRINUSE : -FI_EINVAL;
  }
  // The port the kernel gave (auto) is the one every address of the domain names from here on.
  if (d->cfg.udp_port_auto && getsockname(d->sock, &a.u.sa, &a.len) == 0) {
    if (const std::optional<UdpPeer> bound = peer_of(a)) d->cfg.udp_port = bound->port;
  }
  return 0;
}

void transport_close(Domain* d) {
  fep_thread_stop(d);
  flush_outbox(d);
  entropy_close(d);
  if (d->sock >= 0) close(d->sock);
  d->sock = -1;
}

namespace {

// Hands frames [0, n) of the batch to handle_packet and makes their slots ready for the next call.
void handle_batch(Domain* d, RecvBatch& b, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    msghdr& h = b.msgs[i].msg_hdr;
    if (!(h.msg_flags & MSG_TRUNC)) {
      b.from[i].len = h.msg_namelen;
      if (const std::optional<UdpPeer> peer = peer_of(b.from[i]))
        transport_receive(d, static_cast<uint8_t*>(b.iov[i].iov_base), b.msgs[i].msg_len, *peer);
    }
    h.msg_namelen = sizeof b.from[i].u;  // the kernel wrote the sender's length there
  }
}

}  // namespace

size_t transport_drain(Domain* d) {
  RecvBatch& b = *d->rx;
  size_t frames = 0;
  if (!b.burst) {
    // Quiet socket (the last look found nothing): one recvfrom. When a frame is there, it goes to the
    // application without the failing second read recvmmsg would make (about 0.2 us of each one-way trip
    // of a pingpong); the next look reads in batches, in case a burst has begun. recvfrom, not recvmsg:
    // it imports no message header or iovec list, so an empty look costs 280 ns here, not 406 ns, and
    // a waiting application sees its datagram sooner. MSG_TRUNC makes it return a datagram's full length.
    msghdr& h = b.msgs[0].msg_hdr;
    ssize_t got;
    do {
      got = recvfrom(d->sock, b.iov[0].iov_base, kRecvSlot, MSG_DONTWAIT | MSG_TRUNC, &b.from[0].u.sa, &h.msg_namelen);
    } while (got < 0 && errno == EINTR);
    if (got >= 0) {
      h.msg_flags = static_cast<size_t>(got) > kRecvSlot ? MSG_TRUNC : 0;
      b.msgs[0].msg_len = static_cast<unsigned>(got);
      handle_batch(d, b, 1);
      frames = 1;
      b.burst = true;
    }
  } else {
    for (;;) {
      const int n = recvmmsg(d->sock, b.msgs, kRecvBatch, MSG_DONTWAIT, nullptr);
      if (n < 0) {
        if (errno == EINTR) continue;
        break;  // EAGAIN: drained
      }
      handle_batch(d, b, static_cast<size_t>(n));
      frames += static_cast<size_t>(n);
      if (static_cast<size_t>(n) < kRecvBatch) break;
    }
    b.burst = frames > 0;
  }
  if (!d->pdcs.empty()) run_timers(d, Clock::now());
  if (!d->rudi_sent.empty()) rudi_timers(d, Clock::now());
  return frames;
}

size_t progress(Domain* d) {
  const size_t frames = progress_deferring_output(d);
  flush_outbox(d);
  return frames;
}

size_t progress_deferring_output(Domain* d) {
  // One writer (under the domain's mutex), so a plain increment of the relaxed atomic is enough.
  d->app_progress_calls.store(d->app_progress_calls.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  flush_outbox(d);
  return transport_drain(d);
}

int transport_wait_ms(Domain* d, int cap_ms) {
  std::optional<Clock::time_point> next = rudi_next_deadline(d);
  for (const auto& [key, p] : d->pdcs) {
    const auto t = p->ini->next_deadline();
    if (t && (!next || *t < *next)) next = t;
  }
  if (!next) return cap_ms;
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(*next - Clock::now()).count();
  if (left <= 0) return 0;
  return cap_ms < 0 ? static_cast<int>(left) : static_cast<int>(std::min<int64_t>(left, cap_ms));
}


}  // namespace softuet
