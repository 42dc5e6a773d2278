// The process's connection to the privileged entity of a domain's socket (jobid.cpp), shared by the JobID
// methods and transport security (tss.cpp).
#pragma once

#include <mutex>
#include <optional>
#include <vector>

#include "softuet.hpp"
#include "uet/entity/client.hpp"

namespace softuet {

// The link's lock: taken before a domain's mu and never after (under mu, only try_lock). A reply's attributes
// point into the connection's buffer: read them before letting go.
std::mutex& entity_mutex();
// One request and its reply (the caller holds entity_mutex()); nullopt, with the reason logged, when the
// entity cannot be asked or does not run as root.
std::optional<uet::entity::Reply> ask_entity(Domain* d, const std::vector<uint8_t>& request);
// The connection made so far (the caller holds entity_mutex()); nullptr before the first request.
uet::entity::Client* entity_link(Domain* d);

}  // namespace softuet
