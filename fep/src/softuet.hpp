// softuet's objects and the functions each file provides. Every libfabric object is a struct whose first
// member is the public fid_* struct, so the fid pointer libfabric hands back is the object itself.
#pragma once

#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "domain_mutex.hpp"
#include "faults.hpp"
#include "payload_mtu.hpp"
#include "pdc.hpp"
#include "softuet/fi_addr_uet.h"
#include "udp_peer.hpp"

namespace uet::codec {
class Decoded;
}

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

// Largest RDM message: request_length is 32 bits on the wire, but a receiver reassembles into memory,
// so a bounded size protects it from a hostile request_length.
inline constexpr size_t kMaxRdmMsg = size_t{1} << 26;
// What the messages being reassembled may hold at once, one message larger than this alone: a request_length
// costs its bytes before any of them arrive, so a few packets naming large messages that never complete
// would otherwise take all the memory there is (receive.cpp).
inline constexpr size_t kReassemblyBudget = 4 * kMaxRdmMsg;
inline constexpr size_t kInjectSize = 128;
// The maximum RMA message size MUST lie in [1 GiB, 4 GiB - 1] (spec 2.2.2-f; FI_OPT_MAX_RMA_SIZE).
inline constexpr size_t kMinMaxRmaSize = size_t{1} << 30;
inline constexpr size_t kMaxMaxRmaSize = (size_t{1} << 32) - 1;
inline constexpr size_t kQueueDepth = 1024;
// Frames of sends that wait for the next progress call before they go out in one sendmmsg (queue_messages).
inline constexpr size_t kSendBatch = 16;
inline constexpr size_t kIovLimit = 4;
// The iovec list of a posted receive or of an operation's result, held in place: a receive posted per
// message costs no heap allocation.
class IovList {
 public:
  void assign(const iovec* first, const iovec* last) {
    n_ = 0;
    for (; first != last && n_ < kIovLimit; ++first) v_[n_++] = *first;
  }
  void push_back(const iovec& v) {
    if (n_ < kIovLimit) v_[n_++] = v;
  }
  const iovec* data() const { return v_.data(); }
  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  const iovec& operator[](size_t i) const { return v_[i]; }
  const iovec* begin() const { return v_.data(); }
  const iovec* end() const { return v_.data() + n_; }

 private:
  std::array<iovec, kIovLimit> v_{};
  size_t n_ = 0;
};
// Auth keys (JobIDs) an endpoint's AV may hold: domain_attr->max_ep_auth_key.
inline constexpr size_t kMaxEpAuthKeys = 64;

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

// The indirect method's JobID when SOFTUET_JOB_ID is unset and fallback is not enabled.
inline constexpr uint32_t kDefaultJobId = 1;

// ---- config.cpp ----
// How the address blobs softuet hands out and takes are laid out (SOFTUET_ADDR_LAYOUT; address_layout.cpp).
enum class AddrLayout : uint8_t {
  softuet,  // struct softuet_addr: the 32 bytes of choice uet-address-layout and the 8-byte port trailer
  wide52,   // 52 bytes: the Table 2-10 fields in other widths and order, then the raw sockaddr (address_layout.cpp)
};
// The JobID methods an endpoint may use (SOFTUET_JOB_ID_METHODS; spec 2.2.4.1).
inline constexpr uint8_t kJobIdIndirect = 1, kJobIdDirect = 2, kJobIdAv = 4;

struct Config {
  uint8_t fep_caps = 0;                  // from SOFTUET_PROFILES
  std::string profiles;                  // as given (for logs)
  uint16_t udp_port = 0;                 // SOFTUET_UDP_PORT
  std::optional<uint32_t> job_id;        // SOFTUET_JOB_ID (indirect method): a test-only override of the entity
  // UET_ENTITY_SOCKET: the privileged entity (uet-entity) to ask for the indirect JobID and whether a direct
  // or AV JobID is granted to this process; SOFTUET_ENTITY_SERVICE: the service name the maps are made for.
  std::string entity_socket;
  std::string entity_service = "uet";
  bool fallback_job_id = false;          // SOFTUET_FALLBACK_JOB_ID=1
  std::optional<uint8_t> def_data_dscp;  // UET_PROVIDER_DEF_DATA_TC (a DSCP, 0..63)
  std::optional<uint32_t> initiator_id;  // UET_PROVIDER_INITIATOR_ID
  uint64_t faults = 0;                   // SOFTUET_FAULTS: fault_bit() of each knob turned on
  std::string addr;                      // SOFTUET_ADDR, empty = discover
  bool udp_gso = true;                   // SOFTUET_UDP_GSO (outbox.cpp)
  std::optional<uint32_t> mtu;           // SOFTUET_MTU: the path MTU packets are sized for (payload_mtu.cpp)
  // Large messages (digest A.5; choices rendezvous-size-default, max-eager-size-default): sends of at least
  // these sizes use rendezvous (HPC) or deferrable send (AI Full); a rendezvous carries at most
  // max_eager_size bytes of the message itself.
  uint64_t msg_rendezvous_size = 0;      // UET_PROVIDER_MSG_RENDEZVOUS_SIZE
  uint64_t tag_rendezvous_size = 0;      // UET_PROVIDER_TAG_RENDEZVOUS_SIZE
  uint64_t max_eager_size = 0;           // UET_PROVIDER_MAX_EAGER_SIZE
  // SOFTUET_SPEC_VERSION: the UEC spec version softuet follows where versions differ (spec/wire.yaml
  // spec_versions), e.g. the message_id of a UET_DATAGRAM_SEND.
  uet::wire::SpecVersion spec_version = uet::wire::kSpecVersionDefault;
  // Personalities (personality.cpp): how softuet looks, not which rule it breaks.
  bool udp_port_auto = false;            // SOFTUET_UDP_PORT=auto (or 0): the kernel picks (local_port.cpp)
  AddrLayout addr_layout = AddrLayout::softuet;  // SOFTUET_ADDR_LAYOUT
  // SOFTUET_ADDR_VERSION / SOFTUET_ADDR_FA_FLAG: the version and FA-valid flag of the addresses it hands out
  // (address_layout.cpp); it takes its own and the spec's version 0.
  uint8_t addr_version = uet::wire::k_addr_version;
  bool addr_fa_flag = true;
  bool fetching_atomics = true;          // SOFTUET_ATOMICS=non_fetching: no fetching or compare atomics
  bool offers_rdm = true, offers_dgram = true;   // SOFTUET_EP_TYPES
  bool large_send_protocols = true;      // SOFTUET_LARGE_SENDS=eager: no rendezvous, no deferrable send
  uint8_t job_id_methods = kJobIdIndirect | kJobIdDirect | kJobIdAv;  // SOFTUET_JOB_ID_METHODS
  bool close_waits_for_peers = false;    // SOFTUET_CLOSE=wait_for_peers (close_wait.cpp)
  uint32_t close_wait_ms = 5000;         // SOFTUET_CLOSE_WAIT_MS: how long such a close waits at most
};
// Reads the environment. On a bad value returns nullopt and sets *error to a sentence naming it.
std::optional<Config> load_config(std::string* error);

