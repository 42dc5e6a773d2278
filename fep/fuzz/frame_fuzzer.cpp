// libFuzzer target: softuet's receive path (transport_receive: decode, PDC state, SES state) while the FEP
// has operations in flight. One FEP (a softuet domain on 127.0.0.1) with a RUD and a ROD endpoint, posted
// receives and two registered MRs sends messages, RMA and an atomic to a peer played by a socket it never
// reads; each input is then a run of datagrams that arrive from that peer (or from a stranger), and the
// CQ is drained. The peer's address is the FEP's own with another port, so the FEP's own requests, fed
// back, reach its own endpoints and its ACKs, fed back, complete its operations: both PDC state machines
// and both SES sides are reachable from one input.
//
// Input format: records of [control byte][length, 2 bytes big-endian][datagram]; a short last record
// takes what is left. Control bit 0: the datagram comes from the stranger, not the peer; bit 1: run
// progress (timers, the outbox) after it.
//
// Every input starts from the same state (reset_fep: PDC ids, message ids, the PSN generator), so a crash
// reproduces from its input alone. SOFTUET_FUZZ_SEEDS=DIR writes the exchange the FEP has with itself
// (its requests, then its answers) into DIR as seed inputs and exits (fep/fuzz/README.md).
#include <arpa/inet.h>
#include <fcntl.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "softuet.hpp"
#include "uet/wire/wire_gen.hpp"

