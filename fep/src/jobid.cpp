// JobIDs (spec 2.2.4; digest B): which JobID an endpoint sends with, and which JobID an MR accepts.
// With a privileged entity (UET_ENTITY_SOCKET: uet-entity) the indirect method's JobID is the one it maps
// to this process's service, and a direct or AV JobID must be granted by it (spec 2.2.4.1). Without one,
// the indirect JobID comes from SOFTUET_JOB_ID (default 1); SOFTUET_FALLBACK_JOB_ID=1 enables the fallback
// JobID instead. SOFTUET_JOB_ID also overrides the entity's indirect JobID, for tests only.
// SOFTUET_JOB_ID_METHODS=none: no JobID at all, every endpoint's is 0.
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "entity_link.hpp"
#include "uet/wire/wire_gen.hpp"

namespace softuet {

namespace wire = uet::wire;
namespace ctl = uet::control;

namespace {

// The connections to privileged entities, one per socket path for the whole process (as a process has
// one netlink socket to its kernel driver), made at the first question; entity_mu is held while a reply is
// read (its attributes point into the connection's buffer) and is taken before a domain's mu, never after.
std::mutex entity_mu;
std::map<std::string, std::unique_ptr<uet::entity::Client>>& entity_links() {
  static auto* links = new std::map<std::string, std::unique_ptr<uet::entity::Client>>;  // lives to exit
  return *links;
}

}  // namespace

std::mutex& entity_mutex() { return entity_mu; }

uet::entity::Client* entity_link(Domain* d) {
  auto it = entity_links().find(d->cfg.entity_socket);
  return it == entity_links().end() ? nullptr : it->second.get();
}

// A kernel driver accepts responses only from a privileged process running as root (spec 2.2.5.3.5.1).
std::optional<uet::entity::Reply> ask_entity(Domain* d, const std::vector<uint8_t>& request) {
  auto& link = entity_links()[d->cfg.entity_socket];
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!link) {
      std::string why;
      link = uet::entity::Client::connect(d->cfg.entity_socket, &why);
      if (!link) {
        FI_WARN(&g_prov, FI_LOG_EP_CTRL, "the privileged entity cannot be asked: %s\n", why.c_str());
        return std::nullopt;
      }
    }
    if (link->server_uid() != 0 && !fault(d, Fault::entity_peer_not_checked)) {
      FI_WARN(&g_prov, FI_LOG_EP_CTRL, "the privileged entity at %s runs as uid %u, not root: its answers are not taken\n",
              d->cfg.entity_socket.c_str(), static_cast<unsigned>(link->server_uid()));
      link.reset();
      return std::nullopt;
    }
    auto got = link->call(request);
    if (const auto* r = std::get_if<uet::entity::Reply>(&got)) return *r;
    const auto& p = std::get<uet::entity::Problem>(got);
    link.reset();
    // A connection the entity closed (it restarted) is made again once; a silent entity is not waited twice.
    if (attempt == 0 && (p.err == ECONNRESET || p.err == EPIPE)) continue;
    FI_WARN(&g_prov, FI_LOG_EP_CTRL, "the privileged entity at %s: %s\n", d->cfg.entity_socket.c_str(), p.what.c_str());
    return std::nullopt;
  }
  return std::nullopt;
}

