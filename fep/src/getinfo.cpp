// fi_getinfo: one fi_info per endpoint type (FI_EP_RDM, FI_EP_DGRAM; both MUST exist, §2.2.5.3.5),
// each describing this namespace's FEP. Built with the public fi_allocinfo/fi_freeinfo only.
#include <cstdlib>
#include <cstring>

#include "service.hpp"
#include "softuet.hpp"

namespace softuet {

namespace {

// FI_SOURCE because fi_cq_readfrom reports the sender; LOCAL/REMOTE_COMM because two FEPs on one host
// work (SOFTUET_UDP_PORT). DGRAM endpoints have fi_msg only: fi_tagged, fi_rma and fi_atomic are not
// supported on FI_EP_DGRAM (spec 2.2.5.4.2-a, 2.2.5.4.3-a, 2.2.5.4.4-a).
constexpr uint64_t kDgramCaps = FI_MSG | FI_SEND | FI_RECV | FI_SOURCE | FI_LOCAL_COMM | FI_REMOTE_COMM;
constexpr uint64_t kRmaCaps = FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
constexpr uint64_t kRdmCaps = kDgramCaps | FI_TAGGED | FI_DIRECTED_RECV | kRmaCaps;

// What this FEP's profiles give an endpoint type. AI Base has no fi_tagged (fi_trecv MUST be supported by
// AI Full and HPC, digest F.2); the rest of RDM is common to the profiles.
uint64_t caps_for(fi_ep_type type, const Config& cfg) {
  if (type == FI_EP_DGRAM) return kDgramCaps;
  uint64_t caps = kRdmCaps;
  const bool tagged_profile = cfg.fep_caps & (kCapAiFull | kCapHpc);
  if (!tagged_profile && !(cfg.faults & fault_bit(Fault::tagged_in_ai_base))) caps &= ~uint64_t{FI_TAGGED};
  return caps;
}

// libfabric's utility providers (ofi_rxd over DGRAM, ofi_rxm over MSG) look for a core provider to stack on
// by calling fi_getinfo with this flag (OFI_CORE_PROV_ONLY in libfabric's private ofi.h; only its value is
// used here, no code). softuet declines: "softuet;ofi_rxd" would offer an FI_EP_RDM endpoint that speaks
// rxd's protocol inside UUD datagrams, while a UET RDM endpoint MUST use RUD/ROD/RUDI (spec 2.2.6), and
// libfabric lists it before softuet's own RDM endpoint, so applications would pick it.
constexpr uint64_t kUtilityProviderQuery = 1ULL << 59;

char* dup(const std::string& s) { return strdup(s.c_str()); }

// auth_key_size 0 is the indirect method, always there; 3 the direct one, FI_AV_AUTH_KEY the AV method.
bool job_id_method_offered(const Config& cfg, size_t auth_key_size) {
  if (!auth_key_size) return true;
  return cfg.job_id_methods & (auth_key_size == FI_AV_AUTH_KEY ? kJobIdAv : kJobIdDirect);
}

// An address as fi_getinfo hands it out: in the configured layout, malloc'd (fi_freeinfo frees it).
void* blob_of(const Config& cfg, const softuet_addr& a, size_t* len) {
  *len = addr_blob_size(cfg.addr_layout);
  void* blob = calloc(1, *len);
  if (blob) addr_to_blob(cfg, a, blob);
  return blob;
}

bool hint_ok(const fi_info* hints, fi_ep_type type, const Config& cfg, const LocalIp& ip, size_t payload_mtu,
             std::string* why) {
  if (!hints) return true;
  const uint64_t offered = caps_for(type, cfg);
  if (hints->caps & ~offered) {
    *why = "requested capabilities this endpoint type and profile set do not offer";
    return false;
  }
  // RMA and atomics reach MRs bound to endpoints: an application that cannot handle FI_MR_ENDPOINT
  // cannot use them (digest A.2).
  if ((hints->caps & kRmaCaps) && hints->domain_attr && hints->domain_attr->mr_mode &&
      !(hints->domain_attr->mr_mode & FI_MR_ENDPOINT)) {
    *why = "RMA/atomics without FI_MR_ENDPOINT in mr_mode";
    return false;
  }
  if (hints->addr_format != FI_FORMAT_UNSPEC && hints->addr_format != FI_ADDR_UET) {
    *why = "addr_format other than FI_ADDR_UET";
    return false;
  }
  if (hints->ep_attr) {
    if (hints->ep_attr->type != FI_EP_UNSPEC && hints->ep_attr->type != type) {
      *why = "endpoint type";
      return false;
    }
    const size_t max = type == FI_EP_DGRAM ? payload_mtu : kMaxRdmMsg;
    if (hints->ep_attr->max_msg_size > max) {
      *why = "max_msg_size";
      return false;
    }
    if (hints->ep_attr->tx_ctx_cnt > 1 || hints->ep_attr->rx_ctx_cnt > 1) {
      *why = "scalable endpoints";
      return false;
    }
  }
  // Ordering: RDM offers every bit ROD gives (digest G.1, kRdmOrderBits); DGRAM (UUD) none.
  const uint64_t orders = type == FI_EP_RDM ? kRdmOrderBits : 0;
  if (hints->tx_attr) {
    if ((hints->tx_attr->msg_order & ~orders) || (hints->tx_attr->inject_size > kInjectSize) ||
        (hints->tx_attr->caps & ~offered)) {
      *why = "tx_attr (ordering, inject size or caps)";
      return false;
    }
  }
  if (hints->rx_attr && ((hints->rx_attr->msg_order & ~orders) || (hints->rx_attr->caps & ~offered))) {
    *why = "rx_attr (ordering or caps)";
    return false;
  }
  if (hints->fabric_attr && hints->fabric_attr->name && strcmp(hints->fabric_attr->name, "softuet") != 0) {
    *why = "fabric name";
    return false;
  }
  if (hints->domain_attr) {
    const fi_domain_attr* d = hints->domain_attr;
    if (d->name && ip.text != d->name) {
      *why = "domain name";
      return false;
    }
    if (d->av_type != FI_AV_UNSPEC && d->av_type != FI_AV_TABLE && d->av_type != FI_AV_MAP) {
      *why = "av_type";
      return false;
    }
    // JobID methods (digest B.3): 0 indirect, 3 direct, FI_AV_AUTH_KEY the AV method.
    if (d->auth_key_size && d->auth_key_size != uet::wire::k_direct_auth_key_size && d->auth_key_size != FI_AV_AUTH_KEY) {
      *why = "auth_key_size other than 0, 3 or FI_AV_AUTH_KEY";
      return false;
    }
    if (d->auth_key_size == FI_AV_AUTH_KEY && d->auth_key) {
      *why = "an auth_key with FI_AV_AUTH_KEY (libfabric wants it NULL)";
      return false;
    }
    if (!job_id_method_offered(cfg, d->auth_key_size)) {
      *why = "a JobID method SOFTUET_JOB_ID_METHODS leaves out (auth_key_size)";
      return false;
    }
  }
  if (hints->ep_attr && !job_id_method_offered(cfg, hints->ep_attr->auth_key_size)) {
    *why = "a JobID method SOFTUET_JOB_ID_METHODS leaves out (ep_attr auth_key_size)";
    return false;
  }
  if (hints->dest_addr && !addr_from_blob(cfg, hints->dest_addr, hints->dest_addrlen)) {
    *why = std::string("dest_addr is not an address in layout ") + addr_layout_name(cfg.addr_layout);
    return false;
  }
  return true;
}

fi_info* make_info(fi_ep_type type, const fi_info* hints, const Config& cfg, const LocalIp& ip, size_t payload_mtu,
                   const softuet_addr& src) {
  fi_info* info = fi_allocinfo();
  if (!info) return nullptr;
  const uint64_t offered = caps_for(type, cfg);
  uint64_t caps = offered;
  if (hints && hints->caps) {
    caps = hints->caps & offered;
    // FI_MSG alone means both directions (fi_getinfo(3)).
    if (!(caps & (FI_SEND | FI_RECV))) caps |= FI_SEND | FI_RECV;
    // FI_RMA/FI_ATOMIC without a direction flag means every direction (fi_getinfo(3)).
    constexpr uint64_t kRmaDirections = FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
    if ((caps & (FI_RMA | FI_ATOMIC)) && !(caps & kRmaDirections)) caps |= kRmaDirections & offered;
  }
  info->caps = caps;
  info->mode = 0;
  info->addr_format = FI_ADDR_UET;

  info->src_addr = blob_of(cfg, src, &info->src_addrlen);
  // hint_ok read it: it is an address of the layout.
  if (hints && hints->dest_addr)
    info->dest_addr = blob_of(cfg, *addr_from_blob(cfg, hints->dest_addr, hints->dest_addrlen), &info->dest_addrlen);

  info->tx_attr->caps = caps & ~FI_RECV;
  info->tx_attr->mode = 0;
  info->tx_attr->op_flags = hints && hints->tx_attr ? hints->tx_attr->op_flags : 0;
  // The ordering asked for, no more: an endpoint with ordering uses ROD, one without RUD (digest G.1).
  info->tx_attr->msg_order = hints && hints->tx_attr ? hints->tx_attr->msg_order : 0;
  info->tx_attr->inject_size = kInjectSize;
  info->tx_attr->size = kQueueDepth;
  info->tx_attr->iov_limit = kIovLimit;
  info->tx_attr->rma_iov_limit = type == FI_EP_RDM ? 1 : 0;

  info->rx_attr->caps = caps & ~FI_SEND;
  info->rx_attr->mode = 0;
  info->rx_attr->op_flags = hints && hints->rx_attr ? hints->rx_attr->op_flags : 0;
  info->rx_attr->msg_order = hints && hints->rx_attr ? hints->rx_attr->msg_order : 0;
  info->rx_attr->size = kQueueDepth;
  info->rx_attr->iov_limit = kIovLimit;

  info->ep_attr->type = type;
  info->ep_attr->protocol = FI_PROTO_UNSPEC;
  info->ep_attr->protocol_version = 1;
  // A datagram is one packet: at most a payload MTU of the FEP's path.
  info->ep_attr->max_msg_size = type == FI_EP_DGRAM ? payload_mtu : kMaxRdmMsg;
  info->ep_attr->tx_ctx_cnt = 1;
  info->ep_attr->rx_ctx_cnt = 1;

  fi_domain_attr* d = info->domain_attr;
  d->name = dup(ip.text);
  d->threading = FI_THREAD_SAFE;
  d->control_progress = FI_PROGRESS_MANUAL;
  d->progress = FI_PROGRESS_MANUAL;
  d->resource_mgmt = FI_RM_ENABLED;
  d->av_type = FI_AV_TABLE;
  // UET binds MRs to endpoints (digest A.2). FI_MR_ENDPOINT only concerns MRs other endpoints access, i.e.
  // RMA and atomics; an application that cannot handle the bit and asks for neither (fi_pingpong asks for
  // FI_MR_LOCAL|FI_MR_BASIC_MAP) still gets a message-only provider.
  // A hint of 0 (FI_MR_UNSPEC, deprecated; what fi_allocinfo leaves) is read as "tell me what you need".
  const bool app_takes_ep_mr = !hints || !hints->domain_attr || hints->domain_attr->mr_mode == 0 ||
                               (hints->domain_attr->mr_mode & FI_MR_ENDPOINT);
  d->mr_mode = app_takes_ep_mr ? FI_MR_ENDPOINT : 0;
  d->mr_key_size = 8;
  // The traffic class asked for is the one the domain's data packets get (spec 2.2.7, tclass.cpp): every
  // value is served (a DSCP, a named class or FI_TC_UNSPEC for the default data class).
  d->tclass = hints && hints->domain_attr ? hints->domain_attr->tclass : uint32_t{FI_TC_UNSPEC};
  info->tx_attr->tclass = hints && hints->tx_attr ? hints->tx_attr->tclass : uint32_t{FI_TC_UNSPEC};
  d->cq_data_size = 8;  // ses.header_data is 64 bits
  d->cq_cnt = 256;
  d->ep_cnt = (1u << uet::wire::k_resource_index_bits) - 1;  // RIs 1..4095
  d->tx_ctx_cnt = d->ep_cnt;
  d->rx_ctx_cnt = d->ep_cnt;
  d->max_ep_tx_ctx = 1;
  d->max_ep_rx_ctx = 1;
  d->cntr_cnt = 256;  // counters are host memory, like CQs: the same order of magnitude, not enforced either
  d->mr_iov_limit = 1;
  d->caps = FI_LOCAL_COMM | FI_REMOTE_COMM;
  d->mr_cnt = 65536;
  d->max_ep_auth_key = kMaxEpAuthKeys;
  // The method the application asked for (the key itself is the application's, not copied back).
  const fi_domain_attr* want = hints ? hints->domain_attr : nullptr;
  d->auth_key_size = 0;
  if (want && want->auth_key_size == FI_AV_AUTH_KEY) {
    d->auth_key_size = FI_AV_AUTH_KEY;
  } else if (want && want->auth_key_size == uet::wire::k_direct_auth_key_size && want->auth_key) {
    d->auth_key = static_cast<uint8_t*>(malloc(want->auth_key_size));  // fi_freeinfo frees it
    if (d->auth_key) {
      std::memcpy(d->auth_key, want->auth_key, want->auth_key_size);
      d->auth_key_size = want->auth_key_size;
    }
  }

  info->fabric_attr->name = dup("softuet");
  info->fabric_attr->prov_version = kProviderVersion;
  info->fabric_attr->api_version = kApiVersion;
  return info;
}

// node is a UET address (digest C.6) in the configured layout, of that layout's size (fi_getinfo gives no
// length): keep the info only if the fields its valid flags name match ours.
bool node_matches(const Config& cfg, const char* node, const softuet_addr& ours) {
  const std::optional<softuet_addr> parsed = addr_from_blob(cfg, node, addr_blob_size(cfg.addr_layout));
  if (!parsed) return false;
  const uet_addr& want = parsed->uet;
  if ((want.flags & kAddrFlagFaValid) && std::memcmp(want.fa, ours.uet.fa, 4) != 0) return false;
  if ((want.flags & kAddrFlagCapsValid) && (want.fep_caps & ~ours.uet.fep_caps)) return false;
  if ((want.flags & kAddrFlagPidValid) && want.pid_on_fep != ours.uet.pid_on_fep) return false;
  if ((want.flags & kAddrFlagInitiatorValid) && want.initiator_id != ours.uet.initiator_id) return false;
  return true;
}

}  // namespace

int getinfo(uint32_t version, const char* node, const char* service, uint64_t flags, const fi_info* hints,
            fi_info** info) {
  *info = nullptr;
  if (FI_VERSION_LT(version, kOldestCallerApi)) {
    FI_INFO(&g_prov, FI_LOG_CORE, "API version %u.%u < 1.21: softuet needs libfabric 2.0 semantics\n",
            FI_MAJOR(version), FI_MINOR(version));
    return -FI_ENODATA;
  }
  if (flags & kUtilityProviderQuery) {
    FI_INFO(&g_prov, FI_LOG_CORE, "not offered to utility providers (ofi_rxd/ofi_rxm): UET RDM is RUD/ROD\n");
    return -FI_ENODATA;
  }
  std::string error;
  std::optional<Config> cfg = load_config(&error);
  if (!cfg) {
    FI_WARN(&g_prov, FI_LOG_CORE, "invalid configuration, no fabric offered: %s\n", error.c_str());
    return -FI_ENODATA;
  }
  std::optional<LocalIp> ip = local_ip(*cfg, &error);
  if (!ip) {
    FI_WARN(&g_prov, FI_LOG_CORE, "%s\n", error.c_str());
    return -FI_ENODATA;
  }
  const PathMtu mtu = fep_path_mtu(cfg->mtu, ip->ip);
  if (!mtu.payload) {
    FI_WARN(&g_prov, FI_LOG_CORE, "the MTU of %s (%u) leaves no room for a UET packet's payload\n", ip->text.c_str(),
            mtu.link_mtu);
    return -FI_ENODATA;
  }
  // The port src_addr names is the one the domain will have (SOFTUET_UDP_PORT=auto reserves it now).
  cfg->udp_port = fep_port(*cfg, *ip, &error);
  if (!cfg->udp_port) {
    FI_WARN(&g_prov, FI_LOG_CORE, "%s\n", error.c_str());
    return -FI_ENODATA;
  }
  // node names a UET address; without FI_SOURCE the provider should not answer at all (digest C.6).
  if (node && !(flags & FI_SOURCE)) {
    FI_INFO(&g_prov, FI_LOG_CORE, "node given without FI_SOURCE: no info (spec 2.2.5.2.2)\n");
    return -FI_ENODATA;
  }

  // service names the resource indices of the endpoints (digest C.6): they travel in src_addr.
  std::optional<ServiceRange> range;
  if (service) {
    const char* file = std::getenv("UET_PROVIDER_SERVICE_PATH");
    range = resolve_service(service, file ? file : "", &error);
    if (!range) {
      FI_WARN(&g_prov, FI_LOG_CORE, "%s\n", error.c_str());
      return -FI_ENODATA;
    }
  }

  fi_info* head = nullptr;
  fi_info** tail = &head;
  for (fi_ep_type type : {FI_EP_RDM, FI_EP_DGRAM}) {
    if (!(type == FI_EP_RDM ? cfg->offers_rdm : cfg->offers_dgram)) continue;  // SOFTUET_EP_TYPES
    std::string why;
    if (!hint_ok(hints, type, *cfg, *ip, mtu.payload, &why)) {
      FI_INFO(&g_prov, FI_LOG_CORE, "%s: hints not supported (%s)\n", fi_tostr(&type, FI_TYPE_EP_TYPE),
              why.c_str());
      continue;
    }
    softuet_addr src = make_addr(*cfg, *ip, process_pid_on_fep(), 0, cfg->initiator_id.value_or(default_initiator(*ip)));
    if (range) {
      src.uet.start_index = range->start;
      src.uet.num_indices = range->count;
    }
    if (node && !node_matches(*cfg, node, src)) continue;
    fi_info* i = make_info(type, hints, *cfg, *ip, mtu.payload, src);
    if (!i) {
      fi_freeinfo(head);
      return -FI_ENOMEM;
    }
    *tail = i;
    tail = &i->next;
  }
  if (!head) return -FI_ENODATA;
  *info = head;
  return 0;
}

}  // namespace softuet
