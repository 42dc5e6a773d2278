// Transport security (spec 2.2.9, 2.2.10.2): a domain whose endpoints' JobID has a security binding seals
// every packet it sends in that secure domain, and opens the sealed packets it receives.
//
// Keys come from the privileged entity: a key-update request when the binding is made (2.2.9-d), another
// when a packet arrives under an epoch this process has no key for (a requested update), and the updates the
// entity sends unasked when an administrator changes a key (2.2.9-f), read from the link before each packet
// is sealed or opened. The keys are the process's, as a NIC's are its node's: every domain of the process
// seals and opens with them. The header layout and the cryptography are the suite's choices tss-layout and
// tss-crypto (uet/tss/seal.hpp).
#include <algorithm>
#include <array>
#include <map>
#include <mutex>

#include "entity_link.hpp"
#include "uet/tss/seal.hpp"
#include "uet/wire/wire_gen.hpp"

namespace softuet {

namespace wire = uet::wire;
namespace ctl = uet::control;

namespace {

using Key = std::array<uint8_t, wire::k_tss_key_bytes>;

// sdi -> epoch -> key: the current epoch and the one before it (packets sealed before an update are still
// in flight when it arrives).
std::mutex keys_mu;  // a leaf lock: nothing is taken while it is held
std::map<uint32_t, std::map<uint16_t, Key>> keys;

void learn(uint32_t sdi, uint16_t epoch, std::span<const uint8_t> key) {
  if (key.size() != wire::k_tss_key_bytes) return;
  std::lock_guard lock(keys_mu);
  auto& epochs = keys[sdi];
  std::copy(key.begin(), key.end(), epochs[epoch].begin());
  while (epochs.size() > 2) epochs.erase(epochs.begin());
}

// The newest key of `sdi` and its epoch.
std::optional<std::pair<uint16_t, Key>> newest(uint32_t sdi) {
  std::lock_guard lock(keys_mu);
  auto it = keys.find(sdi);
  if (it == keys.end() || it->second.empty()) return std::nullopt;
  return *it->second.rbegin();
}

std::optional<Key> key_of(uint32_t sdi, uint16_t epoch) {
  std::lock_guard lock(keys_mu);
  auto it = keys.find(sdi);
  if (it == keys.end()) return std::nullopt;
  auto e = it->second.find(epoch);
  if (e == it->second.end()) return std::nullopt;
  return e->second;
}

// Takes a key-update reply (requested, or sent unasked) into the keys.
void take_update(Domain* d, const uet::entity::Reply& r, bool unasked) {
  if (r.is_error || r.cmd != static_cast<uint8_t>(ctl::Cmd::KEY_REQUEST)) return;
  if (unasked && fault(d, Fault::tss_unsolicited_update_ignored)) return;
  const auto sdi = r.attrs.num(ctl::attr::sdi), epoch = r.attrs.num(ctl::attr::epoch);
  const auto key = r.attrs.bytes(ctl::attr::key);
  if (sdi && epoch && key) learn(static_cast<uint32_t>(*sdi), static_cast<uint16_t>(*epoch), *key);
}

// The updates the entity sent unasked (the caller holds the link's lock).
void take_pushed(Domain* d) {
  uet::entity::Client* link = entity_link(d);
  if (!link) return;
  for (const auto& message : link->take_pushed()) {
    const auto got = uet::entity::parse_reply(message);
    if (const auto* r = std::get_if<uet::entity::Reply>(&got)) take_update(d, *r, true);
  }
}

// A key-update request for `sdi` (the caller holds the link's lock): true when a key came back.
bool request_key(Domain* d, uint32_t sdi) {
  auto w = uet::entity::Writer::command(ctl::Cmd::KEY_REQUEST, ctl::kFlagRequest, 1);
  if (!fault(d, Fault::key_request_without_sdi)) w.u32(ctl::attr::sdi, sdi);
  const auto reply = ask_entity(d, w.finish());
  if (!reply || reply->is_error) {
    FI_WARN(&g_prov, FI_LOG_EP_CTRL, "no key for secure domain %u: %s\n", sdi,
            reply ? reply->what.c_str() : "the entity did not answer");
    return false;
  }
  take_update(d, *reply, false);
  return true;
}

// The link's pushed updates, when the link is free: a sender or receiver holding the domain's mu must not
// wait for the link (the link's lock comes first), and a busy link is read at the next packet.
void poll_updates(Domain* d) {
  std::unique_lock link_lock(entity_mutex(), std::try_to_lock);
  if (link_lock.owns_lock()) take_pushed(d);
}

std::span<const uint8_t> ip_bytes(const FepIp& ip) { return {ip.fa.data(), ip.v6 ? 16u : 4u}; }

}  // namespace

size_t tss_overhead() { return uet::tss::encode_header({}).size() + wire::k_tss_icv_bytes; }

int tss_bind(Domain* d, uint32_t sdi) {
  if (fault(d, Fault::tss_key_not_requested)) {
    learn(sdi, 0, Key{});  // sealed under a key nobody gave
  } else if (!request_key(d, sdi)) {
    return -FI_ENOKEY;
  }
  std::lock_guard lock(d->mu);
  if (d->tss_sdi) return 0;  // the domain's first binding is its secure domain
  d->tss_sdi = sdi;
  // Sealed packets carry the TSS header and ICV too: the payload MTU leaves room for them.
  if (d->mtu.link_mtu)
    d->mtu.payload = payload_for_link(d->mtu.link_mtu, d->ip.ip.v6, largest_data_header() + tss_overhead());
  return 0;
}

void tss_seal(Domain* d, const SockAddr& to, std::vector<uint8_t>& frame) {
  if (!d->tss_sdi || fault(d, Fault::tss_binding_ignored)) return;
  poll_updates(d);
  const auto key = newest(*d->tss_sdi);
  if (!key) return;
  if (key->first != d->tss_epoch || d->tss_tsc == 0) {
    d->tss_epoch = key->first;  // a new key: its packet counter starts again
    d->tss_tsc = 0;
  }
  const uet::tss::Header h{*d->tss_sdi, key->first, ++d->tss_tsc, std::nullopt};
  const std::optional<UdpPeer> dst = peer_of(to);
  if (!dst) return;
  frame = uet::tss::seal(h, key->second, {ip_bytes(d->ip.ip), ip_bytes(dst->ip)}, frame);
}

bool tss_open(Domain* d, const uint8_t* buf, size_t len, const UdpPeer& from) {
  const std::span<const uint8_t> sealed(buf, len);
  size_t header_len = 0;
  const auto h = uet::tss::decode_header(sealed, &header_len);
  if (!h) return false;
  poll_updates(d);
  std::optional<Key> key = key_of(h->sdi, h->epoch);
  const auto have = newest(h->sdi);
  if (!key && !d->cfg.entity_socket.empty() && (!have || h->epoch > have->first)) {
    // A newer epoch than this process knows: a requested key update (2.2.9-c).
    std::unique_lock link_lock(entity_mutex(), std::try_to_lock);
    if (link_lock.owns_lock() && request_key(d, h->sdi)) key = key_of(h->sdi, h->epoch);
  }
  if (!key) {
    FI_DBG(&g_prov, FI_LOG_EP_DATA, "dropped a packet of secure domain %u epoch %u: no key\n", h->sdi, h->epoch);
    return false;
  }
  std::string why;
  auto plain = uet::tss::open(sealed, *key, {ip_bytes(from.ip), ip_bytes(d->ip.ip)}, nullptr, &why);
  if (!plain) {
    FI_DBG(&g_prov, FI_LOG_EP_DATA, "dropped a packet of secure domain %u: %s\n", h->sdi, why.c_str());
    return false;
  }
  d->tss_plain = std::move(*plain);
  return true;
}

}  // namespace softuet
