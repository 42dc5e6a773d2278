// Access tokens (spec/control.yaml `credentials.token`): one process of a job accesses a credential
// through the entity and hands the token to the job's other processes, which access with it and no round
// trip to the entity. Whoever verifies a token holds the entity's token key: the FEP's privileged side.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "uet/entity/message.hpp"

namespace uet::entity {

struct TokenClaims {
  uint32_t cred = 0;
  uint32_t job_id = 0;   // the credential's JobID
  uint32_t wlm_job = 0;  // the only job whose processes may use the token
  uint64_t expiry = 0;   // seconds since the epoch
};

std::vector<uint8_t> make_token(std::span<const uint8_t> key, const TokenClaims& claims);

// The claims, when the token is intact, unexpired at `now` and presented by a process of its job.
std::variant<TokenClaims, Problem> verify_token(std::span<const uint8_t> token, std::span<const uint8_t> key,
                                                uint32_t caller_job, uint64_t now);

// The token key the entity wrote (mode 0600) at `path`; a Problem naming the file when unreadable.
std::variant<std::vector<uint8_t>, Problem> read_token_key(const std::string& path);

}  // namespace uet::entity