// ---- personality.cpp ----
// The personality settings of the environment into `cfg` (fep/README.md "Personalities"); false with
// *error naming the variable and what it takes.
bool load_personality(Config& cfg, std::string* error);

// ---- tclass.cpp ----
// The DSCP of data packets for a domain opened with this fi_domain_attr.tclass.
uint8_t data_dscp(const Config& cfg, uint32_t tclass);
struct Domain;
// Set the domain's data DSCP on a socket (0 or -1 with errno, as setsockopt).
int set_dscp(const Domain* d, int fd);

// ---- address.cpp ----
struct LocalIp {
  FepIp ip;
  std::string text;  // "198.18.0.1" or "2001:db8::1"
};
// SOFTUET_ADDR (IPv4 or IPv6), else the first non-loopback IPv4 address that is up, else the first such
// IPv6 address that is not link-local, else 127.0.0.1.
std::optional<LocalIp> local_ip(const Config& cfg, std::string* error);
uint16_t process_pid_on_fep();
uint32_t default_initiator(const LocalIp& ip);
softuet_addr make_addr(const Config& cfg, const LocalIp& ip, uint16_t pid_on_fep, uint16_t ri, uint32_t initiator);
// The UDP port an address names: the trailer's, or constants.udp_port without a trailer.
uint16_t addr_port(const softuet_addr& a);
FepIp addr_ip(const softuet_addr& a);
UdpPeer addr_peer(const softuet_addr& a);
std::string addr_to_string(const softuet_addr& a);

// ---- address_layout.cpp ----
// The one place where an address crosses the API (fi_getname, fi_getinfo's src_addr/dest_addr/node,
// fi_av_insert/lookup/straddr, fi_endpoint's src_addr): the blob of `layout` for an address, and back.
// Inside, every address is a softuet_addr.
size_t addr_blob_size(AddrLayout layout);
inline constexpr size_t kMaxAddrBlob = 64;  // no layout is larger
// Blobs in cfg's layout, with its personality's address version and FA-valid flag (SOFTUET_ADDR_VERSION,
// SOFTUET_ADDR_FA_FLAG) outside and the spec's inside.
void addr_to_blob(const Config& cfg, const softuet_addr& a, void* blob);  // writes addr_blob_size bytes
// nullopt when `len` bytes cannot hold an address of the layout, or they contradict themselves.
std::optional<softuet_addr> addr_from_blob(const Config& cfg, const void* blob, size_t len);
const char* addr_layout_name(AddrLayout layout);
std::optional<AddrLayout> addr_layout_by_name(const std::string& name);

// ---- local_port.cpp ----
// The UDP port of a FEP on `ip` as fi_getinfo names it: the configured one, or with SOFTUET_UDP_PORT=auto
// the port the kernel gave a socket reserved for the process's next domain on that IP. 0 with *error.
uint16_t fep_port(const Config& cfg, const LocalIp& ip, std::string* error);
// With SOFTUET_UDP_PORT=auto: the socket fep_port reserved for `ip` (the domain takes it), or -1.
int take_reserved_socket(const FepIp& ip);

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

// A completion counter (fi_cntr). The values are atomic because fi_cntr_read/add/set need not take the
// domain lock; `binds` is guarded by domain->mu (ep_bind and ep_close hold it).
struct Cntr {
  fid_cntr fid{};
  Domain* domain = nullptr;
  fi_cntr_events events = FI_CNTR_EVENTS_COMP;
  std::atomic<uint64_t> value{0};
  std::atomic<uint64_t> err{0};
  int binds = 0;  // endpoint event slots naming this counter: fi_close is -FI_EBUSY while non-zero
};

struct Av {
  fid_av fid{};
  Domain* domain = nullptr;
  // Index = fi_addr_t (FI_AV_TABLE); a removed entry stays as a hole so later indices do not move.
  std::vector<std::optional<softuet_addr>> entries;
  // AV JobID method (spec 2.2.4.1): the JobID of each auth key inserted with fi_av_insert_auth_key (its
  // handle is kAuthKeyHandle + index), and per entry the JobID it was inserted with (FI_AUTH_KEY).
  std::vector<uint32_t> auth_keys;
  std::vector<std::optional<uint32_t>> entry_jobs;
  // The entries by the initiator ID of their address, so that naming the sender of every received message
  // (av_reverse) does not walk the table.
  std::unordered_multimap<uint32_t, fi_addr_t> by_initiator;
  // Moves on every insert and remove: a sender that resolved an fi_addr_t may keep the result while it holds.
  uint64_t generation = 0;
  // The last sender av_reverse named: a stream of messages from one peer costs a compare, not a lookup.
  struct Reverse {
    uint64_t generation = UINT64_MAX;
    UdpPeer peer;
    uint32_t initiator = 0;
    bool any_port = false;
    fi_addr_t found = FI_ADDR_NOTAVAIL;
  } last_reverse;
};
// Auth key handles are fi_addr_t values apart from the table indices of addresses.
inline constexpr fi_addr_t kAuthKeyHandle = fi_addr_t{1} << 48;

