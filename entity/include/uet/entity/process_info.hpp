// What the kernel says of a process (/proc): its parent, owner, groups, start time and command line, and
// the workload-manager job it runs in. The entity authenticates a caller by these, never by its words.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace uet::entity {

struct ProcessInfo {
  uint32_t pid = 0;
  uint32_t ppid = 0;
  uint32_t uid = 0;                 // real uid
  std::vector<uint32_t> gids;       // real gid, then the supplementary groups
  uint64_t start = 0;               // start time in clock ticks since boot: a reused pid has another
  std::string cmdline;              // arguments joined by spaces
};

// nullopt when the process does not exist (or /proc cannot be read).
std::optional<ProcessInfo> process_info(uint32_t pid);

// The start time of process `pid` (field 22 of /proc/PID/stat, clock ticks since boot): with the pid, it names
// one process over time. 0 when there is no such process.
uint64_t start_time(uint32_t pid);

// The Slurm job whose step daemon this process is: a root-owned "slurmstepd: [JOB.STEP]"; else 0.
uint32_t slurm_step_job(const ProcessInfo& p);

// The job process `pid` runs in: the nearest ancestor (itself included) that `registered` names (the
// entity's JOB_START pids) or that is a Slurm step daemon; 0 when none.
uint32_t job_of(uint32_t pid, const std::function<uint32_t(uint32_t)>& registered = {});

}  // namespace uet::entity
