// The entity's answer to one request, apart from the socket that carries it (the fuzzer drives it directly).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <utility>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "cred_store.hpp"
#include "uet/control/control_gen.hpp"
#include "store.hpp"

namespace uet::entity {

struct Header;
struct Attrs;
struct Request;
struct Problem;
class Writer;

// Who sent a request, as the kernel says (SO_PEERCRED), never as the request says.
struct Peer {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  // The process's start time (peer_process.hpp): with the pid it names the process; 0 (gone, or unknown)
  // is granted nothing.
  uint64_t start = 0;
};

// A message for a process other than a request's sender (an unsolicited key update, 2.2.9-f).
struct Push {
  pid_t pid;
  uint64_t start;  // the process that asked; another process with its pid is not sent it
  std::vector<uint8_t> message;
};

// An error reply naming what was wrong (and the attribute concerned).
std::vector<uint8_t> refuse(const Header& h, int err, std::string what, uint16_t attr = 0);
// A name from a request, as a reply may quote it: bytes other than printable ASCII as \xNN.
std::string quoted(const std::string& s);
// "pid N (uid U)", for replies.
std::string who(const Peer& p);
// A reply in several messages (a netlink dump): each flagged multi, with `count` and as many entries as fit
// (`entry_bytes` the most one takes; `entry` writes entry i), then NLMSG_DONE.
std::vector<std::vector<uint8_t>> dump(const Header& h, control::Cmd cmd, size_t count, size_t entry_bytes,
                                       const std::function<void(Writer&, size_t)>& entry);

class Handler {
 public:
  // `start_of`: the start time of the process with a pid, 0 when there is none (process_info.hpp's
  // start_time; the fuzzer gives its own).
  using StartOf = std::function<uint64_t(uint32_t)>;
  explicit Handler(Store& store, StartOf start_of = {});
  // The replies to one whole message from `peer`: a command's reply, an acknowledgement, or an error
  // naming what was wrong; a dump (JOB_LIST) is several replies flagged multi, then NLMSG_DONE.
  // Nothing is changed unless the whole request is valid and allowed.
  std::vector<std::vector<uint8_t>> handle(std::span<const uint8_t> message, const Peer& peer);
  // The same for a message already parsed (`parsed` is parse_request(message)), so that a server that
  // also traces it parses it once.
  std::vector<std::vector<uint8_t>> handle(const std::variant<Request, Problem>& parsed,
                                           std::span<const uint8_t> message, const Peer& peer);
  CredStore& creds() { return creds_; }
  // The connection of process `pid` closed: what was learnt of it from /proc, and the secure domains whose
  // key updates it was sent, are forgotten (a new process may take the pid).
  void forget(pid_t pid) {
    callers_.erase(pid);
    for (auto& [sdi, pids] : subscribers_) pids.erase(pid);
  }
  // Messages the last requests made for other processes than their sender (unsolicited key updates, 2.2.9-f),
  // each with the process it goes to; taken once.
  std::vector<Push> take_pushes() { return std::exchange(pushes_, {}); }

 private:
  std::vector<uint8_t> one(const Request& req, const Peer& peer);
  std::vector<std::vector<uint8_t>> list(const Request& req);
  std::vector<uint8_t> allocate(const Header& h, const Attrs& a, const Peer& peer, const std::string& service);
  // Shared credentials and the workload manager's jobs (cred_handler.cpp).
  std::vector<uint8_t> credential(const Request& req, const Peer& peer);
  std::vector<std::vector<uint8_t>> cred_list(const Request& req);
  CredStore::Caller caller(const Peer& peer);

  Store::Process process(const Peer& peer) const {
    return {static_cast<uint32_t>(peer.pid), peer.start};
  }

  Store& store_;
  CredStore creds_;
  StartOf start_of_;
  // A caller's identity from /proc, kept while its connection lasts (and until a job starts or ends).
  std::map<pid_t, CredStore::Caller> callers_;
  // The processes (pid -> start time) that asked for each secure domain's key (KEY_REQUEST), sent its updates.
  std::map<uint32_t, std::map<pid_t, uint64_t>> subscribers_;
  std::vector<Push> pushes_;
};

}  // namespace uet::entity