// Where a transmit goes: the peer's address and the JobID it is sent with (spec 2.2.4.4).
struct Dest {
  softuet_addr addr;
  uint32_t job_id = 0;
};

struct Mr {
  fid_mr fid{};
  Domain* domain = nullptr;
  const void* buf = nullptr;
  size_t len = 0;
  uint64_t access = 0;
  Ep* ep = nullptr;  // FI_MR_ENDPOINT: the endpoint it is bound to
  bool enabled = false;
  uint64_t key = 0;                // Table 2-13 format (IDEMPOTENT_SAFE, OPTIMIZED, RKEY)
  std::optional<uint32_t> job_id;  // authorization (spec 2.2.4.3.3): only this JobID; nullopt = any
  Cntr* cntr = nullptr;            // a bound completion counter (never on an IDEMPOTENT_SAFE MR)
};

struct Cntr;

// A posted receive. Tagged receives match `tag` under `ignore` (digest F.2); untagged ones take the next
// message of their queue. `src` restricts the sender when the endpoint has FI_DIRECTED_RECV.
struct PostedRecv {
  IovList iov;
  void* context = nullptr;
  fi_addr_t src = FI_ADDR_UNSPEC;
  uint64_t flags = 0;
  uint64_t tag = 0;
  uint64_t ignore = 0;
  std::optional<uint32_t> job_id;  // authorization (spec 2.2.4.3): only this JobID; nullopt = any
};

// The rendezvous extension header (choice rendezvous-ext-layout): the eager bytes the request carries and
// where the target reads the rest (the initiator's endpoint and an MR of it registered for remote read).
struct RendezvousExt {
  uint32_t eager_length = 0;
  uint16_t pid_on_fep = 0;
  uint16_t resource_index = 0;
  uint64_t read_offset = 0;  // the offset in that MR of the message's first byte (choice rendezvous-protocol)
  uint64_t read_key = 0;
};

// The restart tokens of a deferrable send or an RTR (digest I.7): the initiator's, and the target's (0 on a
// first send).
struct RestartTokens {
  uint32_t initiator = 0;
  uint32_t target = 0;
};

// Atomic extension of a request (digest I.7): UET opcode and datatype, CAS operands.
struct AtomicExt {
  uint8_t opcode = 0;
  uint8_t datatype = 0;
  std::vector<uint8_t> compare;  // CAS family: compare_value (or MSWAP mask), <= 16 bytes
  std::vector<uint8_t> swap;     // CAS family: swap_value, <= 16 bytes
};

// One request message as it arrives at the target, whole (reassembled): what the SES header says, and
// the payload. Unexpected sends wait in this form for a posted receive.
struct InRequest {
  uint64_t opcode = 0;
  uint64_t match_bits = 0;  // tag (tagged sends) or memory key (RMA, atomics)
  uint64_t buffer_offset = 0;
  std::optional<uint64_t> header_data;
  uint32_t job_id = 0;
  uint32_t initiator = 0;
  uint16_t message_id = 0;
  uint32_t request_length = 0;
  UdpPeer src;
  std::optional<AtomicExt> atomic;
  std::vector<uint8_t> payload;
  uint64_t refuse_rc = 0;  // not RC_NULL: the request is answered with this code, not carried out
  std::optional<RendezvousExt> rendezvous;  // UET_RENDEZVOUS_SEND/TSEND: payload = the eager bytes
  std::optional<RestartTokens> restart;     // UET_DEFERRABLE_SEND/TSEND and UET_DEFERRABLE_RTR
  bool defer = false;     // a deferrable send the target may defer when no receive matches it
  bool deferred = false;  // kept in the unexpected queue without its payload: an RTR will ask for it
};

// The SES response to a request (digest I.7): in the ACK of the packet that completed the message.
struct Response {
  uint64_t rc = 0;            // wire::ses_return_code
  bool expected = true;       // list: UET_EXPECTED, or UET_OVERFLOW for an unexpected message
  uint32_t modified_length = 0;
  bool with_data = false;     // UET_RESPONSE_W_DATA (reads, fetching atomics)
  std::vector<uint8_t> data;
  bool later = false;         // a rendezvous: answered once the target has pulled the data (rendezvous.cpp)
};

// One request message as an fi_* transmit call describes it to the RDM transport (initiator side).
struct OutRequest {
  uint64_t opcode = 0;      // wire::ses_request_opcode
  uint64_t match_bits = 0;  // tag (tagged) or memory key (RMA, atomics)
  uint64_t buffer_offset = 0;
  std::optional<uint64_t> header_data;
  std::vector<uint8_t> payload;
  uint32_t request_length = 0;  // payload.size(), except reads: the bytes asked for
  std::optional<AtomicExt> atomic;
  size_t result_offset = 0;     // READ/fetching atomic: where in the operation's result this data goes
  std::optional<RendezvousExt> rendezvous;  // UET_RENDEZVOUS_SEND/TSEND (SOM packet only)
  std::optional<RestartTokens> restart;     // UET_DEFERRABLE_SEND/TSEND, UET_DEFERRABLE_RTR
};

