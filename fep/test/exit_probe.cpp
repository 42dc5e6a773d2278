// softuet-exit-probe: an application that exits with its softuet domain open, a send to itself still in
// flight. libfabric dlcloses the provider in its destructor, so a FEP thread that outlives the provider's
// exit hook runs in unmapped code when it next wakes. This program's own exit handler, registered before
// the provider's and so run after it, looks for that thread by name: exit status 3 and a line naming it if
// one still runs; 0 otherwise. Used by pytest/fep/test_process_exit.py.
#include <dirent.h>
#include <rdma/fi_endpoint.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "probe_fabric.hpp"

namespace {

constexpr char kFepThreadName[] = "softuet-fep";  // fep/src/softuet.hpp
constexpr size_t kMessage = 64 * 1024;             // several packets: the FEP thread has work at exit

void no_fep_thread_left() {
  DIR* tasks = opendir("/proc/self/task");
  if (!tasks) return;
  int left = 0;
  while (const dirent* t = readdir(tasks)) {
    if (t->d_name[0] == '.') continue;
    std::ifstream comm(std::string("/proc/self/task/") + t->d_name + "/comm");
    std::string name;
    if (std::getline(comm, name) && name == kFepThreadName) {
      std::fprintf(stderr, "thread %s (%s) still runs after the provider's exit hook\n", t->d_name, kFepThreadName);
      ++left;
    }
  }
  closedir(tasks);
  if (left) _exit(3);
}

}  // namespace

int main() {
  std::atexit(no_fep_thread_left);  // before the provider registers its hook: runs after it
  auto* f = new softuet_probe::ProbeFabric;  // never closed: the point of the program
  if (f->open(FI_MSG) != 0) {
    std::fprintf(stderr, "%s\n", f->failed.c_str());
    return 1;
  }
  if (int r = fi_enable(f->ep)) {
    std::fprintf(stderr, "fi_enable: %d\n", r);
    return 1;
  }
  const fi_addr_t self = f->insert_hex(f->name_hex());
  if (self == FI_ADDR_NOTAVAIL) {
    std::fprintf(stderr, "fi_av_insert of its own address failed\n");
    return 1;
  }
  // Never freed, as the fabric is never closed: the receive is still posted at exit, and a static vector made
  // here (after the provider registered its exit hook) would be destroyed before the hook stops the FEP
  // thread, which then wrote the in-flight message into freed memory ("corrupted double-linked list").
  auto* in = new std::vector<char>(kMessage);
  auto* out = new std::vector<char>(kMessage, 'x');
  ssize_t r;
  while ((r = fi_recv(f->ep, in->data(), in->size(), nullptr, FI_ADDR_UNSPEC, nullptr)) == -FI_EAGAIN) {
  }
  if (r) return std::fprintf(stderr, "fi_recv: %zd\n", r), 1;
  while ((r = fi_send(f->ep, out->data(), out->size(), nullptr, self, nullptr)) == -FI_EAGAIN) {
  }
  if (r) return std::fprintf(stderr, "fi_send: %zd\n", r), 1;
  std::printf("sent, exiting with the domain open\n");
  std::fflush(stdout);
  return 0;
}
