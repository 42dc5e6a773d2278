// Shared credentials from a process's side (spec/control.yaml CRED_* and JOB_*): what an application,
// a job launcher or an administrator links to acquire, grant, access and release them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "uet/entity/client.hpp"
#include "uet/entity/token.hpp"

namespace uet::entity {

struct CredGrant {
  uint32_t cred = 0;
  uint32_t job_id = 0;
  std::vector<uint8_t> token;  // ACCESS with a token asked for
};

struct CredInfo {
  uint32_t cred = 0, job_id = 0, uid = 0, gid = 0, wlm_job = 0, flags = 0, refs = 0;
  bool released = false;
  std::string grants;
};

enum class Subject { uid, gid, job };

// Every call returns the Problem when the entity says no (refused set, its words kept) or does not answer.
class Credentials {
 public:
  explicit Credentials(Client& client) : client_(client) {}
  std::variant<CredGrant, Problem> acquire(uint32_t flags = 0);
  std::optional<Problem> grant(uint32_t cred, Subject who, uint32_t id);
  std::optional<Problem> revoke(uint32_t cred, Subject who, uint32_t id);
  // service: also map the JobID to {this process, service}, so that the provider's endpoints may use it.
  std::variant<CredGrant, Problem> access(uint32_t cred, const std::string& service = "", bool token = false);
  std::optional<Problem> release(uint32_t cred, uint32_t flags = 0);
  std::variant<std::vector<CredInfo>, Problem> list(std::optional<uint32_t> uid = {}, std::optional<uint32_t> job = {});
  // scope: control::cred::Scope; id: that one's own limit, else the scope's default.
  std::optional<Problem> limit(control::cred::Scope scope, std::optional<uint32_t> id, uint32_t value);
  std::optional<Problem> job_start(uint32_t job, const std::vector<uint32_t>& pids = {});
  std::optional<Problem> job_end(uint32_t job);
  std::optional<Problem> jobs_active(const std::vector<uint32_t>& jobs);

  // Access with a token, no round trip to the entity: checked with the token key against this process's
  // job (its Slurm step daemon).
  static std::variant<TokenClaims, Problem> access_with_token(std::span<const uint8_t> token,
                                                              std::span<const uint8_t> key);

 private:
  std::optional<Problem> ack(const std::vector<uint8_t>& request);
  std::variant<Reply, Problem> ask(const std::vector<uint8_t>& request);
  std::optional<Problem> subject(control::Cmd cmd, uint32_t cred, Subject who, uint32_t id);
  Writer command(control::Cmd cmd);
  Client& client_;
};

}  // namespace uet::entity
