// The shared-credential commands and the workload manager's job commands of spec/control.yaml.
#include <algorithm>
#include <cerrno>
#include <ctime>

#include "handler.hpp"
#include "uet/entity/message.hpp"
#include "uet/entity/process_info.hpp"
#include "uet/entity/token.hpp"

namespace uet::entity {
namespace c = control;
namespace cc = control::cred;

// Who the caller is, from the kernel: uid and gid as SO_PEERCRED gave them, the groups, start time and
// job from /proc (a registered ancestor, or a Slurm step daemon above it).
CredStore::Caller Handler::caller(const Peer& peer) {
  if (auto it = callers_.find(peer.pid); it != callers_.end() && it->second.uid == static_cast<uint32_t>(peer.uid) &&
                                          it->second.start == peer.start)
    return it->second;
  // The start time is the connection's (peer_process.hpp): /proc now may show another process of the pid.
  CredStore::Caller who{static_cast<uint32_t>(peer.pid), static_cast<uint32_t>(peer.uid),
                        {static_cast<uint32_t>(peer.gid)}, 0, peer.start};
  if (const auto p = process_info(who.pid); p && p->start == peer.start) {
    for (uint32_t g : p->gids)
      if (std::find(who.gids.begin(), who.gids.end(), g) == who.gids.end()) who.gids.push_back(g);
    // A job start's pids name the processes they were then.
    who.job = job_of(who.pid, [this](uint32_t pid) { return creds_.registered_job({pid, start_of_(pid)}); });
  }
  callers_[peer.pid] = who;
  return who;
}

std::vector<uint8_t> Handler::credential(const Request& req, const Peer& peer) {
  const Header& h = req.header;
  const Attrs& a = req.attrs;
  const auto u32 = [&a](uint16_t id) { return a.num(id) ? std::optional<uint32_t>(static_cast<uint32_t>(*a.num(id))) : std::nullopt; };
  const uint32_t cred = u32(c::attr::cred).value_or(0);
  const uint32_t flags = u32(c::attr::flags).value_or(0);
  const auto refused = [&h](const std::optional<Refused>& r, uint16_t attr = c::attr::cred) {
    return r ? refuse(h, r->err, r->what, attr) : error_reply(h, 0);
  };
  // A job that starts or ends changes which job the processes are in.
  if (req.cmd->cmd == c::Cmd::JOB_START || req.cmd->cmd == c::Cmd::JOB_END || req.cmd->cmd == c::Cmd::JOB_ACTIVE)
    callers_.clear();
  switch (req.cmd->cmd) {
    case c::Cmd::CRED_ACQUIRE: {
      if (flags & ~(cc::kFlag_persistent | cc::kFlag_node_insecure))
        return refuse(h, EINVAL, "ACQUIRE takes the flags persistent and node_insecure only", c::attr::flags);
      CredStore::Cred got{};
      if (auto no = creds_.acquire(caller(peer), flags, &got)) return refuse(h, no->err, no->what);
      Writer w = Writer::command(c::Cmd::CRED_ACQUIRE, 0, h.seq, h.port);
      w.u32(c::attr::cred, got.cred).u32(c::attr::job_id, got.job_id);
      return w.finish();
    }
    case c::Cmd::CRED_GRANT:
    case c::Cmd::CRED_REVOKE: {
      const int given = a.has(c::attr::uid) + a.has(c::attr::gid) + a.has(c::attr::wlm_job);
      if (given != 1) return refuse(h, EINVAL, std::string(req.cmd->name) + " names exactly one of uid, gid and wlm_job");
      const auto kind = a.has(c::attr::uid) ? CredStore::Kind::uid : a.has(c::attr::gid) ? CredStore::Kind::gid : CredStore::Kind::job;
      const uint32_t id = u32(c::attr::uid).value_or(u32(c::attr::gid).value_or(u32(c::attr::wlm_job).value_or(0)));
      return refused(creds_.grant(caller(peer), cred, kind, id, req.cmd->cmd == c::Cmd::CRED_REVOKE));
    }
    case c::Cmd::CRED_ACCESS: {
      if (flags & ~cc::kFlag_token) return refuse(h, EINVAL, "ACCESS takes the flag token only", c::attr::flags);
      const CredStore::Caller who = caller(peer);
      if ((flags & cc::kFlag_token) && !who.job)
        return refuse(h, EINVAL, "a token is for the processes of one job; " + std::string("pid ") +
                      std::to_string(who.pid) + " runs in no job the entity knows", c::attr::flags);
      uint32_t job_id = 0;
      if (auto no = creds_.access(who, cred, a.str(c::attr::service).value_or(""), &job_id)) return refused(no);
      Writer w = Writer::command(c::Cmd::CRED_ACCESS, 0, h.seq, h.port);
      w.u32(c::attr::cred, cred).u32(c::attr::job_id, job_id);
      if (flags & cc::kFlag_token) {
        const auto expiry = static_cast<uint64_t>(std::time(nullptr)) + cc::kTokenLifetimeS;
        w.bytes(c::attr::token, make_token(creds_.token_key(), {cred, job_id, who.job, expiry}));
      }
      return w.finish();
    }
    case c::Cmd::CRED_RELEASE:
      if (flags & ~(cc::kFlag_local | cc::kFlag_full))
        return refuse(h, EINVAL, "RELEASE takes the flags local and full only", c::attr::flags);
      return refused(creds_.release(caller(peer), cred, flags));
    case c::Cmd::CRED_LIMIT: {
      const auto scope = static_cast<cc::Scope>(*a.num(c::attr::limit_scope));
      const int given = a.has(c::attr::uid) + a.has(c::attr::gid) + a.has(c::attr::wlm_job);
      const uint16_t wants = scope == cc::Scope::user ? c::attr::uid : scope == cc::Scope::group ? c::attr::gid
                             : scope == cc::Scope::job ? c::attr::wlm_job : 0;
      if (given > 1 || (given == 1 && (!wants || !a.has(wants))))
        return refuse(h, EINVAL, std::string("a ") + cc::kScopeNames[static_cast<int>(scope)] +
                      " limit names " + (wants ? "at most the one id of its scope" : "no id"), c::attr::limit_scope);
      creds_.set_limit(static_cast<uint8_t>(scope), wants ? u32(wants) : std::nullopt, *u32(c::attr::limit));
      return error_reply(h, 0);
    }
    case c::Cmd::JOB_START: {
      std::vector<Store::Process> pids;
      for (uint64_t p : a.nums(c::attr::pid)) pids.push_back({static_cast<uint32_t>(p), start_of_(static_cast<uint32_t>(p))});
      creds_.job_start(*u32(c::attr::wlm_job), pids);
      return error_reply(h, 0);
    }
    case c::Cmd::JOB_END:
      creds_.job_end(*u32(c::attr::wlm_job));
      return error_reply(h, 0);
    case c::Cmd::JOB_ACTIVE: {
      std::vector<uint32_t> active;
      for (uint64_t j : a.nums(c::attr::wlm_job)) active.push_back(static_cast<uint32_t>(j));
      creds_.reconcile(active);
      return error_reply(h, 0);
    }
    default:
      break;
  }
  return refuse(h, EOPNOTSUPP, std::string(req.cmd->name) + " is not a credential command");
}

// The credentials as a dump.
std::vector<std::vector<uint8_t>> Handler::cred_list(const Request& req) {
  const Header& h = req.header;
  const Attrs& a = req.attrs;
  std::optional<uint32_t> uid, job;
  if (auto v = a.num(c::attr::uid)) uid = static_cast<uint32_t>(*v);
  if (auto v = a.num(c::attr::wlm_job)) job = static_cast<uint32_t>(*v);
  try {
    const auto rows = creds_.list(uid, job);
    // An entry is at most 8 numbers (8 bytes each) and the 512-byte access list with its header.
    return dump(h, c::Cmd::CRED_LIST, rows.size(), 8 * 8 + 4 + 520 + 4, [&rows](Writer& w, size_t i) {
      const auto& r = rows[i];
      const size_t at = w.begin_nest(c::attr::cred_info);
      w.u32(c::cred_info::cred, r.cred).u32(c::cred_info::job_id, r.job_id).u32(c::cred_info::uid, r.uid)
          .u32(c::cred_info::gid, r.gid).u32(c::cred_info::wlm_job, r.job).u32(c::cred_info::flags, r.flags)
          .u32(c::cred_info::refs, r.refs).u8(c::cred_info::released, r.released ? 1 : 0)
          .str(c::cred_info::grants, r.grants.substr(0, 512));
      w.end_nest(at);
    });
  } catch (const std::exception& e) {
    return {refuse(h, EIO, std::string("CRED_LIST failed in the entity's store: ") + e.what())};
  }
}

}  // namespace uet::entity
