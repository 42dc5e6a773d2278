// uet-agent: the placement agent of one side (a container's first process, a node's job step). It starts
// the processes a harness or a case asks for (protocol.hpp) and reports their ends; one event loop, no
// threads, every child in its own session. Started with --listen unix:PATH and/or [address]:port and the
// run's --secret-file; prints {"event":"listening",...} on stdout once every listener is up. It answers
// only a client that proves it holds the run's secret (auth.hpp), on a unix socket only root or its own
// user, and with --lease it ends when the harness holding it goes. Every refusal is logged on stderr. A
// crowd of connections that never authenticate is bounded and timed out (kMaxUnauthenticated,
// kAuthDeadlineS): it cannot keep the harness's connection from its challenge.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <utility>
#include <nlohmann/json.hpp>

#include "uet/agent/auth.hpp"
#include "uet/agent/protocol.hpp"
#include "uet/agent/stream.hpp"

namespace {

using namespace uet::agent;

using Clock = std::chrono::steady_clock;

struct Connection {
  LineBuffer in;
  pid_t child = -1;
  std::string nonce, peer;  // the challenge sent; who it is, for the log
  bool authed = false, lease = false;
  Clock::time_point answer_by;  // until authed: when it is closed unless it has answered the challenge
};

// An accept that fails for want of descriptors or memory leaves the connection queued and the listener
// readable: the listeners rest this long rather than be polled again at once.
constexpr auto kListenerRest = std::chrono::milliseconds(100);

// How many connections may wait to authenticate: kMaxUnauthenticated, and never more than a quarter of the
// descriptors this process may open, so that the rest stay for authenticated connections and the pipes of
// their spawns.
size_t waiting_limit() {
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) != 0 || files.rlim_cur == RLIM_INFINITY) return kMaxUnauthenticated;
  return std::clamp<size_t>(files.rlim_cur / 4, 1, kMaxUnauthenticated);
}

int ms_until(Clock::time_point t) {
  return static_cast<int>(std::max<int64_t>(0, std::chrono::ceil<std::chrono::milliseconds>(t - Clock::now()).count()));
}

struct Options {
  std::string secret;
  std::vector<uid_t> allowed_uids;  // unix peers besides root and the agent's own user
  double lease_wait_s = 0;          // > 0: end unless a lease is taken within it, and when the last ends
};

// Descriptors the child is given are moved above the inputs' numbers, so that no dup2 overwrites another.
int high(int fd) {
  if (fd < 0 || fd > kMaxInputFd) return fd;
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, kMaxInputFd + 1);
  ::close(fd);
  return moved;
}

std::string describe_tcp_peer(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  char host[INET6_ADDRSTRLEN] = "?";
  uint16_t port = 0;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0) {
    if (ss.ss_family == AF_INET6) {
      const auto* a = reinterpret_cast<const sockaddr_in6*>(&ss);
      ::inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
      port = ntohs(a->sin6_port);
    } else if (ss.ss_family == AF_INET) {
      const auto* a = reinterpret_cast<const sockaddr_in*>(&ss);
      ::inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
      port = ntohs(a->sin_port);
    }
  }
  return std::string("[") + host + "]:" + std::to_string(port);
}

