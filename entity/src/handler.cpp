// One Control API request in, its reply out: validated against spec/control.yaml, authorised by the
// peer's kernel-given identity, carried out against the store.
#include "handler.hpp"

#include <algorithm>
#include <cerrno>
#include <functional>

#include "uet/entity/message.hpp"
#include "uet/entity/process_info.hpp"
#include "uet/wire/wire_gen.hpp"

namespace uet::entity {
namespace c = control;

Handler::Handler(Store& store, StartOf start_of)
    : store_(store), creds_(store), start_of_(start_of ? std::move(start_of) : StartOf(start_time)) {}

std::vector<uint8_t> refuse(const Header& h, int err, std::string what, uint16_t attr) {
  const Problem p{err, std::move(what), 0, attr};
  return error_reply(h, err, &p);
}

std::string quoted(const std::string& s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "'";
  for (unsigned char ch : s) {
    if (ch >= 0x20 && ch < 0x7f && ch != '\\' && ch != '\'') {
      out += static_cast<char>(ch);
    } else {
      out += "\\x";
      out += kHex[ch >> 4];
      out += kHex[ch & 15];
    }
  }
  return out + "'";
}

std::string who(const Peer& p) {
  return "pid " + std::to_string(p.pid) + " (uid " + std::to_string(p.uid) + ")";
}

// Endpoint creation (spec 2.2.5.3.5.1, Table 2-19): the JobID the process may use (the one it asks for if
// granted; else the allocation JobID a configuration system set, else its one mapped JobID or the first of
// several), how many JobIDs job initialisation mapped (with one, the response's JobID takes precedence; with
// several, an FI_AV_AUTH_KEY provider ignores it: 2.2.5.3.5.1-h/i), the address mode, its PIDonFEP (one per
// process), its initiator ID and the security bindings of its map.
std::vector<uint8_t> Handler::allocate(const Header& h, const Attrs& a, const Peer& peer, const std::string& service) {
  if (auto pid = a.num(c::attr::pid); pid && *pid != static_cast<uint64_t>(peer.pid))
    return refuse(h, EPERM, "ADDR_ALLOC names pid " + std::to_string(*pid) + "; a process asks only for itself, and the "
                  "caller is " + who(peer), c::attr::pid);
  const auto mine = store_.jobs(process(peer), service);
  uint32_t job = 0;
  if (auto asked = a.num(c::attr::job_id)) {
    if (std::find(mine.begin(), mine.end(), *asked) == mine.end())
      return refuse(h, EACCES, "JobID " + std::to_string(*asked) + " is not granted to " + who(peer) +
                    " for service " + quoted(service), c::attr::job_id);
    job = static_cast<uint32_t>(*asked);
  } else if (!mine.empty()) {
    job = store_.alloc_job(static_cast<uint32_t>(peer.pid), service).value_or(mine.front());
  } else {
    return refuse(h, ENOENT, "no JobID is mapped to " + who(peer) + " for service " + quoted(service));
  }
  constexpr auto kPidBits = static_cast<unsigned>(uet::wire::k_pid_on_fep_bits);
  const uint16_t pid_on_fep =
      store_.pid_on_fep(static_cast<uint32_t>(peer.pid), c::kPidOnFepFirst, (1u << kPidBits) - 1);
  if (!pid_on_fep) return refuse(h, ENOSPC, "every PIDonFEP of this FEP is taken");
  // The initiator ID: the low bits of the FEP's IP address (when the request gives it), then the PIDonFEP.
  uint32_t ip_bits = 0;
  std::optional<std::span<const uint8_t>> ip;
  const auto given = a.nests(c::attr::address);
  if (!given.empty()) {
    ip = given[0].bytes(c::fep_address::ip);
    if (!ip) ip = given[0].bytes(c::fep_address::ip6);
  }
  if (ip && ip->size() >= 4) {
    const auto* p = ip->data() + ip->size() - 4;
    ip_bits = (uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3]) &
              ((uint32_t{1} << c::kInitiatorIpBits) - 1);
  }
  Writer w = Writer::command(c::Cmd::ADDR_ALLOC, 0, h.seq, h.port);
  w.u32(c::attr::job_id, job).u32(c::attr::count, static_cast<uint32_t>(mine.size()));
  w.u8(c::attr::address_mode, c::kAllocAddressMode);
  const size_t at = w.begin_nest(c::attr::address);
  if (ip) w.bytes(ip->size() == 4 ? c::fep_address::ip : c::fep_address::ip6, *ip);
  w.u16(c::fep_address::pid_on_fep, pid_on_fep).u32(c::fep_address::initiator_id, ip_bits << kPidBits | pid_on_fep);
  w.end_nest(at);
  for (const Store::Binding& b : store_.bindings(static_cast<uint32_t>(peer.pid), service)) {
    const size_t bt = w.begin_nest(c::attr::sec_bindings);
    w.u32(c::security_binding::sdi, b.sdi).u32(c::security_binding::job_id, b.job_id);
    w.end_nest(bt);
  }
  return w.finish();
}