// How an operation completes at the initiator (one or more OutRequests share it).
struct OpCompletion {
  void* context = nullptr;
  uint64_t cq_flags = 0;         // FI_SEND | FI_MSG, FI_SEND | FI_TAGGED, FI_WRITE | FI_RMA, ...
  bool want_completion = true;   // a CQ entry on success (not for inject, nor selective without FI_COMPLETION)
  size_t len = 0;                // the CQ entry's len
  IovList result;                // READ and fetching atomics: where the returned data goes
  Cntr* cntr = nullptr;          // the endpoint's counter for this kind of operation
  uint64_t tag = 0;
  bool inject = false;           // fi_inject*: no completion, but an error entry when it fails
  // A request the provider makes for itself (a rendezvous pull, an RTR): this runs instead of any CQ entry
  // or counter, with the error (0 on success) and prov_errno.
  std::function<void(int err, uint64_t prov_errno)> internal;
};

// A deferrable send at its initiator (rendezvous.cpp): its token, and the message kept for a restart.
struct Deferral {
  uint32_t token = 0;  // initiator_restart_token, unique among the FEP's active tokens (2.2.10.4-h)
  Dest dest;
  OutRequest request;
  bool delivered = false;  // a response RC_OK said the target took it
};

struct Ep {
  fid_ep fid{};
  Domain* domain = nullptr;
  // The last datagram header sent without remote CQ data, and where it went: the next datagram to the
  // same destination rewrites only its message id and length (transport_send).
  struct DgramHeader {
    fi_addr_t dest = FI_ADDR_NOTAVAIL;  // as the application names it, in the AV at...
    uint64_t av_generation = 0;         // ...this generation
    std::vector<uint8_t> bytes;
    SockAddr to;  // the destination's socket address
    int fd = -1;  // its entropy socket (entropy.cpp), or -1: the FEP's socket
  } dgram_header;
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
  uint32_t job_id = 0;  // the JobID written into ses.job_id of what it sends (spec 2.2.4.4)
  size_t max_rma_size = kMinMaxRmaSize;  // FI_OPT_MAX_RMA_SIZE
  // Untagged and tagged receives have separate queues (digest F.2 SHOULD), each with its unexpected list.
  std::deque<PostedRecv> posted;
  std::deque<InRequest> unexpected;
  std::deque<PostedRecv> posted_tagged;
  std::deque<InRequest> unexpected_tagged;
  // Counter bindings (fi_ep_bind with FI_CLASS_CNTR), one per event kind; nullptr = not counted.
  Cntr* cntr_send = nullptr;
  Cntr* cntr_recv = nullptr;
  Cntr* cntr_read = nullptr;
  Cntr* cntr_write = nullptr;
  Cntr* cntr_remote_read = nullptr;
  Cntr* cntr_remote_write = nullptr;
};

// One RDM operation (one fi_* call): complete when every packet of its messages is ACKed and every
// message has its SES response; failed when a packet runs out of retries or a response says so.
struct SendOp {
  Ep* ep = nullptr;
  OpCompletion done;
  size_t packets_left = 0;    // neither ACKed nor failed yet
  size_t responses_left = 0;  // messages whose SES response has not arrived
  bool failed = false;
  std::optional<Deferral> deferral;  // a deferrable send: not done before the target took the message
};

// A request packet kept until ACKed: the whole frame; its 12 PDS bytes are rewritten on each (re)send.
struct SentPacket {
  std::vector<uint8_t> frame;
  uint64_t op = 0;
  uint16_t message_id = 0;     // on the wire, or only ours when the header has none (numbered false)
  bool numbered = true;        // the SES header carries message_id (the standard header)
  uint8_t next_hdr = 0;        // the SES header type, for the PDS header written on each (re)send
  bool eom = false;            // the message's last packet: sent with AR
  pds::RequestFields last;     // as last sent
};

// A RUDI request packet waiting for its RUDI_RESP (rudi.cpp). RUDI has no PDC: its pkt_id alone names it.
struct RudiPacket {
  std::vector<uint8_t> frame;  // RUDI header and SES request; flags.retx is set on each resend
  UdpPeer peer;
  uint64_t op = 0;
  size_t result_offset = 0;    // a read's: where in the operation's result its data goes
  pds::TimePoint first_sent;
  pds::TimePoint deadline;
  unsigned tries = 0;
};

// A message whose SES response the initiator still waits for. When its last packet was ACKed without the
// response (the ACK carrying it was lost and a later ACK covered it), that packet is sent again as a
// retransmission: the target answers a duplicate with the response it kept.
struct AwaitedResponse {
  uint64_t op = 0;
  size_t result_offset = 0;
  std::vector<uint8_t> eom_frame;          // set once the last packet is ACKed
  uint8_t eom_next_hdr = 0;
  pds::RequestFields eom_fields;
  std::optional<uint32_t> unnumbered_psn;  // the PSN that names a request without message_id
  std::optional<pds::TimePoint> deadline;
  pds::TimePoint first_asked;  // when the last packet's ACK came without the response
  unsigned tries = 0;
  bool patient = false;     // a rendezvous: the target answers once it has pulled the data, which may be
                            // long after the ACK (when the receive is posted): asked again without a limit
  bool deferrable = false;  // a deferrable send: RC_NO_MATCH means deferred, not failed
};

