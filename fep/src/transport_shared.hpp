// What the transport's files share, and only they: transport.cpp (the initiator's side and the PDCs),
// receive.cpp (the target's side) and fep_socket.cpp (the socket and progress). The rest of the provider
// uses the transport through softuet.hpp. Callers hold the domain's mutex.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "softuet.hpp"

namespace uet::codec {
class Decoded;
}

namespace softuet::transport {

// How long the initiator waits for the SES response of a message whose last packet is ACKed, before it
// sends that packet again, and how often.
constexpr auto kResponseWait = std::chrono::milliseconds(20);
// The OPTIMIZED bit of a memory key (Table 2-13).
constexpr uint64_t kKeyOptimized = uint64_t{1} << uet::wire::k_mr_key_optimized_bit;

// ---- transport.cpp ----
// Whether an AMO opcode carries the compare-and-swap extension.
bool is_cas(uint8_t amo);
uint16_t next_message_id(Domain* d);
// The enabled endpoint {job, pid, ri} of `type` names; `any_job` ignores the JobID (a fault knob).
Ep* find_ep(Domain* d, uint64_t job, uint64_t pid, uint64_t ri, fi_ep_type type, bool any_job = false);
// The MR an optimized header's RKEY/INDEX names, or null.
const Mr* mr_of_rkey(Domain* d, uint64_t rkey);
// The endpoint an optimized header's request reaches through `mr`.
Ep* ep_of_optimized(Domain* d, const Mr* mr, uint64_t job, uint64_t pid, uint64_t dpdcid, const UdpPeer& from);
// The PDC between `ep` and the FEP `peer`, made on first use.
PeerPdc& peer_pdc(Domain* d, Ep* ep, const UdpPeer& peer);
// One packet of operation `op_id` is answered (ok or not).
void packet_done(Domain* d, uint64_t op_id, bool ok);
// The SES response of one of our messages arrived (in an ACK).
void response_arrived(Domain* d, PeerPdc& p, uint16_t message_id, uint64_t rc, const uint8_t* data, size_t len,
                      uint64_t data_offset);
// Send what the PDC's window now lets out.
void flush_backlog(Domain* d, PeerPdc& p, pds::Clock::time_point now);
void resend(Domain* d, PeerPdc& p, const std::vector<pds::ToSend>& list);
// Retransmissions and response waits that are due, on every PDC.
void run_timers(Domain* d, pds::Clock::time_point now);

// ---- close_wait.cpp ----
// SOFTUET_CLOSE=wait_for_peers: closing RDM endpoint `ep` waits until the FEPs that sent it requests are
// closed, or until `deadline`, answering them meanwhile (nothing without the setting). Takes d->mu itself.
void wait_for_initiators_to_close(Ep* ep, pds::Clock::time_point deadline);

// ---- receive.cpp ----
// An ACK on `p`, with the SES response `rsp` when there is one.
void send_ack(Domain* d, PeerPdc& p, bool retx, int16_t ack_psn_offset, uint16_t message_id, uint32_t job_id,
              const Response* rsp);
// Keep `rsp` for a duplicate of message `key`.
void remember_response(PeerPdc& p, uint64_t key, const Response& rsp);
// The answers on `p` its peer may still lack (PeerPdc::unconfirmed), sent again.
void restate_answers(Domain* d, PeerPdc& p);
// Drop a message being reassembled.
std::map<std::tuple<UdpPeer, uint16_t, uint16_t>, Reassembly>::iterator forget_reassembly(
    Domain* d, std::map<std::tuple<UdpPeer, uint16_t, uint16_t>, Reassembly>::iterator it);
// One datagram: decoded into `pkt`, its request read into `m` (the domain's scratch), and handled.
void handle_packet(Domain* d, const uint8_t* buf, size_t n, const UdpPeer& from, uet::codec::Decoded& pkt,
                   InRequest& m);

}  // namespace softuet::transport
