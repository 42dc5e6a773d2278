#include "uet/entity/credentials.hpp"

#include <unistd.h>

#include <cstring>
#include <ctime>

#include "uet/entity/process_info.hpp"

namespace uet::entity {
namespace c = control;

Writer Credentials::command(c::Cmd cmd) {
  return Writer::command(cmd, c::kFlagRequest | c::kFlagAck, client_.next_seq());
}

std::variant<Reply, Problem> Credentials::ask(const std::vector<uint8_t>& request) {
  auto got = client_.call(request);
  if (const auto* r = std::get_if<Reply>(&got); r && r->is_error && r->err != 0)
    return Problem{-r->err, r->what, 0, r->attr, true};
  return got;
}

std::optional<Problem> Credentials::ack(const std::vector<uint8_t>& request) {
  auto got = ask(request);
  if (auto* p = std::get_if<Problem>(&got)) return *p;
  return std::nullopt;
}

std::variant<CredGrant, Problem> Credentials::acquire(uint32_t flags) {
  Writer w = command(c::Cmd::CRED_ACQUIRE);
  if (flags) w.u32(c::attr::flags, flags);
  auto got = ask(w.finish());
  if (auto* p = std::get_if<Problem>(&got)) return *p;
  const Reply& r = std::get<Reply>(got);
  return CredGrant{static_cast<uint32_t>(r.attrs.num(c::attr::cred).value_or(0)),
                   static_cast<uint32_t>(r.attrs.num(c::attr::job_id).value_or(0)), {}};
}

std::optional<Problem> Credentials::subject(c::Cmd cmd, uint32_t cred, Subject who, uint32_t id) {
  Writer w = command(cmd);
  w.u32(c::attr::cred, cred);
  w.u32(who == Subject::uid ? c::attr::uid : who == Subject::gid ? c::attr::gid : c::attr::wlm_job, id);
  return ack(w.finish());
}
std::optional<Problem> Credentials::grant(uint32_t cred, Subject who, uint32_t id) {
  return subject(c::Cmd::CRED_GRANT, cred, who, id);
}
std::optional<Problem> Credentials::revoke(uint32_t cred, Subject who, uint32_t id) {
  return subject(c::Cmd::CRED_REVOKE, cred, who, id);
}

std::variant<CredGrant, Problem> Credentials::access(uint32_t cred, const std::string& service, bool token) {
  Writer w = command(c::Cmd::CRED_ACCESS);
  w.u32(c::attr::cred, cred);
  if (!service.empty()) w.str(c::attr::service, service);
  if (token) w.u32(c::attr::flags, c::cred::kFlag_token);
  auto got = ask(w.finish());
  if (auto* p = std::get_if<Problem>(&got)) return *p;
  const Reply& r = std::get<Reply>(got);
  CredGrant g{cred, static_cast<uint32_t>(r.attrs.num(c::attr::job_id).value_or(0)), {}};
  if (auto t = r.attrs.bytes(c::attr::token)) g.token.assign(t->begin(), t->end());
  return g;
}

std::optional<Problem> Credentials::release(uint32_t cred, uint32_t flags) {
  Writer w = command(c::Cmd::CRED_RELEASE);
  w.u32(c::attr::cred, cred);
  if (flags) w.u32(c::attr::flags, flags);
  return ack(w.finish());
}

std::variant<std::vector<CredInfo>, Problem> Credentials::list(std::optional<uint32_t> uid, std::optional<uint32_t> job) {
  Writer w = command(c::Cmd::CRED_LIST);
  if (uid) w.u32(c::attr::uid, *uid);
  if (job) w.u32(c::attr::wlm_job, *job);
  std::vector<std::vector<uint8_t>> buffers;
  auto got = client_.call_all(w.finish(), &buffers);
  if (auto* p = std::get_if<Problem>(&got)) return *p;
  std::vector<CredInfo> out;
  for (const Reply& part : std::get<std::vector<Reply>>(got)) {
    if (part.is_error && part.err != 0) return Problem{-part.err, part.what, 0, part.attr, true};
    for (const Attrs& e : part.attrs.nests(c::attr::cred_info)) {
      const auto n = [&e](uint16_t id) { return static_cast<uint32_t>(e.num(id).value_or(0)); };
      out.push_back({n(c::cred_info::cred), n(c::cred_info::job_id), n(c::cred_info::uid), n(c::cred_info::gid),
                     n(c::cred_info::wlm_job), n(c::cred_info::flags), n(c::cred_info::refs),
                     n(c::cred_info::released) != 0, e.str(c::cred_info::grants).value_or("")});
    }
  }
  return out;
}

std::optional<Problem> Credentials::limit(c::cred::Scope scope, std::optional<uint32_t> id, uint32_t value) {
  Writer w = command(c::Cmd::CRED_LIMIT);
  w.u8(c::attr::limit_scope, static_cast<uint8_t>(scope)).u32(c::attr::limit, value);
  if (id) {
    const uint16_t which = scope == c::cred::Scope::user ? c::attr::uid
                           : scope == c::cred::Scope::group ? c::attr::gid : c::attr::wlm_job;
    w.u32(which, *id);
  }
  return ack(w.finish());
}

std::optional<Problem> Credentials::job_start(uint32_t job, const std::vector<uint32_t>& pids) {
  Writer w = command(c::Cmd::JOB_START);
  w.u32(c::attr::wlm_job, job);
  for (uint32_t p : pids) w.u32(c::attr::pid, p);
  return ack(w.finish());
}

std::optional<Problem> Credentials::job_end(uint32_t job) {
  Writer w = command(c::Cmd::JOB_END);
  w.u32(c::attr::wlm_job, job);
  return ack(w.finish());
}

std::optional<Problem> Credentials::jobs_active(const std::vector<uint32_t>& jobs) {
  Writer w = command(c::Cmd::JOB_ACTIVE);
  for (uint32_t j : jobs) w.u32(c::attr::wlm_job, j);
  return ack(w.finish());
}

std::variant<TokenClaims, Problem> Credentials::access_with_token(std::span<const uint8_t> token,
                                                                  std::span<const uint8_t> key) {
  // The job is looked up once per process: a process does not change jobs.
  static const uint32_t job = job_of(static_cast<uint32_t>(getpid()));
  return verify_token(token, key, job, static_cast<uint64_t>(std::time(nullptr)));
}

}  // namespace uet::entity
