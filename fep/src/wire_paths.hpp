// Every frame layout softuet sends, as a path through the codec's parse graph (digest I.5, I.7), and the
// encoder of each. The transport builds its frames with them; the payload MTU (payload_mtu.cpp) is computed
// from the largest header among the layouts that carry data, so the two cannot drift apart.
#pragma once

#include <span>

#include "uet/codec/encoder.hpp"
#include "uet/wire/wire_gen.hpp"

namespace softuet::paths {

using uet::wire::Node;

// The encoder of one path, its graph walk done on first use.
template <const auto& Path>
const uet::codec::PathEncoder& encoder() {
  // Never destroyed: the FEP thread of a domain left open may still encode while exit runs destructors.
  static const auto* e = new uet::codec::PathEncoder{Path};
  return *e;
}

// Datagrams (UUD), and the same frame over RUD for the knob that sends them so.
inline constexpr Node kUud[] = {Node::uet, Node::uet_pds, Node::uet_pds_uud, Node::uet_pds_next,
                                Node::uet_ses_std, Node::uet_ses_std_buffer_offset, Node::uet_ses_std_som};
inline constexpr Node kUudAsRud[] = {Node::uet, Node::uet_pds, Node::uet_pds_rud_rod_req, Node::uet_pds_next,
                                     Node::uet_ses_std, Node::uet_ses_std_buffer_offset, Node::uet_ses_std_som};
// The PDS header of a request alone (written on every (re)send), ACKs, NACKs.
inline constexpr Node kReqPds[] = {Node::uet, Node::uet_pds, Node::uet_pds_rud_rod_req};
inline constexpr Node kAck[] = {Node::uet, Node::uet_pds, Node::uet_pds_ack, Node::uet_pds_next};
inline constexpr Node kAckRsp[] = {Node::uet, Node::uet_pds, Node::uet_pds_ack, Node::uet_pds_next,
                                   Node::uet_ses_response};
inline constexpr Node kAckRspData[] = {Node::uet, Node::uet_pds, Node::uet_pds_ack, Node::uet_pds_next,
                                       Node::uet_ses_response_data};
inline constexpr Node kNack[] = {Node::uet, Node::uet_pds, Node::uet_pds_nack, Node::uet_pds_next};

// Standard-header request packets: SOM or continuation, then the atomic extension (and the CAS operands)
// for atomics.
#define SOFTUET_REQUEST_PATH(ses_part, ...)                                                                  \
  {Node::uet, Node::uet_pds, Node::uet_pds_rud_rod_req, Node::uet_pds_next, Node::uet_ses_std,             \
   Node::uet_ses_std_buffer_offset, ses_part __VA_OPT__(,) __VA_ARGS__}
inline constexpr Node kReqSom[] = SOFTUET_REQUEST_PATH(Node::uet_ses_std_som);
inline constexpr Node kReqCont[] = SOFTUET_REQUEST_PATH(Node::uet_ses_std_cont);
inline constexpr Node kReqSomAtomic[] = SOFTUET_REQUEST_PATH(Node::uet_ses_std_som, Node::uet_ses_atomic);
inline constexpr Node kReqContAtomic[] = SOFTUET_REQUEST_PATH(Node::uet_ses_std_cont, Node::uet_ses_atomic);
inline constexpr Node kReqSomCas[] = SOFTUET_REQUEST_PATH(Node::uet_ses_std_som, Node::uet_ses_atomic, Node::uet_ses_cas);
inline constexpr Node kReqContCas[] = SOFTUET_REQUEST_PATH(Node::uet_ses_std_cont, Node::uet_ses_atomic, Node::uet_ses_cas);
// A rendezvous send: the extension header after the SOM standard header (choice rendezvous-ext-som-only).
inline constexpr Node kReqSomRendezvous[] = SOFTUET_REQUEST_PATH(Node::uet_ses_std_som, Node::uet_ses_rendezvous);
#undef SOFTUET_REQUEST_PATH
// A deferrable send: the restart tokens in place of buffer_offset (2.2.10.4-g); an RTR (its own layout).
#define SOFTUET_TOKEN_PATH(...) \
  {Node::uet, Node::uet_pds, Node::uet_pds_rud_rod_req, Node::uet_pds_next, Node::uet_ses_std, __VA_ARGS__}
inline constexpr Node kReqSomDeferrable[] = SOFTUET_TOKEN_PATH(Node::uet_ses_std_restart_tokens, Node::uet_ses_std_som);
inline constexpr Node kReqContDeferrable[] = SOFTUET_TOKEN_PATH(Node::uet_ses_std_restart_tokens, Node::uet_ses_std_cont);
inline constexpr Node kReqRtr[] = SOFTUET_TOKEN_PATH(Node::uet_ses_std_rtr);
#undef SOFTUET_TOKEN_PATH
// One-packet requests: in the small message / small RMA header (uet.ses.medium, next_hdr 2), and RMA and
// atomics to an OPTIMIZED key in the optimized non-matching header (uet.ses.small, next_hdr 1).
#define SOFTUET_ONE_PACKET_PATH(ses, ...) \
  {Node::uet, Node::uet_pds, Node::uet_pds_rud_rod_req, Node::uet_pds_next, ses __VA_OPT__(,) __VA_ARGS__}
inline constexpr Node kReqMedium[] = SOFTUET_ONE_PACKET_PATH(Node::uet_ses_medium);
inline constexpr Node kReqMediumAtomic[] = SOFTUET_ONE_PACKET_PATH(Node::uet_ses_medium, Node::uet_ses_atomic);
inline constexpr Node kReqMediumCas[] = SOFTUET_ONE_PACKET_PATH(Node::uet_ses_medium, Node::uet_ses_atomic, Node::uet_ses_cas);
inline constexpr Node kReqSmall[] = SOFTUET_ONE_PACKET_PATH(Node::uet_ses_small);
inline constexpr Node kReqSmallAtomic[] = SOFTUET_ONE_PACKET_PATH(Node::uet_ses_small, Node::uet_ses_atomic);
inline constexpr Node kReqSmallCas[] = SOFTUET_ONE_PACKET_PATH(Node::uet_ses_small, Node::uet_ses_atomic, Node::uet_ses_cas);
#undef SOFTUET_ONE_PACKET_PATH

// RUDI (rudi.cpp): its PDS header (it replaces the RUD placeholder of a request frame) and its responses.
inline constexpr Node kRudiPds[] = {Node::uet, Node::uet_pds, Node::uet_pds_rudi};
inline constexpr Node kRudiRsp[] = {Node::uet, Node::uet_pds, Node::uet_pds_rudi, Node::uet_pds_next,
                                    Node::uet_ses_response};
inline constexpr Node kRudiRspData[] = {Node::uet, Node::uet_pds, Node::uet_pds_rudi, Node::uet_pds_next,
                                        Node::uet_ses_response_data};

// The layouts that carry data (a message's bytes, eager bytes, a read's or fetching atomic's returned data).
// Not here: the CAS paths (their operands travel in the extension header, never as payload), the RTR, the
// PDS-only headers, ACKs and NACKs without data; a RUDI request is a RUD request frame whose PDS header
// shrinks by 4 bytes, so the RUD paths bound it.
inline constexpr std::span<const Node> kDataPaths[] = {
    kUud, kUudAsRud, kAckRspData, kReqSom, kReqCont, kReqSomAtomic, kReqContAtomic, kReqSomRendezvous,
    kReqSomDeferrable, kReqContDeferrable, kReqMedium, kReqMediumAtomic, kReqSmall, kReqSmallAtomic, kRudiRspData};

}  // namespace softuet::paths