// The PDCs between one local RDM endpoint and one peer FEP (IP address, UDP port): an InitiatorPdc for what we
// send, a TargetPdc for what the peer sends us. Each side has its own local PDC id.
struct PeerPdc {
  Ep* ep = nullptr;
  UdpPeer peer;
  uint16_t ini_id = 0;   // spdcid of our requests; dpdcid of the ACKs/NACKs they get
  uint16_t tgt_id = 0;   // spdcid of our ACKs/NACKs; the peer's dpdcid once it has heard from us
  std::optional<uint16_t> peer_tgt_id;  // learned from the first ACK: dpdcid of our requests
  std::optional<uint16_t> peer_ini_id;  // spdcid of the peer's requests
  std::unique_ptr<pds::InitiatorPdc> ini;
  std::unique_ptr<pds::TargetPdc> tgt;  // created by the peer's first SYN request (its mode from the type)
  pds::Mode tgt_mode = pds::Mode::rud;
  std::map<uint64_t, SentPacket> sent;  // token -> packet, until ACKed or failed
  std::deque<uint64_t> backlog;         // tokens waiting for room in the window (no PSN yet)
  std::map<uint16_t, AwaitedResponse> awaited;  // by message_id: our messages without their response yet
  // Our requests without a message_id on the wire, by PSN: their responses carry message_id 0 and are
  // matched by the PSN the ACK acknowledges (choice unnumbered-response-message-id).
  std::map<uint32_t, uint16_t> unnumbered;
  // Target side: the responses already given, so a duplicate gets the same answer (a fetching atomic must
  // not run twice): by message_id, or by PSN for requests without one (response_key). Bounded: the
  // oldest are forgotten first.
  std::map<uint64_t, Response> given;
  std::deque<uint64_t> given_order;
  // Target side: the answers (ACK and response) the peer may still lack, by the PSN of the request each
  // answered: those its requests' CLEAR_PSN has not passed yet. A closing endpoint restates them
  // (restate_answers).
  struct Answer {
    uint16_t message_id = 0;
    uint32_t job_id = 0;
    uint64_t response_key = 0;  // in `given`
  };
  std::map<pds::Psn, Answer, bool (*)(pds::Psn, pds::Psn)> unconfirmed{pds::psn_before};
  std::optional<uint32_t> reused_psn;  // fault knob psn_reuse
};

// Target side of a deferred message (rendezvous.cpp): the receive that matched it, kept for the restarted
// message while the RTR asks the initiator for it.
struct RestartWait {
  Ep* ep = nullptr;
  PostedRecv recv;
  bool tagged = false;
  UdpPeer peer;
  uint32_t initiator_token = 0;
};

// Target side of a rendezvous (rendezvous.cpp): the receive it matched, and the message (eager bytes
// already placed) while the target reads the rest from the initiator.
struct Pull {
  Ep* ep = nullptr;
  PostedRecv recv;
  InRequest head;  // the request without its payload
  bool tagged = false;
  bool expected = false;  // a posted receive matched it on arrival (the response's list)
};

// A multi-packet RDM message being reassembled.
struct Reassembly {
  InRequest req;
  size_t received = 0;
  bool som_seen = false;   // header_data travels only in the SOM packet
  std::map<uint64_t, uint64_t> spans;  // [offset, end) of each packet taken, so a duplicate is not counted twice
  uint64_t started = 0;    // the order in which messages began (the oldest are dropped first)
};

// The receive side of a domain's socket (fep_socket.cpp): the recvmmsg batch, the decoded frame and the
// request read from it, set up once so that a poll that finds nothing costs one system call and nothing else.
struct RecvBatch;
struct RecvBatchDeleter {
  void operator()(RecvBatch* b) const;
};
// The send side (outbox.cpp): the sendmmsg arguments of one call.
struct OutboxCall;
struct OutboxCallDeleter {
  void operator()(OutboxCall* c) const;
};

struct Domain {
  fid_domain fid{};
  Fabric* fabric = nullptr;
  Config cfg;
  LocalIp ip;
  uint16_t pid_on_fep = 0;
  uint32_t initiator = 0;
  bool entity_addressed = false;  // pid_on_fep and initiator are the privileged entity's (entity_allocate)
  // The secure domain the domain's packets are sealed in (tss.cpp): the security binding of its endpoints'
  // JobID that the address allocation response gave; none: packets leave in clear.
  std::optional<uint32_t> tss_sdi;
  uint64_t tss_tsc = 0;       // packets sealed under the current key
  uint16_t tss_epoch = 0;     // of the key tss_tsc counts under
  std::vector<uint8_t> tss_plain;  // the packet opened from the frame being handled (under mu)

  uint8_t dscp = 0;  // of every packet this FEP sends (tclass.cpp)
  // The path MTU and the payload bytes per packet it leaves (payload_mtu.hpp): the size of segments, of
  // read requests, of eager bytes and datagrams, and the one-packet criterion of the SES header choice.
  PathMtu mtu;
  bool av_auth_keys = false;  // opened with auth_key_size FI_AV_AUTH_KEY (the AV JobID method)
  int sock = -1;
  std::unique_ptr<RecvBatch, RecvBatchDeleter> rx;  // used under mu
  std::unique_ptr<OutboxCall, OutboxCallDeleter> tx;  // used under mu
  size_t gso_max_segment = SIZE_MAX;  // larger frames leave one by one: the kernel refused a run of them
  std::map<UdpPeer, int> entropy_socks;  // the datagram sockets of each destination FEP (entropy.cpp)
  DomainMutex mu;  // the one lock that makes the provider FI_THREAD_SAFE; never taken twice (domain_mutex.hpp)
  Eq* eq = nullptr;
  std::vector<Ep*> eps;
  uint16_t next_ri = 1;  // RI 0 is reserved for a provider-to-provider channel (digest C.2)
  uint64_t next_mr_key = 1;
  std::map<uint64_t, Mr*> mrs;  // by key: the targets of RMA and atomics
  // Transport state (fep_socket.cpp, receive.cpp, transport.cpp).
  std::map<std::pair<Ep*, UdpPeer>, std::unique_ptr<PeerPdc>> pdcs;
  std::map<uint16_t, PeerPdc*> pdc_by_ini_id;  // our initiator PDC ids, for ACKs and NACKs
  std::map<uint64_t, SendOp> ops;              // RDM sends in flight, by op id
  uint64_t next_token = 1;
  uint64_t next_op = 1;
  uint16_t next_pdcid = 1;
  // The first PSN of each initiator PDC is drawn from here (per domain: two domains never share a generator
  // across their locks).
  std::mt19937 psn_rng{std::random_device{}()};
  // The FEP thread: what a NIC does without the host (ACKs, retransmissions) cannot wait for the next
  // libfabric call, or a peer waiting for an ACK stalls while this process does something else.
  std::thread fep_thread;
  std::atomic<bool> stopping{false};
  // How many times the application has run progress. While the count moves, the FEP thread stands back:
  // on a small machine a second thread woken by every frame costs more than it saves.
  std::atomic<uint64_t> app_progress_calls{0};
  // Frames waiting to go out together in one sendmmsg: requests, ACKs and NACKs. A CQ read that hands
  // completions to the application leaves them for its next call, so the application's answer (a
  // pingpong's reply, say) leaves in the same batch as the ACK; a send among others in flight leaves
  // its requests for the next progress call (queue_messages). flush_outbox sends the requests first:
  // a peer that reads one frame from a quiet socket then finds the message it waits for, not the ACK.
  struct Outgoing {
    SockAddr to;
    std::vector<uint8_t> frame;
    bool answer = false;  // an ACK or NACK
  };
  std::vector<Outgoing> outbox;
  bool outbox_answer_first = false;  // a request waits behind an answer
  std::atomic<bool> outbox_waiting{false};
  uint16_t next_message_id = 1;
  std::map<std::tuple<UdpPeer, uint16_t, uint16_t>, Reassembly> reassembly;  // {peer, message_id, RI}
  size_t reassembly_bytes = 0;  // the payload buffers of `reassembly` (bounded: receive.cpp)
  uint64_t next_reassembly = 1;
  std::map<uint32_t, RudiPacket> rudi_sent;  // our RUDI packets without their response, by pkt_id
  uint32_t next_pkt_id = 1;
  // Rendezvous and deferrable send (rendezvous.cpp).
  std::map<uint32_t, uint64_t> restart_ops;  // initiator_restart_token -> op id of the deferrable send
  uint32_t next_restart_token = 1;
  std::map<uint32_t, RestartWait> restart_waits;  // by target_restart_token
  uint32_t next_target_token = 1;
  std::map<uint64_t, Pull> pulls;
  uint64_t next_pull = 1;
};

