#include "uet/agent/protocol.hpp"

#include <nlohmann/json.hpp>

namespace uet::agent {

namespace {

using nlohmann::json;

std::optional<json> object_of(std::string_view line, std::string* error) {
  json j = json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return *error = "not JSON", std::nullopt;
  if (!j.is_object()) return *error = "not a JSON object", std::nullopt;
  return j;
}

bool strings_of(const json& j, std::vector<std::string>* out, std::string* error) {
  if (!j.is_array()) return *error = "argv is not an array", false;
  for (const auto& v : j) {
    if (!v.is_string()) return *error = "argv holds a value that is not a string", false;
    out->push_back(v.get<std::string>());
  }
  return true;
}

}  // namespace

std::optional<Request> parse_request(std::string_view line, std::string* error) {
  const auto j = object_of(line, error);
  if (!j) return std::nullopt;
  const auto op = j->find("op");
  if (op == j->end() || !op->is_string()) return *error = "no \"op\" string", std::nullopt;
  Request r;
  const std::string name = op->get<std::string>();
  if (name == "hello") {
    r.op = Request::Op::hello;
  } else if (name == "lease") {
    r.op = Request::Op::lease;
  } else if (name == "auth") {
    r.op = Request::Op::auth;
    const auto mac = j->find("mac");
    if (mac == j->end() || !mac->is_string()) return *error = "auth without a \"mac\" string", std::nullopt;
    r.mac = mac->get<std::string>();
  } else if (name == "kill") {
    r.op = Request::Op::kill;
    if (const auto s = j->find("signal"); s != j->end()) {
      if (!s->is_number_integer() || s->get<int64_t>() < 1 || s->get<int64_t>() > 64)
        return *error = "signal is not a number 1..64", std::nullopt;
      r.signal = static_cast<int>(s->get<int64_t>());
    }
  } else if (name == "spawn") {
    r.op = Request::Op::spawn;
    const auto argv = j->find("argv");
    if (argv == j->end()) return *error = "spawn without argv", std::nullopt;
    if (!strings_of(*argv, &r.spawn.argv, error)) return std::nullopt;
    if (r.spawn.argv.empty() || r.spawn.argv[0].empty()) return *error = "argv is empty", std::nullopt;
    if (const auto env = j->find("env"); env != j->end()) {
      if (!env->is_object()) return *error = "env is not an object", std::nullopt;
      for (const auto& [k, v] : env->items()) {
        if (!v.is_string()) return *error = "env value of " + k + " is not a string", std::nullopt;
        if (k.empty() || k.find_first_of(std::string("=\0", 2)) != std::string::npos)
          return *error = "env name '" + k + "' is not a name", std::nullopt;
        if (v.get<std::string>().find('\0') != std::string::npos) return *error = "env value of " + k + " holds a NUL byte", std::nullopt;
        r.spawn.env[k] = v.get<std::string>();
      }
    }
    for (auto [key, field] : {std::pair{"cwd", &r.spawn.cwd}, std::pair{"output", &r.spawn.output}}) {
      if (const auto v = j->find(key); v != j->end()) {
        if (!v->is_string()) return *error = std::string(key) + " is not a string", std::nullopt;
        *field = v->get<std::string>();
      }
    }
    for (const auto& s : r.spawn.argv)
      if (s.find('\0') != std::string::npos) return *error = "argv holds a NUL byte", std::nullopt;
    if (const auto inputs = j->find("inputs"); inputs != j->end()) {
      if (!inputs->is_object()) return *error = "inputs is not an object", std::nullopt;
      for (const auto& [k, v] : inputs->items()) {
        const bool digit = k.size() == 1 && k[0] >= '3' && k[0] <= '0' + kMaxInputFd;
        if (!digit) return *error = "input descriptor '" + k + "' is not 3.." + std::to_string(kMaxInputFd), std::nullopt;
        if (!v.is_string() || v.get<std::string>().size() > kMaxInputBytes)
          return *error = "input " + k + " is not a string of at most " + std::to_string(kMaxInputBytes) + " bytes", std::nullopt;
        r.spawn.inputs[k[0] - '0'] = v.get<std::string>();
      }
    }
  } else {
    return *error = "unknown op '" + name + "'", std::nullopt;
  }
  return r;
}

std::optional<Event> parse_event(std::string_view line, std::string* error) {
  const auto j = object_of(line, error);
  if (!j) return std::nullopt;
  Event e;
  // The peer may be anyone who reached the socket: a non-string "event" is refused, not thrown on.
  const auto ev = j->find("event");
  if (ev == j->end() || !ev->is_string()) return *error = "no \"event\" string", std::nullopt;
  const std::string kind = ev->get<std::string>();
  if (kind == "challenge") e.kind = Event::Kind::challenge;
  else if (kind == "hello") e.kind = Event::Kind::hello;
  else if (kind == "started") e.kind = Event::Kind::started;
  else if (kind == "exited") e.kind = Event::Kind::exited;
  else if (kind == "error") e.kind = Event::Kind::error;
  else return *error = "unknown event '" + kind + "'", std::nullopt;
  if (const auto p = j->find("pid"); p != j->end() && p->is_number_integer()) e.pid = static_cast<pid_t>(p->get<int64_t>());
  if (const auto s = j->find("status"); s != j->end() && s->is_number_integer()) e.status = static_cast<int>(s->get<int64_t>());
  if (const auto c = j->find("cpu_seconds"); c != j->end() && c->is_number()) e.cpu_seconds = c->get<double>();
  if (const auto h = j->find("hostname"); h != j->end() && h->is_string()) e.hostname = h->get<std::string>();
  if (const auto m = j->find("message"); m != j->end() && m->is_string()) e.message = m->get<std::string>();
  if (const auto n = j->find("nonce"); n != j->end() && n->is_string()) e.nonce = n->get<std::string>();
  return e;
}

std::string request_line(const Request& r) {
  json j;
  switch (r.op) {
    case Request::Op::auth: j = {{"op", "auth"}, {"mac", r.mac}}; break;
    case Request::Op::hello: j = {{"op", "hello"}}; break;
    case Request::Op::lease: j = {{"op", "lease"}}; break;
    case Request::Op::kill: j = {{"op", "kill"}, {"signal", r.signal}}; break;
    case Request::Op::spawn:
      j = {{"op", "spawn"}, {"argv", r.spawn.argv}, {"env", r.spawn.env}, {"cwd", r.spawn.cwd}, {"output", r.spawn.output}};
      for (const auto& [fd, bytes] : r.spawn.inputs) j["inputs"][std::to_string(fd)] = bytes;
      break;
  }
  return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string event_line(const Event& e) {
  json j;
  switch (e.kind) {
    case Event::Kind::challenge: j = {{"event", "challenge"}, {"nonce", e.nonce}}; break;
    case Event::Kind::hello: j = {{"event", "hello"}, {"pid", e.pid}, {"hostname", e.hostname}}; break;
    case Event::Kind::started: j = {{"event", "started"}, {"pid", e.pid}}; break;
    case Event::Kind::exited: j = {{"event", "exited"}, {"status", e.status}, {"cpu_seconds", e.cpu_seconds}}; break;
    case Event::Kind::error: j = {{"event", "error"}, {"message", e.message}}; break;
  }
  return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

bool LineBuffer::append(const char* data, size_t n) {
  buf_.append(data, n);
  const size_t nl = buf_.find('\n');
  return (nl == std::string::npos ? buf_.size() : nl) <= kMaxLine;
}

std::optional<std::string> LineBuffer::next() {
  const size_t nl = buf_.find('\n');
  if (nl == std::string::npos) return std::nullopt;
  std::string line = buf_.substr(0, nl);
  buf_.erase(0, nl + 1);
  return line;
}

}  // namespace uet::agent
