#include "uet/agent/auth.hpp"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace uet::agent {

namespace {

constexpr char kLabel[] = "uet-agent-auth-v1\n";
constexpr size_t kMinSecret = 32, kMaxSecret = 4096;

std::string hex(const unsigned char* p, size_t n) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out += digits[p[i] >> 4];
    out += digits[p[i] & 15];
  }
  return out;
}

}  // namespace

std::optional<std::string> read_secret_file(const std::string& path, std::string* error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return *error = "secret file " + path + ": " + std::strerror(errno), std::nullopt;
  struct stat st {};
  std::string why;
  if (::fstat(fd, &st) != 0) why = std::strerror(errno);
  else if (!S_ISREG(st.st_mode)) why = "not a regular file";
  else if (st.st_uid != 0 && st.st_uid != ::geteuid()) why = "owned by uid " + std::to_string(st.st_uid);
  else if (st.st_mode & 077) why = "readable or writable by others (mode must be 0600 or stricter)";
  else if (st.st_size < static_cast<off_t>(kMinSecret) || st.st_size > static_cast<off_t>(kMaxSecret))
    why = "of " + std::to_string(st.st_size) + " bytes (" + std::to_string(kMinSecret) + ".." +
          std::to_string(kMaxSecret) + " wanted)";
  std::string secret;
  if (why.empty()) {
    secret.resize(static_cast<size_t>(st.st_size));
    const ssize_t got = ::read(fd, secret.data(), secret.size());
    if (got != st.st_size) why = "short read";
  }
  ::close(fd);
  if (!why.empty()) return *error = "secret file " + path + ": " + why, std::nullopt;
  secret = secret.substr(0, secret.find('\n'));
  if (secret.size() < kMinSecret) return *error = "secret file " + path + ": its first line is under 32 bytes", std::nullopt;
  return secret;
}

std::string new_nonce() {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof bytes) != 1) std::abort();  // no randomness: no safe way to go on
  return hex(bytes, sizeof bytes);
}

std::string hmac_sha256_hex(const std::string& key, const std::string& text) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(text.data()),
       text.size(), mac, &len);
  return hex(mac, len);
}

std::string auth_mac(const std::string& secret, const std::string& nonce) { return hmac_sha256_hex(secret, kLabel + nonce); }

bool same_mac(const std::string& a, const std::string& b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace uet::agent
