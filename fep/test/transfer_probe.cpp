// softuet-transfer-probe: messages and RMA writes of known contents between two processes, every one
// checked at the receiver, for the hostile-traffic wire test (pytest/fep/test_hostile_traffic.py).
//
//   softuet-transfer-probe serve SLOTS      registers SLOTS write slots, prints "addr HEX", receives and checks
//                                           messages until its stdin closes, then prints its findings
//   softuet-transfer-probe run HEX N        sends messages 0, 1, ... (each after the write to its slot
//                                           completed) until a line arrives on stdin, prints "done 0 COUNT";
//                                           then sends N more the same way and prints "done COUNT N"
//
// Message SEQ has a length and bytes that are functions of SEQ (expected_message); its first four bytes
// are SEQ and the fifth says whether the write to slot SEQ % SLOTS completed (then the server checks that
// slot). The client prints "error KIND SEQ ERR" for an operation that ended in an error completion; the
// server prints "dup SEQ", "corrupt SEQ", "slot SEQ" for a message delivered twice, with wrong bytes, or
// whose slot is wrong, "foreign ..." for a completion of no receive of its own, and at the end "received N" and "got SEQ..." (every sequence number it received).
#include <poll.h>
#include <rdma/fi_rma.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "probe_fabric.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using softuet_probe::ProbeFabric;

constexpr uint64_t kKey = 0x5a;
constexpr size_t kSlot = 4608;  // a write of up to this many bytes: one or two packets
constexpr size_t kMaxMessage = 8192;
constexpr size_t kPosted = 64;
constexpr size_t kBatch = 16;
constexpr auto kOperationDeadline = std::chrono::seconds(60);
constexpr int kServeSeconds = 600;  // a server whose test died does not outlive it for long

int fail(const char* what, long ret) {
  std::fprintf(stderr, "%s: %ld (%s)\n", what, ret, fi_strerror(static_cast<int>(-ret)));
  return 1;
}

size_t message_length(uint32_t seq) { return 8 + (seq * 2654435761u) % (kMaxMessage - 8); }
size_t write_length(uint32_t seq) { return 1 + (seq * 40503u) % kSlot; }
uint8_t byte_of(uint32_t seq, size_t i, uint32_t salt) { return static_cast<uint8_t>((seq + salt) * 131 + i * 7 + (i >> 8)); }

std::vector<uint8_t> expected_message(uint32_t seq, bool slot_written) {
  std::vector<uint8_t> m(message_length(seq));
  for (size_t i = 0; i < m.size(); ++i) m[i] = byte_of(seq, i, 0);
  std::memcpy(m.data(), &seq, 4);
  m[4] = slot_written;
  return m;
}

std::vector<uint8_t> expected_slot(uint32_t seq) {
  std::vector<uint8_t> s(write_length(seq));
  for (size_t i = 0; i < s.size(); ++i) s[i] = byte_of(seq, i, 1);
  return s;
}