// Is this fault knob on (fep/src/faults.def)?
inline bool fault(const Domain* d, Fault f) { return d->cfg.faults & fault_bit(f); }

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
// The JobID an fi_mr_regattr gives its MR (spec 2.2.4.3.3): nullopt (any) for auth_key_size 0, the
// 3-byte key for 3, the auth key of an AV address for FI_AV_AUTH_KEY. jobid.cpp.
int mr_job_id(Domain* d, const fi_mr_attr* attr, std::optional<uint32_t>* job_id);
// The JobID an endpoint sends with (spec 2.2.4.4): indirect (the configured JobID), or the fallback JobID
// when fallback is enabled and nothing else gives one (then UET_PROVIDER_INITIATOR_ID is required).
int ep_job_id(Domain* d, const fi_info* info, uint32_t* job_id);
// With an entity configured: 0 when it grants `job_id` to this process, else -FI_EACCES (refused) or
// -FI_ECONNREFUSED (no entity answered), the reason in the log. Without one: 0.
int entity_grants(Domain* d, uint32_t job_id);
// Endpoint creation with an entity: the address allocation request and its response (spec 2.2.5.3.5.1).
// 0 with the JobID (the one `asked`, when granted); 1 when the entity maps no JobID to this process and the
// fallback JobID is enabled; else -FI_EACCES, -FI_ECONNREFUSED or -FI_EIO, the reason in the log.
int entity_allocate(Domain* d, std::optional<uint32_t> asked, uint32_t* job_id);
// Transport security (tss.cpp; spec 2.2.9, 2.2.10.2). tss_bind: the secure domain of a security binding
// becomes the domain's, its key asked of the entity (a key-update request, 2.2.9-d); call with the entity
// link's lock held (jobid.cpp); 0 or -FI_ENOKEY. tss_seal: a frame queued to `to` sealed in the domain's
// secure domain (unchanged without one). tss_open: the packet inside a sealed frame from `from`, in
// d->tss_plain; false (the frame dropped) when no key opens it.
int tss_bind(Domain* d, uint32_t sdi);
void tss_seal(Domain* d, const SockAddr& to, std::vector<uint8_t>& frame);
bool tss_open(Domain* d, const uint8_t* buf, size_t len, const UdpPeer& from);
// The overhead of sealing: TSS header and ICV.
size_t tss_overhead();
// A 3-byte auth key and the 24-bit JobID it holds (spec/wire.yaml choice direct-auth-key-byte-order).
uint32_t job_of_auth_key(const void* key);
void auth_key_of_job(uint32_t job_id, void* key);
int ep_open(fid_domain* domain, fi_info* info, fid_ep** ep, void* context);
extern fi_ops_msg g_msg_ops;  // msg.cpp
// The sends and receives of fi_msg and fi_tagged (`tag` null: untagged). msg.cpp.
// `desc`: the caller's descriptors of the iovec entries (fi_mr_desc), or nullptr.
ssize_t send_any(fid_ep* ep, const iovec* iov, size_t count, fi_addr_t dest, void* context, uint64_t flags,
                 const uint64_t* data, bool inject, const uint64_t* tag, void* const* desc = nullptr);
ssize_t recv_any(fid_ep* ep, const iovec* iov, size_t count, fi_addr_t src, void* context, uint64_t flags,
                 const uint64_t* tag, uint64_t ignore);

void cq_push(Cq* cq, const Completion& c);
void cq_push_error(Cq* cq, const fi_cq_err_entry& e);
// The address of AV entry `a`; false when there is none. Caller holds the domain lock.
bool av_lookup(Av* av, fi_addr_t a, softuet_addr* out);
// The destination of a transmit to `a`, with the JobID to send with: the auth key the address was
// inserted with (AV method), else the endpoint's. False when `a` names no address. Caller holds the lock.
bool resolve_dest(Ep* ep, fi_addr_t a, Dest* out);
// The JobID of an auth key handle of `av`.
std::optional<uint32_t> av_auth_key_job(Av* av, fi_addr_t handle);
// Does the endpoint take requests carrying this JobID: its own, or (AV method) one of its AV's keys.
bool ep_accepts_job(Ep* ep, uint32_t job_id);
// The AV entry of a sender: its initiator ID and IP address, and its UDP port unless `any_port` (a datagram
// comes from an entropy source port, not the FEP's). The lowest such index, or FI_ADDR_NOTAVAIL.
fi_addr_t av_reverse(Av* av, const UdpPeer& peer, uint32_t initiator, bool any_port = false);