// A program named without a slash is looked up on the PATH of the environment it will run with.
std::string resolve(const std::string& program, const std::map<std::string, std::string>& env) {
  if (program.find('/') != std::string::npos) return program;
  const auto it = env.find("PATH");
  const std::string path = it == env.end() ? "/usr/local/bin:/usr/bin:/bin" : it->second;
  for (size_t start = 0; start <= path.size();) {
    const size_t end = std::min(path.find(':', start), path.size());
    const std::string candidate = (end > start ? path.substr(start, end - start) : ".") + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return program;
}

class Agent {
 public:
  Agent(std::vector<int> listeners, int sigfd, Options options)
      : listeners_(std::move(listeners)), sigfd_(sigfd), options_(std::move(options)) {}

  int run() {
    const auto lease_deadline =
        Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(options_.lease_wait_s * 1000));
    while (!stopping_) {
      int wait_ms = -1;
      const auto wake_by = [&](Clock::time_point t) {
        const int ms = ms_until(t);
        wait_ms = wait_ms < 0 ? ms : std::min(wait_ms, ms);
      };
      if (options_.lease_wait_s > 0 && !leased_) {
        if (Clock::now() >= lease_deadline) {
          std::fprintf(stderr, "uet-agent: no lease within %g s: ending\n", options_.lease_wait_s);
          break;
        }
        wake_by(lease_deadline);
      }
      if (const int oldest = oldest_waiting(); oldest >= 0) wake_by(conns_[oldest].answer_by);
      const bool resting = Clock::now() < listeners_rest_until_;
      if (resting) wake_by(listeners_rest_until_);
      std::vector<pollfd> fds;
      fds.push_back({sigfd_, POLLIN, 0});
      if (!resting)
        for (int l : listeners_) fds.push_back({l, POLLIN, 0});
      for (const auto& [fd, c] : conns_) fds.push_back({fd, POLLIN, 0});
      if (::poll(fds.data(), fds.size(), wait_ms) < 0) {
        if (errno == EINTR) continue;
        std::perror("uet-agent: poll");
        return 1;
      }
      for (const pollfd& p : fds) {
        if (!p.revents) continue;
        if (p.fd == sigfd_) on_signal();
        else if (is_listener(p.fd)) on_accept(p.fd);
        else if (conns_.count(p.fd)) on_readable(p.fd);
      }
      close_the_silent();
    }
    shut_down();
    return 0;
  }

 private:
  bool is_listener(int fd) const { return std::find(listeners_.begin(), listeners_.end(), fd) != listeners_.end(); }

  void send(int fd, const Event& e) {
    std::string error;
    write_all(fd, event_line(e), &error);  // a client that went away is noticed when its socket reads EOF
  }

  void send_error(int fd, const std::string& message) {
    Event e;
    e.kind = Event::Kind::error;
    e.message = message;
    send(fd, e);
  }

  // The unauthenticated connection accepted first (-1: none).
  int oldest_waiting() const {
    int oldest = -1;
    for (const auto& [fd, c] : conns_)
      if (!c.authed && (oldest < 0 || c.answer_by < conns_.at(oldest).answer_by)) oldest = fd;
    return oldest;
  }

  size_t waiting() const {
    return static_cast<size_t>(std::count_if(conns_.begin(), conns_.end(), [](const auto& c) { return !c.second.authed; }));
  }

  // Closes the connections that did not answer the challenge in time; says when a crowd has passed.
  void close_the_silent() {
    const auto now = Clock::now();
    for (int fd = oldest_waiting(); fd >= 0 && conns_[fd].answer_by <= now; fd = oldest_waiting())
      refuse(fd, "no answer to the challenge within " + std::to_string(kAuthDeadlineS) + " s");
    if (made_room_ && waiting() < max_waiting_) {
      std::fprintf(stderr, "uet-agent: %zu connections that had not authenticated were closed for newer ones\n",
                   made_room_);
      made_room_ = 0;
    }
  }

  // Closes the oldest connection still to authenticate, for a new one (`why`: what is short); false when
  // there is none. Said once per crowd: a line per connection would let a crowd flood the log.
  bool make_room(const std::string& why) {
    const int oldest = oldest_waiting();
    if (oldest < 0) return false;
    if (made_room_++ == 0)
      std::fprintf(stderr, "uet-agent: %s: the oldest connection waiting to authenticate goes for each new one "
                   "(first %s)\n", why.c_str(), conns_[oldest].peer.c_str());
    send_error(oldest, "refused: too many connections wait to authenticate");
    drop(oldest);
    return true;
  }

  // Takes what the listener has queued, a bounded number at a time so that the other connections are served
  // between; never leaves it readable and untaken (the loop would spin).
  void on_accept(int listener) {
    for (size_t taken = 0; taken < max_waiting_; ++taken) {
      // Non-blocking: a descriptor closed and taken again within one poll round must never block a read.
      const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd >= 0) {
        short_of_files_ = false;
        if (const size_t n = waiting(); n >= max_waiting_)
          make_room(std::to_string(n) + " connections wait to authenticate, the limit");
        take(fd);
        continue;
      }
      if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO) continue;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        if (make_room(std::string("accept: ") + std::strerror(errno))) continue;
        if (!std::exchange(short_of_files_, true))
          std::fprintf(stderr, "uet-agent: accept: %s: new connections wait\n", std::strerror(errno));
        listeners_rest_until_ = Clock::now() + kListenerRest;
      }
      return;  // EAGAIN: none left
    }
  }

  void take(int fd) {
    sockaddr_storage local{};
    socklen_t len = sizeof local;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len);
    std::string peer;
    if (local.ss_family == AF_UNIX) {
      ucred cred{};
      socklen_t clen = sizeof cred;
      if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) != 0) {
        std::fprintf(stderr, "uet-agent: refused a unix peer: SO_PEERCRED: %s\n", std::strerror(errno));
        ::close(fd);
        return;
      }
      peer = "unix peer uid " + std::to_string(cred.uid) + " pid " + std::to_string(cred.pid);
      const bool allowed = cred.uid == 0 || cred.uid == ::geteuid() ||
                           std::find(options_.allowed_uids.begin(), options_.allowed_uids.end(), cred.uid) !=
                               options_.allowed_uids.end();
      if (!allowed) {
        std::fprintf(stderr, "uet-agent: refused %s: not root, not the agent's user\n", peer.c_str());
        ::close(fd);
        return;
      }
    } else {
      peer = "tcp peer " + describe_tcp_peer(fd);
    }
    Connection& c = conns_[fd];
    c.peer = peer;
    c.answer_by = Clock::now() + std::chrono::seconds(kAuthDeadlineS);
    c.nonce = new_nonce();
    Event challenge;
    challenge.kind = Event::Kind::challenge;
    challenge.nonce = c.nonce;
    send(fd, challenge);
  }

  void refuse(int fd, const std::string& why) {
    std::fprintf(stderr, "uet-agent: refused %s: %s\n", conns_[fd].peer.c_str(), why.c_str());
    send_error(fd, "refused: " + why);
    drop(fd);
  }

  void drop(int fd) {
    const auto it = conns_.find(fd);
    if (it == conns_.end()) return;
    if (it->second.lease && --leases_ == 0) {
      std::fprintf(stderr, "uet-agent: the last lease (%s) ended: ending\n", it->second.peer.c_str());
      stopping_ = true;
    }
    // Nothing outlives its asker: a client gone before its process ended takes the process with it.
    if (it->second.child > 0) {
      ::kill(-it->second.child, SIGKILL);
      owner_[it->second.child] = -1;
    }
    conns_.erase(it);
    ::close(fd);
  }

  void on_readable(int fd) {
    char buf[65536];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (n <= 0) return drop(fd);
    Connection& c = conns_[fd];
    if (!c.in.append(buf, static_cast<size_t>(n))) {
      send_error(fd, "a request line longer than " + std::to_string(kMaxLine) + " bytes");
      return drop(fd);
    }
    while (conns_.count(fd)) {
      const auto line = conns_[fd].in.next();
      if (!line) break;
      handle(fd, *line);
    }
  }

  void handle(int fd, const std::string& line) {
    std::string error;
    const auto request = parse_request(line, &error);
    Connection& c = conns_[fd];
    if (!c.authed) {
      // The first line must prove the run's secret; anything else ends the connection unanswered.
      if (!request) return refuse(fd, "a first line that is not a request: " + error);
      if (request->op != Request::Op::auth) return refuse(fd, "a request before authentication");
      if (!same_mac(request->mac, auth_mac(options_.secret, c.nonce))) return refuse(fd, "a wrong answer to the challenge");
      c.authed = true;
      return;
    }
    if (!request) return send_error(fd, "bad request: " + error);
    switch (request->op) {
      case Request::Op::auth:
        return send_error(fd, "auth: this connection is already authenticated");
      case Request::Op::lease:
        if (!c.lease) {
          c.lease = true;
          ++leases_;
          leased_ = true;
        }
        return;
      case Request::Op::hello: {
        Event e;
        e.kind = Event::Kind::hello;
        e.pid = ::getpid();
        char host[256] = {};
        ::gethostname(host, sizeof host - 1);
        e.hostname = host;
        return send(fd, e);
      }
      case Request::Op::kill:
        if (c.child <= 0) return send_error(fd, "kill: no process runs for this connection");
        ::kill(-c.child, request->signal);
        return;
      case Request::Op::spawn:
        if (c.child > 0) return send_error(fd, "spawn: this connection already has a process (one per connection)");
        return spawn(fd, request->spawn);
    }
  }

  void spawn(int fd, const Spawn& s) {
    // Everything the child needs is made here: between fork and exec only async-signal-safe calls.
    const int out = high(s.output.empty() ? ::open("/dev/null", O_WRONLY | O_CLOEXEC)
                                          : ::open(s.output.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
    if (out < 0) return send_error(fd, "spawn: cannot open output " + s.output + ": " + std::strerror(errno));
    const int in = high(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    int report[2];
    if (in < 0 || ::pipe2(report, O_CLOEXEC) != 0) {
      ::close(out);
      if (in >= 0) ::close(in);
      return send_error(fd, std::string("spawn: ") + std::strerror(errno));
    }
    report[0] = high(report[0]);
    report[1] = high(report[1]);
    // Each input is a pipe already holding its bytes (they fit its buffer), its write end closed.
    std::vector<std::pair<int, int>> inputs;  // (read end, the child's descriptor)
    for (const auto& [child_fd, bytes] : s.inputs) {
      int p[2];
      if (::pipe2(p, O_CLOEXEC) != 0) break;
      const bool written = bytes.empty() || ::write(p[1], bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size());
      ::close(p[1]);
      if (!written) {
        ::close(p[0]);
        break;
      }
      inputs.emplace_back(high(p[0]), child_fd);
    }
    if (inputs.size() != s.inputs.size()) {
      for (const auto& [rd, ignored] : inputs) ::close(rd);
      for (int f : {out, in, report[0], report[1]}) ::close(f);
      return send_error(fd, std::string("spawn: an input pipe: ") + std::strerror(errno));
    }
    const std::string program = resolve(s.argv[0], s.env);
    std::vector<std::string> env_strings;
    for (const auto& [k, v] : s.env) env_strings.push_back(k + "=" + v);
    std::vector<char*> envp, argv;
    for (auto& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::vector<std::string> args = s.argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    sigset_t none;
    sigemptyset(&none);
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::setsid();
      ::signal(SIGPIPE, SIG_DFL);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
      int err = 0;
      if (::dup2(in, STDIN_FILENO) < 0 || ::dup2(out, STDOUT_FILENO) < 0 || ::dup2(out, STDERR_FILENO) < 0) err = errno;
      for (const auto& [rd, child_fd] : inputs)
        if (!err && ::dup2(rd, child_fd) < 0) err = errno;
      if (!err && ::chdir(s.cwd.c_str()) != 0) err = errno;
      if (!err) {
        ::execve(program.c_str(), argv.data(), envp.data());
        err = errno;
      }
      (void)!::write(report[1], &err, sizeof err);
      _exit(127);
    }
    ::close(out);
    ::close(in);
    ::close(report[1]);
    for (const auto& [rd, ignored] : inputs) ::close(rd);
    if (pid < 0) {
      ::close(report[0]);
      return send_error(fd, std::string("spawn: fork: ") + std::strerror(errno));
    }
    int err = 0;
    ssize_t got;
    do got = ::read(report[0], &err, sizeof err);  // EOF: the exec succeeded (the pipe closed on exec)
    while (got < 0 && errno == EINTR);
    ::close(report[0]);
    if (got == sizeof err) {
      ::waitpid(pid, nullptr, 0);
      return send_error(fd, "spawn: cannot start " + program + " in " + s.cwd + ": " + std::strerror(err));
    }
    conns_[fd].child = pid;
    owner_[pid] = fd;
    Event e;
    e.kind = Event::Kind::started;
    e.pid = pid;
    send(fd, e);
  }

  void on_signal() {
    signalfd_siginfo si;
    while (::read(sigfd_, &si, sizeof si) == sizeof si) {
      if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT || si.ssi_signo == SIGHUP) stopping_ = true;
    }
    reap();
  }

  // Reaps every child that ended: the agent's own, and those it adopted as subreaper.
  void reap() {
    for (;;) {
      int status = 0;
      rusage usage{};
      const pid_t pid = ::wait4(-1, &status, WNOHANG, &usage);
      if (pid <= 0) return;
      const auto it = owner_.find(pid);
      if (it == owner_.end()) continue;
      const int fd = it->second;
      owner_.erase(it);
      if (fd < 0 || !conns_.count(fd)) continue;
      Event e;
      e.kind = Event::Kind::exited;
      e.status = status;
      e.cpu_seconds = usage.ru_utime.tv_sec + usage.ru_stime.tv_sec + (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
      conns_[fd].child = -1;
      send(fd, e);
      drop(fd);  // one process per connection: its end is the connection's end
    }
  }

  void shut_down() {
    for (const auto& [pid, fd] : owner_) ::kill(-pid, SIGKILL);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!owner_.empty() && std::chrono::steady_clock::now() < deadline) {
      pollfd p{sigfd_, POLLIN, 0};
      ::poll(&p, 1, 100);
      on_signal();
    }
    for (auto& [fd, c] : conns_) ::close(fd);
  }

  std::vector<int> listeners_;
  int sigfd_;
  std::map<int, Connection> conns_;
  std::map<pid_t, int> owner_;  // child -> its connection (-1: the connection is gone)
  bool stopping_ = false;
  Options options_;
  int leases_ = 0;       // connections holding a lease now
  bool leased_ = false;  // a lease was ever taken
  const size_t max_waiting_ = waiting_limit();
  size_t made_room_ = 0;  // unauthenticated connections closed for newer ones since the limit was reached
  Clock::time_point listeners_rest_until_{};
  bool short_of_files_ = false;  // accept failed for want of descriptors or memory, said once until one succeeds
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"uet-agent: starts processes on this side of a placement for the harness and the cases"};
  std::vector<std::string> specs;
  std::string secret_file;
  Options options;
  app.add_option("--listen", specs, "unix:PATH or [address]:port (port 0: any); repeatable")->required();
  app.add_option("--secret-file", secret_file,
                 "the run's secret (a 0600 file): a client must prove it holds it on every connection")
      ->required();
  app.add_option("--allow-uid", options.allowed_uids, "a user whose unix connections are taken besides root and "
                                                      "the agent's own; repeatable");
  app.add_option("--lease", options.lease_wait_s,
                 "end unless a client takes a lease within SECONDS, and when the last lease connection closes")
      ->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  {
    std::string error;
    auto secret = read_secret_file(secret_file, &error);
    if (!secret) {
      std::fprintf(stderr, "uet-agent: %s\n", error.c_str());
      return 2;
    }
    options.secret = std::move(*secret);
  }

  // The processes a case starts may leave children when they die: the agent adopts and reaps them.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  ::signal(SIGPIPE, SIG_IGN);
  sigset_t mask;
  sigemptyset(&mask);
  for (int s : {SIGCHLD, SIGTERM, SIGINT, SIGHUP}) sigaddset(&mask, s);
  ::sigprocmask(SIG_BLOCK, &mask, nullptr);
  const int sigfd = ::signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sigfd < 0) {
    std::perror("uet-agent: signalfd");
    return 1;
  }
  std::vector<int> listeners;
  nlohmann::json bound = nlohmann::json::array();
  for (const auto& spec : specs) {
    std::string where, error;
    const int fd = listen_on(spec, &where, &error);
    if (fd < 0) {
      std::fprintf(stderr, "uet-agent: %s\n", error.c_str());
      return 2;
    }
    // Non-blocking: a connection reset between poll and accept must not block the loop in accept.
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    listeners.push_back(fd);
    bound.push_back(where);
  }
  std::printf("%s\n", nlohmann::json{{"event", "listening"}, {"listen", bound}, {"pid", ::getpid()}}.dump().c_str());
  std::fflush(stdout);
  return Agent(std::move(listeners), sigfd, std::move(options)).run();
}
