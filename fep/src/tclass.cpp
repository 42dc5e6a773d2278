// The data traffic class (spec 2.2.7; digest G.3): fi_domain_attr.tclass names a DSCP (FI_TC_DSCP) or asks
// for the default data TC, which UET_PROVIDER_DEF_DATA_TC overrides. The DSCP goes into the IP header of
// every packet of the domain's FEP.
#include <sys/socket.h>

#include "softuet.hpp"
#include "uet/wire/wire_gen.hpp"

namespace softuet {

uint8_t data_dscp(const Config& cfg, uint32_t tclass) {
  if ((tclass & FI_TC_DSCP) == FI_TC_DSCP && !(tclass & FI_TC_LABEL)) return fi_tc_dscp_get(tclass) & 0x3F;
  // FI_TC_UNSPEC and the named classes (FI_TC_BEST_EFFORT, ...) use the default data TC: Table 2-32's
  // defaults are MISSING (spec/wire.yaml choice default-data-tc).
  return cfg.def_data_dscp.value_or(static_cast<uint8_t>(uet::wire::k_default_data_dscp));
}

int set_dscp(const Domain* d, int fd) {
  // DSCP in the upper six bits of the IPv4 TOS byte or the IPv6 traffic class (RFC 2474).
  const int tos = d->dscp << 2;
  return d->ip.ip.v6 ? setsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &tos, sizeof tos)
                     : setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof tos);
}

}  // namespace softuet
