// A file only its owner reads, written whole where other users may also write: never through a name another
// user made (a file of theirs, or a symlink to someone else's).
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

}  // namespace uet::entity
