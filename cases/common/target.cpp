#include "target.hpp"

#include <poll.h>
#include <rdma/fi_tagged.h>

#include <cstdio>
#include <map>
#include <sstream>

#include "uet/wire/wire_gen.hpp"

namespace uet::cases {

namespace {

constexpr int kIdleLimitMs = 120000;  // a target nobody talks to for this long gives up
// How often an idle target drives its provider: a provider that progresses only when called (softuet
// without its FEP thread) answers no sooner, and its peer retransmits meanwhile.
constexpr int kProgressEveryMs = 1;

std::vector<std::string> split(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

uint64_t num(const std::string& s) { return std::stoull(s, nullptr, 0); }

// The target role: one endpoint, commands in, observations out.
class TargetServer {
 public:
  explicit TargetServer(Channel& ch) : ch_(ch) {}

  int run() {
    std::string msg;
    int idle_ms = 0;
    while (idle_ms < kIdleLimitMs) {
      pollfd pfd{ch_.fd(), POLLIN, 0};
      if (::poll(&pfd, 1, kProgressEveryMs) <= 0) {
        // Progress for providers that need the application to drive it; what it reads stays for the
        // case's next "completion" (a remote CQ data entry has no context to wait for).
        if (ep_.cq) ep_.progress();
        idle_ms += kProgressEveryMs;
        continue;
      }
      idle_ms = 0;
      if (!ch_.recv(&msg, 1000)) return 0;  // the case closed the channel: done
      if (!ch_.send(handle(split(msg)))) return 1;
    }
    std::fprintf(stderr, "uet cases target: no request for %d ms, giving up\n", kIdleLimitMs);
    return 1;
  }

 private:
  struct Recv {
    std::vector<uint8_t> buf;
  };

  static std::string refused(long rc, const std::string& what) { return "err " + std::to_string(rc) + " " + what; }

  std::string handle(const std::vector<std::string>& t) {
    if (t.empty()) return refused(-FI_EINVAL, "empty request");
    try {
      const std::string& op = t[0];
      if (op == "open") return open(t);
      if (op == "insert") {
        const fi_addr_t a = ep_.insert(from_hex(t[1]), t.size() > 2 ? num(t[2]) : FI_ADDR_NOTAVAIL);
        return a == FI_ADDR_NOTAVAIL ? refused(-FI_EINVAL, "fi_av_insert") : "ok " + std::to_string(a);
      }
      if (op == "authkey") {
        const fi_addr_t h = ep_.insert_auth_key(static_cast<uint32_t>(num(t[1])));
        return h == FI_ADDR_NOTAVAIL ? refused(-FI_EINVAL, "fi_av_insert_auth_key") : "ok " + std::to_string(h);
      }
      if (op == "endpoint") {
        fid_ep* another = nullptr;
        if (int rc = ep_.open_another(static_cast<uint32_t>(num(t[1])), &another)) return refused(rc, ep_.failed);
        const auto n = Endpoint::name_of(another);
        return "ok " + to_hex(n.data(), n.size());
      }
      if (op == "mr") return mr(t);
      if (op == "mrread") {
        const auto& b = mr_bufs_.at(static_cast<int>(num(t[1])));
        const size_t off = num(t[2]), len = num(t[3]);
        if (off + len > b.size()) return refused(-FI_EINVAL, "beyond the MR");
        return "ok " + to_hex(b.data() + off, len);
      }
      if (op == "mrwrite") {
        auto& b = mr_bufs_.at(static_cast<int>(num(t[1])));
        const auto bytes = from_hex(t[3]);
        const size_t off = num(t[2]);
        if (off + bytes.size() > b.size()) return refused(-FI_EINVAL, "beyond the MR");
        std::copy(bytes.begin(), bytes.end(), b.begin() + static_cast<long>(off));
        return "ok";
      }
      if (op == "recv") return recv(t);
      if (op == "completion") return completion(t);
      if (op == "send") return send(t);
    } catch (const std::exception& e) {
      return refused(-FI_EINVAL, std::string("bad request: ") + e.what());
    }
    return refused(-FI_ENOSYS, "unknown request " + t[0]);
  }

  std::string open(const std::vector<std::string>& t) {
    EndpointSpec spec;
    spec.type = t[1] == "dgram" ? FI_EP_DGRAM : FI_EP_RDM;
    spec.caps = num(t[2]);
    spec.method = t[3] == "direct" ? JobMethod::direct : t[3] == "av" ? JobMethod::av : JobMethod::indirect;
    spec.job = static_cast<uint32_t>(num(t[4]));
    if (int rc = ep_.open(spec)) return refused(rc, ep_.failed);
    const auto n = ep_.name();
    return "ok " + to_hex(n.data(), n.size());
  }

  std::string mr(const std::vector<std::string>& t) {
    const int id = static_cast<int>(num(t[1]));
    auto& buf = mr_bufs_[id];
    buf.assign(num(t[2]), static_cast<uint8_t>(num(t[3])));
    std::string auth = t[4];
    uint64_t requested = ep_.mr_prov_key() ? 0 : 0x100 + static_cast<uint64_t>(id);
    // "optimized+<auth>": the caller asks for an OPTIMIZED key (Table 2-13), its RKEY the MR id;
    // "idempotent+<auth>": for an IDEMPOTENT_SAFE key.
    for (bool more = true; more;) {
      more = false;
      if (auth.rfind("optimized+", 0) == 0) {
        auth = auth.substr(10);
        requested = (requested & (uint64_t{1} << uet::wire::k_mr_key_idempotent_safe_bit)) |
                    (uint64_t{1} << uet::wire::k_mr_key_optimized_bit) | static_cast<uint64_t>(id);
        more = true;
      }
      if (auth.rfind("idempotent+", 0) == 0) {
        auth = auth.substr(11);
        requested |= uint64_t{1} << uet::wire::k_mr_key_idempotent_safe_bit;
        more = true;
      }
    }
    fid_mr* mr = nullptr;
    int rc;
    if (auth == "any") {
      rc = ep_.register_mr(buf.data(), buf.size(), requested, &mr);
    } else if (auth.rfind("direct:", 0) == 0) {
      const uint32_t job = static_cast<uint32_t>(num(auth.substr(7)));
      const uint8_t key[3] = {static_cast<uint8_t>(job), static_cast<uint8_t>(job >> 8), static_cast<uint8_t>(job >> 16)};
      rc = ep_.register_mr(buf.data(), buf.size(), requested, &mr, key, sizeof key);
    } else if (auth.rfind("av:", 0) == 0) {
      fi_mr_auth_key k{};
      k.av = ep_.av;
      k.src_addr = num(auth.substr(3));
      rc = ep_.register_mr(buf.data(), buf.size(), requested, &mr, &k, FI_AV_AUTH_KEY);
    } else {
      return refused(-FI_EINVAL, "mr auth " + auth);
    }
    if (rc) return refused(rc, "MR registration");
    return "ok " + std::to_string(fi_mr_key(mr)) + " " + std::to_string(ep_.remote_addr(buf.data(), 0));
  }

  std::string recv(const std::vector<std::string>& t) {
    const int id = static_cast<int>(num(t[1]));
    Recv& r = recvs_[id];
    r.buf.assign(num(t[2]), 0);
    const bool tagged = num(t[3]);
    const uint64_t tag = num(t[4]), ignore = num(t[5]);
    const fi_addr_t src = num(t[6]), auth_key = num(t[7]);
    iovec iov{r.buf.data(), r.buf.size()};
    ssize_t rc;
    if (auth_key != FI_ADDR_NOTAVAIL) {
      // AV method: src_addr is the auth key handle and FI_AUTH_KEY says so (spec 2.2.4.3.1-c).
      if (tagged) {
        fi_msg_tagged m{};
        m.msg_iov = &iov;
        m.iov_count = 1;
        m.addr = auth_key;
        m.tag = tag;
        m.ignore = ignore;
        m.context = &r;
        rc = fi_trecvmsg(ep_.ep, &m, FI_AUTH_KEY);
      } else {
        fi_msg m{};
        m.msg_iov = &iov;
        m.iov_count = 1;
        m.addr = auth_key;
        m.context = &r;
        rc = fi_recvmsg(ep_.ep, &m, FI_AUTH_KEY);
      }
    } else if (tagged) {
      rc = fi_trecv(ep_.ep, r.buf.data(), r.buf.size(), nullptr, src, tag, ignore, &r);
    } else {
      rc = fi_recv(ep_.ep, r.buf.data(), r.buf.size(), nullptr, src, &r);
    }
    return rc ? refused(rc, "posting the receive") : "ok";
  }

  std::string completion(const std::vector<std::string>& t) {
    // Id -1: a completion without a posted buffer (remote CQ data of an RMA write: context NULL).
    const int id = static_cast<int>(std::stol(t[1]));
    Recv& r = id == -1 ? no_buffer_ : recvs_.at(id);
    const Outcome o = ep_.wait(id == -1 ? nullptr : &r, static_cast<int>(num(t[2])));
    if (o.state == Outcome::timed_out) return "ok none";
    if (o.state == Outcome::failed)
      return "ok failed " + std::to_string(o.error.err) + " " + std::to_string(o.error.prov_errno);
    const auto& e = o.entry;
    return "ok done " + std::to_string(e.len) + " " + std::to_string(e.flags) + " " + std::to_string(e.data) + " " +
           std::to_string(e.tag) + " " + to_hex(r.buf.data(), std::min<size_t>(e.len, r.buf.size())) + "-";
  }

  // send <dest> <len> <fill> <tagged> <tag> <timeout_ms>: the target as an initiator (e.g. so that the
  // case sees the JobID the target's configuration gives it on the wire).
  std::string send(const std::vector<std::string>& t) {
    const fi_addr_t dest = num(t[1]);
    const std::vector<uint8_t> data(num(t[2]), static_cast<uint8_t>(num(t[3])));
    const bool tagged = num(t[4]);
    const uint64_t tag = num(t[5]);
    int ctx = 0;
    const ssize_t rc = ep_.post([&] {
      return tagged ? fi_tsend(ep_.ep, data.data(), data.size(), nullptr, dest, tag, &ctx)
                    : fi_send(ep_.ep, data.data(), data.size(), nullptr, dest, &ctx);
    });
    if (rc) return refused(rc, tagged ? "fi_tsend" : "fi_send");
    const Outcome o = ep_.wait(&ctx, static_cast<int>(num(t[6])));
    if (o.state == Outcome::timed_out) return "ok none";
    if (o.state == Outcome::failed)
      return "ok failed " + std::to_string(o.error.err) + " " + std::to_string(o.error.prov_errno);
    return "ok done " + std::to_string(data.size());
  }

  Channel& ch_;
  Endpoint ep_;
  std::map<int, std::vector<uint8_t>> mr_bufs_;
  std::map<int, Recv> recvs_;
  Recv no_buffer_;
};

int target_role(Channel& ch) { return TargetServer(ch).run(); }

const bool registered = register_peer_role("target", target_role);

}  // namespace

bool Target::call(const std::string& request, std::vector<std::string>* reply, int timeout_ms) {
  observing(Side::target, "api: what the target observed or did");
  std::string answer;
  if (!peer_.channel().send(request) || !peer_.channel().recv(&answer, timeout_ms)) {
    error_ = "target: " + request.substr(0, request.find(' ')) + ": " + peer_.channel().error();
    return false;
  }
  *reply = split(answer);
  if (reply->empty() || (*reply)[0] != "ok") {
    error_ = "target refused '" + request.substr(0, 60) + "': " + answer;
    return false;
  }
  reply->erase(reply->begin());
  return true;
}

bool Target::start(const EndpointSpec& spec, const std::map<std::string, std::string>& env,
                   const std::vector<std::string>& unset_env, const std::function<bool(pid_t, std::string*)>& before_open) {
  (void)registered;
  if (!peer_.start("target", env, unset_env)) return error_ = "starting the target: " + peer_.error(), false;
  if (before_open) {
    std::string why;
    if (!before_open(peer_.pid(), &why)) return error_ = "before the target opened its endpoint: " + why, false;
  }
  const char* method = spec.method == JobMethod::direct ? "direct" : spec.method == JobMethod::av ? "av" : "indirect";
  std::vector<std::string> r;
  if (!call(std::string("open ") + (spec.type == FI_EP_DGRAM ? "dgram" : "rdm") + " " + std::to_string(spec.caps) +
                " " + method + " " + std::to_string(spec.job),
            &r, 30000))
    return false;
  name_ = from_hex(r.at(0));
  return true;
}

fi_addr_t Target::insert(const std::vector<uint8_t>& name, fi_addr_t auth_key) {
  std::vector<std::string> r;
  std::string req = "insert " + to_hex(name.data(), name.size());
  if (auth_key != FI_ADDR_NOTAVAIL) req += " " + std::to_string(auth_key);
  return call(req, &r) ? num(r.at(0)) : FI_ADDR_NOTAVAIL;
}

std::vector<uint8_t> Target::open_another_endpoint(uint32_t job) {
  std::vector<std::string> r;
  return call("endpoint " + std::to_string(job), &r) ? from_hex(r.at(0)) : std::vector<uint8_t>{};
}

fi_addr_t Target::insert_auth_key(uint32_t job) {
  std::vector<std::string> r;
  return call("authkey " + std::to_string(job), &r) ? num(r.at(0)) : FI_ADDR_NOTAVAIL;
}

bool Target::register_mr(int id, size_t len, uint8_t fill, const std::string& auth, RemoteMr* out) {
  std::vector<std::string> r;
  if (!call("mr " + std::to_string(id) + " " + std::to_string(len) + " " + std::to_string(fill) + " " + auth, &r))
    return false;
  out->key = num(r.at(0));
  out->base = num(r.at(1));
  return true;
}

std::vector<uint8_t> Target::read_mr(int id, size_t off, size_t len) {
  std::vector<std::string> r;
  if (!call("mrread " + std::to_string(id) + " " + std::to_string(off) + " " + std::to_string(len), &r)) return {};
  return from_hex(r.empty() ? "" : r[0]);
}

bool Target::write_mr(int id, size_t off, const std::vector<uint8_t>& bytes) {
  std::vector<std::string> r;
  return call("mrwrite " + std::to_string(id) + " " + std::to_string(off) + " " + to_hex(bytes.data(), bytes.size()), &r);
}

int Target::post_recv(int id, size_t len, bool tagged, uint64_t tag, uint64_t ignore, fi_addr_t src, fi_addr_t auth_key) {
  std::vector<std::string> r;
  std::string answer;
  const std::string req = "recv " + std::to_string(id) + " " + std::to_string(len) + " " + (tagged ? "1" : "0") + " " +
                          std::to_string(tag) + " " + std::to_string(ignore) + " " + std::to_string(src) + " " +
                          std::to_string(auth_key);
  if (call(req, &r)) return 0;
  // "err <rc> ...": the provider refused the post; anything else is a broken target.
  const auto at = error_.find(": err ");
  return at == std::string::npos ? -FI_EOTHER : static_cast<int>(std::stol(error_.substr(at + 6)));
}

namespace {

// "done <len> [<flags> <data> <tag> <hex>-]" or "failed <err> <prov_errno>" or "none".
RecvResult result_of(const std::vector<std::string>& r) {
  RecvResult out;
  if (r.empty()) return out;
  if (r[0] == "failed") {
    out.state = RecvResult::failed;
    out.err = static_cast<int>(num(r.at(1)));
    out.prov_errno = static_cast<int>(std::stol(r.at(2)));
  } else if (r[0] == "done") {
    out.state = RecvResult::completed;
    out.len = num(r.at(1));
    if (r.size() > 2) {
      out.flags = num(r.at(2));
      out.data = num(r.at(3));
      out.tag = num(r.at(4));
      std::string hex = r.at(5);
      hex.pop_back();  // the "-" that keeps an empty payload a token
      out.bytes = from_hex(hex);
    }
  }
  return out;
}

}  // namespace

RecvResult Target::completion(int id, int timeout_ms) {
  std::vector<std::string> r;
  if (!call("completion " + std::to_string(id) + " " + std::to_string(timeout_ms), &r, timeout_ms + 15000)) return {};
  return result_of(r);
}

RecvResult Target::send(fi_addr_t dest, size_t len, uint8_t fill, bool tagged, uint64_t tag, int timeout_ms) {
  std::vector<std::string> r;
  const std::string req = "send " + std::to_string(dest) + " " + std::to_string(len) + " " + std::to_string(fill) +
                          " " + (tagged ? "1" : "0") + " " + std::to_string(tag) + " " + std::to_string(timeout_ms);
  if (!call(req, &r, timeout_ms + 15000)) return {};
  return result_of(r);
}

int Target::finish() { return peer_.finish(); }

}  // namespace uet::cases
