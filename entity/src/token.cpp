#include "uet/entity/token.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

namespace uet::entity {
namespace {

namespace cc = control::cred;
constexpr size_t kClaimsBytes = 1 + 4 + 4 + 4 + 8;
constexpr size_t kMacBytes = 32;
static_assert(kClaimsBytes + kMacBytes == cc::kTokenBytes, "spec/control.yaml credentials.token.bytes");

void put_le(std::vector<uint8_t>& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
uint64_t get_le(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

void mac(std::span<const uint8_t> key, const uint8_t* data, size_t n, uint8_t out[kMacBytes]) {
  unsigned len = kMacBytes;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), data, n, out, &len);
}

}  // namespace

std::vector<uint8_t> make_token(std::span<const uint8_t> key, const TokenClaims& c) {
  std::vector<uint8_t> t;
  t.reserve(cc::kTokenBytes);
  put_le(t, cc::kTokenVersion, 1);
  put_le(t, c.cred, 4);
  put_le(t, c.job_id, 4);
  put_le(t, c.wlm_job, 4);
  put_le(t, c.expiry, 8);
  t.resize(cc::kTokenBytes);
  mac(key, t.data(), kClaimsBytes, t.data() + kClaimsBytes);
  return t;
}

std::variant<TokenClaims, Problem> verify_token(std::span<const uint8_t> token, std::span<const uint8_t> key,
                                                uint32_t caller_job, uint64_t now) {
  if (token.size() != cc::kTokenBytes || token[0] != cc::kTokenVersion)
    return Problem{EINVAL, "not a token of version " + std::to_string(cc::kTokenVersion) + " (" +
                               std::to_string(token.size()) + " bytes)"};
  uint8_t want[kMacBytes];
  mac(key, token.data(), kClaimsBytes, want);
  if (CRYPTO_memcmp(want, token.data() + kClaimsBytes, kMacBytes) != 0)
    return Problem{EACCES, "the token was not made by this entity or was changed"};
  const TokenClaims c{static_cast<uint32_t>(get_le(&token[1], 4)), static_cast<uint32_t>(get_le(&token[5], 4)),
                      static_cast<uint32_t>(get_le(&token[9], 4)), get_le(&token[13], 8)};
  if (now >= c.expiry) return Problem{EKEYEXPIRED, "the token expired at " + std::to_string(c.expiry)};
  if (caller_job != c.wlm_job)
    return Problem{EACCES, "the token is job " + std::to_string(c.wlm_job) + "'s; the caller runs in " +
                               (caller_job ? "job " + std::to_string(caller_job) : "no job")};
  return c;
}

std::variant<std::vector<uint8_t>, Problem> read_token_key(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Problem{errno ? errno : ENOENT, "cannot read the token key " + path + ": " + std::strerror(errno)};
  std::vector<uint8_t> key((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (key.size() != cc::kTokenKeyBytes)
    return Problem{EINVAL, "the token key " + path + " holds " + std::to_string(key.size()) + " bytes, not " +
                               std::to_string(cc::kTokenKeyBytes)};
  return key;
}

}  // namespace uet::entity
