/* A chatty libfabric provider, for the test of the capture cap (pytest/trust): it is softuet (the real
 * provider at CHATTY_WRAPS, under softuet's name) that, at the first send of the process, first puts
 * CHATTY_BYTES of UDP datagrams on the wire, to itself on the loopback. A case's capture takes every UDP
 * datagram of its link, so that case's capture grows past its cap; its verdict is softuet's. */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_prov.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum { kDatagram = 60000, kMaxOps = 8 };

static struct fi_provider chatty;
static int (*real_fabric)(struct fi_fabric_attr*, struct fid_fabric**, void*);
static atomic_flag flooded = ATOMIC_FLAG_INIT;

static void flood(void) {
  if (atomic_flag_test_and_set(&flooded)) return;
  const char* text = getenv("CHATTY_BYTES");
  long long left = text ? atoll(text) : 0;
  const int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in to = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof to;
  if (s < 0 || bind(s, (struct sockaddr*)&to, sizeof to) != 0 || getsockname(s, (struct sockaddr*)&to, &len) != 0) {
    fprintf(stderr, "chatty: no loopback socket\n");
    if (s >= 0) close(s);
    return;
  }
  static char junk[kDatagram];
  memset(junk, 'c', sizeof junk);
  for (; left > 0; left -= kDatagram) (void)!sendto(s, junk, sizeof junk, 0, (struct sockaddr*)&to, sizeof to);
  close(s);
}

/* Each kind of softuet endpoint shares one table of message operations: the copy an endpoint is given in
 * its place sends through the original. */
static struct {
  struct fi_ops_msg *real, copy;
} msg_ops[kMaxOps];

static struct fi_ops_msg* real_msg(struct fid_ep* ep) {
  for (int i = 0; i < kMaxOps; ++i)
    if (&msg_ops[i].copy == ep->msg) return msg_ops[i].real;
  abort();
}

static ssize_t c_send(struct fid_ep* ep, const void* buf, size_t len, void* desc, fi_addr_t dest, void* context) {
  flood();
  return real_msg(ep)->send(ep, buf, len, desc, dest, context);
}
static ssize_t c_sendv(struct fid_ep* ep, const struct iovec* iov, void** desc, size_t count, fi_addr_t dest,
                       void* context) {
  flood();
  return real_msg(ep)->sendv(ep, iov, desc, count, dest, context);
}
static ssize_t c_sendmsg(struct fid_ep* ep, const struct fi_msg* msg, uint64_t flags) {
  flood();
  return real_msg(ep)->sendmsg(ep, msg, flags);
}
static ssize_t c_inject(struct fid_ep* ep, const void* buf, size_t len, fi_addr_t dest) {
  flood();
  return real_msg(ep)->inject(ep, buf, len, dest);
}
static ssize_t c_senddata(struct fid_ep* ep, const void* buf, size_t len, void* desc, uint64_t data, fi_addr_t dest,
                          void* context) {
  flood();
  return real_msg(ep)->senddata(ep, buf, len, desc, data, dest, context);
}
static ssize_t c_injectdata(struct fid_ep* ep, const void* buf, size_t len, uint64_t data, fi_addr_t dest) {
  flood();
  return real_msg(ep)->injectdata(ep, buf, len, data, dest);
}

static void chatter(struct fid_ep* ep) {
  if (!ep->msg) return;
  int i = 0;
  while (i < kMaxOps && msg_ops[i].real && msg_ops[i].real != ep->msg) ++i;
  if (i == kMaxOps) return;
  if (!msg_ops[i].real) {
    msg_ops[i].real = ep->msg;
    msg_ops[i].copy = *ep->msg;
    msg_ops[i].copy.send = c_send;
    msg_ops[i].copy.sendv = c_sendv;
    msg_ops[i].copy.sendmsg = c_sendmsg;
    msg_ops[i].copy.inject = c_inject;
    msg_ops[i].copy.senddata = c_senddata;
    msg_ops[i].copy.injectdata = c_injectdata;
  }
  ep->msg = &msg_ops[i].copy;
}

static struct fi_ops_domain domain_ops;
static int (*real_endpoint)(struct fid_domain*, struct fi_info*, struct fid_ep**, void*);

static int c_endpoint(struct fid_domain* domain, struct fi_info* info, struct fid_ep** ep, void* context) {
  const int rc = real_endpoint(domain, info, ep, context);
  if (rc == 0) chatter(*ep);
  return rc;
}

static struct fi_ops_fabric fabric_ops;
static int (*real_domain)(struct fid_fabric*, struct fi_info*, struct fid_domain**, void*);

static int c_domain(struct fid_fabric* fabric, struct fi_info* info, struct fid_domain** domain, void* context) {
  const int rc = real_domain(fabric, info, domain, context);
  if (rc != 0) return rc;
  if (!real_endpoint) {
    real_endpoint = (*domain)->ops->endpoint;
    domain_ops = *(*domain)->ops;
    domain_ops.endpoint = c_endpoint;
    domain_ops.endpoint2 = NULL;  /* fi_endpoint2 answers "not supported": the cases use fi_endpoint */
  }
  (*domain)->ops = &domain_ops;
  return 0;
}

static int c_fabric(struct fi_fabric_attr* attr, struct fid_fabric** fabric, void* context) {
  const int rc = real_fabric(attr, fabric, context);
  if (rc != 0) return rc;
  if (!real_domain) {
    real_domain = (*fabric)->ops->domain;
    fabric_ops = *(*fabric)->ops;
    fabric_ops.domain = c_domain;
    fabric_ops.domain2 = NULL;
  }
  (*fabric)->ops = &fabric_ops;
  return 0;
}

struct fi_provider* fi_prov_ini(void) {
  const char* wraps = getenv("CHATTY_WRAPS");
  void* lib = wraps ? dlopen(wraps, RTLD_NOW | RTLD_LOCAL) : NULL;
  struct fi_provider* (*ini)(void) = lib ? (struct fi_provider * (*)(void)) dlsym(lib, "fi_prov_ini") : NULL;
  const struct fi_provider* real = ini ? ini() : NULL;
  if (!real) {
    const char* why = dlerror();
    fprintf(stderr, "chatty: CHATTY_WRAPS=%s is no provider: %s\n", wraps ? wraps : "(unset)", why ? why : "no fi_prov_ini");
    return NULL;
  }
  chatty = *real;
  real_fabric = real->fabric;
  chatty.fabric = c_fabric;
  return &chatty;
}
