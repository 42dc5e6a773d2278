#include "target.hpp"
#include "liveness.hpp"

#include "address_translation.hpp"
#include "capture.hpp"

#include <nlohmann/json.hpp>
#include <poll.h>
#include <rdma/fi_tagged.h>

#include <cstdio>
#include <map>

#include "uet/wire/wire_gen.hpp"

// The target protocol: one JSON object per channel message each way. A request names its operation ("op")
// and its arguments by name; a reply is {"ok": true, ...results} or {"ok": false, "rc": <negative fi_*
// errno>, "call": <the call that refused, or what was wrong with the request>}: the initiator reads the
// errno as a number, never out of a sentence.
namespace uet::cases {

namespace {

using Json = nlohmann::json;

constexpr int kIdleLimitMs = 120000;  // a target nobody talks to for this long gives up
// How often an idle target drives its provider: a provider that progresses only when called (softuet
// without its FEP thread) answers no sooner, and its peer retransmits meanwhile.
constexpr int kProgressEveryMs = 1;

Json refused(long rc, const std::string& call) { return {{"ok", false}, {"rc", rc}, {"call", call}}; }
Json done(Json results = Json::object()) {
  results["ok"] = true;
  return results;
}

// A completion as the protocol carries it: {"state": "none"|"failed"|"done", ...}.
Json outcome_json(const Outcome& o, const uint8_t* buf, size_t buf_len) {
  if (o.state == Outcome::timed_out) {
    // The target's own evidence that the host starved its wait: its PID may not be the initiator's to read.
    if (!o.host_busy.empty()) return {{"state", "none"}, {"host_busy", o.host_busy}};
    return {{"state", "none"}};
  }
  if (o.state == Outcome::failed) {
    // A truncated receive (FI_ETRUNC) still placed error.len bytes: a case checks they are the message's.
    Json j = {{"state", "failed"}, {"err", o.error.err}, {"prov_errno", o.error.prov_errno}, {"len", o.error.len}};
    if (buf) j["bytes"] = to_hex(buf, std::min<size_t>(o.error.len, buf_len));
    return j;
  }
  const auto& e = o.entry;
  Json j = {{"state", "done"}, {"len", e.len}, {"flags", e.flags}, {"data", e.data}, {"tag", e.tag}};
  if (buf) j["bytes"] = to_hex(buf, std::min<size_t>(e.len, buf_len));
  return j;
}

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
      if (!ch_.send(handle(Json::parse(msg, nullptr, false)).dump())) return 1;
    }
    std::fprintf(stderr, "uet cases target: no request for %d ms, giving up\n", kIdleLimitMs);
    return 1;
  }

 private:
  struct Recv {
    std::vector<uint8_t> buf;
  };

  Json handle(const Json& req) {
    if (!req.is_object() || !req.contains("op")) return refused(-FI_EINVAL, "a request that is not {\"op\": ...}");
    try {
      const std::string op = req.at("op").get<std::string>();
      if (op == "open") return open(req);
      if (op == "insert") {
        std::vector<uint8_t> name;
        if (req.contains("fields")) {
          // An address of a provider that lays out fi_getname otherwise: encoded here, in this provider's layout.
          std::string why;
          const auto mine = encode_address(address_fields_from_json(req["fields"]), manifest(), ep_.name(), &why);
          if (!mine) return refused(-FI_EINVAL, "encoding the initiator's address in the target's layout: " + why);
          name = *mine;
        } else {
          name = from_hex(req.at("name").get<std::string>());
        }
        const fi_addr_t a = ep_.insert(name, req.value("auth_key", FI_ADDR_NOTAVAIL));
        return a == FI_ADDR_NOTAVAIL ? refused(-FI_EINVAL, "fi_av_insert") : done({{"fi_addr", a}});
      }
      if (op == "authkey") {
        const fi_addr_t h = ep_.insert_auth_key(req.at("job").get<uint32_t>());
        return h == FI_ADDR_NOTAVAIL ? refused(-FI_EINVAL, "fi_av_insert_auth_key") : done({{"handle", h}});
      }
      if (op == "endpoint") {
        fid_ep* another = nullptr;
        if (int rc = ep_.open_another(req.at("job").get<uint32_t>(), &another)) return refused(rc, ep_.failed);
        const auto n = Endpoint::name_of(another);
        return done({{"name", to_hex(n.data(), n.size())}});
      }
      if (op == "mr") return mr(req);
      if (op == "mrread") {
        const auto& b = mr_bufs_.at(req.at("id").get<int>());
        const size_t off = req.at("offset").get<size_t>(), len = req.at("len").get<size_t>();
        if (off > b.size() || len > b.size() - off) return refused(-FI_EINVAL, "a read beyond the MR");
        return done({{"bytes", to_hex(b.data() + off, len)}});
      }
      if (op == "mrwrite") {
        auto& b = mr_bufs_.at(req.at("id").get<int>());
        const auto bytes = from_hex(req.at("bytes").get<std::string>());
        const size_t off = req.at("offset").get<size_t>();
        if (off > b.size() || bytes.size() > b.size() - off) return refused(-FI_EINVAL, "a write beyond the MR");
        std::copy(bytes.begin(), bytes.end(), b.begin() + static_cast<long>(off));
        return done();
      }
      if (op == "recv") return recv(req);
      if (op == "completion") return completion(req);
      if (op == "send") return send(req);
      return refused(-FI_ENOSYS, "an unknown request '" + op + "'");
    } catch (const std::exception& e) {  // a missing or mistyped argument, an unknown id
      return refused(-FI_EINVAL, std::string("a bad request: ") + e.what());
    }
  }

  Json open(const Json& req) {
    EndpointSpec spec;
    spec.type = req.at("ep_type").get<std::string>() == "dgram" ? FI_EP_DGRAM : FI_EP_RDM;
    spec.caps = req.at("caps").get<uint64_t>();
    const std::string method = req.at("job_method").get<std::string>();
    spec.method = method == "direct" ? JobMethod::direct : method == "av" ? JobMethod::av : JobMethod::indirect;
    spec.job = req.at("job").get<uint32_t>();
    if (int rc = ep_.open(spec)) return refused(rc, ep_.failed);
    const auto n = ep_.name();
    return done({{"name", to_hex(n.data(), n.size())}});
  }

  Json mr(const Json& req) {
    const int id = req.at("id").get<int>();
    const size_t len = req.at("len").get<size_t>();
    if (len > kMaxSettingBytes) return refused(-FI_EINVAL, "an MR of " + std::to_string(len) + " bytes");
    auto& buf = mr_bufs_[id];
    buf.assign(len, req.at("fill").get<uint8_t>());
    std::string auth = req.at("auth").get<std::string>();
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
      const uint32_t job = static_cast<uint32_t>(std::stoul(auth.substr(7), nullptr, 0));
      const uint8_t key[3] = {static_cast<uint8_t>(job), static_cast<uint8_t>(job >> 8), static_cast<uint8_t>(job >> 16)};
      rc = ep_.register_mr(buf.data(), buf.size(), requested, &mr, key, sizeof key);
    } else if (auth.rfind("av:", 0) == 0) {
      fi_mr_auth_key k{};
      k.av = ep_.av;
      k.src_addr = std::stoull(auth.substr(3), nullptr, 0);
      rc = ep_.register_mr(buf.data(), buf.size(), requested, &mr, &k, FI_AV_AUTH_KEY);
    } else {
      return refused(-FI_EINVAL, "mr auth " + auth);
    }
    if (rc) return refused(rc, "MR registration");
    return done({{"key", fi_mr_key(mr)}, {"base", ep_.remote_addr(buf.data(), 0)}});
  }

  Json recv(const Json& req) {
    const int id = req.at("id").get<int>();
    const size_t len = req.at("len").get<size_t>();
    if (len > kMaxSettingBytes) return refused(-FI_EINVAL, "a receive of " + std::to_string(len) + " bytes");
    Recv& r = recvs_[id];
    r.buf.assign(len, 0);
    const bool tagged = req.at("tagged").get<bool>();
    const uint64_t tag = req.at("tag").get<uint64_t>(), ignore = req.at("ignore").get<uint64_t>();
    const fi_addr_t src = req.at("src").get<uint64_t>(), auth_key = req.at("auth_key").get<uint64_t>();
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
    return rc ? refused(rc, tagged ? "fi_trecv" : "fi_recv") : done();
  }

  Json completion(const Json& req) {
    // Id -1: a completion without a posted buffer (remote CQ data of an RMA write: context NULL).
    const int id = req.at("id").get<int>();
    Recv& r = id == -1 ? no_buffer_ : recvs_.at(id);
    const Outcome o = ep_.wait(id == -1 ? nullptr : &r, req.at("timeout_ms").get<int>());
    return done({{"outcome", outcome_json(o, r.buf.data(), r.buf.size())}});
  }

  // The target as an initiator (e.g. so that the case sees the JobID the target's configuration gives it on
  // the wire): sends and waits for its completion.
  Json send(const Json& req) {
    const fi_addr_t dest = req.at("dest").get<uint64_t>();
    const size_t len = req.at("len").get<size_t>();
    if (len > kMaxSettingBytes) return refused(-FI_EINVAL, "a send of " + std::to_string(len) + " bytes");
    const std::vector<uint8_t> data(len, req.at("fill").get<uint8_t>());
    const bool tagged = req.at("tagged").get<bool>();
    const uint64_t tag = req.at("tag").get<uint64_t>();
    int ctx = 0;
    const ssize_t rc = ep_.post([&] {
      return tagged ? fi_tsend(ep_.ep, data.data(), data.size(), nullptr, dest, tag, &ctx)
                    : fi_send(ep_.ep, data.data(), data.size(), nullptr, dest, &ctx);
    });
    if (rc) return refused(rc, tagged ? "fi_tsend" : "fi_send");
    const Outcome o = ep_.wait(&ctx, req.at("timeout_ms").get<int>());
    return done({{"outcome", outcome_json(o, nullptr, 0)}});
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

bool Target::call(const Json& request, Json* reply, int timeout_ms) {
  observing(Side::target, kTargetObservedBasis);
  const std::string op = request.value("op", "?");
  std::string answer;
  if (!peer_.channel().send(request.dump()) || !peer_.channel().recv(&answer, timeout_ms)) {
    error_ = "target: " + op + ": " + peer_.channel().error();
    last_rc_ = -FI_EOTHER;
    return false;
  }
  *reply = Json::parse(answer, nullptr, false);
  if (!reply->is_object() || !reply->contains("ok")) {
    error_ = "target: " + op + ": a reply that is not the protocol's: " + answer.substr(0, 200);
    last_rc_ = -FI_EOTHER;
    return false;
  }
  if (!(*reply)["ok"].get<bool>()) {
    last_rc_ = reply->value("rc", -FI_EOTHER);
    error_ = "target refused " + op + ": " + reply->value("call", std::string("?")) + " returned " +
             std::to_string(last_rc_) + " (" + fi_strerror(static_cast<int>(-last_rc_)) + ")";
    evidence_refusal(Side::target, reply->value("call", std::string("?")), last_rc_);
    return false;
  }
  no_refusal();
  last_rc_ = 0;
  return true;
}

bool Target::start(const EndpointSpec& spec, const std::map<std::string, std::string>& env,
                   const std::vector<std::string>& unset_env, const std::function<bool(pid_t, std::string*)>& before_open) {
  (void)registered;
  const TargetPlace where = place_ ? *place_ : cell_plan().target_place;
  if (!peer_.start("target", where, env, unset_env)) return error_ = "starting the target: " + peer_.error(), false;
  if (before_open) {
    std::string why;
    if (!before_open(peer_.pid(), &why)) return error_ = "before the target opened its endpoint: " + why, false;
  }
  const char* method = spec.method == JobMethod::direct ? "direct" : spec.method == JobMethod::av ? "av" : "indirect";
  Json r;
  if (!call({{"op", "open"}, {"ep_type", spec.type == FI_EP_DGRAM ? "dgram" : "rdm"}, {"caps", spec.caps},
             {"job_method", method}, {"job", spec.job}},
            &r, 30000))
    return false;
  name_ = from_hex(r.at("name").get<std::string>());
  pair_address(Side::target, name_);
  return true;
}

fi_addr_t Target::insert(const std::vector<uint8_t>& name, fi_addr_t auth_key) {
  pair_address(Side::initiator, name);  // what the target is given to insert is the initiator's address
  Json req = {{"op", "insert"}};
  if (same_address_layout(manifest(), target_manifest())) {
    req["name"] = to_hex(name.data(), name.size());
  } else {
    req["fields"] = address_fields_json(address_fields(name, manifest()));
    note_address_translated(manifest(), target_manifest());
  }
  if (auth_key != FI_ADDR_NOTAVAIL) req["auth_key"] = auth_key;
  Json r;
  return call(req, &r) ? r.at("fi_addr").get<uint64_t>() : FI_ADDR_NOTAVAIL;
}

std::vector<uint8_t> Target::open_another_endpoint(uint32_t job) {
  Json r;
  return call({{"op", "endpoint"}, {"job", job}}, &r) ? from_hex(r.at("name").get<std::string>()) : std::vector<uint8_t>{};
}

fi_addr_t Target::insert_auth_key(uint32_t job) {
  Json r;
  return call({{"op", "authkey"}, {"job", job}}, &r) ? r.at("handle").get<uint64_t>() : FI_ADDR_NOTAVAIL;
}

bool Target::register_mr(int id, size_t len, uint8_t fill, const std::string& auth, RemoteMr* out) {
  Json r;
  if (!call({{"op", "mr"}, {"id", id}, {"len", len}, {"fill", fill}, {"auth", auth}}, &r)) return false;
  out->key = r.at("key").get<uint64_t>();
  out->base = r.at("base").get<uint64_t>();
  return true;
}

std::vector<uint8_t> Target::read_mr(int id, size_t off, size_t len) {
  Json r;
  if (!call({{"op", "mrread"}, {"id", id}, {"offset", off}, {"len", len}}, &r)) return {};
  return from_hex(r.at("bytes").get<std::string>());
}

bool Target::write_mr(int id, size_t off, const std::vector<uint8_t>& bytes) {
  Json r;
  return call({{"op", "mrwrite"}, {"id", id}, {"offset", off}, {"bytes", to_hex(bytes.data(), bytes.size())}}, &r);
}

int Target::post_recv(int id, size_t len, bool tagged, uint64_t tag, uint64_t ignore, fi_addr_t src, fi_addr_t auth_key) {
  Json r;
  return call({{"op", "recv"}, {"id", id}, {"len", len}, {"tagged", tagged}, {"tag", tag}, {"ignore", ignore},
               {"src", src}, {"auth_key", auth_key}},
              &r)
             ? 0
             : static_cast<int>(last_rc_);
}

namespace {

RecvResult result_of(const Json& o) {
  RecvResult out;
  const std::string state = o.value("state", "none");
  if (state == "failed") {
    out.state = RecvResult::failed;
    out.err = o.at("err").get<int>();
    out.prov_errno = o.at("prov_errno").get<int>();
    out.len = o.value("len", uint64_t{0});
    if (o.contains("bytes")) out.bytes = from_hex(o["bytes"].get<std::string>());
  } else if (state == "done") {
    out.state = RecvResult::completed;
    out.len = o.at("len").get<uint64_t>();
    out.flags = o.value("flags", uint64_t{0});
    out.data = o.value("data", uint64_t{0});
    out.tag = o.value("tag", uint64_t{0});
    if (o.contains("bytes")) out.bytes = from_hex(o["bytes"].get<std::string>());
  }
  return out;
}

// How long the initiator waits for the reply to a wait of `timeout_ms` at the target: the target's wait may
// be extended by progress and by the run delay it saw (liveness.hpp), and the reply must cross the channel.
int reply_ms(int timeout_ms) { return kMaxProgressFactor * timeout_ms + kMaxExtensionMs + 15000; }

// The target's outcome of a wait the initiator made `wait` for: nothing, on a host that starved the target's
// wait (its evidence) or this side's threads and the target's (measured here), is inconclusive.
RecvResult judged(const Json& outcome, LivenessDeadline& wait) {
  RecvResult out = result_of(outcome);
  if (out.state != RecvResult::none) {
    LivenessDeadline::ended();
  } else if (outcome.contains("host_busy")) {
    LivenessDeadline::starved_elsewhere("the target's " + outcome["host_busy"].get<std::string>());
  } else {
    wait.waited_elsewhere();
    wait.timed_out();
  }
  return out;
}

}  // namespace

RecvResult Target::completion(int id, int timeout_ms) {
  Json r;
  LivenessDeadline wait(timeout_ms);
  if (!call({{"op", "completion"}, {"id", id}, {"timeout_ms", timeout_ms}}, &r, reply_ms(timeout_ms))) return {};
  return judged(r.at("outcome"), wait);
}

RecvResult Target::send(fi_addr_t dest, size_t len, uint8_t fill, bool tagged, uint64_t tag, int timeout_ms) {
  Json r;
  LivenessDeadline wait(timeout_ms);
  if (!call({{"op", "send"}, {"dest", dest}, {"len", len}, {"fill", fill}, {"tagged", tagged}, {"tag", tag},
             {"timeout_ms", timeout_ms}},
            &r, reply_ms(timeout_ms)))
    return {};
  return judged(r.at("outcome"), wait);
}

std::vector<uint8_t> Target::name_for_initiator(const std::vector<uint8_t>& initiator_name) {
  std::string why;
  auto mine = address_for(name_, target_manifest(), manifest(), initiator_name, &why);
  if (!mine) error_ = "the target's address cannot be encoded in the initiator's layout: " + why;
  return mine ? *mine : std::vector<uint8_t>{};
}

int Target::finish() { return peer_.finish(); }

}  // namespace uet::cases