namespace {

// The address this process asks for: the FEP's IP address (Table 2-18), which names the FEP in the UET
// address and does not configure the NIC.
void put_address(Domain* d, uet::entity::Writer& w) {
  const size_t at = w.begin_nest(ctl::attr::address);
  if (d->ip.ip.v6) {
    w.bytes(ctl::fep_address::ip6, std::span<const uint8_t>(d->ip.ip.fa.data(), 16));
  } else {
    w.bytes(ctl::fep_address::ip, std::span<const uint8_t>(d->ip.ip.fa.data(), 4));
  }
  w.end_nest(at);
}

// The JobIDs job initialisation mapped to this process's service (JOB_GET; the caller holds entity_mu):
// empty with `*rc` set when the entity cannot say.
std::vector<uint32_t> init_job_ids(Domain* d, int* rc) {
  const auto reply = ask_entity(d, uet::entity::Writer::command(ctl::Cmd::JOB_GET, ctl::kFlagRequest, 1)
                                       .str(ctl::attr::service, d->cfg.entity_service).finish());
  std::vector<uint32_t> out;
  if (!reply) {
    *rc = -FI_ECONNREFUSED;
    return out;
  }
  for (uint64_t j : reply->attrs.nums(ctl::attr::job_id)) out.push_back(static_cast<uint32_t>(j));
  if (reply->is_error || out.empty()) *rc = -FI_EACCES;
  return out;
}

}  // namespace

// Endpoint creation with an entity (spec 2.2.5.3.5.1): the address allocation request names the FEP IP
// address, this process and its service (and the direct JobID asked for). The response's PIDonFEP and
// initiator ID become the domain's. Its JobID takes precedence over the one JobID of job initialisation
// (2.2.5.3.5.1-h); with several JobIDs of job initialisation in an FI_AV_AUTH_KEY domain it is ignored
// (2.2.5.3.5.1-i): the endpoint takes job initialisation's first, and its AV's auth keys the others.
int entity_allocate(Domain* d, std::optional<uint32_t> asked, uint32_t* job_id) {
  if (fault(d, Fault::no_address_request)) {
    if (asked) {
      *job_id = *asked;
      return entity_grants(d, *asked);
    }
    // The JobID of job initialisation alone, as a provider that skips the allocation request would ask.
    std::lock_guard entity_lock(entity_mu);
    int rc = 0;
    const auto jobs = init_job_ids(d, &rc);
    if (rc) return rc;
    *job_id = jobs.front();
    return 0;
  }
  uet::entity::Writer w = uet::entity::Writer::command(ctl::Cmd::ADDR_ALLOC, ctl::kFlagRequest, 1);
  w.str(ctl::attr::service, d->cfg.entity_service).u32(ctl::attr::pid, static_cast<uint32_t>(getpid()));
  if (asked) w.u32(ctl::attr::job_id, *asked);
  if (!fault(d, Fault::address_request_without_ip)) put_address(d, w);
  std::lock_guard entity_lock(entity_mu);
  std::optional<uint64_t> job, pid, initiator, init_count;
  std::vector<std::pair<uint32_t, uint32_t>> bindings;  // {sdi, JobID}
  {
    const auto reply = ask_entity(d, w.finish());
    if (!reply) return -FI_ECONNREFUSED;
    if (reply->is_error) {
      if (!asked && reply->err == -ENOENT) {
        if (fault(d, Fault::indirect_without_entity)) {
          *job_id = kDefaultJobId;
          return 0;
        }
        if (d->cfg.fallback_job_id) return 1;  // no JobID of job initialisation: the caller falls back
      }
      FI_WARN(&g_prov, FI_LOG_EP_CTRL, "the privileged entity allocates no address: %s\n", reply->what.c_str());
      return -FI_EACCES;
    }
    job = reply->attrs.num(ctl::attr::job_id);
    init_count = reply->attrs.num(ctl::attr::count);
    for (const auto& b : reply->attrs.nests(ctl::attr::sec_bindings))
      if (auto sdi = b.num(ctl::security_binding::sdi), j = b.num(ctl::security_binding::job_id); sdi && j)
        bindings.emplace_back(static_cast<uint32_t>(*sdi), static_cast<uint32_t>(*j));
    const auto addr = reply->attrs.nests(ctl::attr::address);
    if (!addr.empty()) {
      pid = addr[0].num(ctl::fep_address::pid_on_fep);
      initiator = addr[0].num(ctl::fep_address::initiator_id);
    }
  }
  if (!job || !pid || !initiator) {
    FI_WARN(&g_prov, FI_LOG_EP_CTRL, "the address allocation response lacks its JobID, PIDonFEP or initiator ID\n");
    return -FI_EIO;
  }
  *job_id = asked.value_or(static_cast<uint32_t>(*job));
  const bool several = init_count.value_or(1) > 1 && d->av_auth_keys;
  if (!asked && (several ? !fault(d, Fault::alloc_job_id_kept_with_av_auth_key) : fault(d, Fault::alloc_job_id_ignored))) {
    int rc = 0;
    const auto jobs = init_job_ids(d, &rc);
    if (rc) return rc;
    *job_id = jobs.front();
  }
  // The security binding of the endpoint's JobID seals the domain's packets (2.2.9-a, 2.2.10.2-a).
  for (const auto& [sdi, bound] : bindings) {
    if (bound != *job_id) continue;
    if (const int rc = tss_bind(d, sdi)) return rc;
    break;
  }
  if (fault(d, Fault::entity_response_ignored)) return 0;
  std::lock_guard lock(d->mu);
  if (d->entity_addressed && d->pid_on_fep != *pid) {
    FI_WARN(&g_prov, FI_LOG_EP_CTRL, "the entity gave PIDonFEP %u; this domain's endpoints have %u\n",
            static_cast<unsigned>(*pid), static_cast<unsigned>(d->pid_on_fep));
    return -FI_EIO;
  }
  d->pid_on_fep = static_cast<uint16_t>(*pid);
  d->initiator = static_cast<uint32_t>(*initiator);
  d->entity_addressed = true;
  return 0;
}

