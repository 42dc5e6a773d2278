// The FEP's UDP port with SOFTUET_UDP_PORT=auto: the kernel picks it. fi_getinfo hands out src_addr before
// any domain exists, and that address must name the port the domain will receive on, so fi_getinfo binds a
// socket on port 0 and keeps it for the process's next domain on that IP (transport_open takes it); later
// fi_getinfo calls name the same port until a domain took the socket. A reserved socket nobody takes stays
// bound until the process exits.
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>

#include "softuet.hpp"

namespace softuet {

namespace {

struct Reserved {
  std::mutex mu;
  FepIp ip;
  int fd = -1;
  uint16_t port = 0;
};

Reserved& reserved() {
  static auto* r = new Reserved;  // lives to exit: a domain may open from an atexit handler
  return *r;
}

// A UDP socket bound to ip:0 and the port the kernel gave it; -1 with errno.
int bind_any_port(const FepIp& ip, uint16_t* port) {
  const int fd = socket(ip.v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  SockAddr a = sockaddr_of(UdpPeer{ip, 0});
  if (bind(fd, &a.u.sa, a.len) != 0 || getsockname(fd, &a.u.sa, &a.len) != 0) {
    const int err = errno;
    close(fd);
    errno = err;
    return -1;
  }
  const std::optional<UdpPeer> bound = peer_of(a);
  *port = bound ? bound->port : 0;
  return fd;
}

}  // namespace

uint16_t fep_port(const Config& cfg, const LocalIp& ip, std::string* error) {
  if (!cfg.udp_port_auto) return cfg.udp_port;
  Reserved& r = reserved();
  std::lock_guard lock(r.mu);
  if (r.fd >= 0 && r.ip == ip.ip) return r.port;
  if (r.fd >= 0) close(r.fd);  // reserved for another address (SOFTUET_ADDR changed)
  r.fd = bind_any_port(ip.ip, &r.port);
  if (r.fd < 0) {
    *error = "SOFTUET_UDP_PORT=auto: no UDP port on " + ip.text + ": " + strerror(errno);
    return 0;
  }
  r.ip = ip.ip;
  return r.port;
}

int take_reserved_socket(const FepIp& ip) {
  Reserved& r = reserved();
  std::lock_guard lock(r.mu);
  if (r.fd < 0 || r.ip != ip) return -1;
  const int fd = r.fd;
  r.fd = -1;
  return fd;
}

}  // namespace softuet
