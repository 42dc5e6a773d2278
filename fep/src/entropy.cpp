// The UDP source port of a datagram carries entropy (digest I.1 and I.2: "UDP src = entropy"; the
// destination port is the FEP's, 4793). softuet gives each destination FEP of its datagrams a socket of its
// own: bound to this FEP's address on a port the kernel picks (the entropy value of that flow) and connected
// to the destination, so the kernel keeps the route and a send skips the route lookup an unconnected
// sendmsg makes (about 6 % of a 64-byte datagram pingpong's round trip between two namespaces). Nothing is
// ever sent to these ports: UET answers go to the FEP's port, and datagrams are not answered at all.
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "softuet.hpp"

namespace softuet {

namespace {

// Beyond this many destinations, datagrams leave from the FEP's own socket: a process talking to many
// peers must not run out of file descriptors for a few hundred nanoseconds per send.
constexpr size_t kMaxEntropySockets = 64;

}  // namespace

int entropy_socket(Domain* d, const UdpPeer& peer) {
  if (const auto it = d->entropy_socks.find(peer); it != d->entropy_socks.end()) return it->second;
  if (d->entropy_socks.size() >= kMaxEntropySockets) return -1;
  const int fd = socket(d->ip.ip.v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  // It receives nothing: the smallest buffer the kernel allows.
  const int rcvbuf = 1;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  const SockAddr local = sockaddr_of(UdpPeer{d->ip.ip, 0});
  const SockAddr remote = sockaddr_of(peer);
  if (set_dscp(d, fd) != 0 || forbid_fragments(fd, d->ip.ip.v6) != 0 || bind(fd, &local.u.sa, local.len) != 0 || connect(fd, &remote.u.sa, remote.len) != 0) {
    FI_WARN(&g_prov, FI_LOG_EP_DATA, "no entropy socket towards %s:%u (%s): datagrams leave from the FEP's port\n",
            ip_text(peer.ip).c_str(), peer.port, strerror(errno));
    close(fd);
    return -1;
  }
  d->entropy_socks.emplace(peer, fd);
  return fd;
}

void entropy_close(Domain* d) {
  for (const auto& [peer, fd] : d->entropy_socks) close(fd);
  d->entropy_socks.clear();
}

}  // namespace softuet