int entity_grants(Domain* d, uint32_t job_id) {
  if (d->cfg.entity_socket.empty() || fault(d, Fault::entity_not_asked)) return 0;
  // The knob keeps what was granted once per process, as a stale cache would.
  static std::mutex cached_mu;
  static std::vector<uint32_t> cached;
  if (fault(d, Fault::entity_grant_cached)) {
    std::lock_guard lock(cached_mu);
    if (std::find(cached.begin(), cached.end(), job_id) != cached.end()) return 0;
  }
  const auto request = uet::entity::Writer::command(ctl::Cmd::JOB_CHECK, ctl::kFlagRequest, 1)
                           .str(ctl::attr::service, d->cfg.entity_service).u32(ctl::attr::job_id, job_id).finish();
  std::lock_guard entity_lock(entity_mu);
  const auto reply = ask_entity(d, request);
  if (!reply) return -FI_ECONNREFUSED;
  if (!reply->is_error || reply->err != 0) {
    FI_WARN(&g_prov, FI_LOG_EP_CTRL, "JobID %u refused by the privileged entity: %s\n", job_id, reply->what.c_str());
    return -FI_EACCES;
  }
  if (fault(d, Fault::entity_grant_cached)) {
    std::lock_guard lock(cached_mu);
    cached.push_back(job_id);
  }
  return 0;
}

// Little-endian: the byte order is MISSING from the spec (digest B.3); spec/wire.yaml choice
// direct-auth-key-byte-order.
uint32_t job_of_auth_key(const void* key) {
  const auto* k = static_cast<const uint8_t*>(key);
  return k[0] | (k[1] << 8) | (static_cast<uint32_t>(k[2]) << 16);
}

void auth_key_of_job(uint32_t job_id, void* key) {
  auto* k = static_cast<uint8_t*>(key);
  k[0] = job_id & 0xFF;
  k[1] = (job_id >> 8) & 0xFF;
  k[2] = (job_id >> 16) & 0xFF;
}

