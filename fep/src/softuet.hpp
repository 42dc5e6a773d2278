// softuet's objects and the functions each file provides. Every libfabric object is a struct whose first
// member is the public fid_* struct, so the fid pointer libfabric hands back is the object itself.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "pdc.hpp"
#include "softuet/fi_addr_uet.h"

namespace softuet {

extern struct fi_provider g_prov;

// The oldest API version an application may ask for: the spec asks for >= 2.0 (digest A.2).
inline constexpr uint32_t kApiVersion = FI_VERSION(2, 0);
// The oldest API a caller may ask for. softuet always behaves with 2.0 semantics (spec 2.2.5.2.1-a), but
// fabtests 2.1 ask for FI_VERSION(1,21) (FT_FIVERSION), and refusing them would leave the provider untestable
// with libfabric's own programs; 1.21 differs from 2.0 only by features UET does not use.
inline constexpr uint32_t kOldestCallerApi = FI_VERSION(1, 21);
// The API version the provider declares: libfabric skips a provider whose fi_version is below the version
// an application requests, so it is the version of the headers it is built with.
inline constexpr uint32_t kBuiltApiVersion = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION);
inline constexpr uint32_t kProviderVersion = FI_VERSION(0, 1);

// Payload bytes per UET packet. The spec leaves Max PDU to the implementation (digest A.2, footnote 5)
// but requires every FEP of a fabric to use the same value; 4096 is the common default (S-SPECQ).
inline constexpr size_t kPayloadMtu = 4096;
// Largest RDM message: request_length is 32 bits on the wire, but a receiver reassembles into memory,
// so a bounded size protects it from a hostile request_length.
inline constexpr size_t kMaxRdmMsg = size_t{1} << 26;
inline constexpr size_t kInjectSize = 128;
inline constexpr size_t kQueueDepth = 1024;
inline constexpr size_t kIovLimit = 4;

// Packet delivery mode of an RDM endpoint (digest G.1, spec §2.2.6): ROD when tx_attr->msg_order has any
// bit of the send-ordering set or of the read/write-ordering set (UET_SEND_ORDERING / UET_RW_ORDERING of
// the reference provider), RUD otherwise. These two sets are the only place softuet lists them.
inline constexpr uint64_t kSendOrderingBits = FI_ORDER_RAS | FI_ORDER_SAR | FI_ORDER_SAS | FI_ORDER_SAW |
                                              FI_ORDER_WAS;
inline constexpr uint64_t kRwOrderingBits =
    FI_ORDER_ATOMIC_RAR | FI_ORDER_ATOMIC_RAW | FI_ORDER_ATOMIC_WAR | FI_ORDER_ATOMIC_WAW | FI_ORDER_RAR |
    FI_ORDER_RAS | FI_ORDER_RAW | FI_ORDER_RMA_RAR | FI_ORDER_RMA_RAW | FI_ORDER_RMA_WAR | FI_ORDER_RMA_WAW |
    FI_ORDER_SAR | FI_ORDER_SAW | FI_ORDER_WAR | FI_ORDER_WAS;
// The ordering an RDM endpoint can give (every bit ROD provides); DGRAM (UUD) gives none.
inline constexpr uint64_t kRdmOrderBits = kSendOrderingBits | kRwOrderingBits;
inline pds::Mode rdm_mode(uint64_t msg_order) {
  return (msg_order & (kSendOrderingBits | kRwOrderingBits)) ? pds::Mode::rod : pds::Mode::rud;
}

// ---- config.cpp ----
struct Config {
  uint8_t fep_caps = 0;                  // from SOFTUET_PROFILES
  std::string profiles;                  // as given (for logs)
  uint16_t udp_port = 0;                 // SOFTUET_UDP_PORT
  uint32_t job_id = 1;                   // SOFTUET_JOB_ID (indirect method)
  std::optional<uint32_t> initiator_id;  // UET_PROVIDER_INITIATOR_ID
  std::set<std::string> faults;          // SOFTUET_FAULTS (no knobs yet: milestone 5)
  std::string addr;                      // SOFTUET_ADDR, empty = discover
};
// Reads the environment. On a bad value returns nullopt and sets *error to a sentence naming it.
std::optional<Config> load_config(std::string* error);

// ---- address.cpp ----
struct LocalIp {
  uint32_t ipv4 = 0;  // network order
  std::string text;   // dotted quad
};
// SOFTUET_ADDR, else the first non-loopback IPv4 address that is up, else 127.0.0.1.
std::optional<LocalIp> local_ip(const Config& cfg, std::string* error);
uint16_t process_pid_on_fep();
uint32_t default_initiator(const LocalIp& ip);
softuet_addr make_addr(const Config& cfg, const LocalIp& ip, uint16_t ri, uint32_t initiator);
// The UDP port an address names: the trailer's, or constants.udp_port without a trailer.
uint16_t addr_port(const softuet_addr& a);
uint32_t addr_ipv4(const softuet_addr& a);  // network order
std::string addr_to_string(const softuet_addr& a);

// ---- objects ----
struct Fabric;
struct Domain;
struct Ep;