// ---- cntr.cpp ----
int cntr_open(fid_domain* domain, fi_cntr_attr* attr, fid_cntr** cntr, void* context);
// An operation counted by `c` completed: +1 on a COMP counter, +`bytes` on a BYTES one. nullptr: no-op.
void cntr_success(Cntr* c, size_t bytes);
// An operation counted by `c` failed: its error value +1 (whatever the events kind). nullptr: no-op.
void cntr_failure(Cntr* c);

// ---- refusal.cpp ----
// How a relative-addressed RDM request that no enabled endpoint takes is answered (choice
// endpoint-jobid-mismatch): the SES return code, and the endpoint whose PDC carries the answer.
struct Refusal {
  Ep* answering;
  uint64_t rc;
};
// nullopt: the FEP has no RDM endpoint to answer on (the request is dropped). Caller holds d->mu.
std::optional<Refusal> refuse_unmatched(Domain* d, uint32_t job, uint64_t pid, uint64_t ri, uint64_t dpdcid,
                                        const UdpPeer& from);

// ---- the transport: fep_socket.cpp (socket, progress), receive.cpp (target side), transport.cpp
// (initiator side, PDCs); what they share among themselves is in transport_shared.hpp ----
int transport_open(Domain* d);
void transport_close(Domain* d);
// Drain the socket and fire the due timers, as the FEP thread does. Caller holds d->mu.
size_t transport_drain(Domain* d);
// One received datagram (UET from the PDS header on) from `from`: decoded, then through the PDCs and SES,
// as progress hands each datagram it reads. Caller holds d->mu.
void transport_receive(Domain* d, const uint8_t* buf, size_t len, const UdpPeer& from);
// Drain the socket and deliver what arrived, then fire retransmission timers (manual progress). Caller
// holds d->mu. Returns the number of frames read.
size_t progress(Domain* d);
// progress, but leaves the frames it made for the next call (for CQ reads that return completions).
size_t progress_deferring_output(Domain* d);
// The outbox (outbox.cpp). Its call buffers are made once, when the domain's socket opens.
void outbox_open(Domain* d);
// A frame waits in the outbox for flush_outbox. An answer (ACK, NACK, response) leaves after the requests
// queued with it.
void queue_frame(Domain* d, const SockAddr& to, std::vector<uint8_t>&& frame, bool answer = false);
// Send the frames waiting in the outbox.
void flush_outbox(Domain* d);
// How long a blocking wait may sleep before a retransmission is due: `cap_ms`, or less. Caller holds d->mu.
int transport_wait_ms(Domain* d, int cap_ms);
// RDM: send the request messages of one operation reliably. Its completion (or error) is written when
// every packet is ACKed and every message has its SES response (or one fails). Caller holds d->mu.
// A deferrable send's request carries its Deferral, which the operation keeps (and its token names it).
ssize_t transport_submit(Ep* ep, const Dest& dest, std::vector<OutRequest>&& msgs, OpCompletion&& done,
                         std::optional<Deferral>&& deferral = std::nullopt);
// Send one more request message as part of operation `op_id` (a restarted deferrable send).
ssize_t transport_add_message(Ep* ep, uint64_t op_id, const Dest& dest, OutRequest&& msg);
// The SES response to a rendezvous, given once the data is pulled: in an ACK of the target PDC the request
// came on (kept for duplicates like any response). Caller holds d->mu.
void send_later_response(Ep* ep, const UdpPeer& peer, uint16_t message_id, uint32_t job_id, const Response& rsp);
// Closing an RDM endpoint: keep answering the peers for a while (their last ACK may have been lost), then
// forget its PDCs and sends. Takes d->mu itself.
void transport_close_ep(Ep* ep);
// DGRAM: send one UUD datagram of `len` bytes gathered from `iov` to the AV entry `dest` (-FI_EINVAL when it
// names none). Caller holds d->mu.
ssize_t transport_send(Ep* ep, fi_addr_t dest, const iovec* iov, size_t count, size_t len,
                       const uint64_t* header_data);

// ---- fep_thread.cpp ----
// How often the FEP thread looks whether the application still runs progress. Each look costs a
// context switch on a busy core; frames a CQ read left may wait this long if the application stops
// calling (a peer may then retransmit once).
constexpr std::chrono::milliseconds kFepThreadStandBack{10};
// The thread's name (in /proc/PID/task/*/comm): the exit test looks for it.
constexpr char kFepThreadName[] = "softuet-fep";
// Start the domain's FEP thread (once; when its first RDM endpoint is enabled). Caller holds no domain's
// mutex.
void fep_thread_start(Domain* d);
// Stop it (when the domain closes). Caller holds no domain's mutex.
void fep_thread_stop(Domain* d);
// Stop every domain's (the provider's cleanup; exit does it too).
void fep_threads_stop_all();

// ---- entropy.cpp ----
// The socket datagrams to `peer` leave from (their UDP source port is the entropy of the flow), or -1 when
// they leave from the FEP's socket. Caller holds d->mu.
int entropy_socket(Domain* d, const UdpPeer& peer);
void entropy_close(Domain* d);

