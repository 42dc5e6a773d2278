// Sending the outbox: every frame the domain queued (requests, ACKs, NACKs) in as few system calls as the
// kernel allows.
//
// Frames go out in one sendmmsg per 64 messages. A run of frames to the same destination with the same size
// (the last may be shorter) is one message with UDP_SEGMENT (UDP generic segmentation offload): the stack
// builds and routes it once and cuts it into its datagrams at the device, or in software just before it. On a
// veth, a run of 16 64-byte frames costs about 1.2 us per frame against 3.1 us with one message per frame
// (measured in the same namespace pair). The datagrams on the wire are the same either way; only a capture
// taken on the sending host of a device that segments in "hardware" (a veth with tx-udp-segmentation on)
// shows the unsegmented packet, so the namespace pairs turn that feature off (containers/netns.py).
// SOFTUET_UDP_GSO=0 turns runs off.
#include <netinet/udp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "softuet.hpp"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103  // linux/udp.h; older libc headers lack it
#endif

namespace softuet {

namespace {
constexpr size_t kMessagesPerCall = 64;
constexpr size_t kFramesPerRun = 64;          // the kernel's UDP_MAX_SEGMENTS on older kernels
constexpr size_t kRunBytes = 65535 - 8 - 40;  // one UDP datagram's payload, with room for an IPv6 header
constexpr size_t kFramesPerCall = 256;
}  // namespace

// The sendmmsg arguments of one call, set up in the domain once.
struct OutboxCall {
  mmsghdr msgs[kMessagesPerCall];
  iovec iov[kFramesPerCall];
  size_t frames[kMessagesPerCall];  // frames of each message
  alignas(cmsghdr) char ctl[kMessagesPerCall][CMSG_SPACE(sizeof(uint16_t))];
};

void OutboxCallDeleter::operator()(OutboxCall* c) const { delete c; }

void outbox_open(Domain* d) { d->tx.reset(new OutboxCall); }

void queue_frame(Domain* d, const SockAddr& to, std::vector<uint8_t>&& frame, bool answer) {
  if (!answer && !d->outbox.empty() && d->outbox.back().answer) d->outbox_answer_first = true;
  tss_seal(d, to, frame);
  d->outbox.push_back({to, std::move(frame), answer});
  d->outbox_waiting.store(true, std::memory_order_relaxed);
}

namespace {

// How many frames from `first` go in one message: a run of frames to one destination, all of the first one's
// size but the last, within the kernel's limits.
size_t run_length(const Domain* d, size_t first, size_t iov_left) {
  const auto& out = d->outbox;
  const size_t seg = out[first].frame.size();
  if (!d->cfg.udp_gso || seg > d->gso_max_segment) return 1;
  size_t n = 1, bytes = seg;
  while (first + n < out.size() && n < kFramesPerRun && n < iov_left) {
    const Domain::Outgoing& next = out[first + n];
    if (out[first + n - 1].frame.size() != seg || next.frame.size() > seg || bytes + next.frame.size() > kRunBytes ||
        next.to.len != out[first].to.len || std::memcmp(&next.to.u, &out[first].to.u, next.to.len) != 0)
      break;
    bytes += next.frame.size();
    ++n;
  }
  return n;
}

// Messages for the frames from `first`: returns how many.
size_t build_call(Domain* d, size_t first, OutboxCall& c) {
  size_t m = 0, used = 0;
  while (first < d->outbox.size() && m < kMessagesPerCall && used < kFramesPerCall) {
    const size_t n = run_length(d, first, kFramesPerCall - used);
    Domain::Outgoing& head = d->outbox[first];
    mmsghdr& msg = c.msgs[m];
    msg = {};
    for (size_t i = 0; i < n; ++i) c.iov[used + i] = {d->outbox[first + i].frame.data(), d->outbox[first + i].frame.size()};
    msg.msg_hdr.msg_name = &head.to.u;
    msg.msg_hdr.msg_namelen = head.to.len;
    msg.msg_hdr.msg_iov = &c.iov[used];
    msg.msg_hdr.msg_iovlen = n;
    if (n > 1) {
      msg.msg_hdr.msg_control = c.ctl[m];
      msg.msg_hdr.msg_controllen = sizeof c.ctl[m];
      cmsghdr* cm = CMSG_FIRSTHDR(&msg.msg_hdr);
      cm->cmsg_level = SOL_UDP;
      cm->cmsg_type = UDP_SEGMENT;
      cm->cmsg_len = CMSG_LEN(sizeof(uint16_t));
      const auto seg = static_cast<uint16_t>(head.frame.size());
      std::memcpy(CMSG_DATA(cm), &seg, sizeof seg);
    }
    c.frames[m] = n;
    used += n;
    first += n;
    ++m;
  }
  return m;
}

}  // namespace

void flush_outbox(Domain* d) {
  if (d->outbox.empty()) return;
  if (d->outbox_answer_first) {
    std::stable_partition(d->outbox.begin(), d->outbox.end(), [](const Domain::Outgoing& o) { return !o.answer; });
    d->outbox_answer_first = false;
  }
  OutboxCall& c = *d->tx;
  size_t done = 0;
  while (done < d->outbox.size()) {
    const size_t m = build_call(d, done, c);
    const int sent = sendmmsg(d->sock, c.msgs, static_cast<unsigned>(m), 0);
    if (sent > 0) {
      for (int i = 0; i < sent; ++i) done += c.frames[i];
      continue;
    }
    if (sent < 0 && errno == EINTR) continue;
    const int err = sent < 0 ? errno : 0;
    if (c.frames[0] > 1 &&
        (err == EMSGSIZE || err == EINVAL || err == EIO || err == ENOPROTOOPT || err == EOPNOTSUPP)) {
      // The kernel refused the run: a segment larger than the path MTU (EMSGSIZE, EINVAL; alone, such a
      // frame fails too, below: fragmentation is off), a device without checksum offload (EIO), or a kernel
      // without UDP GSO. Frames of this size go one by one from now on.
      const size_t seg = d->outbox[done].frame.size();
      d->gso_max_segment = std::min(d->gso_max_segment, seg - 1);
      FI_INFO(&g_prov, FI_LOG_EP_DATA, "UDP_SEGMENT refused for %zu-byte frames (%s): sent one by one\n", seg,
              strerror(err));
      continue;
    }
    // A full socket buffer: the rest are dropped like lost ACKs, and the peers retransmit.
    if (err != EAGAIN && err != ENOBUFS) FI_WARN(&g_prov, FI_LOG_EP_DATA, "sendmmsg: %s\n", strerror(err));
    break;
  }
  d->outbox.clear();
  d->outbox_waiting.store(false, std::memory_order_relaxed);
}

}  // namespace softuet
