// The folders an impostor entity runs in. Root copies what the impostor executes, and only root may
// write where it copies: {bin_dir} is root's, 0755, inside a private mkdtemp folder. The impostor's own
// folder {dir} (its socket, its store) belongs to the impostor's user, and root never walks it: it is
// emptied as that user, so a tree another user can rearrange is never removed with root's rights.
#pragma once

#include <sys/types.h>

#include <string>

namespace uet::cases {

class ImpostorFolders {
 public:
  // `user`: a name or a number, not root. problem() says why the folders could not be made.
  explicit ImpostorFolders(const std::string& user);
  ~ImpostorFolders();
  ImpostorFolders(const ImpostorFolders&) = delete;
  ImpostorFolders& operator=(const ImpostorFolders&) = delete;

  const std::string& problem() const { return problem_; }
  const std::string& bin_dir() const { return bin_; }   // root's
  const std::string& own_dir() const { return own_; }   // the impostor's
  uid_t uid() const { return uid_; }                    // the impostor's user, as the start command's {uid}
  gid_t gid() const { return gid_; }                    // and its group, {gid}

 private:
  std::string problem_, top_, bin_, own_;
  uid_t uid_ = 0;
  gid_t gid_ = 0;
};

}  // namespace uet::cases