// ---- iov.cpp ----
// An iovec list a data call may take: at most kIovLimit entries, no NULL base with a length.
bool iov_ok(const iovec* iov, size_t count);
// The message of an iovec, in one buffer.
std::vector<uint8_t> gather(const iovec* iov, size_t count, size_t len);
size_t iov_len(const iovec* iov, size_t count);
// Copy `data` into `iov` starting at byte `offset` of the iovec; returns the bytes copied.
size_t scatter(const IovList& iov, size_t offset, const uint8_t* data, size_t len);

// ---- rudi.cpp ----
// Does this operation travel over RUDI (choice rudi-criteria): RMA writes without remote CQ data and reads
// to IDEMPOTENT_SAFE keys, between HPC FEPs, from an endpoint not asked for ordering.
bool rudi_applies(Ep* ep, const Dest& dest, const std::vector<OutRequest>& msgs);
// Send an operation's request packets (built as for RUD, each frame starting with a 12-byte placeholder
// PDS header) over RUDI. `result_offsets` maps a message_id to its result_offset. Caller holds d->mu.
ssize_t rudi_submit(Ep* ep, const Dest& dest, std::vector<SentPacket>&& packets,
                    const std::vector<std::pair<uint16_t, size_t>>& result_offsets, OpCompletion&& done);
// A RUDI_REQ for `ep`: carried out, and answered with a RUDI_RESP of the same pkt_id.
void rudi_request(Domain* d, Ep* ep, const uet::codec::Decoded& pkt, InRequest&& m);
// A RUDI_RESP to one of our packets.
void rudi_response(Domain* d, const uet::codec::Decoded& pkt, const uint8_t* buf, const UdpPeer& from);
// Resend the packets whose response is overdue; fail the operation of one that ran out of tries.
void rudi_timers(Domain* d, pds::TimePoint now);
// The earliest RUDI retransmission deadline, or nullopt.
std::optional<pds::TimePoint> rudi_next_deadline(const Domain* d);
// Closing an endpoint: forget its RUDI packets.
void rudi_close_ep(Ep* ep);

// ---- rendezvous.cpp ----
// Large RDM sends (choices rendezvous-protocol and deferrable-send-protocol): makes `r`, a UET_SEND or
// UET_TAGGED_SEND with the whole message, a rendezvous (HPC: `desc` names an MR of the endpoint registered
// for remote read that holds iov[0]) or a deferrable send (AI Full) when its size and the two FEPs'
// profiles call for one. A deferrable send's Deferral is returned for transport_submit.
std::optional<Deferral> large_send(Ep* ep, const Dest& dest, const iovec* iov, size_t count, void* const* desc,
                                   OutRequest& r);
// At the target: a rendezvous request, a deferrable send, and at the initiator an RTR.
Response rendezvous_arrived(Ep* ep, InRequest&& m);
Response deferrable_arrived(Ep* ep, InRequest&& m);
Response rtr_arrived(Ep* ep, InRequest&& m);
// A posted receive takes a rendezvous (the pull starts; the response comes later) or a deferred message
// (an RTR asks for it again).
Response take_rendezvous(Ep* ep, PostedRecv&& r, InRequest&& m, bool tagged, bool expected);
void take_deferred(Ep* ep, PostedRecv&& r, InRequest&& m, bool tagged);
// The endpoint of the deferrable send an RTR names by its initiator_restart_token, or nullptr.
Ep* rtr_endpoint(Domain* d, uint32_t initiator_token);
// An operation ends: its restart token is free again.
void forget_deferral(Domain* d, const SendOp& op);
// Closing an endpoint: forget its tokens, kept receives and pulls.
void rendezvous_close_ep(Ep* ep);
// The opcodes of tagged sends (their match_bits are a tag): UET_TAGGED_SEND, RENDEZVOUS_TSEND, DEFERRABLE_TSEND.
bool tagged_opcode(uint64_t opcode);

// ---- ses_target.cpp ----
// Carry out one whole request at the target endpoint and say what to answer (dispatch by opcode).
Response execute(Ep* ep, InRequest&& req);
// Write the completion (or error) of an operation at the initiator, counters included.
void complete_op(Ep* ep, const OpCompletion& done, int err, uint64_t prov_errno);

// ---- msg.cpp / tagged.cpp (receive side) ----
// Post a receive: the first matching unexpected message completes it at once, else it is queued.
ssize_t post_recv(Ep* ep, PostedRecv&& r, bool tagged);
// A send or tagged send: match the first suitable posted receive or queue it as unexpected.
Response deliver(Ep* ep, InRequest&& m);
// Copy a message into a posted receive and complete it.
void complete_recv(Ep* ep, const PostedRecv& r, const InRequest& m);
// Complete a posted receive whose `copied` bytes of a `total`-byte message are in place: its CQ entry (an
// FI_ETRUNC error entry when the message was longer), or the error entry of `err` (an FI_* code) and
// `prov_errno`; its counter.
void finish_recv(Ep* ep, const PostedRecv& r, const InRequest& m, size_t copied, size_t total, int err = 0,
                 uint64_t prov_errno = 0);
// Does a posted receive accept this message (tag under ignore, directed source, JobID)?
bool recv_matches(Ep* ep, const PostedRecv& r, const InRequest& m, bool tagged);
extern fi_ops_tagged g_tagged_ops;

// ---- rma.cpp / atomic.cpp ----
extern fi_ops_rma g_rma_ops;
extern fi_ops_atomic g_atomic_ops;
int query_atomic(fid_domain* domain, fi_datatype dt, fi_op op, fi_atomic_attr* attr, uint64_t flags);
Response rma_target(Ep* ep, InRequest&& req);
Response atomic_target(Ep* ep, InRequest&& req);
// The MR of an RMA/atomic target: by key, enabled, bound to `ep` (FI_MR_ENDPOINT), within bounds, with
// the access asked; nullptr and the SES return code otherwise.
Mr* mr_for_access(Ep* ep, uint64_t key, uint64_t offset, size_t len, uint64_t access, uint32_t job_id, uint64_t* rc);

}  // namespace softuet
