#include "entity_commands.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>

extern char** environ;

namespace uet::cases {
namespace {

constexpr int kCommandDeadlineMs = 15000;

std::vector<std::string> filled(const std::vector<std::string>& argv_template, std::map<std::string, std::string> values) {
  values.emplace("pid", std::to_string(getpid()));
  std::vector<std::string> args;
  for (std::string a : argv_template) {
    for (const auto& [key, value] : values)
      for (size_t at; (at = a.find("{" + key + "}")) != std::string::npos;) a.replace(at, key.size() + 2, value);
    args.push_back(std::move(a));
  }
  return args;
}

}  // namespace

int run_command(const std::vector<std::string>& argv_template, const std::map<std::string, std::string>& values,
                std::string* output) {
  std::vector<std::string> args = filled(argv_template, values);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, out[1], 2);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  if (rc != 0) {
    close(out[0]);
    *output = std::string("cannot run ") + args[0] + ": " + std::strerror(rc);
    return -1;
  }
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(kCommandDeadlineMs);
  char buf[512];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
    pollfd p{out[0], POLLIN, 0};
    if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) <= 0) {
      kill(pid, SIGKILL);
      break;
    }
    const ssize_t n = read(out[0], buf, sizeof buf);
    if (n <= 0) break;
    output->append(buf, static_cast<size_t>(n));
  }
  close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string joined(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

pid_t start_command(const std::vector<std::string>& argv_template, const std::map<std::string, std::string>& values) {
  std::vector<std::string> args = filled(argv_template, values);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0 ? pid : -1;
}

ScopedEnvironment::ScopedEnvironment(const Env& env, const std::map<std::string, std::string>& values) {
  std::map<std::string, std::string> set;
  std::vector<std::string> unset;
  split_env(env, &set, &unset);
  for (auto& [k, v] : set) v = filled({v}, values).front();
  const auto keep = [this](const std::string& k) {
    const char* v = std::getenv(k.c_str());
    before_.emplace(k, v ? std::optional<std::string>(v) : std::nullopt);
  };
  for (const auto& [k, v] : set) keep(k), setenv(k.c_str(), v.c_str(), 1);
  for (const auto& k : unset) keep(k), unsetenv(k.c_str());
}

ScopedEnvironment::~ScopedEnvironment() {
  for (const auto& [k, v] : before_) v ? setenv(k.c_str(), v->c_str(), 1) : unsetenv(k.c_str());
}

std::vector<nlohmann::json> control_trace(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  // The entity writes each line whole; a line being written as we read is not yet a record.
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_discarded()) out.push_back(std::move(j));
  }
  return out;
}

}  // namespace uet::cases