int ep_job_id(Domain* d, const fi_info* info, uint32_t* job_id) {
  const fi_domain_attr* da = info->domain_attr;
  const fi_ep_attr* ea = info->ep_attr;
  // Direct method: the 3-byte auth_key of the endpoint (or of its domain), granted by the entity.
  std::optional<uint32_t> asked;
  if (ea && ea->auth_key_size == wire::k_direct_auth_key_size && ea->auth_key) asked = job_of_auth_key(ea->auth_key);
  else if (da && da->auth_key_size == wire::k_direct_auth_key_size && da->auth_key) asked = job_of_auth_key(da->auth_key);
  const bool entity = !d->cfg.entity_socket.empty() && !fault(d, Fault::entity_not_asked);
  if (asked && !(d->cfg.job_id_methods & kJobIdDirect)) {
    FI_WARN(&g_prov, FI_LOG_EP_CTRL, "an auth_key (direct JobID method) is not taken: SOFTUET_JOB_ID_METHODS\n");
    return -FI_EOPNOTSUPP;
  }
  if (!d->cfg.job_id_methods) {
    *job_id = 0;  // SOFTUET_JOB_ID_METHODS=none: neither the entity, SOFTUET_JOB_ID nor the fallback gives one
    return 0;
  }
  if (asked) {
    *job_id = *asked;
    if (!entity) return 0;
    if (fault(d, Fault::entity_grant_cached) && entity_grants(d, *asked) == 0) return 0;
    return entity_allocate(d, asked, job_id);
  }
  if (d->cfg.job_id) {
    *job_id = *d->cfg.job_id;  // the test-only override answers in the entity's place
    return 0;
  }
  if (entity) {
    const int rc = entity_allocate(d, std::nullopt, job_id);
    if (rc <= 0) return rc;  // 1: the entity maps no JobID and the fallback is enabled
  }
  if (d->cfg.fallback_job_id) {
    // Fallback (spec 2.2.4.2): JobID 16777215, and the initiator ID MUST come from
    // UET_PROVIDER_INITIATOR_ID; without it endpoint creation MUST fail.
    if (!d->cfg.initiator_id && !fault(d, Fault::fallback_without_initiator)) {
      FI_WARN(&g_prov, FI_LOG_EP_CTRL, "fallback JobID without UET_PROVIDER_INITIATOR_ID: endpoint refused\n");
      return -FI_EINVAL;
    }
    *job_id = static_cast<uint32_t>(wire::k_fallback_job_id);
    return 0;
  }
  *job_id = kDefaultJobId;
  return 0;
}

int mr_job_id(Domain* d, const fi_mr_attr* attr, std::optional<uint32_t>* job_id) {
  if (attr->auth_key_size == 0) {
    *job_id = std::nullopt;  // any JobID (spec 2.2.4.3.3-b)
    return 0;
  }
  // Without the direct and AV methods an MR has no JobID of its own to be given (SOFTUET_JOB_ID_METHODS).
  const uint8_t method = attr->auth_key_size == wire::k_direct_auth_key_size ? kJobIdDirect : kJobIdAv;
  if (!(d->cfg.job_id_methods & method)) return -FI_EOPNOTSUPP;
  if (attr->auth_key_size == wire::k_direct_auth_key_size) {
    if (!attr->auth_key) return -FI_EINVAL;
    *job_id = job_of_auth_key(attr->auth_key);
    return 0;
  }
  // AV method: auth_key points to a struct fi_mr_auth_key naming an AV and an address inserted with an
  // auth key (or the auth key handle itself). The UET text puts FI_AV_AUTH_KEY in auth_key_size where
  // libfabric puts sizeof(struct fi_mr_auth_key) (digest B.5): both are taken.
  if (attr->auth_key_size == FI_AV_AUTH_KEY || attr->auth_key_size == sizeof(fi_mr_auth_key)) {
    if (!attr->auth_key) return -FI_EINVAL;
    fi_mr_auth_key k;
    std::memcpy(&k, attr->auth_key, sizeof k);
    if (!k.av) return -FI_EINVAL;
    Av* av = reinterpret_cast<Av*>(k.av);
    std::optional<uint32_t> job = av_auth_key_job(av, k.src_addr);
    if (!job && k.src_addr < av->entry_jobs.size()) job = av->entry_jobs[k.src_addr];
    if (!job) return -FI_EINVAL;
    *job_id = job;
    return 0;
  }
  return -FI_EINVAL;
}

}  // namespace softuet