namespace {

using softuet::Domain;

// Fixed identities, so that a seed recorded by one process is addressed right in another.
constexpr uint16_t kPidOnFep = 0x123;
constexpr char kInitiatorId[] = "74565";  // 0x12345
constexpr uint32_t kPsnSeed = 1;
constexpr uint64_t kPlainKey = 0x10;
constexpr uint64_t kOptimizedKey = (uint64_t{1} << uet::wire::k_mr_key_optimized_bit) | 0x2;
constexpr uint64_t kTag = 7;
constexpr size_t kMemSize = 16384;

[[noreturn]] void die(const char* what, long ret) {
  std::fprintf(stderr, "frame_fuzzer: %s: %ld (%s)\n", what, ret, fi_strerror(static_cast<int>(-ret)));
  std::abort();
}
void check(const char* what, long ret) {
  if (ret < 0) die(what, ret);
}

// A UDP socket on 127.0.0.1; its port.
int bound_socket(uint16_t* port) {
  const int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (s < 0 || bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    die("socket", -FI_EIO);
  *port = ntohs(a.sin_port);
  return s;
}

struct Fep {
  fi_info* info = nullptr;
  fid_fabric* fabric = nullptr;
  fid_domain* domain = nullptr;
  fid_cq* cq = nullptr;
  fid_av* av = nullptr;
  fid_ep* rud = nullptr;
  fid_ep* rod = nullptr;
  fid_mr* plain_mr = nullptr;
  fid_mr* optimized_mr = nullptr;
  Domain* d = nullptr;
  int peer_sock = -1;
  softuet::UdpPeer peer, stranger;
  fi_addr_t peer_of_rud = FI_ADDR_NOTAVAIL, peer_of_rod = FI_ADDR_NOTAVAIL;
  std::vector<uint8_t> mem = std::vector<uint8_t>(kMemSize), optimized_mem = std::vector<uint8_t>(64);
  std::vector<uint8_t> out = std::vector<uint8_t>(kMemSize), in = std::vector<uint8_t>(kMemSize);
  int contexts[16] = {};
};

fid_ep* open_ep(Fep& f, uint64_t msg_order) {
  fi_info* info = fi_dupinfo(f.info);
  info->tx_attr->msg_order = msg_order;
  fid_ep* ep = nullptr;
  check("fi_endpoint", fi_endpoint(f.domain, info, &ep, nullptr));
  fi_freeinfo(info);
  check("bind CQ", fi_ep_bind(ep, &f.cq->fid, FI_TRANSMIT | FI_RECV));
  check("bind AV", fi_ep_bind(ep, &f.av->fid, 0));
  check("fi_enable", fi_enable(ep));
  return ep;
}

// The peer: the endpoint's own address with the peer socket's port (and the fixed PIDonFEP).
fi_addr_t insert_peer(Fep& f, fid_ep* ep, uint16_t port) {
  softuet_addr a{};
  size_t len = sizeof a;
  check("fi_getname", fi_getname(&ep->fid, &a, &len));
  a.uet.pid_on_fep = kPidOnFep;
  a.udp_port = port;
  fi_addr_t fa = FI_ADDR_NOTAVAIL;
  if (fi_av_insert(f.av, &a, 1, &fa, 0, nullptr) != 1) die("fi_av_insert", -FI_EINVAL);
  return fa;
}

fid_mr* register_mr(Fep& f, fid_ep* ep, std::vector<uint8_t>& buf, uint64_t key) {
  fid_mr* mr = nullptr;
  check("fi_mr_reg", fi_mr_reg(f.domain, buf.data(), buf.size(), FI_REMOTE_READ | FI_REMOTE_WRITE, 0, key, 0, &mr,
                               nullptr));
  check("fi_mr_bind", fi_mr_bind(mr, &ep->fid, 0));
  check("fi_mr_enable", fi_mr_enable(mr));
  return mr;
}

Fep& fep() {
  static Fep* f = [] {
    auto* f = new Fep;
    uint16_t fep_port = 0, peer_port = 0;
    close(bound_socket(&fep_port));  // a free port for the FEP's own socket
    f->peer_sock = bound_socket(&peer_port);
    setenv("SOFTUET_ADDR", "127.0.0.1", 1);
    setenv("SOFTUET_UDP_PORT", std::to_string(fep_port).c_str(), 1);
    setenv("UET_PROVIDER_INITIATOR_ID", kInitiatorId, 1);
    fi_info* hints = fi_allocinfo();
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC;
    hints->fabric_attr->prov_name = strdup("softuet");
    check("getinfo", softuet::getinfo(FI_VERSION(2, 0), nullptr, nullptr, 0, hints, &f->info));
    fi_freeinfo(hints);
    check("fabric_open", softuet::fabric_open(f->info->fabric_attr, &f->fabric, nullptr));
    check("fi_domain", fi_domain(f->fabric, f->info, &f->domain, nullptr));
    f->d = softuet::obj<Domain>(f->domain);
    f->d->pid_on_fep = kPidOnFep;
    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_TAGGED;
    cq_attr.size = 1024;
    check("fi_cq_open", fi_cq_open(f->domain, &cq_attr, &f->cq, nullptr));
    fi_av_attr av_attr{};
    av_attr.type = FI_AV_TABLE;
    check("fi_av_open", fi_av_open(f->domain, &av_attr, &f->av, nullptr));
    f->rud = open_ep(*f, 0);
    f->rod = open_ep(*f, FI_ORDER_SAS);
    f->peer_of_rud = insert_peer(*f, f->rud, peer_port);
    f->peer_of_rod = insert_peer(*f, f->rod, peer_port);
    f->plain_mr = register_mr(*f, f->rud, f->mem, kPlainKey);
    f->optimized_mr = register_mr(*f, f->rud, f->optimized_mem, kOptimizedKey);
    f->peer.ip.fa = {127, 0, 0, 1};
    f->peer.port = peer_port;
    f->stranger.ip.fa = {127, 0, 0, 2};
    f->stranger.port = peer_port;
    fcntl(f->peer_sock, F_SETFL, O_NONBLOCK);
    return f;
  }();
  return *f;
}

// The state every input starts from: no PDC, operation, reassembly or queued receive; ids and the PSN
// generator from their first values.
void reset_fep(Fep& f) {
  Domain* d = f.d;
  std::lock_guard lock(d->mu);
  d->pdcs.clear();
  d->pdc_by_ini_id.clear();
  d->ops.clear();
  d->reassembly.clear();
  d->reassembly_bytes = 0;
  d->next_reassembly = 1;
  d->rudi_sent.clear();
  d->restart_ops.clear();
  d->restart_waits.clear();
  d->pulls.clear();
  d->outbox.clear();
  d->outbox_answer_first = false;
  d->next_token = d->next_op = d->next_pull = 1;
  d->next_pdcid = d->next_message_id = 1;
  d->next_pkt_id = d->next_restart_token = d->next_target_token = 1;
  d->psn_rng.seed(kPsnSeed);
  for (softuet::Ep* ep : d->eps) {
    ep->posted.clear();
    ep->unexpected.clear();
    ep->posted_tagged.clear();
    ep->unexpected_tagged.clear();
  }
  auto* cq = softuet::obj<softuet::Cq>(f.cq);
  cq->entries.clear();
  cq->errors.clear();
  std::memset(f.mem.data(), 0, f.mem.size());
}

// Receives posted, then operations to the peer: sends of one and of three packets, a tagged send, a write
// in the optimized header, a read and a fetching atomic from the RUD endpoint, a send from the ROD one.
void start_operations(Fep& f) {
  for (size_t i = 0; i < f.out.size(); ++i) f.out[i] = static_cast<uint8_t>(i * 7 + 1);
  int* c = f.contexts;
  uint8_t* in = f.in.data();
  check("fi_recv", fi_recv(f.rud, in, 200, nullptr, FI_ADDR_UNSPEC, &c[0]));
  check("fi_recv", fi_recv(f.rud, in + 200, 9000, nullptr, FI_ADDR_UNSPEC, &c[1]));
  check("fi_trecv", fi_trecv(f.rud, in + 9200, 200, nullptr, FI_ADDR_UNSPEC, kTag, 0, &c[2]));
  check("fi_recv", fi_recv(f.rod, in + 9400, 400, nullptr, FI_ADDR_UNSPEC, &c[3]));
  check("fi_send", fi_send(f.rud, f.out.data(), 100, nullptr, f.peer_of_rud, &c[4]));
  check("fi_send", fi_send(f.rud, f.out.data(), 9000, nullptr, f.peer_of_rud, &c[5]));
  check("fi_tsend", fi_tsend(f.rud, f.out.data(), 64, nullptr, f.peer_of_rud, kTag, &c[6]));
  check("fi_write", fi_write(f.rud, f.out.data(), 32, nullptr, f.peer_of_rud, 0, kOptimizedKey, &c[7]));
  check("fi_read", fi_read(f.rud, f.in.data() + 10000, 16, nullptr, f.peer_of_rud, 8, kPlainKey, &c[8]));
  uint64_t operand = 5;
  static uint64_t fetched;
  check("fi_fetch_atomic", fi_fetch_atomic(f.rud, &operand, 1, nullptr, &fetched, nullptr, f.peer_of_rud, 64,
                                           kPlainKey, FI_UINT64, FI_SUM, &c[9]));
  check("fi_send", fi_send(f.rod, f.out.data(), 300, nullptr, f.peer_of_rod, &c[10]));
}

// The CQ until empty: every context completes at most once (a second completion is a delivery twice).
// Returns the completions and the error entries.
std::pair<int, int> drain_cq(Fep& f) {
  std::map<void*, int> seen;
  int ok = 0, errors = 0;
  for (int round = 0; round < 64; ++round) {
    fi_cq_tagged_entry e[16];
    const ssize_t n = fi_cq_read(f.cq, e, 16);
    if (n == -FI_EAVAIL) {
      fi_cq_err_entry err{};
      if (fi_cq_readerr(f.cq, &err, 0) != 1) break;
      ++errors;
      if (std::getenv("SOFTUET_FUZZ_SEEDS"))
        std::fprintf(stderr, "frame_fuzzer: operation %ld: error %d (%s), prov_errno %d\n",
                     static_cast<long>(static_cast<int*>(err.op_context) - f.contexts), err.err, fi_strerror(err.err),
                     err.prov_errno);
      if (++seen[err.op_context] > 1) die("two completions of one context", 0);
      continue;
    }
    if (n <= 0) break;
    ok += static_cast<int>(n);
    for (ssize_t i = 0; i < n; ++i)
      if (++seen[e[i].op_context] > 1) die("two completions of one context", 0);
  }
  return {ok, errors};
}

// The messages being reassembled hold at most kReassemblyBudget bytes (or one message alone), and the
// domain's count of them is right.
void check_reassembly(const Fep& f) {
  size_t bytes = 0;
  for (const auto& [key, r] : f.d->reassembly) bytes += r.req.payload.size();
  if (bytes != f.d->reassembly_bytes) die("reassembly bytes miscounted", static_cast<long>(f.d->reassembly_bytes));
  if (bytes > softuet::kReassemblyBudget && f.d->reassembly.size() > 1) die("reassembly over its budget", static_cast<long>(bytes));
}

std::pair<int, int> run_input(Fep& f, const uint8_t* data, size_t size) {
  reset_fep(f);
  start_operations(f);
  {
    std::lock_guard lock(f.d->mu);
    while (size >= 1) {
      const uint8_t control = data[0];
      size_t len = size >= 3 ? (size_t{data[1]} << 8 | data[2]) : 0;
      const size_t header = std::min<size_t>(size, 3);
      len = std::min(len, size - header);
      transport_receive(f.d, data + header, len, control & 1 ? f.stranger : f.peer);
      if (control & 2) softuet::progress(f.d);
      check_reassembly(f);
      data += header + len;
      size -= header + len;
    }
  }
  const auto outcome = drain_cq(f);
  reset_fep(f);  // nothing left for the FEP thread between inputs
  return outcome;
}

// The datagrams the peer socket received since the last call.
std::vector<std::vector<uint8_t>> peer_received(Fep& f) {
  std::vector<std::vector<uint8_t>> frames;
  std::vector<uint8_t> buf(65536);
  for (ssize_t n; (n = recv(f.peer_sock, buf.data(), buf.size(), 0)) >= 0;) frames.emplace_back(buf.begin(), buf.begin() + n);
  return frames;
}

// Datagrams as input records from the peer, the last one followed by progress.
void append_records(std::vector<uint8_t>& input, const std::vector<std::vector<uint8_t>>& frames) {
  for (size_t i = 0; i < frames.size(); ++i) {
    const size_t n = frames[i].size();
    input.insert(input.end(), {static_cast<uint8_t>(i + 1 == frames.size() ? 2 : 0), static_cast<uint8_t>(n >> 8),
                               static_cast<uint8_t>(n)});
    input.insert(input.end(), frames[i].begin(), frames[i].end());
  }
}

void write_seed(const std::string& dir, const char* name, const std::vector<uint8_t>& bytes) {
  std::ofstream(dir + "/" + name, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

// The FEP's exchange with itself: its requests (fed back, they reach its own endpoints), then the ACKs and
// responses it answered them with (fed back, they complete its operations). Every input sends the same
// requests again (the same bytes: the state is reset), so those are left out of the answers.
void write_seeds(Fep& f, const std::string& dir) {
  peer_received(f);
  run_input(f, nullptr, 0);
  const std::vector<std::vector<uint8_t>> requests = peer_received(f);
  std::vector<uint8_t> input;
  append_records(input, requests);
  run_input(f, input.data(), input.size());
  std::vector<std::vector<uint8_t>> answers;
  for (auto& frame : peer_received(f))
    if (std::find(requests.begin(), requests.end(), frame) == requests.end()) answers.push_back(std::move(frame));
  write_seed(dir, "self-requests", input);
  append_records(input, answers);
  write_seed(dir, "self-exchange", input);
  const auto [ok, errors] = run_input(f, input.data(), input.size());
  std::fprintf(stderr, "frame_fuzzer: %zu requests, %zu answers; the exchange completes %d operations (%d with an error)\n",
               requests.size(), answers.size(), ok, errors);
}

// At exit the FEP thread stops before the provider's statics go. They are made on first use, so a first
// input makes them before the handler is registered: handlers run in the reverse order of registration.
void stop_fep_thread() {
  Domain* d = fep().d;
  d->stopping.store(true);
  if (d->fep_thread.joinable()) d->fep_thread.join();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  Fep& f = fep();
  run_input(f, nullptr, 0);
  std::atexit(stop_fep_thread);
  if (const char* dir = std::getenv("SOFTUET_FUZZ_SEEDS")) {
    write_seeds(f, dir);
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  run_input(fep(), data, size);
  return 0;
}
