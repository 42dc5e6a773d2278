/* A libfabric provider that misbehaves on purpose, for the tests that prove a run ends whatever its provider
 * does. HOSTILE_PROVIDER_MODE: getinfo-segv (crashes in fi_getinfo), getinfo-hang (never answers it),
 * domain-hang (answers fi_getinfo and fi_fabric, never returns from fi_domain), getinfo-daemon (at the first
 * fi_getinfo of a process, leaves a daemon behind as a daemon is made: forked twice, in a session of its own, its standard
 * streams closed; it appends its pid to HOSTILE_PROVIDER_PIDS before fi_getinfo answers, then sleeps for
 * ever). Built by the tests with libfabric's headers as libhostile-fi.so and loaded through FI_PROVIDER_PATH. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/providers/fi_prov.h>

static const char *mode(void) {
  const char *m = getenv("HOSTILE_PROVIDER_MODE");
  return m ? m : "";
}

static void hang(void) {
  for (;;) pause();
}

static void daemon_behind(void) {
  static int left;
  int ready[2];
  if (left++ || pipe(ready) != 0) return;
  const pid_t child = fork();
  if (child == 0) {
    setsid();
    if (fork() == 0) {
      const int devnull = open("/dev/null", O_RDWR);
      dup2(devnull, 0), dup2(devnull, 1), dup2(devnull, 2);
      const char *pids = getenv("HOSTILE_PROVIDER_PIDS");
      const int fd = pids ? open(pids, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644) : -1;
      char line[32];
      const int n = snprintf(line, sizeof line, "%d\n", (int)getpid());
      if (fd >= 0) (void)!write(fd, line, (size_t)n);
      (void)!write(ready[1], "r", 1);
      hang();
    }
    _exit(0);
  }
  close(ready[1]);
  char c;
  (void)!read(ready[0], &c, 1);  /* the pid is written: the daemon is there */
  close(ready[0]);
  waitpid(child, NULL, 0);
}

static int hostile_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
                           const struct fi_info *hints, struct fi_info **info) {
  (void)version, (void)node, (void)service, (void)flags, (void)hints;
  if (!strcmp(mode(), "getinfo-segv")) raise(SIGSEGV);
  if (!strcmp(mode(), "getinfo-hang")) hang();
  if (!strcmp(mode(), "getinfo-daemon")) daemon_behind();
  struct fi_info *fi = fi_allocinfo();
  if (!fi) return -FI_ENOMEM;
  fi->caps = FI_MSG | FI_SEND | FI_RECV;
  fi->addr_format = FI_SOCKADDR_IN;
  fi->ep_attr->type = FI_EP_RDM;
  fi->ep_attr->protocol = FI_PROTO_UNSPEC;
  fi->domain_attr->name = strdup("hostile");
  fi->domain_attr->mr_mode = 0;
  fi->fabric_attr->name = strdup("hostile");
  fi->fabric_attr->prov_version = FI_VERSION(1, 0);
  *info = fi;
  return 0;
}

static int hostile_close(struct fid *fid) {
  free(fid);
  return 0;
}

static int hostile_domain(struct fid_fabric *fabric, struct fi_info *info, struct fid_domain **dom, void *context) {
  (void)fabric, (void)info, (void)dom, (void)context;
  if (!strcmp(mode(), "domain-hang")) hang();
  return -FI_ENOSYS;
}

static struct fi_ops hostile_fid_ops = {.size = sizeof(struct fi_ops), .close = hostile_close};
static struct fi_ops_fabric hostile_fabric_ops = {.size = sizeof(struct fi_ops_fabric), .domain = hostile_domain};

static int hostile_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context) {
  (void)attr;
  struct fid_fabric *f = calloc(1, sizeof(*f));
  if (!f) return -FI_ENOMEM;
  f->fid.fclass = FI_CLASS_FABRIC;
  f->fid.context = context;
  f->fid.ops = &hostile_fid_ops;
  f->ops = &hostile_fabric_ops;
  *fabric = f;
  return 0;
}

static void hostile_cleanup(void) {}

static struct fi_provider hostile = {
    .version = FI_VERSION(1, 0),
    .fi_version = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION),  /* the headers it is built with */
    .name = "hostile",
    .getinfo = hostile_getinfo,
    .fabric = hostile_fabric,
    .cleanup = hostile_cleanup,
};

FI_EXT_INI { return &hostile; }