int serve(uint32_t slot_count) {
  ProbeFabric f;
  if (f.open(FI_MSG | FI_RMA)) return fail(f.failed.c_str(), 0);
  std::vector<uint8_t> slots(size_t{slot_count} * kSlot, 0);
  fid_mr* mr = nullptr;
  int r = fi_mr_reg(f.domain, slots.data(), slots.size(), FI_REMOTE_WRITE, 0, kKey, 0, &mr, nullptr);
  if (r) return fail("fi_mr_reg", r);
  if ((r = fi_mr_bind(mr, &f.ep->fid, 0))) return fail("fi_mr_bind", r);
  if ((r = fi_mr_enable(mr))) return fail("fi_mr_enable", r);
  if ((r = fi_enable(f.ep))) return fail("fi_enable", r);
  std::vector<std::vector<uint8_t>> bufs(kPosted, std::vector<uint8_t>(kMaxMessage));
  for (size_t i = 0; i < kPosted; ++i)
    if ((r = static_cast<int>(fi_recv(f.ep, bufs[i].data(), kMaxMessage, nullptr, FI_ADDR_UNSPEC, &bufs[i]))))
      return fail("fi_recv", r);
  std::printf("addr %s\n", f.name_hex().c_str());
  std::fflush(stdout);
  std::set<uint32_t> got;
  size_t received = 0;
  const auto until = Clock::now() + std::chrono::seconds(kServeSeconds);
  for (;;) {
    pollfd p{STDIN_FILENO, POLLIN, 0};
    if (poll(&p, 1, 0) == 1 || Clock::now() > until) break;  // EOF (the test is done) or the time limit
    fi_cq_data_entry c{};
    const ssize_t n = fi_cq_sread(f.cq, &c, 1, nullptr, 20);
    if (n == -FI_EAVAIL) {
      fi_cq_err_entry e{};
      fi_cq_readerr(f.cq, &e, 0);
      std::printf("recv-error %d\n", e.err);
      auto* buf = static_cast<std::vector<uint8_t>*>(e.op_context);
      if (buf) fi_recv(f.ep, buf->data(), kMaxMessage, nullptr, FI_ADDR_UNSPEC, buf);
      continue;
    }
    if (n != 1) continue;
    auto* buf = static_cast<std::vector<uint8_t>*>(c.op_context);
    if (!buf || !(c.flags & FI_RECV)) {
      // Not one of our receives: a remote write with CQ data, which the client never sends.
      std::printf("foreign flags 0x%llx len %zu\n", static_cast<unsigned long long>(c.flags), c.len);
      continue;
    }
    ++received;
    uint32_t seq = 0;
    if (c.len >= 5) std::memcpy(&seq, buf->data(), 4);
    const bool slot_written = c.len >= 5 && (*buf)[4];
    const std::vector<uint8_t> want = expected_message(seq, slot_written);
    if (c.len != want.size() || std::memcmp(buf->data(), want.data(), want.size()) != 0) {
      std::printf("corrupt %u len %zu\n", seq, c.len);
    } else {
      if (!got.insert(seq).second) std::printf("dup %u\n", seq);
      if (slot_written) {
        const std::vector<uint8_t> slot = expected_slot(seq);
        if (std::memcmp(slots.data() + size_t{seq % slot_count} * kSlot, slot.data(), slot.size()) != 0)
          std::printf("slot %u\n", seq);
      }
    }
    std::fflush(stdout);
    if ((r = static_cast<int>(fi_recv(f.ep, buf->data(), kMaxMessage, nullptr, FI_ADDR_UNSPEC, buf)))) return fail("fi_recv", r);
  }
  std::printf("received %zu\ngot", received);
  for (uint32_t s : got) std::printf(" %u", s);
  std::printf("\n");
  std::fflush(stdout);
  f.close_ep();
  fi_close(&mr->fid);
  return 0;
}

// Waits for the completion (or error) of every context in `pending`; false when the deadline passes.
// `failed` gets the contexts that ended in an error completion, with the error.
bool wait_all(ProbeFabric& f, std::set<void*> pending, std::vector<std::pair<void*, int>>& failed) {
  const auto deadline = Clock::now() + kOperationDeadline;
  while (!pending.empty()) {
    if (Clock::now() > deadline) return false;
    fi_cq_data_entry c{};
    const ssize_t n = fi_cq_sread(f.cq, &c, 1, nullptr, 20);
    if (n == 1) {
      pending.erase(c.op_context);
    } else if (n == -FI_EAVAIL) {
      fi_cq_err_entry e{};
      if (fi_cq_readerr(f.cq, &e, 0) != 1) continue;
      pending.erase(e.op_context);
      failed.emplace_back(e.op_context, e.err);
    }
  }
  return true;
}

// A transmit call, again while the transmit queue is full (a batch never fills it).
template <typename Post>
void post(Post&& call) {
  while (call() == -FI_EAGAIN) {
  }
}

