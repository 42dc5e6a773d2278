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
  } else {
    return *error = "unknown op '" + name + "'", std::nullopt;
  }
  return r;
}

std::optional<Event> parse_event(std::string_view line, std::string* error) {
  const auto j = object_of(line, error);
  if (!j) return std::nullopt;
  Event e;
  const std::string kind = j->value("event", "");
  if (kind == "hello") e.kind = Event::Kind::hello;
  else if (kind == "started") e.kind = Event::Kind::started;
  else if (kind == "exited") e.kind = Event::Kind::exited;
  else if (kind == "error") e.kind = Event::Kind::error;
  else return *error = "unknown event '" + kind + "'", std::nullopt;
  if (const auto p = j->find("pid"); p != j->end() && p->is_number_integer()) e.pid = static_cast<pid_t>(p->get<int64_t>());
  if (const auto s = j->find("status"); s != j->end() && s->is_number_integer()) e.status = static_cast<int>(s->get<int64_t>());
  if (const auto c = j->find("cpu_seconds"); c != j->end() && c->is_number()) e.cpu_seconds = c->get<double>();
  if (const auto h = j->find("hostname"); h != j->end() && h->is_string()) e.hostname = h->get<std::string>();
  if (const auto m = j->find("message"); m != j->end() && m->is_string()) e.message = m->get<std::string>();
  return e;
}

std::string request_line(const Request& r) {
  json j;
  switch (r.op) {
    case Request::Op::hello: j = {{"op", "hello"}}; break;
    case Request::Op::kill: j = {{"op", "kill"}, {"signal", r.signal}}; break;
    case Request::Op::spawn:
      j = {{"op", "spawn"}, {"argv", r.spawn.argv}, {"env", r.spawn.env}, {"cwd", r.spawn.cwd}, {"output", r.spawn.output}};
      break;
  }
  return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string event_line(const Event& e) {
  json j;
  switch (e.kind) {
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
