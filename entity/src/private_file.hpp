// Files only their owner reads: one written whole where other users may also write, never through a name another
// user made (a file of theirs, or a symlink to someone else's); one a library opens by name (the store).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace uet::entity {

// Writes `bytes` to `path`, mode 0600, owned by this process's user: into a new file of a name no one else
// can have made (O_CREAT|O_EXCL|O_NOFOLLOW, a random suffix: mkostemp), synced, then renamed over `path`
// (rename replaces a planted file or symlink; it never writes through one). Throws std::runtime_error naming
// the file and the reason.
void write_private_file(const std::string& path, const std::vector<uint8_t>& bytes);

// Whether users other than this process's may create or replace files in `path`'s folder (a folder writable
// by group or others without the sticky bit, or owned by another user); the words that say so, else "".
std::string others_may_replace(const std::string& path);

// Readies `path` for a library that opens it by name and keeps files of its own beside it, named `path` and a
// suffix of `companions` (SQLite's -wal, -shm and -journal, made with the main file's mode): its folder must be
// a folder (not a symlink) of this process's user or root that no other user may write into, so that no one
// plants a file there that secrets would be written into; `path` and each companion there must be a regular
// file of this user, and is made 0600; a missing `path` is created 0600. Throws std::runtime_error starting
// with `what` and `path`, saying what is wrong.
void prepare_private_file(const std::string& path, const std::string& what, const std::vector<std::string>& companions);

}  // namespace uet::entity
