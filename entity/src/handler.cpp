// One Control API request in, its reply out: validated against spec/control.yaml, authorised by the
// peer's kernel-given identity, carried out against the store.
#include "handler.hpp"

#include <cerrno>
#include <cstring>

#include "uet/entity/message.hpp"

namespace uet::entity {
namespace {

namespace c = control;

std::vector<uint8_t> refuse(const Header& h, int err, std::string what, uint16_t attr = 0) {
  const Problem p{err, std::move(what), 0, attr};
  return error_reply(h, err, &p);
}

// A name from a request, as a reply may quote it: bytes other than printable ASCII as \xNN.
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

}  // namespace

std::vector<uint8_t> Handler::handle(std::span<const uint8_t> message, const Peer& peer) {
  auto parsed = parse_request(message);
  if (auto* bad = std::get_if<Problem>(&parsed)) {
    Header h;
    if (message.size() >= c::kNetlinkHeaderBytes) {
      std::memcpy(&h.len, message.data(), 4);
      std::memcpy(&h.type, message.data() + 4, 2);
      std::memcpy(&h.flags, message.data() + 6, 2);
      std::memcpy(&h.seq, message.data() + 8, 4);
      std::memcpy(&h.port, message.data() + 12, 4);
    }
    return error_reply(h, bad->err, bad);
  }
  const Request& req = std::get<Request>(parsed);
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
      case c::Cmd::JOB_MAP:
        store_.map(static_cast<uint32_t>(*a.num(c::attr::pid)), service, jobs);
        return error_reply(h, 0);
      case c::Cmd::JOB_UNMAP: {
        const auto pid = static_cast<uint32_t>(*a.num(c::attr::pid));
        if (store_.unmap(pid, service, jobs) == 0)
          return refuse(h, ENOENT, "no map of pid " + std::to_string(pid) + " for service " + quoted(service) +
                        (jobs.empty() ? "" : " holds those JobIDs"));
        return error_reply(h, 0);
      }
      case c::Cmd::JOB_GET: {
        const auto mine = store_.jobs(static_cast<uint32_t>(peer.pid), service);
        if (mine.empty())
          return refuse(h, ENOENT, "no JobID is mapped to " + who(peer) + " for service " + quoted(service));
        Writer w = Writer::command(c::Cmd::JOB_GET, 0, h.seq, h.port);
        for (uint32_t j : mine) w.u32(c::attr::job_id, j);
        return w.finish();
      }
      case c::Cmd::JOB_CHECK: {
        const auto mine = store_.jobs(static_cast<uint32_t>(peer.pid), service);
        for (uint32_t j : mine)
          if (j == jobs.at(0)) return error_reply(h, 0);
        return refuse(h, EACCES, "JobID " + std::to_string(jobs.at(0)) + " is not granted to " + who(peer) +
                      " for service " + quoted(service), c::attr::job_id);
      }
      case c::Cmd::JOB_LIST: {
        std::optional<uint32_t> pid;
        if (auto p = a.num(c::attr::pid)) pid = static_cast<uint32_t>(*p);
        const auto rows = store_.list(pid, a.str(c::attr::service));
        Writer w = Writer::command(c::Cmd::JOB_LIST, 0, h.seq, h.port);
        w.u32(c::attr::count, static_cast<uint32_t>(rows.size()));
        // One reply holds what fits; the count says how many there are in all.
        for (const auto& r : rows) {
          if (w.size() + 96 > c::kMaxMessageBytes) break;
          const size_t at = w.begin_nest(c::attr::map);
          w.u32(c::job_map::pid, r.pid).str(c::job_map::service, r.service).u32(c::job_map::job_id, r.job_id);
          w.end_nest(at);
        }
        return w.finish();
      }
      default:
        return refuse(h, EOPNOTSUPP, name + " is declared in spec/control.yaml; this entity does not serve it yet");
    }
  } catch (const std::exception& e) {
    // The store failed (disk full, a locked file): nothing was acknowledged.
    return refuse(h, EIO, name + " failed in the entity's store: " + e.what());
  }
}

}  // namespace uet::entity