std::vector<std::vector<uint8_t>> Handler::handle(std::span<const uint8_t> message, const Peer& peer) {
  return handle(parse_request(message), message, peer);
}

std::vector<std::vector<uint8_t>> Handler::handle(const std::variant<Request, Problem>& parsed,
                                                  std::span<const uint8_t> message, const Peer& peer) {
  if (const auto* bad = std::get_if<Problem>(&parsed))
    return {error_reply(header_of(message).value_or(Header{}), bad->err, bad)};
  const Request& req = std::get<Request>(parsed);
  if (req.cmd->cmd == c::Cmd::JOB_LIST && peer.uid == 0) return list(req);
  if (req.cmd->cmd == c::Cmd::CRED_LIST && peer.uid == 0) return cred_list(req);
  return {one(req, peer)};
}

std::vector<std::vector<uint8_t>> dump(const Header& h, control::Cmd cmd, size_t count, size_t entry_bytes,
                                       const std::function<void(Writer&, size_t)>& entry) {
  std::vector<std::vector<uint8_t>> out;
  size_t i = 0;
  do {
    Writer w = Writer::command(cmd, c::kFlagMulti, h.seq, h.port);
    w.u32(c::attr::count, static_cast<uint32_t>(count));
    for (; i < count && w.size() + entry_bytes <= c::kMaxMessageBytes; ++i) entry(w, i);
    out.push_back(w.finish());
  } while (i < count);
  Writer done(c::kDoneType, c::kFlagMulti, h.seq, h.port);
  const int32_t zero = 0;
  done.raw(&zero, 4);
  out.push_back(done.finish());
  return out;
}

// The maps in force as a dump.
std::vector<std::vector<uint8_t>> Handler::list(const Request& req) {
  const Header& h = req.header;
  std::optional<uint32_t> pid;
  if (auto p = req.attrs.num(c::attr::pid)) pid = static_cast<uint32_t>(*p);
  try {
    const auto rows = store_.list(pid, req.attrs.str(c::attr::service));
    // A map is at most 4 + 8 + (4 + 64 + 1 + 3) + 8 bytes.
    return dump(h, c::Cmd::JOB_LIST, rows.size(), 96, [&rows](Writer& w, size_t i) {
      const size_t at = w.begin_nest(c::attr::map);
      w.u32(c::job_map::pid, rows[i].pid).str(c::job_map::service, rows[i].service).u32(c::job_map::job_id, rows[i].job_id);
      w.end_nest(at);
    });
  } catch (const std::exception& e) {
    return {refuse(h, EIO, std::string("JOB_LIST failed in the entity's store: ") + e.what())};
  }
}

