#include "private_file.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace uet::entity {
namespace {

std::string folder_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

void write_private_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::string tmp = path + ".XXXXXX";
  // mkostemp opens with O_CREAT|O_EXCL, mode 0600: a name planted in advance (file or symlink) is not
  // opened but skipped for another.
  const int fd = mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot write " + path + ": cannot create a file beside it: " + std::strerror(errno));
  const auto fail = [&](const char* step) {
    const std::string why = std::strerror(errno);
    close(fd);
    unlink(tmp.c_str());
    throw std::runtime_error("cannot write " + path + ": " + step + ": " + why);
  };
  if (fchmod(fd, 0600) != 0) fail("chmod");
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("write");
    done += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0) fail("fsync");
  if (rename(tmp.c_str(), path.c_str()) != 0) fail("rename");
  close(fd);
}

std::string others_may_replace(const std::string& path) {
  const std::string folder = folder_of(path);
  struct stat st{};
  if (stat(folder.c_str(), &st) != 0) return "";
  if (st.st_uid != geteuid() && st.st_uid != 0)
    return "its folder " + folder + " belongs to uid " + std::to_string(st.st_uid);
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
    return "its folder " + folder + " is writable by other users and not sticky";
  return "";
}

}  // namespace uet::entity
