/* FI_ADDR_UET and the UET endpoint address (spec §2.2.5.1, Table 2-10) as softuet uses them.
 *
 * This is the one project header that defines FI_ADDR_UET. Upstream libfabric has no FI_ADDR_UET in its
 * address-format enum (digest C.1), so its numeric value is a choice of this suite: spec/wire.yaml, choice
 * `fi-addr-uet-value`, constant `fi_addr_uet`. Every peer must agree on it; fi_pingpong, for example, sends
 * it to its peer with the address and hands it back to fi_getinfo as hints->addr_format.
 *
 * The structure follows choice `uet-address-layout` (Figure 2-8 is MISSING from the digest, C.5):
 * 32 bytes, host byte order in memory (the address never travels on the wire as such), followed by a
 * softuet trailer that carries the FEP's UDP port (fep/DESIGN.md: two FEPs on one IP need two ports).
 * A peer that does not know the trailer reads the first 32 bytes and uses UDP port 4793.
 *
 * The C part (structures, the literal value) can be included from C; the constants derived from
 * spec/wire.yaml need C++ (they come from the generated uet/wire/wire_gen.hpp).
 */
#ifndef SOFTUET_FI_ADDR_UET_H
#define SOFTUET_FI_ADDR_UET_H

#include <stdint.h>

/* The literal value, for C users. fep/src/address.cpp static_asserts that it equals the generated
 * constant uet::wire::k_fi_addr_uet, so editing spec/wire.yaml without this line fails the build. */
#define SOFTUET_FI_ADDR_UET_VALUE 0x55455400u

/* Table 2-10 in the layout of choice uet-address-layout. */
struct uet_addr {
  uint8_t version;       /* address format version: 0 (constants.addr_version) */
  uint8_t flags;         /* C.3: valid bits, address mode, FA type, MTU-limited */
  uint8_t fep_caps;      /* C.4: AI Base / AI Full / HPC / optimized header */
  uint8_t pad0;
  uint8_t fa[16];        /* Fabric Address: IPv4 in fa[0..3] (network order), or IPv6 */
  uint16_t pid_on_fep;   /* 12 bits significant */
  uint16_t start_index;  /* start resource index, 12 bits significant; RI 0 is reserved */
  uint16_t num_indices;  /* number of consecutive resource indices */
  uint16_t pad1;
  uint32_t initiator_id; /* ses.initiator of this endpoint */
};

#define SOFTUET_ADDR_TRAILER_MAGIC 0x5355u /* "SU" */

/* What fi_getname returns: the UET address plus the softuet trailer. */
struct softuet_addr {
  struct uet_addr uet;
  uint16_t trailer_magic; /* SOFTUET_ADDR_TRAILER_MAGIC, else the trailer is ignored */
  uint16_t udp_port;      /* the FEP's UDP port (host order) */
  uint32_t reserved;
};

#ifdef __cplusplus
#include "uet/wire/wire_gen.hpp"

/* FI_ADDR_UET, as a value of libfabric's address-format field (fi_info.addr_format, a uint32_t). */
#define FI_ADDR_UET (static_cast<uint32_t>(uet::wire::k_fi_addr_uet))

namespace softuet {
inline constexpr uint8_t bit8(uint64_t n) { return static_cast<uint8_t>(1u << n); }
/* Address flags (digest C.3), from spec/wire.yaml constants. */
inline constexpr uint8_t kAddrFlagCapsValid = bit8(uet::wire::k_addr_flag_caps_valid);
inline constexpr uint8_t kAddrFlagFaValid = bit8(uet::wire::k_addr_flag_fa_valid);
inline constexpr uint8_t kAddrFlagPidValid = bit8(uet::wire::k_addr_flag_pid_valid);
inline constexpr uint8_t kAddrFlagIndexValid = bit8(uet::wire::k_addr_flag_index_valid);
inline constexpr uint8_t kAddrFlagInitiatorValid = bit8(uet::wire::k_addr_flag_initiator_valid);
inline constexpr uint8_t kAddrFlagAbsolute = bit8(uet::wire::k_addr_flag_absolute);
inline constexpr uint8_t kAddrFlagIpv6 = bit8(uet::wire::k_addr_flag_ipv6);
inline constexpr uint8_t kAddrFlagMtuLimited = bit8(uet::wire::k_addr_flag_mtu_limited);
/* Fabric Endpoint Capabilities (digest C.4). */
inline constexpr uint8_t kCapAiBase = bit8(uet::wire::k_cap_ai_base);
inline constexpr uint8_t kCapAiFull = bit8(uet::wire::k_cap_ai_full);
inline constexpr uint8_t kCapHpc = bit8(uet::wire::k_cap_hpc);
inline constexpr uint8_t kCapOptimizedHeader = bit8(uet::wire::k_cap_optimized_header);
}  // namespace softuet

static_assert(sizeof(struct uet_addr) == 32, "choice uet-address-layout: 32 bytes");
static_assert(sizeof(struct softuet_addr) == 40, "UET address + 8-byte softuet trailer");
#endif

#endif /* SOFTUET_FI_ADDR_UET_H */
