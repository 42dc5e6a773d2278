// The address vector: FI_AV_TABLE (FI_AV_UNSPEC and the deprecated FI_AV_MAP behave as TABLE, §2.2.5.3.8).
// fi_addr_t values are table indices from 0 in insertion order, so with FI_AV_TABLE the index can equal
// the rank (digest F.2).
#include <algorithm>
#include <cstring>

#include "softuet.hpp"

namespace softuet {

namespace {

int av_close(fid* f) {
  delete obj<Av>(f);
  return 0;
}

int av_insert(fid_av* f, const void* addr, size_t count, fi_addr_t* fi_addr, uint64_t flags, void*) {
  Av* av = obj<Av>(f);
  if (count && !addr) return -FI_EINVAL;
  // FI_AUTH_KEY: fi_addr[i] holds, on input, the auth key handle the address is associated with.
  if (flags & ~uint64_t{FI_AUTH_KEY}) return -FI_EBADFLAGS;
  const bool with_key = flags & FI_AUTH_KEY;
  if (with_key && !(av->domain->cfg.job_id_methods & kJobIdAv)) return -FI_EOPNOTSUPP;
  if (with_key && !fi_addr) return -FI_EINVAL;
  std::lock_guard lock(av->domain->mu);
  if (with_key) {
    for (size_t i = 0; i < count; ++i)
      if (!av_auth_key_job(av, fi_addr[i])) return -FI_EINVAL;
  }
  const auto* p = static_cast<const uint8_t*>(addr);
  const AddrLayout layout = av->domain->cfg.addr_layout;
  const size_t stride = addr_blob_size(layout);
  int inserted = 0;
  for (size_t i = 0; i < count; ++i) {
    const std::optional<softuet_addr> parsed = addr_from_blob(av->domain->cfg, p + i * stride, stride);
    // Only version-0 UET addresses with a valid FA of this FEP's family can be reached: one FEP has one IP
    // address and one socket of its family.
    const bool ok = parsed && parsed->uet.version == uet::wire::k_addr_version && (parsed->uet.flags & kAddrFlagFaValid) &&
                    addr_ip(*parsed).v6 == av->domain->ip.ip.v6;
    if (!ok) {
      if (fi_addr) fi_addr[i] = FI_ADDR_NOTAVAIL;
      continue;
    }
    const softuet_addr& a = *parsed;
    if (fault(av->domain, Fault::av_keys_by_fep)) {
      const auto same_fep = std::find_if(av->entries.begin(), av->entries.end(), [&](const auto& e) {
        return e && addr_ip(*e) == addr_ip(a) && addr_port(*e) == addr_port(a);
      });
      if (same_fep != av->entries.end()) {
        if (fi_addr) fi_addr[i] = static_cast<fi_addr_t>(same_fep - av->entries.begin());
        ++inserted;
        continue;
      }
    }
    av->entry_jobs.push_back(with_key ? av_auth_key_job(av, fi_addr[i]) : std::nullopt);
    if (fi_addr) fi_addr[i] = av->entries.size();
    av->by_initiator.emplace(a.uet.initiator_id, av->entries.size());
    av->entries.push_back(a);
    ++inserted;
  }
  ++av->generation;
  return inserted;
}

int av_remove(fid_av* f, fi_addr_t* fi_addr, size_t count, uint64_t flags) {
  Av* av = obj<Av>(f);
  if (count && !fi_addr) return -FI_EINVAL;
  if (flags) return -FI_EBADFLAGS;
  std::lock_guard lock(av->domain->mu);
  for (size_t i = 0; i < count; ++i)
    if (fi_addr[i] >= av->entries.size() || !av->entries[fi_addr[i]]) return -FI_EINVAL;
  for (size_t i = 0; i < count; ++i) {
    auto& e = av->entries[fi_addr[i]];
    if (!e) continue;  // named twice in this call
    auto [first, last] = av->by_initiator.equal_range(e->uet.initiator_id);
    for (auto it = first; it != last; ++it) {
      if (it->second == fi_addr[i]) {
        av->by_initiator.erase(it);
        break;
      }
    }
    e.reset();
  }
  ++av->generation;
  return 0;
}

int av_lookup_op(fid_av* f, fi_addr_t fi_addr, void* addr, size_t* addrlen) {
  Av* av = obj<Av>(f);
  if (!addrlen) return -FI_EINVAL;
  softuet_addr a;
  {
    std::lock_guard lock(av->domain->mu);
    if (!av_lookup(av, fi_addr, &a)) return -FI_EINVAL;
  }
  const AddrLayout layout = av->domain->cfg.addr_layout;
  const size_t size = addr_blob_size(layout);
  const size_t given = *addrlen;
  *addrlen = size;
  if (addr) {
    uint8_t blob[kMaxAddrBlob];
    addr_to_blob(av->domain->cfg, a, blob);
    std::memcpy(addr, blob, std::min(given, size));
  }
  return given < size ? -FI_ETOOSMALL : 0;
}

const char* av_straddr(fid_av* f, const void* addr, char* buf, size_t* len) {
  if (!f || !addr || !buf || !len) return nullptr;
  const AddrLayout layout = obj<Av>(f)->domain->cfg.addr_layout;
  const std::optional<softuet_addr> a = addr_from_blob(obj<Av>(f)->domain->cfg, addr, addr_blob_size(layout));
  const std::string s = a ? addr_to_string(*a) : std::string("fi_addr_uet://(not an address in layout ") + addr_layout_name(layout) + ")";
  if (*len) snprintf(buf, *len, "%s", s.c_str());
  *len = s.size() + 1;
  return buf;
}

// fi_av_insert_auth_key (spec 2.2.4.1-t): a JobID as a 3-byte auth key; the handle names it in
// fi_av_insert(FI_AUTH_KEY), fi_recvmsg(FI_AUTH_KEY) and fi_mr_regattr. Only in an FI_AV_AUTH_KEY domain.
int av_insert_auth_key(fid_av* f, const void* auth_key, size_t auth_key_size, fi_addr_t* fi_addr, uint64_t flags) {
  Av* av = obj<Av>(f);
  if (!(av->domain->cfg.job_id_methods & kJobIdAv)) return -FI_EOPNOTSUPP;  // SOFTUET_JOB_ID_METHODS
  if (flags) return -FI_EBADFLAGS;
  if (!auth_key || !fi_addr || auth_key_size != uet::wire::k_direct_auth_key_size) return -FI_EINVAL;
  {
    std::lock_guard lock(av->domain->mu);
    if (!av->domain->av_auth_keys) return -FI_EOPNOTSUPP;
    if (av->auth_keys.size() >= kMaxEpAuthKeys) return -FI_ENOSPC;
  }
  // The AV method: a JobID user space passes must be granted to this process (spec 2.2.4.1). Asked
  // without the domain lock, which progress needs: the entity may take its time to answer.
  if (int ret = entity_grants(av->domain, job_of_auth_key(auth_key))) return ret;
  std::lock_guard lock(av->domain->mu);
  if (av->auth_keys.size() >= kMaxEpAuthKeys) return -FI_ENOSPC;
  *fi_addr = kAuthKeyHandle + av->auth_keys.size();
  av->auth_keys.push_back(job_of_auth_key(auth_key));
  return 0;
}

int av_lookup_auth_key(fid_av* f, fi_addr_t handle, void* auth_key, size_t* auth_key_size) {
  Av* av = obj<Av>(f);
  if (!auth_key_size) return -FI_EINVAL;
  std::lock_guard lock(av->domain->mu);
  const std::optional<uint32_t> job = av_auth_key_job(av, handle);
  if (!job) return -FI_EINVAL;
  const size_t given = *auth_key_size;
  *auth_key_size = uet::wire::k_direct_auth_key_size;
  if (given < *auth_key_size || !auth_key) return -FI_ETOOSMALL;
  auth_key_of_job(*job, auth_key);
  return 0;
}

fi_ops g_av_fi_ops = {sizeof(fi_ops), av_close, enosys, enosys, enosys, enosys, enosys};
fi_ops_av g_av_ops = {sizeof(fi_ops_av), av_insert,    enosys,             enosys, av_remove, av_lookup_op,
                      av_straddr,        enosys,       av_insert_auth_key, av_lookup_auth_key, enosys};

}  // namespace

std::optional<uint32_t> av_auth_key_job(Av* av, fi_addr_t handle) {
  if (!av || handle < kAuthKeyHandle || handle - kAuthKeyHandle >= av->auth_keys.size()) return std::nullopt;
  return av->auth_keys[handle - kAuthKeyHandle];
}

bool resolve_dest(Ep* ep, fi_addr_t a, Dest* out) {
  if (!ep->av || !av_lookup(ep->av, a, &out->addr)) return false;
  const auto& jobs = ep->av->entry_jobs;
  out->job_id = a < jobs.size() && jobs[a] ? *jobs[a] : ep->job_id;
  return true;
}

bool ep_accepts_job(Ep* ep, uint32_t job_id) {
  if (ep->job_id == job_id) return true;
  if (!ep->domain->av_auth_keys || !ep->av) return false;
  for (uint32_t k : ep->av->auth_keys)
    if (k == job_id) return true;
  return false;
}

bool av_lookup(Av* av, fi_addr_t a, softuet_addr* out) {
  if (a >= av->entries.size() || !av->entries[a]) return false;
  *out = *av->entries[a];
  return true;
}

// Which AV entry sent a packet: same IP, same port, same initiator ID (the SES header carries no more of
// the sender's address).
fi_addr_t av_reverse(Av* av, const UdpPeer& peer, uint32_t initiator, bool any_port) {
  if (!av) return FI_ADDR_NOTAVAIL;
  Av::Reverse& last = av->last_reverse;
  if (last.generation == av->generation && last.initiator == initiator && last.any_port == any_port &&
      last.peer == peer)
    return last.found;
  fi_addr_t found = FI_ADDR_NOTAVAIL;
  auto [first, end] = av->by_initiator.equal_range(initiator);
  for (auto it = first; it != end; ++it) {
    if (it->second >= found) continue;
    const softuet_addr& e = *av->entries[it->second];
    if (any_port ? addr_ip(e) == peer.ip : addr_peer(e) == peer) found = it->second;
  }
  last = {av->generation, peer, initiator, any_port, found};
  return found;
}

int av_open(fid_domain* domain, fi_av_attr* attr, fid_av** out, void* context) {
  if (!domain || !attr || !out) return -FI_EINVAL;
  if (attr->type != FI_AV_UNSPEC && attr->type != FI_AV_TABLE && attr->type != FI_AV_MAP) return -FI_EINVAL;
  if (attr->name || attr->rx_ctx_bits) return -FI_ENOSYS;  // no shared or scalable AVs
  if (attr->flags & ~uint64_t{FI_READ | FI_SYMMETRIC}) return -FI_EBADFLAGS;
  auto* av = new (std::nothrow) Av;
  if (!av) return -FI_ENOMEM;
  av->domain = obj<Domain>(domain);
  av->entries.reserve(std::min<size_t>(attr->count, 4096));
  av->fid.fid.fclass = FI_CLASS_AV;
  av->fid.fid.context = context;
  av->fid.fid.ops = &g_av_fi_ops;
  av->fid.ops = &g_av_ops;
  *out = &av->fid;
  return 0;
}

}  // namespace softuet
