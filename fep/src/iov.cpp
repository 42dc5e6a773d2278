// The application's iovec lists: checked, measured, gathered into a frame's payload, and scattered into.
#include <sys/uio.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "softuet.hpp"

namespace softuet {

std::vector<uint8_t> gather(const iovec* iov, size_t count, size_t len) {
  std::vector<uint8_t> msg;
  msg.reserve(len);
  for (size_t i = 0; i < count; ++i) {
    const auto* p = static_cast<const uint8_t*>(iov[i].iov_base);
    msg.insert(msg.end(), p, p + iov[i].iov_len);
  }
  return msg;
}

bool iov_ok(const iovec* iov, size_t count) {
  if (count > kIovLimit || (count && !iov)) return false;
  for (size_t i = 0; i < count; ++i)
    if (iov[i].iov_len && !iov[i].iov_base) return false;
  return true;
}

size_t iov_len(const iovec* iov, size_t count) {
  size_t n = 0;
  for (size_t i = 0; i < count; ++i) n += iov[i].iov_len;
  return n;
}

size_t scatter(const IovList& iov, size_t offset, const uint8_t* data, size_t len) {
  size_t copied = 0;
  for (const iovec& v : iov) {
    if (copied == len) break;
    if (offset >= v.iov_len) {
      offset -= v.iov_len;
      continue;
    }
    const size_t n = std::min(v.iov_len - offset, len - copied);
    std::memcpy(static_cast<uint8_t*>(v.iov_base) + offset, data + copied, n);
    copied += n;
    offset = 0;
  }
  return copied;
}

}  // namespace softuet
