#include "server.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>

#include "peer_process.hpp"
#include "uet/entity/message.hpp"

namespace uet::entity {
namespace {

namespace c = control;

// Connections held at once: by users other than root in all, and by any one of them. One user cannot fill
// the table; root (the launcher, the administrator) has slots of its own beyond it, so that its requests are
// always served. Each connection costs two descriptors (the socket, a pidfd): the sum stays under the usual
// 1024 of RLIMIT_NOFILE.
constexpr size_t kMaxClients = 384;
constexpr size_t kMaxConnectionsPerUser = 128;
constexpr size_t kMaxRootConnections = 64;

sockaddr_un address_of(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.size() >= sizeof a.sun_path)
    throw std::runtime_error("socket path " + path + " is longer than " + std::to_string(sizeof a.sun_path - 1) +
                             " bytes");
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  return a;
}

}  // namespace

Server::Server(std::string socket_path, Handler& handler, Trace* trace)
    : path_(std::move(socket_path)), handler_(handler), trace_(trace) {
  const sockaddr_un addr = address_of(path_);
  // A live entity answers a connect; a socket file nobody listens on is left over from a crash.
  int probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (probe >= 0 && connect(probe, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) {
    close(probe);
    throw std::runtime_error("another entity already serves " + path_);
  }
  if (probe >= 0) close(probe);
  unlink(path_.c_str());
  listen_fd_ = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listen_fd_ < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  if (bind(listen_fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
      chmod(path_.c_str(), 0666) != 0 || listen(listen_fd_, 128) != 0) {
    const std::string why = std::strerror(errno);
    close(listen_fd_);
    throw std::runtime_error("cannot serve " + path_ + ": " + why);
  }
}

Server::~Server() {
  if (listen_fd_ >= 0) {
    close(listen_fd_);
    unlink(path_.c_str());
  }
}

namespace {

// Whether one more connection of user `uid` may be held, given how many each user holds; when not, says so
// on stderr the first time a user reaches its limit (not per refusal: a crowd would flood the log).
bool admit(uid_t uid, std::map<uid_t, size_t>& held, size_t others, std::map<uid_t, bool>& said) {
  const size_t mine = held[uid];
  std::string why;
  if (uid == 0) {
    if (mine < kMaxRootConnections) return true;
    why = "uid 0 holds " + std::to_string(mine) + " connections, its limit";
  } else if (mine >= kMaxConnectionsPerUser) {
    why = "uid " + std::to_string(uid) + " holds " + std::to_string(mine) + " connections, the limit of one user";
  } else if (others >= kMaxClients) {
    why = "users other than root hold " + std::to_string(others) + " connections, their limit";
  } else {
    said.erase(uid);
    return true;
  }
  if (!std::exchange(said[uid], true)) std::fprintf(stderr, "uet-entity: %s: a new one is refused\n", why.c_str());
  return false;
}

}  // namespace

int Server::run(const std::atomic<bool>& stop) {
  struct Client {
    int fd;
    PeerProcess who;
  };
  std::vector<Client> clients;
  std::map<uid_t, size_t> held;  // connections per user
  size_t others = 0;             // connections of users other than root
  std::map<uid_t, bool> said;
  const auto drop = [&](Client& cl) {
    close(cl.fd);
    forget(cl.who);
    handler_.forget(cl.who.peer.pid);
    if (--held[cl.who.peer.uid] == 0) held.erase(cl.who.peer.uid);
    if (cl.who.peer.uid != 0) --others;
  };
  std::vector<uint8_t> buf(c::kMaxMessageBytes + 1);
  while (!stop.load()) {
    std::vector<pollfd> fds{{listen_fd_, POLLIN, 0}};
    for (const Client& cl : clients) fds.push_back({cl.fd, POLLIN, 0});
    const int n = poll(fds.data(), fds.size(), 200);
    if (n < 0 && errno != EINTR) {
      std::perror("uet-entity: poll");
      return 3;
    }
    if (n <= 0) continue;
    std::vector<Client> next;
    for (size_t i = 1; i < fds.size(); ++i) {
      Client cl = clients[i - 1];
      if (!fds[i].revents) {
        next.push_back(cl);
        continue;
      }
      const ssize_t got = recv(cl.fd, buf.data(), buf.size(), MSG_TRUNC | MSG_DONTWAIT);
      if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) {
        drop(cl);
        continue;
      }
      if (got > 0) {
        // The connection outlived the process that opened it: whoever holds it now is not that process,
        // and its pid may be another's.
        if (cl.who.peer.start && !still_there(cl.who)) cl.who.peer.start = 0;
        std::vector<std::vector<uint8_t>> replies;
        if (static_cast<size_t>(got) > c::kMaxMessageBytes) {
          const Problem p{EMSGSIZE, "a message of " + std::to_string(got) + " bytes is over " +
                                        std::to_string(c::kMaxMessageBytes), 0, 0};
          replies.push_back(error_reply(Header{}, EMSGSIZE, &p));
        } else {
          // Parsed once, for the handler and the trace (the request's attributes point into buf).
          const std::span<const uint8_t> message(buf.data(), static_cast<size_t>(got));
          const auto parsed = parse_request(message);
          replies = handler_.handle(parsed, message, cl.who.peer);
          if (trace_) trace_->record(cl.who.peer, parsed, message.size(), replies);
          // Pushed before the request is answered: when an administrator's key update returns, its
          // receivers have it waiting.
          for (const Push& push : handler_.take_pushes()) {
            for (const Client& to : clients)
              if (to.who.peer.pid == push.pid && to.who.peer.start == push.start)
                send(to.fd, push.message.data(), push.message.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
            if (trace_) trace_->record_push(push.pid, push.message);
          }
        }
        // A peer that does not read its replies is dropped rather than allowed to block the entity.
        bool sent = true;
        for (const auto& reply : replies)
          sent = sent && send(cl.fd, reply.data(), reply.size(), MSG_DONTWAIT | MSG_NOSIGNAL) >= 0;
        if (!sent) {
          drop(cl);
          continue;
        }
      }
      next.push_back(cl);
    }
    clients = std::move(next);
    if (fds[0].revents & POLLIN) {
      for (;;) {
        const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) break;
        ucred cred{};
        socklen_t len = sizeof cred;
        // Counted by SO_PEERCRED's uid before anything else is asked of the kernel.
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || !admit(cred.uid, held, others, said)) {
          close(fd);
          continue;
        }
        Client cl{fd, {}};
        if (!identify(fd, &cl.who)) {
          close(fd);
          continue;
        }
        ++held[cl.who.peer.uid];
        if (cl.who.peer.uid != 0) ++others;
        clients.push_back(cl);
      }
    }
  }
  for (Client& cl : clients) {
    close(cl.fd);
    forget(cl.who);
  }
  return 0;
}

}  // namespace uet::entity
