// Who an agent answers: only its run. The run's secret reaches the agent and its clients out of band (a
// 0600 file of the run's, never the command line); every connection opens with a fresh nonce from the
// agent, and the client proves it holds the secret with HMAC-SHA-256(secret, nonce): an exchange seen
// once is worth nothing on the next connection.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace uet::agent {

// Connections an agent keeps waiting for their answer to the challenge: a new one beyond takes the place of
// the oldest, so that a crowd of idle connections never keeps the harness's from its challenge, nor the
// agent from its descriptors.
inline constexpr size_t kMaxUnauthenticated = 64;
// How long a connection may take to answer the challenge before the agent closes it.
inline constexpr int kAuthDeadlineS = 10;

// The run's secret from `path`: a regular file, not a link, owned by root or by this process's user,
// readable by nobody else, 32..4096 bytes (its first line). nullopt with `error` naming what is wrong.
std::optional<std::string> read_secret_file(const std::string& path, std::string* error);
// A nonce for one connection: 32 random bytes from libcrypto, in hex.
std::string new_nonce();
// Hex HMAC-SHA-256 of `text` under `key` (libcrypto): the challenge's answer, and the signature of a case
// binary's verdict lines (cases/common/claims/verdict.cpp).
std::string hmac_sha256_hex(const std::string& key, const std::string& text);
// The client's answer to `nonce`: hex HMAC-SHA-256 over a fixed label and the nonce.
std::string auth_mac(const std::string& secret, const std::string& nonce);
// Constant-time comparison of an answer with the expected one.
bool same_mac(const std::string& a, const std::string& b);

}  // namespace uet::agent
