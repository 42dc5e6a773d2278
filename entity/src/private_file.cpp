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

// Why `path`, when there, may not be used as a private file of this process's user (made 0600 if it may), else "".
std::string keep_private(const std::string& path, bool create) {
  // O_NONBLOCK: a FIFO planted under the name must not hang the open.
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | (create ? O_CREAT : 0), 0600);
  if (fd < 0) {
    if (errno == ENOENT && !create) return "";
    return errno == ELOOP ? path + " is a symlink" : "cannot open " + path + ": " + std::strerror(errno);
  }
  struct stat st{};
  std::string no;
  if (fstat(fd, &st) != 0)
    no = "cannot stat " + path + ": " + std::strerror(errno);
  else if (!S_ISREG(st.st_mode))
    no = path + " is not a regular file";
  else if (st.st_uid != geteuid())
    no = path + " belongs to uid " + std::to_string(st.st_uid) + ", not to this process's user";
  else if ((st.st_mode & 07777) != 0600 && fchmod(fd, 0600) != 0)
    no = "cannot make " + path + " 0600: " + std::strerror(errno);
  close(fd);
  return no;
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

void prepare_private_file(const std::string& path, const std::string& what, const std::vector<std::string>& companions) {
  const auto fail = [&](const std::string& why) { throw std::runtime_error(what + " " + path + ": " + why); };
  const std::string folder = folder_of(path);
  struct stat st{};
  if (lstat(folder.c_str(), &st) != 0) fail("its folder " + folder + ": " + std::strerror(errno));
  if (S_ISLNK(st.st_mode)) fail("its folder " + folder + " is a symlink");
  if (!S_ISDIR(st.st_mode)) fail("its folder " + folder + " is not a folder");
  if (st.st_uid != geteuid() && st.st_uid != 0)
    fail("its folder " + folder + " belongs to uid " + std::to_string(st.st_uid));
  // Sticky or not: another user could create the -wal before SQLite does, and be written the keys.
  if (st.st_mode & (S_IWGRP | S_IWOTH)) fail("its folder " + folder + " is writable by other users");
  if (std::string no = keep_private(path, true); !no.empty()) fail(no);
  for (const std::string& suffix : companions)
    if (std::string no = keep_private(path + suffix, false); !no.empty()) fail(no);
}

}  // namespace uet::entity