std::vector<uint8_t> Handler::one(const Request& req, const Peer& peer) {
  const Header& h = req.header;
  const std::string name = req.cmd->name;
  if (req.cmd->admin && peer.uid != 0)
    return refuse(h, EPERM, name + " needs the administrator (uid 0); the caller is " + who(peer));
  const auto& a = req.attrs;
  const std::string service = a.str(c::attr::service).value_or("");
  std::vector<uint32_t> jobs;
  for (uint64_t j : a.nums(c::attr::job_id)) jobs.push_back(static_cast<uint32_t>(j));
  try {
    switch (req.cmd->cmd) {
      case c::Cmd::JOB_MAP: {
        std::vector<Store::Binding> bindings;
        for (const Attrs& b : a.nests(c::attr::sec_bindings)) {
          if (!b.has(c::security_binding::sdi) || !b.has(c::security_binding::job_id))
            return refuse(h, EINVAL, "a sec_bindings entry needs sdi and job_id", c::attr::sec_bindings);
          bindings.push_back({static_cast<uint32_t>(*b.num(c::security_binding::sdi)),
                              static_cast<uint32_t>(*b.num(c::security_binding::job_id))});
        }
        std::optional<uint32_t> wlm_job;
        if (auto w = a.num(c::attr::wlm_job)) wlm_job = static_cast<uint32_t>(*w);
        std::optional<uint32_t> alloc_job;
        if (auto j = a.num(c::attr::alloc_job_id)) alloc_job = static_cast<uint32_t>(*j);
        // The map is the process's that has the pid now (none: it grants nothing), and goes with it.
        const auto pid = static_cast<uint32_t>(*a.num(c::attr::pid));
        store_.map({pid, start_of_(pid)}, service, jobs, bindings, wlm_job, alloc_job);
        return error_reply(h, 0);
      }
      case c::Cmd::ADDR_ALLOC:
        return allocate(h, a, peer, service);
      case c::Cmd::JOB_LIST:
      case c::Cmd::CRED_LIST:
        break;  // dumps: list(), cred_list()
      case c::Cmd::CRED_ACQUIRE:
      case c::Cmd::CRED_GRANT:
      case c::Cmd::CRED_REVOKE:
      case c::Cmd::CRED_ACCESS:
      case c::Cmd::CRED_RELEASE:
      case c::Cmd::CRED_LIMIT:
      case c::Cmd::JOB_START:
      case c::Cmd::JOB_END:
      case c::Cmd::JOB_ACTIVE:
        return credential(req, peer);
      case c::Cmd::KEY_UPDATE: {
        const auto key = *a.bytes(c::attr::key);
        Store::Key k{static_cast<uint32_t>(*a.num(c::attr::sdi)), {key.begin(), key.end()},
                     static_cast<uint16_t>(*a.num(c::attr::epoch)), std::nullopt};
        if (!jobs.empty()) k.job_id = jobs.front();
        store_.set_key(k);
        // Unsolicited updates (2.2.9-f): every process that asked for this domain's key is sent the new one,
        // as KEY_REQUEST's reply with sequence number 0 (the parameters of a requested update, unasked).
        if (auto it = subscribers_.find(k.sdi); it != subscribers_.end()) {
          for (const auto& [pid, start] : it->second) {
            // Only to a process the new key's JobID is granted to (the update may bind the domain anew).
            const auto theirs = store_.jobs_of({static_cast<uint32_t>(pid), start});
            if (!k.job_id || std::find(theirs.begin(), theirs.end(), *k.job_id) == theirs.end()) continue;
            Writer push = Writer::command(c::Cmd::KEY_REQUEST, 0, 0, 0);
            push.u32(c::attr::sdi, k.sdi).bytes(c::attr::key, k.key).u16(c::attr::epoch, k.epoch);
            pushes_.push_back({pid, start, push.finish()});
          }
        }
        return error_reply(h, 0);
      }
      case c::Cmd::KEY_REQUEST: {
        const auto sdi = static_cast<uint32_t>(*a.num(c::attr::sdi));
        const auto k = store_.key(sdi);
        if (!k) return refuse(h, ENOENT, "no key for secure domain " + std::to_string(sdi), c::attr::sdi);
        // A key is a job's: one set for no JobID has no process it may go to.
        if (!k->job_id)
          return refuse(h, EACCES, "secure domain " + std::to_string(sdi) + " is bound to no JobID: its key goes to "
                        "no process", c::attr::sdi);
        const auto mine = store_.jobs_of(process(peer));
        if (std::find(mine.begin(), mine.end(), *k->job_id) == mine.end())
          return refuse(h, EACCES, "secure domain " + std::to_string(sdi) + " is bound to JobID " +
                        std::to_string(*k->job_id) + ", which is not granted to " + who(peer), c::attr::sdi);
        subscribers_[sdi][peer.pid] = peer.start;
        Writer w = Writer::command(c::Cmd::KEY_REQUEST, 0, h.seq, h.port);
        w.u32(c::attr::sdi, sdi).bytes(c::attr::key, k->key).u16(c::attr::epoch, k->epoch);
        return w.finish();
      }
      case c::Cmd::JOB_UNMAP: {
        const auto pid = static_cast<uint32_t>(*a.num(c::attr::pid));
        if (store_.unmap(pid, service, jobs) == 0)
          return refuse(h, ENOENT, "no map of pid " + std::to_string(pid) + " for service " + quoted(service) +
                        (jobs.empty() ? "" : " holds those JobIDs"));
        return error_reply(h, 0);
      }
      case c::Cmd::JOB_GET: {
        const auto mine = store_.jobs(process(peer), service);
        if (mine.empty())
          return refuse(h, ENOENT, "no JobID is mapped to " + who(peer) + " for service " + quoted(service));
        Writer w = Writer::command(c::Cmd::JOB_GET, 0, h.seq, h.port);
        for (uint32_t j : mine) w.u32(c::attr::job_id, j);
        return w.finish();
      }
      case c::Cmd::JOB_CHECK: {
        const auto mine = store_.jobs(process(peer), service);
        for (uint32_t j : mine)
          if (j == jobs.at(0)) return error_reply(h, 0);
        return refuse(h, EACCES, "JobID " + std::to_string(jobs.at(0)) + " is not granted to " + who(peer) +
                      " for service " + quoted(service), c::attr::job_id);
      }
    }
    return refuse(h, EOPNOTSUPP, name + " is declared in spec/control.yaml; this entity does not serve it");
  } catch (const std::exception& e) {
    // The store failed (disk full, a locked file): nothing was acknowledged.
    return refuse(h, EIO, name + " failed in the entity's store: " + e.what());
  }
}

}  // namespace uet::entity
