/* A hostile libfabric provider, "forger", for the tests of the verdict channel (pytest/trust): it runs
 * inside a case binary, as any provider does, and tries to write that binary's verdicts. FORGER_MODE says
 * how, at its first fi_getinfo:
 *   crash    append an unsigned "pass" end for the case that is running, then die of SIGSEGV
 *   sign     the same with a signature made up (64 hex digits), then die of SIGSEGV
 *   replay   append again every line already in the verdict file (lines the binary did sign)
 *   spray    write a forged line to every descriptor 3..1023, then answer "no provider here"
 * The verdict file is found as a hostile provider would: among this process's open descriptors. */
#include <dirent.h>
#include <fcntl.h>
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_prov.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The descriptor the binary writes its verdicts to, and the file's path in `path`. */
static int verdict_file(char* path, size_t size) {
  DIR* d = opendir("/proc/self/fd");
  struct dirent* e;
  int found = -1;
  while (d && (e = readdir(d))) {
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
    const ssize_t n = readlink(link, path, size - 1);
    if (n <= 6) continue;
    path[n] = '\0';
    if (strcmp(path + n - 6, ".jsonl") == 0) {
      found = atoi(e->d_name);
      break;
    }
  }
  if (d) closedir(d);
  return found;
}

/* What the binary wrote so far (its descriptor is write-only: the file is read by its path). */
static ssize_t written_so_far(const char* path, char* text, size_t size) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  const ssize_t n = read(fd, text, size);
  close(fd);
  return n;
}

/* The case that started last: the "case" of the last start line in the file. */
static void running_case(const char* path, char* out, size_t size) {
  static char text[1 << 20];
  out[0] = '\0';
  const ssize_t n = written_so_far(path, text, sizeof text - 1);
  if (n <= 0) return;
  text[n] = '\0';
  for (char* at = text; (at = strstr(at, "\"case\":\"")); at += 8) {
    const char* start = at + 8;
    const char* end = strchr(start, '"');
    if (!end || strstr(at, "\"event\":\"start\"") == NULL) continue;
    snprintf(out, size, "%.*s", (int)(end - start), start);
  }
}

static void forge(void) {
  const char* mode = getenv("FORGER_MODE");
  if (!mode) return;
  if (strcmp(mode, "spray") == 0) {
    static const char line[] = "{\"event\":\"end\",\"case\":\"Forged.Case\",\"verdict\":\"pass\",\"seq\":0}\n";
    for (int fd = 3; fd < 1024; ++fd) (void)!write(fd, line, sizeof line - 1);
    return;
  }
  char path[4096];
  const int fd = verdict_file(path, sizeof path);
  if (fd < 0) return;
  if (strcmp(mode, "replay") == 0) {
    static char text[1 << 20];
    const ssize_t n = written_so_far(path, text, sizeof text);
    if (n > 0) (void)!write(fd, text, (size_t)n);
    return;
  }
  char name[512], line[1024];
  running_case(path, name, sizeof name);
  const char* mac = strcmp(mode, "sign") == 0 ? "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef " : "";
  const int len = snprintf(line, sizeof line,
                           "%s{\"case\":\"%s\",\"event\":\"end\",\"statements\":[\"2.2.2-a\",\"2.2.2-b\"],\"seconds\":0.1,"
                           "\"seq\":1,\"verdict\":\"pass\"}\n",
                           mac, name);
  (void)!write(fd, line, (size_t)len);
  raise(SIGSEGV);
}

static int forger_getinfo(uint32_t version, const char* node, const char* service, uint64_t flags,
                          const struct fi_info* hints, struct fi_info** info) {
  (void)version, (void)node, (void)service, (void)flags, (void)hints, (void)info;
  forge();
  return -FI_ENODATA;
}

static int forger_fabric(struct fi_fabric_attr* attr, struct fid_fabric** fabric, void* context) {
  (void)attr, (void)fabric, (void)context;
  return -FI_ENODATA;
}

static void forger_cleanup(void) {}

static struct fi_provider forger = {
    .version = FI_VERSION(1, 0),
    .fi_version = FI_VERSION(2, 0),
    .name = "forger",
    .getinfo = forger_getinfo,
    .fabric = forger_fabric,
    .cleanup = forger_cleanup,
};

struct fi_provider* fi_prov_ini(void) { return &forger; }
