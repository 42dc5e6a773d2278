// Transport security (TSS) protection of a UET packet: the TSS header laid out by the codec's parse graph
// (choice tss-layout), then the packet after it encrypted under the secure domain's key with its ICV
// (choice tss-crypto: AES-256-GCM; the IV and AAD as that choice says). The reference FEP seals and opens
// its packets with it, and the wire checks open what a provider sent with the key the suite gave it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace uet::tss {

struct Header {
  uint32_t sdi = 0;                 // secure domain index (24 bits)
  uint16_t epoch = 0;               // the key's epoch; AN is its low bit
  uint64_t tsc = 0;                 // the sender's packet counter under this key (48 bits)
  std::optional<uint32_t> ssi;      // secure source index (SP=1)
};

// The IP addresses of the packet (4 or 16 bytes each), which the IV and the AAD take.
struct Ips {
  std::span<const uint8_t> src, dst;
};

// The TSS header's bytes (12, or 16 with an SSI).
std::vector<uint8_t> encode_header(const Header& h);
// The TSS header at the start of a UDP payload and its length; nullopt when the payload does not start with
// one (the first 5 bits are not 1) or is too short for it.
std::optional<Header> decode_header(std::span<const uint8_t> udp_payload, size_t* header_len);

// [TSS header][`plain` encrypted][ICV]: a UDP payload. `key` is tss_key_bytes long.
std::vector<uint8_t> seal(const Header& h, std::span<const uint8_t> key, const Ips& ips, std::span<const uint8_t> plain);
// The packet inside a sealed UDP payload, or nullopt (with why) when it is not one or its ICV does not verify
// under `key`.
std::optional<std::vector<uint8_t>> open(std::span<const uint8_t> udp_payload, std::span<const uint8_t> key,
                                         const Ips& ips, Header* h, std::string* why = nullptr);

}  // namespace uet::tss
