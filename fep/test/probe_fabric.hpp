// One softuet RDM endpoint with its CQ (FI_CQ_FORMAT_DATA) and AV, for the programs and tests that need a FEP
// of their own: softuet-rudi-probe, softuet-rndv-probe, and the API tests of two FEPs with different profiles.
// Header-only, so that a probe needs no library of the tests.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace softuet_probe {

struct ProbeFabric {
  fi_info* info = nullptr;
  fid_fabric* fabric = nullptr;
  fid_domain* domain = nullptr;
  fid_cq* cq = nullptr;
  fid_av* av = nullptr;
  fid_ep* ep = nullptr;
  std::string failed;  // the call that failed and its error, e.g. "fi_getinfo: -61 (No data available)"

  // Opens softuet with `caps` up to an endpoint bound to the CQ and AV (not enabled: MRs may be bound
  // first). Returns 0 or the negative error of the call named in `failed`.
  int open(uint64_t caps) {
    fi_info* hints = fi_allocinfo();
    if (!hints) return fail("fi_allocinfo", -FI_ENOMEM);
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = caps;
    hints->fabric_attr->prov_name = strdup("softuet");
    int r = fi_getinfo(FI_VERSION(2, 0), nullptr, nullptr, 0, hints, &info);
    fi_freeinfo(hints);
    if (r) return fail("fi_getinfo", r);
    if ((r = fi_fabric(info->fabric_attr, &fabric, nullptr))) return fail("fi_fabric", r);
    if ((r = fi_domain(fabric, info, &domain, nullptr))) return fail("fi_domain", r);
    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_DATA;
    cq_attr.wait_obj = FI_WAIT_UNSPEC;
    if ((r = fi_cq_open(domain, &cq_attr, &cq, nullptr))) return fail("fi_cq_open", r);
    fi_av_attr av_attr{};
    av_attr.type = FI_AV_TABLE;
    if ((r = fi_av_open(domain, &av_attr, &av, nullptr))) return fail("fi_av_open", r);
    if ((r = fi_endpoint(domain, info, &ep, nullptr))) return fail("fi_endpoint", r);
    if ((r = fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV))) return fail("bind CQ", r);
    if ((r = fi_ep_bind(ep, &av->fid, 0))) return fail("bind AV", r);
    return 0;
  }

  // The endpoint's address (fi_getname) as hex.
  std::string name_hex() const {
    std::vector<uint8_t> name(256);
    size_t len = name.size();
    if (fi_getname(&ep->fid, name.data(), &len)) return "";
    static constexpr char kHex[] = "0123456789abcdef";
    std::string s;
    for (size_t i = 0; i < len; ++i) s += {kHex[name[i] >> 4], kHex[name[i] & 15]};
    return s;
  }

  // Inserts an address given as hex; FI_ADDR_NOTAVAIL when it is not one.
  fi_addr_t insert_hex(const std::string& hex) const {
    std::vector<uint8_t> name;
    for (size_t i = 0; i + 1 < hex.size(); i += 2) name.push_back(static_cast<uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
    fi_addr_t a = FI_ADDR_NOTAVAIL;
    return fi_av_insert(av, name.data(), 1, &a, 0, nullptr) == 1 ? a : FI_ADDR_NOTAVAIL;
  }

  ProbeFabric() = default;
  ProbeFabric(const ProbeFabric&) = delete;
  ProbeFabric& operator=(const ProbeFabric&) = delete;
  // A probe closes its domain on every path: a domain left open at exit is the provider's exit path
  // (fep/src/fep_thread.cpp), which softuet-exit-probe tests on purpose.
  ~ProbeFabric() { close(); }

  // Closes the endpoint alone (before the MRs bound to it).
  void close_ep() {
    if (ep) fi_close(&ep->fid);
    ep = nullptr;
  }

  // Closes what is open, endpoint first.
  void close() {
    close_ep();
    for (fid* f : {av ? &av->fid : nullptr, cq ? &cq->fid : nullptr, domain ? &domain->fid : nullptr,
                   fabric ? &fabric->fid : nullptr})
      if (f) fi_close(f);
    av = nullptr;
    cq = nullptr;
    domain = nullptr;
    fabric = nullptr;
    if (info) fi_freeinfo(info);
    info = nullptr;
  }

 private:
  int fail(const char* what, int ret) {
    failed = std::string(what) + ": " + std::to_string(ret) + " (" + fi_strerror(-ret) + ")";
    return ret;
  }
};

}  // namespace softuet_probe
