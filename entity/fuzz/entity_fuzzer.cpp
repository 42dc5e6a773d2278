// libFuzzer target: the privileged entity's handling of whatever a local process sends it. An input is a
// run of records, each a peer byte (bit 0: the peer is root; the rest: its pid) then a 2-byte length
// (big-endian) and that many message bytes. Each run starts from an empty store in memory, so an input
// reproduces on its own. Whatever comes in, the entity must answer every message with a reply that
// parses as a Control API reply, and never crash, leak or read out of bounds.
// UET_ENTITY_FUZZ_SEEDS=DIR writes seed inputs (one well-formed request of every command, and a map
// followed by the requests that read it) into DIR and exits (harness/selftest/fuzz.py refresh).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "handler.hpp"
#include "store.hpp"
#include "uet/entity/message.hpp"

namespace {

namespace c = uet::control;
using uet::entity::Writer;

void die(const char* what) {
  std::fprintf(stderr, "entity_fuzzer: %s\n", what);
  std::abort();
}

std::vector<uint8_t> record(uint8_t peer, const std::vector<uint8_t>& msg) {
  std::vector<uint8_t> out{peer, static_cast<uint8_t>(msg.size() >> 8), static_cast<uint8_t>(msg.size())};
  out.insert(out.end(), msg.begin(), msg.end());
  return out;
}

void write_seeds(const char* dir) {
  const uint16_t f = c::kFlagRequest | c::kFlagAck;
  const uint8_t root = 1 | (7 << 1), user = 0 | (7 << 1);  // both pid 7
  auto map = Writer::command(c::Cmd::JOB_MAP, f, 1).u32(c::attr::pid, 7).str(c::attr::service, "svc")
                 .u32(c::attr::job_id, 0x123).u32(c::attr::job_id, 0x456).finish();
  auto get = Writer::command(c::Cmd::JOB_GET, f, 2).str(c::attr::service, "svc").finish();
  auto check = Writer::command(c::Cmd::JOB_CHECK, f, 3).str(c::attr::service, "svc").u32(c::attr::job_id, 0x456).finish();
  auto list = Writer::command(c::Cmd::JOB_LIST, f, 4).finish();
  auto unmap = Writer::command(c::Cmd::JOB_UNMAP, f, 5).u32(c::attr::pid, 7).str(c::attr::service, "svc").finish();
  Writer alloc = Writer::command(c::Cmd::ADDR_ALLOC, f, 6);
  alloc.str(c::attr::service, "svc");
  const size_t at = alloc.begin_nest(c::attr::address);
  alloc.u16(c::fep_address::pid_on_fep, 3).u32(c::fep_address::initiator_id, 9);
  alloc.end_nest(at);
  const uint8_t key[32] = {1, 2, 3};
  auto update = Writer::command(c::Cmd::KEY_UPDATE, f, 7).u32(c::attr::sdi, 5).bytes(c::attr::key, key)
                    .u16(c::attr::epoch, 1).finish();
  std::vector<std::pair<std::string, std::vector<uint8_t>>> seeds;
  auto run = [&](std::initializer_list<std::vector<uint8_t>> recs) {
    std::vector<uint8_t> out;
    for (const auto& r : recs) out.insert(out.end(), r.begin(), r.end());
    return out;
  };
  seeds.emplace_back("map-then-read", run({record(root, map), record(user, get), record(user, check),
                                           record(root, list), record(root, unmap), record(user, get)}));
  seeds.emplace_back("map-as-user", run({record(user, map)}));
  // Shared credentials: acquire, grant a job, start it with the user's pid, access with a token, list,
  // limit, release, end the job.
  auto acquire = Writer::command(c::Cmd::CRED_ACQUIRE, f, 8).u32(c::attr::flags, c::cred::kFlag_persistent).finish();
  auto grant = Writer::command(c::Cmd::CRED_GRANT, f, 9).u32(c::attr::cred, 1).u32(c::attr::wlm_job, 42).finish();
  auto start = Writer::command(c::Cmd::JOB_START, f, 10).u32(c::attr::wlm_job, 42).u32(c::attr::pid, 7).finish();
  auto access = Writer::command(c::Cmd::CRED_ACCESS, f, 11).u32(c::attr::cred, 1).str(c::attr::service, "svc")
                    .u32(c::attr::flags, c::cred::kFlag_token).finish();
  auto cred_list = Writer::command(c::Cmd::CRED_LIST, f, 12).finish();
  auto limit = Writer::command(c::Cmd::CRED_LIMIT, f, 13).u8(c::attr::limit_scope, 1).u32(c::attr::limit, 1).finish();
  auto release = Writer::command(c::Cmd::CRED_RELEASE, f, 14).u32(c::attr::cred, 1).u32(c::attr::flags, c::cred::kFlag_full).finish();
  auto end = Writer::command(c::Cmd::JOB_END, f, 15).u32(c::attr::wlm_job, 42).finish();
  auto active = Writer::command(c::Cmd::JOB_ACTIVE, f, 16).u32(c::attr::wlm_job, 43).finish();
  seeds.emplace_back("credential-life", run({record(root, acquire), record(root, grant), record(root, start),
                                             record(user, access), record(root, cred_list), record(root, limit),
                                             record(user, acquire), record(root, release), record(root, end),
                                             record(root, active)}));
  seeds.emplace_back("addr-alloc", run({record(user, alloc.finish())}));
  seeds.emplace_back("key-update", run({record(root, update)}));
  for (const auto& [name, bytes] : seeds) {
    std::ofstream(std::string(dir) + "/" + name, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("UET_ENTITY_FUZZ_SEEDS")) {
    write_seeds(dir);
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  uet::entity::Store store(":memory:");
  // Process start times of the fuzzer's own making (pid + 1), so that an input names the same processes on
  // every run and machine, and a map reaches the requests of the pid it names.
  uet::entity::Handler server(store, [](uint32_t pid) { return uint64_t{pid} + 1; });
  size_t pos = 0;
  while (size - pos >= 3) {
    const uint8_t peer = data[pos];
    const size_t len = std::min<size_t>(size_t{data[pos + 1]} << 8 | data[pos + 2], size - pos - 3);
    std::vector<uint8_t> msg(data + pos + 3, data + pos + 3 + len);  // exact size: ASan sees any overread
    pos += 3 + len;
    const auto pid = static_cast<pid_t>(peer >> 1);
    const uet::entity::Peer who{pid, peer & 1 ? 0u : 1000u, peer & 1 ? 0u : 1000u, static_cast<uint64_t>(pid) + 1};
    for (const std::vector<uint8_t>& reply : server.handle(msg, who))
      if (std::holds_alternative<uet::entity::Problem>(uet::entity::parse_reply(reply)))
        die("the entity answered with a reply that does not parse");
  }
  return 0;
}