struct Eq {
  fid_eq fid{};
  Fabric* fabric = nullptr;
  std::mutex mu;
  std::condition_variable cv;
  struct Event {
    uint32_t event;
    std::vector<uint8_t> data;
  };
  std::deque<Event> events;
  std::deque<fi_eq_err_entry> errors;
};

struct Fabric {
  fid_fabric fid{};
  std::string name;
};

// One completion as the CQ stores it; written out in the CQ's format on read.
struct Completion {
  void* context = nullptr;
  uint64_t flags = 0;
  size_t len = 0;
  void* buf = nullptr;
  uint64_t data = 0;
  uint64_t tag = 0;
  fi_addr_t src = FI_ADDR_NOTAVAIL;
};

struct Cq {
  fid_cq fid{};
  Domain* domain = nullptr;
  fi_cq_format format = FI_CQ_FORMAT_CONTEXT;
  std::deque<Completion> entries;
  std::deque<fi_cq_err_entry> errors;
};

struct Av {
  fid_av fid{};
  Domain* domain = nullptr;
  // Index = fi_addr_t (FI_AV_TABLE); a removed entry stays as a hole so later indices do not move.
  std::vector<std::optional<softuet_addr>> entries;
};

struct Mr {
  fid_mr fid{};
  Domain* domain = nullptr;
  const void* buf = nullptr;
  size_t len = 0;
  uint64_t access = 0;
  Ep* ep = nullptr;  // FI_MR_ENDPOINT: the endpoint it is bound to
  bool enabled = false;
};

struct PostedRecv {
  std::vector<iovec> iov;
  void* context = nullptr;
  fi_addr_t src = FI_ADDR_UNSPEC;
  uint64_t flags = 0;
};

// A received message waiting for a posted receive.
struct Message {
  std::vector<uint8_t> data;
  uint64_t header_data = 0;
  bool has_data = false;
  uint32_t src_ipv4 = 0;
  uint16_t src_port = 0;
  uint32_t initiator = 0;
};

struct Ep {
  fid_ep fid{};
  Domain* domain = nullptr;
  fi_ep_type type = FI_EP_RDM;
  uint64_t caps = 0;
  Cq* tx_cq = nullptr;
  Cq* rx_cq = nullptr;
  bool tx_selective = false;  // FI_SELECTIVE_COMPLETION on the transmit binding
  bool rx_selective = false;
  uint64_t tx_op_flags = 0;
  uint64_t rx_op_flags = 0;
  Av* av = nullptr;
  Eq* eq = nullptr;
  bool enabled = false;
  uint16_t resource_index = 0;
  pds::Mode mode = pds::Mode::rud;  // RDM: from tx_attr->msg_order (rdm_mode)
  std::deque<PostedRecv> posted;
  std::deque<Message> unexpected;
};

// One RDM send operation: complete when every packet is ACKed, failed when one runs out of retries.
struct SendOp {
  Ep* ep = nullptr;
  void* context = nullptr;
  bool want_completion = false;  // a CQ entry on success (not for inject, nor selective without FI_COMPLETION)
  size_t len = 0;
  size_t packets_left = 0;  // neither ACKed nor failed yet
  bool failed = false;
};

// A request packet kept until ACKed: the whole frame; its 12 PDS bytes are rewritten on each (re)send.
struct SentPacket {
  std::vector<uint8_t> frame;
  uint64_t op = 0;
  bool eom = false;  // the message's last packet: sent with AR
};

// The PDCs between one local RDM endpoint and one peer FEP (IPv4, UDP port): an InitiatorPdc for what we
// send, a TargetPdc for what the peer sends us. Each side has its own local PDC id.
struct PeerPdc {
  Ep* ep = nullptr;
  uint32_t peer_ip = 0;  // network order
  uint16_t peer_port = 0;
  uint16_t ini_id = 0;   // spdcid of our requests; dpdcid of the ACKs/NACKs they get
  uint16_t tgt_id = 0;   // spdcid of our ACKs/NACKs; the peer's dpdcid once it has heard from us
  std::optional<uint16_t> peer_tgt_id;  // learned from the first ACK: dpdcid of our requests
  std::optional<uint16_t> peer_ini_id;  // spdcid of the peer's requests
  std::unique_ptr<pds::InitiatorPdc> ini;
  std::unique_ptr<pds::TargetPdc> tgt;  // created by the peer's first SYN request (its mode from the type)
  pds::Mode tgt_mode = pds::Mode::rud;
  std::map<uint64_t, SentPacket> sent;  // token -> packet, until ACKed or failed
  std::deque<uint64_t> backlog;         // tokens waiting for room in the window (no PSN yet)
};

// A multi-packet RDM message being reassembled.
struct Reassembly {
  Message msg;
  size_t received = 0;
  bool som_seen = false;   // header_data travels only in the SOM packet
  std::vector<bool> have;  // per packet index, so a duplicate is not counted twice
};

