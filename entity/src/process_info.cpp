#include "uet/entity/process_info.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace uet::entity {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Fields 4 (ppid) and 22 (start time) of /proc/PID/stat; false when the process does not exist.
bool read_stat(uint32_t pid, uint32_t* ppid, uint64_t* start) {
  const std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
  // The command name may hold spaces and parentheses: the fields start after the last ')'.
  const auto close = stat.rfind(')');
  if (close == std::string::npos || close + 2 > stat.size()) return false;
  std::istringstream fields(stat.substr(close + 2));
  std::string f;
  *start = 0;
  for (int i = 3; i <= 22 && fields >> f; ++i) {
    if (i == 4) *ppid = static_cast<uint32_t>(std::strtoul(f.c_str(), nullptr, 10));
    if (i == 22) *start = std::strtoull(f.c_str(), nullptr, 10);
  }
  return *start != 0;
}

}  // namespace

uint64_t start_time(uint32_t pid) {
  uint32_t ppid = 0;
  uint64_t start = 0;
  return pid && read_stat(pid, &ppid, &start) ? start : 0;
}

std::optional<ProcessInfo> process_info(uint32_t pid) {
  const std::string dir = "/proc/" + std::to_string(pid);
  ProcessInfo p;
  p.pid = pid;
  if (!read_stat(pid, &p.ppid, &p.start)) return std::nullopt;
  std::istringstream status(slurp(dir + "/status"));
  for (std::string line; std::getline(status, line);) {
    std::istringstream words(line);
    std::string key;
    words >> key;
    uint32_t v = 0;
    if (key == "Uid:" && words >> v) p.uid = v;
    if (key == "Gid:" && words >> v) p.gids.insert(p.gids.begin(), v);
    if (key == "Groups:")
      while (words >> v)
        if (p.gids.empty() || v != p.gids.front()) p.gids.push_back(v);
  }
  p.cmdline = slurp(dir + "/cmdline");
  for (char& ch : p.cmdline)
    if (ch == '\0') ch = ' ';
  while (!p.cmdline.empty() && p.cmdline.back() == ' ') p.cmdline.pop_back();
  return p;
}

uint32_t slurm_step_job(const ProcessInfo& p) {
  static constexpr std::string_view kStepd = "slurmstepd: [";
  if (p.uid != 0 || p.cmdline.compare(0, kStepd.size(), kStepd) != 0) return 0;
  uint64_t job = 0;
  for (size_t i = kStepd.size(); i < p.cmdline.size() && p.cmdline[i] >= '0' && p.cmdline[i] <= '9'; ++i) {
    job = job * 10 + static_cast<uint64_t>(p.cmdline[i] - '0');
    if (job > 0xFFFFFFFFu) return 0;
  }
  return static_cast<uint32_t>(job);
}

uint32_t job_of(uint32_t pid, const std::function<uint32_t(uint32_t)>& registered) {
  // Ancestry is short; the bound stops a loop through a process table read mid-change.
  for (int depth = 0; pid > 1 && depth < 64; ++depth) {
    if (registered)
      if (const uint32_t job = registered(pid)) return job;
    const auto p = process_info(pid);
    if (!p) return 0;
    if (const uint32_t job = slurm_step_job(*p)) return job;
    pid = p->ppid;
  }
  return 0;
}

}  // namespace uet::entity
