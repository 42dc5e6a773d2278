#include "impostor_folders.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "entity_commands.hpp"

namespace uet::cases {
namespace {

bool user_ids(const std::string& user, uid_t* uid, gid_t* gid) {
  char* end = nullptr;
  const unsigned long n = std::strtoul(user.c_str(), &end, 10);
  const passwd* pw = !user.empty() && end && *end == '\0' ? getpwuid(static_cast<uid_t>(n)) : getpwnam(user.c_str());
  if (!pw) return false;
  *uid = pw->pw_uid;
  *gid = pw->pw_gid;
  return true;
}

std::string failed(const std::string& what) { return what + ": " + std::strerror(errno); }

}  // namespace

ImpostorFolders::ImpostorFolders(const std::string& user) {
  if (!user_ids(user, &uid_, &gid_)) {
    problem_ = "the impostor's user '" + user + "' is not a user of this machine (the suite's manifests name its "
               "own, uet-impostor, which ./uet setup makes: setup/impostor-user.sh)";
    return;
  }
  if (uid_ == 0) {
    problem_ = "the impostor's user '" + user + "' is root: an impostor must not run as root";
    return;
  }
  // mkdtemp makes a new folder with a name nobody could guess, 0700: nothing of another user is in it. In
  // TMPDIR when the run gives one (a test's own folder, so that it sees only its own impostors; every
  // folder above it must let the impostor's user through), else in /tmp.
  const char* tmpdir = std::getenv("TMPDIR");
  std::string pattern = std::string(tmpdir && *tmpdir == '/' ? tmpdir : "/tmp") + "/uet-impostor-XXXXXX";
  if (!mkdtemp(pattern.data())) {
    problem_ = failed("mkdtemp " + pattern);
    return;
  }
  top_ = pattern;
  bin_ = top_ + "/bin";
  own_ = top_ + "/own";
  // 0755: the impostor reaches its binary, and nobody but root writes beside it.
  if (chmod(top_.c_str(), 0755) != 0 || mkdir(bin_.c_str(), 0700) != 0 || chmod(bin_.c_str(), 0755) != 0) {
    problem_ = failed("making " + bin_);
    return;
  }
  if (mkdir(own_.c_str(), 0700) != 0 || lchown(own_.c_str(), uid_, gid_) != 0) {
    problem_ = failed("making " + own_ + " for user " + user);
    own_.clear();
  }
}

ImpostorFolders::~ImpostorFolders() {
  if (top_.empty()) return;
  if (!own_.empty()) {
    // Emptied as its owner: find -delete never follows a link, and with the owner's rights a link
    // planted in it could only lead to what that user may delete anyway.
    std::string out;
    run_command({"setpriv", "--reuid=" + std::to_string(uid_), "--regid=" + std::to_string(gid_), "--clear-groups",
                 "find", own_, "-mindepth", "1", "-delete"},
                {}, &out);
    rmdir(own_.c_str());  // left in place if a process of that user filled it again
  }
  std::error_code ignored;
  std::filesystem::remove_all(bin_, ignored);  // root's alone
  rmdir(top_.c_str());
}

}  // namespace uet::cases
