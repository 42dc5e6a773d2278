#include "trace.hpp"

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "uet/entity/hex.hpp"
#include "uet/entity/message.hpp"

namespace uet::entity {
namespace {

namespace c = control;
using nlohmann::json;

// Attributes by name; a repeated one is a list; a nest is an object of its own table's names.
json named(const Attrs& attrs, const c::AttrPolicy* table, size_t count) {
  std::map<std::string, std::vector<json>> seen;
  for (const Attrs::Item& item : attrs.items) {
    const c::AttrPolicy* p = c::policy_of(table, count, item.id);
    if (!p) continue;
    json v;
    switch (p->type) {
      case c::AttrType::u8:
      case c::AttrType::u16:
      case c::AttrType::u32:
      case c::AttrType::u64: {
        uint64_t n = 0;
        for (size_t i = item.value.size(); i-- > 0;) n = n << 8 | item.value[i];
        v = n;
        break;
      }
      case c::AttrType::string:
        v = std::string(reinterpret_cast<const char*>(item.value.data()), item.value.empty() ? 0 : item.value.size() - 1);
        break;
      case c::AttrType::binary:
        v = hex(item.value);
        break;
      case c::AttrType::nest: {
        Attrs one;
        one.items = {item};
        one.present = uint64_t{1} << item.id;
        const auto inner = one.nests(item.id);
        const c::NestInfo& n = c::kNests[p->nest];
        v = inner.empty() ? json() : named(inner.front(), n.attrs, n.count);
        break;
      }
    }
    seen[p->name].push_back(std::move(v));
  }
  json out = json::object();
  for (auto& [name, values] : seen) out[name] = values.size() == 1 ? values.front() : json(values);
  return out;
}

}  // namespace

Trace::Trace(const std::string& path) {
  out_ = std::fopen(path.c_str(), "ae");
  if (!out_) throw std::runtime_error("cannot open the trace " + path);
}

Trace::~Trace() {
  if (out_) std::fclose(out_);
}

void Trace::record(const Peer& peer, const std::variant<Request, Problem>& parsed, size_t bytes,
                   const std::vector<std::vector<uint8_t>>& replies) {
  json line = {{"t_ms", std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch()).count()},
               {"pid", peer.pid}, {"uid", peer.uid}, {"bytes", bytes}};
  if (const auto* req = std::get_if<Request>(&parsed)) {
    line["cmd"] = req->cmd->name;
    line["family"] = req->header.type;
    line["attrs"] = named(req->attrs, c::kAttrs, std::size(c::kAttrs));
  } else {
    line["cmd"] = nullptr;
    line["invalid"] = std::get<Problem>(parsed).what;
  }
  json out = json::array();
  for (const auto& r : replies) {
    const auto got = parse_reply(r);
    if (const auto* rep = std::get_if<Reply>(&got)) {
      if (rep->is_done) continue;
      if (rep->is_error) {
        out.push_back({{"err", -rep->err}, {"what", rep->what}});
      } else {
        out.push_back({{"attrs", named(rep->attrs, c::kAttrs, std::size(c::kAttrs))}});
      }
    }
  }
  line["replies"] = out;
  write(line);
}

void Trace::record_push(pid_t to, std::span<const uint8_t> message) {
  json line = {{"t_ms", std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch()).count()},
               {"push_to", to}, {"bytes", message.size()}};
  const auto got = parse_reply(message);
  if (const auto* m = std::get_if<Reply>(&got)) {
    const c::CmdInfo* info = c::command_info(m->cmd);
    line["cmd"] = info ? info->name : nullptr;
    line["attrs"] = named(m->attrs, c::kAttrs, std::size(c::kAttrs));
  }
  write(line);
}

void Trace::write(const json& line) {
  const std::string text = line.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  std::fwrite(text.data(), 1, text.size(), out_);
  std::fflush(out_);
}

}  // namespace uet::entity
