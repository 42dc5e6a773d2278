#include "peer_process.hpp"

#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "uet/entity/process_info.hpp"

// Linux 6.5's SO_PEERPIDFD; Debian 12's headers predate it. An older kernel answers ENOPROTOOPT.
#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

namespace uet::entity {
namespace {

// A signal 0 to the pidfd checks that its process exists (EPERM: it exists, and is another user's).
bool alive(int pidfd) {
  return syscall(SYS_pidfd_send_signal, pidfd, 0, nullptr, 0) == 0 || errno == EPERM;
}

}  // namespace

bool identify(int fd, PeerProcess* out) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return false;
  *out = PeerProcess{{cred.pid, cred.uid, cred.gid, 0}, -1};
  int pidfd = -1;
  len = sizeof pidfd;
  const int rc = getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len);
  // ESRCH: the connecting process is gone already; its pid names no one of this connection.
  if (rc != 0 && errno == ESRCH) return true;
  if (rc != 0 || pidfd < 0) {
    // Before Linux 6.5: the pid's process now, which is the connecting one unless it exited before this
    // accept and its pid was taken again meanwhile (a window of one poll round).
    pidfd = static_cast<int>(syscall(SYS_pidfd_open, cred.pid, 0));
    if (pidfd < 0 && errno == ESRCH) return true;
  }
  out->pidfd = pidfd;
  const uint64_t start = start_time(static_cast<uint32_t>(cred.pid));
  // Read, then checked: a pidfd still alive after the read means the read was of its process. Without a
  // pidfd (pidfd_open itself missing, before Linux 5.3), the start time read at accept is the identity.
  if (pidfd < 0 || alive(pidfd)) out->peer.start = start;
  return true;
}

bool still_there(const PeerProcess& p) {
  if (p.peer.start == 0) return false;
  if (p.pidfd >= 0) return alive(p.pidfd);
  return start_time(static_cast<uint32_t>(p.peer.pid)) == p.peer.start;
}

void forget(PeerProcess& p) {
  if (p.pidfd >= 0) close(p.pidfd);
  p.pidfd = -1;
}

}  // namespace uet::entity