// Sends messages [first, first + n) in batches: the writes of a batch, then (once they completed) its
// messages; with `until_stdin`, batch after batch until a line arrives on stdin. Prints "done FIRST COUNT"
// and returns COUNT; nullopt on a hang.
std::optional<uint32_t> transfer(ProbeFabric& f, fi_addr_t peer, uint32_t slots, uint32_t first, uint32_t n, bool until_stdin) {
  uint32_t base = first;
  for (; until_stdin || base < first + n; base += kBatch) {
    if (until_stdin) {
      pollfd p{STDIN_FILENO, POLLIN, 0};
      if (poll(&p, 1, 0) == 1) break;
      n = base + kBatch - first;
    }
    const uint32_t end = std::min(first + n, base + static_cast<uint32_t>(kBatch));
    std::vector<std::vector<uint8_t>> slot_data, messages;
    std::vector<int> write_ctx(kBatch), send_ctx(kBatch);  // an operation's context: its element's address
    std::set<void*> pending;
    for (uint32_t s = base; s < end; ++s) {
      slot_data.push_back(expected_slot(s));
      int* ctx = &write_ctx[s - base];
      const std::vector<uint8_t>& d = slot_data.back();
      post([&] { return fi_write(f.ep, d.data(), d.size(), nullptr, peer, uint64_t{s % slots} * kSlot, kKey, ctx); });
      pending.insert(ctx);
    }
    std::vector<std::pair<void*, int>> failed;
    if (!wait_all(f, pending, failed)) return std::nullopt;
    std::set<uint32_t> write_failed;
    for (auto [ctx, err] : failed) {
      const uint32_t s = base + static_cast<uint32_t>(static_cast<int*>(ctx) - write_ctx.data());
      write_failed.insert(s);
      std::printf("error write %u %d\n", s, err);
    }
    pending.clear();
    failed.clear();
    for (uint32_t s = base; s < end; ++s) {
      messages.push_back(expected_message(s, !write_failed.count(s)));
      int* ctx = &send_ctx[s - base];
      const std::vector<uint8_t>& m = messages.back();
      post([&] { return fi_send(f.ep, m.data(), m.size(), nullptr, peer, ctx); });
      pending.insert(ctx);
    }
    if (!wait_all(f, pending, failed)) return std::nullopt;
    for (auto [ctx, err] : failed)
      std::printf("error send %u %d\n", base + static_cast<uint32_t>(static_cast<int*>(ctx) - send_ctx.data()), err);
  }
  const uint32_t count = std::min(base, first + n) - first;
  std::printf("done %u %u\n", first, count);
  std::fflush(stdout);
  return count;
}

int run(const char* hex, uint32_t slots, uint32_t n) {
  ProbeFabric f;
  if (f.open(FI_MSG | FI_RMA)) return fail(f.failed.c_str(), 0);
  int r = fi_enable(f.ep);
  if (r) return fail("fi_enable", r);
  const fi_addr_t peer = f.insert_hex(hex);
  if (peer == FI_ADDR_NOTAVAIL) return fail("fi_av_insert", -FI_EINVAL);
  const std::optional<uint32_t> count = transfer(f, peer, slots, 0, 0, true);
  for (int c; (c = std::getchar()) != EOF && c != '\n';) {
  }
  if (!count || !transfer(f, peer, slots, *count, n, false))
    return fail("hang: an operation did not complete within its deadline", 0);
  f.close_ep();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "serve") == 0) return serve(static_cast<uint32_t>(std::strtoul(argv[2], nullptr, 0)));
  if (argc == 5 && std::strcmp(argv[1], "run") == 0)
    return run(argv[2], static_cast<uint32_t>(std::strtoul(argv[3], nullptr, 0)),
               static_cast<uint32_t>(std::strtoul(argv[4], nullptr, 0)));
  std::fprintf(stderr, "usage: %s serve SLOTS | run ADDR_HEX SLOTS N\n", argv[0]);
  return 2;
}
