/* Datagram round trips inside one process, for bench/fep_instructions.py: two FI_EP_DGRAM endpoints of one
 * domain of the provider named by argv[1]; endpoint a sends 64 bytes to b with fi_inject, b reads its CQ,
 * posts its receive again and sends the bytes back, and a does the same: argv[2] times. Every call is one a
 * pingpong makes, without the second process, so the user-space work per round trip can be counted exactly
 * (callgrind) while the kernel's part stays out of the count. */
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                                            \
  do {                                                                                         \
    const int rc_ = (int)(call);                                                               \
    if (rc_) {                                                                                 \
      fprintf(stderr, "dgram_roundtrip: %s: %d (%s)\n", #call, rc_, fi_strerror(rc_ < 0 ? -rc_ : rc_)); \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)

struct side {
  struct fid_ep* ep;
  struct fid_cq* cq;
  struct fid_av* av;
  fi_addr_t peer;
  char buf[256];
};

static struct fid_domain* domain;
static struct fi_info* info;

static void open_side(struct side* s) {
  struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_CONTEXT, .size = 64};
  struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
  CHECK(fi_endpoint(domain, info, &s->ep, NULL));
  CHECK(fi_cq_open(domain, &cq_attr, &s->cq, NULL));
  CHECK(fi_av_open(domain, &av_attr, &s->av, NULL));
  CHECK(fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV));
  CHECK(fi_ep_bind(s->ep, &s->av->fid, 0));
  CHECK(fi_enable(s->ep));
}

/* A loss on the loopback path would spin here for ever: give up after this many empty reads. */
#define MAX_EMPTY_READS 100000000L

static void receive(struct side* s) {
  struct fi_cq_entry entry;
  ssize_t got;
  long empty = 0;
  while ((got = fi_cq_read(s->cq, &entry, 1)) == -FI_EAGAIN)
    if (++empty == MAX_EMPTY_READS) {
      fprintf(stderr, "dgram_roundtrip: no datagram arrived (lost?)\n");
      exit(1);
    }
  if (got != 1) {
    fprintf(stderr, "dgram_roundtrip: fi_cq_read: %zd\n", got);
    exit(1);
  }
  CHECK(fi_recv(s->ep, s->buf, sizeof s->buf, NULL, 0, NULL));
}

static void send64(struct side* s) {
  ssize_t rc;
  while ((rc = fi_inject(s->ep, s->buf, 64, s->peer)) == -FI_EAGAIN) {
  }
  CHECK(rc);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: dgram_roundtrip PROVIDER ROUND_TRIPS\n");
    return 2;
  }
  const long trips = atol(argv[2]);
  struct fi_info* hints = fi_allocinfo();
  hints->ep_attr->type = FI_EP_DGRAM;
  hints->caps = FI_MSG;
  hints->mode = ~0ULL;
  hints->domain_attr->threading = FI_THREAD_DOMAIN;
  hints->fabric_attr->prov_name = strdup(argv[1]);
  CHECK(fi_getinfo(FI_VERSION(2, 0), NULL, NULL, 0, hints, &info));
  struct fid_fabric* fabric;
  CHECK(fi_fabric(info->fabric_attr, &fabric, NULL));
  CHECK(fi_domain(fabric, info, &domain, NULL));
  struct side a = {0}, b = {0};
  open_side(&a);
  open_side(&b);
  char name_a[256], name_b[256];
  size_t len_a = sizeof name_a, len_b = sizeof name_b;
  CHECK(fi_getname(&a.ep->fid, name_a, &len_a));
  CHECK(fi_getname(&b.ep->fid, name_b, &len_b));
  if (fi_av_insert(a.av, name_b, 1, &a.peer, 0, NULL) != 1 || fi_av_insert(b.av, name_a, 1, &b.peer, 0, NULL) != 1) {
    fprintf(stderr, "dgram_roundtrip: fi_av_insert failed\n");
    return 1;
  }
  CHECK(fi_recv(a.ep, a.buf, sizeof a.buf, NULL, 0, NULL));
  CHECK(fi_recv(b.ep, b.buf, sizeof b.buf, NULL, 0, NULL));
  for (long i = 0; i < trips; ++i) {
    send64(&a);
    receive(&b);
    send64(&b);
    receive(&a);
  }
  printf("%ld round trips\n", trips);
  return 0;
}
