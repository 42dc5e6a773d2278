#include "trace.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <string_view>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "uet/entity/hex.hpp"
#include "uet/entity/message.hpp"

namespace uet::entity {
namespace {

namespace c = control;
using nlohmann::json;

std::string why() { return std::strerror(errno); }

// Written whole or not at all as far as this process goes (a full disk leaves a short line).
bool write_all(int fd, const std::string& text) {
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

// Attributes by name; a repeated one is a list; a nest is an object of its own table's names.
json Trace::named(const Attrs& attrs, const c::AttrPolicy* table, size_t count) const {
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
        // A key or a token in a file is one more copy to keep secret: left out unless asked.
        if (!limits_.keys && (p->name == std::string_view("key") || p->name == std::string_view("token")))
          v = "redacted: " + std::to_string(item.value.size()) + " bytes (--trace-keys records it)";
        else
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

Trace::Trace(const std::string& path, TraceLimits limits) : path_(path), limits_(limits) {
  fd_ = open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
  if (fd_ < 0) throw std::runtime_error("cannot open the trace " + path + ": " + why());
  struct stat st{};
  std::string no;
  if (fstat(fd_, &st) != 0)
    no = "cannot stat the trace " + path + ": " + why();
  else if (!S_ISREG(st.st_mode))
    no = "the trace " + path + " is not a regular file";
  else if (st.st_uid != geteuid())
    no = "the trace " + path + " belongs to uid " + std::to_string(st.st_uid) + ", not to this entity: it is not "
         "written into";
  else if (fchmod(fd_, 0600) != 0 || fcntl(fd_, F_SETFL, O_WRONLY | O_APPEND) != 0)
    no = "cannot make the trace " + path + " private: " + why();
  if (!no.empty()) {
    close(fd_);
    throw std::runtime_error(no);
  }
  size_ = static_cast<uint64_t>(st.st_size);
}

Trace::~Trace() {
  if (fd_ >= 0) close(fd_);
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
  if (capped_) return;
  const std::string text = line.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  const std::string cap = json{{"trace_capped_at_bytes", limits_.max_bytes}}.dump() + "\n";
  // Room is kept for the line that says the trace stops, so that the file never passes its cap.
  if (size_ + text.size() + cap.size() <= limits_.max_bytes) {
    if (write_all(fd_, text)) size_ += text.size();
    return;
  }
  capped_ = true;
  if (size_ + cap.size() <= limits_.max_bytes && write_all(fd_, cap)) size_ += cap.size();
  std::fprintf(stderr, "uet-entity: the trace %s reached its cap of %llu bytes (--trace-max-bytes): later requests "
               "are not recorded\n", path_.c_str(), static_cast<unsigned long long>(limits_.max_bytes));
}

}  // namespace uet::entity
