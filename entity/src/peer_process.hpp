// The process at the other end of a connection, as the kernel names it: SO_PEERCRED's pid, uid and gid, and
// the process's start time, so that the pid keeps naming that one process after it exits and the pid is
// reused (a grant is a process's, not a number's).
#pragma once

#include "handler.hpp"

namespace uet::entity {

struct PeerProcess {
  Peer peer;        // peer.start is 0 when the process was gone before it could be named: granted nothing
  int pidfd = -1;   // the connecting process itself (-1 when the kernel gives none): it tells when it is gone
};

// Who connected on `fd`; false when the kernel says nothing of the peer. The pidfd is SO_PEERPIDFD's (the
// process that called connect, even if it has exited since), else pidfd_open of SO_PEERCRED's pid; the start
// time is read from /proc while the pidfd shows the process alive, so it is that process's.
bool identify(int fd, PeerProcess* out);

// Whether the process that connected still exists. A connection it left to another process (inherited, or
// passed) outlives it; its pid may then be another process's: such a connection speaks for no one.
bool still_there(const PeerProcess& p);

// Closes the pidfd.
void forget(PeerProcess& p);

}  // namespace uet::entity
