// A relative-addressed RDM request ({JobID, PIDonFEP, RI} selects the endpoint, digest C.2) that no enabled
// endpoint takes is answered, not dropped, so that the initiator's operation fails at once with a code
// that says why (spec/wire.yaml choice endpoint-jobid-mismatch).
#include "softuet.hpp"
#include "uet/wire/wire_gen.hpp"

namespace softuet {

namespace wire = uet::wire;

namespace {

// The enabled RDM endpoint at {PIDonFEP, RI}, whatever JobIDs it takes.
Ep* rdm_ep_at(Domain* d, uint64_t pid, uint64_t ri) {
  if (pid != d->pid_on_fep) return nullptr;
  for (Ep* ep : d->eps)
    if (ep->resource_index == ri && ep->type == FI_EP_RDM && ep->enabled) return ep;
  return nullptr;
}

// The choice's order: each code says the first thing the target could not find, from the JobID down to
// the resource index, so a JobID mismatch at an endpoint that exists is a permissions violation (the
// codes' own example) and not "JobID not found".
uint64_t refusal_code(Domain* d, uint32_t job, uint64_t pid, uint64_t ri) {
  bool job_known = false, pid_in_job = false;
  for (Ep* ep : d->eps) {
    if (!ep->enabled || !ep_accepts_job(ep, job)) continue;
    job_known = true;
    pid_in_job = pid_in_job || pid == d->pid_on_fep;  // every endpoint of the domain has its PIDonFEP
  }
  if (!job_known || fault(d, Fault::refusal_always_bad_job_id)) return wire::ses_return_code::RC_BAD_JOB_ID;
  if (rdm_ep_at(d, pid, ri)) return wire::ses_return_code::RC_PERM_VIOLATION;
  if (!pid_in_job) return wire::ses_return_code::RC_BAD_PID;
  return wire::ses_return_code::RC_BAD_INDEX;
}

// Whose PDC carries the answer: the PDC the request names when it has one (a request after the SYN), else
// that of the endpoint the request addresses, else that of any RDM endpoint (a SYN opens it as for an
// accepted request).
Ep* answering_ep(Domain* d, uint64_t pid, uint64_t ri, uint64_t dpdcid, const UdpPeer& from) {
  for (const auto& [key, p] : d->pdcs)
    if (p->tgt && p->tgt_id == dpdcid && p->peer == from && p->ep->enabled) return p->ep;
  if (Ep* ep = rdm_ep_at(d, pid, ri)) return ep;
  for (Ep* ep : d->eps)
    if (ep->type == FI_EP_RDM && ep->enabled) return ep;
  return nullptr;
}

}  // namespace

std::optional<Refusal> refuse_unmatched(Domain* d, uint32_t job, uint64_t pid, uint64_t ri, uint64_t dpdcid,
                                        const UdpPeer& from) {
  Ep* ep = answering_ep(d, pid, ri, dpdcid, from);
  if (!ep) return std::nullopt;
  return Refusal{ep, refusal_code(d, job, pid, ri)};
}

}  // namespace softuet
