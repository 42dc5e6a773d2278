// SOFTUET_CLOSE=wait_for_peers: closing an RDM endpoint waits until the FEPs that sent it requests have
// closed theirs, at most SOFTUET_CLOSE_WAIT_MS from the start of fi_close, as a provider whose target holds
// its close until its initiator has gone does. It keeps answering them meanwhile.
//
// UET has no message that says a peer closed (softuet sends no CLOSE control packet), so the kernel says
// it: every 100 ms the endpoint restates its cumulative ACK to each such peer, and a FEP whose socket is
// closed answers with an ICMP port unreachable, which IP_RECVERR (on for the wait only) turns into an entry
// of the socket's error queue naming that FEP. A peer whose host is gone, or whose endpoint alone closed
// (its domain's socket still open), answers nothing: the wait then lasts its whole bound. A peer on this
// FEP itself (another endpoint of the domain) is not waited for: it has no socket of its own to close.
#include <time.h>  // linux/errqueue.h needs struct timespec first
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <set>

#include "transport_shared.hpp"

namespace softuet::transport {

namespace {

using pds::Clock;

constexpr auto kProbeEvery = std::chrono::milliseconds(100);

void set_recverr(Domain* d, bool on) {
  const int v = on;  // off purges what the error queue still holds
  const int rc = d->ip.ip.v6 ? setsockopt(d->sock, SOL_IPV6, IPV6_RECVERR, &v, sizeof v)
                             : setsockopt(d->sock, SOL_IP, IP_RECVERR, &v, sizeof v);
  if (rc != 0) FI_WARN(&g_prov, FI_LOG_EP_CTRL, "IP_RECVERR: %s: a closed peer will not be seen\n", strerror(errno));
}

// The FEPs an ICMP port unreachable said are closed, from the socket's error queue (which it empties).
void read_closed(Domain* d, std::set<UdpPeer>& closed) {
  for (;;) {
    SockAddr to;
    alignas(cmsghdr) char control[256];
    uint8_t data[64];
    iovec iov{data, sizeof data};
    msghdr m{};
    m.msg_name = &to.u;
    m.msg_namelen = sizeof to.u;
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = control;
    m.msg_controllen = sizeof control;
    if (recvmsg(d->sock, &m, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) return;
    to.len = m.msg_namelen;
    for (cmsghdr* c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
      const bool error = (c->cmsg_level == SOL_IP && c->cmsg_type == IP_RECVERR) ||
                         (c->cmsg_level == SOL_IPV6 && c->cmsg_type == IPV6_RECVERR);
      if (!error) continue;
      sock_extended_err e;
      std::memcpy(&e, CMSG_DATA(c), sizeof e);
      if (e.ee_errno != ECONNREFUSED) continue;  // unreachable hosts and nets: the network's, not a close
      if (const std::optional<UdpPeer> peer = peer_of(to)) closed.insert(*peer);
    }
  }
}

}  // namespace

void wait_for_initiators_to_close(Ep* ep, Clock::time_point deadline) {
  Domain* d = ep->domain;
  if (!d->cfg.close_waits_for_peers || ep->type != FI_EP_RDM) return;
  std::set<UdpPeer> open;
  {
    std::lock_guard lock(d->mu);
    const UdpPeer self{d->ip.ip, d->cfg.udp_port};
    for (const auto& [key, p] : d->pdcs)
      if (p->ep == ep && p->tgt && p->peer != self) open.insert(p->peer);
    if (open.empty()) return;
    set_recverr(d, true);
  }
  const auto started = Clock::now();
  auto next_probe = started;
  for (;;) {
    int wait_ms;
    {
      std::lock_guard lock(d->mu);
      std::set<UdpPeer> closed;
      read_closed(d, closed);
      for (const UdpPeer& peer : closed) open.erase(peer);
      const auto now = Clock::now();
      if (open.empty() || now >= deadline) break;
      if (now >= next_probe) {
        for (const UdpPeer& peer : open)
          if (const auto it = d->pdcs.find({ep, peer}); it != d->pdcs.end() && it->second->tgt)
            send_ack(d, *it->second, false, 0, 0, 0, nullptr);
        next_probe = now + kProbeEvery;
      }
      progress(d);  // sends the probes, and answers what the peers still send
      const auto until = std::min(next_probe, deadline);
      wait_ms = static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(until - Clock::now()).count());
    }
    // POLLERR (always reported) wakes the wait when an ICMP error arrives.
    pollfd pfd{d->sock, POLLIN, 0};
    poll(&pfd, 1, std::max(wait_ms, 0));
  }
  std::lock_guard lock(d->mu);
  set_recverr(d, false);
  const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count();
  if (open.empty()) {
    FI_INFO(&g_prov, FI_LOG_EP_CTRL, "endpoint close: its initiators closed (waited %lld ms)\n", static_cast<long long>(waited));
  } else {
    FI_INFO(&g_prov, FI_LOG_EP_CTRL, "endpoint close: %zu initiator(s) still open after %lld ms (SOFTUET_CLOSE_WAIT_MS)\n",
            open.size(), static_cast<long long>(waited));
  }
}

}  // namespace softuet::transport