struct Domain {
  fid_domain fid{};
  Fabric* fabric = nullptr;
  Config cfg;
  LocalIp ip;
  uint16_t pid_on_fep = 0;
  uint32_t initiator = 0;
  int sock = -1;
  std::recursive_mutex mu;  // the one lock that makes the provider FI_THREAD_SAFE (DESIGN.md)
  Eq* eq = nullptr;
  std::vector<Ep*> eps;
  uint16_t next_ri = 1;  // RI 0 is reserved for a provider-to-provider channel (digest C.2)
  uint64_t next_mr_key = 1;
  // Transport state (transport.cpp).
  std::map<std::tuple<Ep*, uint32_t, uint16_t>, std::unique_ptr<PeerPdc>> pdcs;  // {endpoint, peer IPv4, port}
  std::map<uint16_t, PeerPdc*> pdc_by_ini_id;  // our initiator PDC ids, for ACKs and NACKs
  std::map<uint64_t, SendOp> ops;              // RDM sends in flight, by op id
  uint64_t next_token = 1;
  uint64_t next_op = 1;
  uint16_t next_pdcid = 1;
  // The FEP thread: what a NIC does without the host (ACKs, retransmissions) cannot wait for the next
  // libfabric call, or a peer waiting for an ACK stalls while this process does something else.
  std::thread fep_thread;
  std::atomic<bool> stopping{false};
  uint16_t next_message_id = 1;
  std::map<std::tuple<uint32_t, uint16_t, uint16_t, uint16_t>, Reassembly> reassembly;
};

template <typename T, typename F>
T* obj(F* f) { return reinterpret_cast<T*>(f); }

// A stub for every operation softuet does not offer yet: deduces its signature from the slot.
template <typename R, typename... A>
R enosys(A...) { return static_cast<R>(-FI_ENOSYS); }

// ---- getinfo.cpp ----
int getinfo(uint32_t version, const char* node, const char* service, uint64_t flags, const fi_info* hints,
            fi_info** info);

// ---- fabric.cpp / domain.cpp / eq.cpp / cq.cpp / av.cpp / mr.cpp / ep.cpp ----
int fabric_open(fi_fabric_attr* attr, fid_fabric** fabric, void* context);
int domain_open(fid_fabric* fabric, fi_info* info, fid_domain** domain, void* context);
int eq_open(fid_fabric* fabric, fi_eq_attr* attr, fid_eq** eq, void* context);
int cq_open(fid_domain* domain, fi_cq_attr* attr, fid_cq** cq, void* context);
int av_open(fid_domain* domain, fi_av_attr* attr, fid_av** av, void* context);
int mr_reg(fid* fid, const void* buf, size_t len, uint64_t access, uint64_t offset, uint64_t requested_key,
           uint64_t flags, fid_mr** mr, void* context);
int mr_regv(fid* fid, const iovec* iov, size_t count, uint64_t access, uint64_t offset, uint64_t requested_key,
            uint64_t flags, fid_mr** mr, void* context);
int mr_regattr(fid* fid, const fi_mr_attr* attr, uint64_t flags, fid_mr** mr);
int mr_bind_ep(Mr* mr, Ep* ep);
int ep_open(fid_domain* domain, fi_info* info, fid_ep** ep, void* context);
extern fi_ops_msg g_msg_ops;  // msg.cpp

void cq_push(Cq* cq, const Completion& c);
void cq_push_error(Cq* cq, const fi_cq_err_entry& e);
bool av_lookup(Av* av, fi_addr_t a, softuet_addr* out);
fi_addr_t av_reverse(Av* av, uint32_t ipv4, uint16_t port, uint32_t initiator);

// ---- transport.cpp ----
int transport_open(Domain* d);
void transport_close(Domain* d);
// Drain the socket and deliver what arrived, then fire retransmission timers (manual progress). Caller
// holds d->mu. Returns the number of frames read.
size_t progress(Domain* d);
// How long a blocking wait may sleep before a retransmission is due: `cap_ms`, or less. Caller holds d->mu.
int transport_wait_ms(Domain* d, int cap_ms);
// RDM: send one message reliably; its completion (or error) is written when every packet is ACKed (or one
// fails). `want_completion`: write a success CQ entry. Caller holds d->mu.
ssize_t transport_send_rdm(Ep* ep, const softuet_addr& dest, const iovec* iov, size_t count, size_t len,
                           const uint64_t* header_data, void* context, bool want_completion);
// Closing an RDM endpoint: keep answering the peers for a while (their last ACK may have been lost), then
// forget its PDCs and sends. Takes d->mu itself.
void transport_close_ep(Ep* ep);
// Send one message of `len` bytes gathered from `iov` to `dest`. Caller holds d->mu.
ssize_t transport_send(Ep* ep, const softuet_addr& dest, const iovec* iov, size_t count, size_t len,
                       const uint64_t* header_data);
// Deliver a complete message to an endpoint: match the first suitable posted receive or queue it.
// Returns true when it matched a posted receive (SES list UET_EXPECTED), false when queued or dropped.
bool deliver(Ep* ep, Message&& m);
// Copy a queued message into a posted receive and complete it.
void complete_recv(Ep* ep, const PostedRecv& r, const Message& m);

}  // namespace softuet
