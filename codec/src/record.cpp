// JSON records with nlohmann::ordered_json: fields keep the order in which they are on the wire.
#include "uet/codec/record.hpp"

#include <algorithm>
#include <bitset>
#include <cinttypes>
#include <cstring>
#include <vector>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace uet::codec {

struct RecordWriter::Impl {
  std::string text;
};

RecordWriter::RecordWriter() : impl_(std::make_unique<Impl>()) {}
RecordWriter::~RecordWriter() = default;

std::string_view RecordWriter::text() const { return impl_->text; }

void RecordWriter::clear() { impl_->text.clear(); }

namespace {

nlohmann::ordered_json value_of(const Decoded& d, wire::Field f) {
  const uint64_t v = d.values[static_cast<size_t>(f)];
  switch (wire::field_info(f).kind) {
    case wire::Kind::uint_:
    case wire::Kind::reserved:
      return v;
    case wire::Kind::int_:
      return static_cast<int64_t>(v);
    default:
      return format_value(d, f);
  }
}

std::string diag_message(const Decoded& d, const Diagnostic& g) {
  char msg[192];
  switch (g.kind) {
    case DiagKind::truncated:
      std::snprintf(msg, sizeof msg, "%s needs %" PRIu64 " bytes at offset %u, frame has %u", wire::header_name(g.header),
                    g.value, g.offset, d.caplen);
      break;
    case DiagKind::reserved_nonzero:
      std::snprintf(msg, sizeof msg, "reserved bits %s are 0x%" PRIx64 ", must be 0", g.detail ? g.detail : "?", g.value);
      break;
    default:
      std::snprintf(msg, sizeof msg, "%s = %" PRIu64 " (0x%" PRIx64 ")", wire::field_name(g.field), g.value, g.value);
  }
  return msg;
}

}  // namespace

void RecordWriter::write(const Decoded& d, const FrameMeta& meta) {
  char ts[48];
  std::snprintf(ts, sizeof ts, meta.ts_nanos ? "%" PRId64 ".%09u" : "%" PRId64 ".%06u", meta.ts_sec, meta.ts_frac);
  nlohmann::ordered_json r;
  r["frame"] = meta.number;
  r["ts"] = ts;
  r["caplen"] = d.caplen;
  r["len"] = d.len;
  r["status"] = status_name(d.status());
  auto& layers = r["layers"] = nlohmann::ordered_json::array();
  for (unsigned i = 0; i < d.n_layers; ++i) layers.push_back(wire::header_name(d.layers[i]));
  auto& fields = r["fields"] = nlohmann::ordered_json::object();
  // Append without ordered_map's linear search for an existing key: a field is emitted at most once
  // per frame (the code generator checks every path of spec/wire.yaml for that).
  auto& entries = static_cast<nlohmann::ordered_json::object_t::Container&>(
      fields.get_ref<nlohmann::ordered_json::object_t&>());
  entries.reserve(d.n_emitted);
  for (unsigned i = 0; i < d.n_emitted; ++i)
    entries.emplace_back(wire::field_name(d.emitted[i].field), value_of(d, d.emitted[i].field));
  r["payload_len"] = d.payload_len;
  auto& diags = r["diagnostics"] = nlohmann::ordered_json::array();
  for (unsigned i = 0; i < d.n_diags; ++i) {
    const Diagnostic& g = d.diags[i];
    diags.push_back({{"kind", diag_kind_name(g.kind)},
                     {"header", wire::header_name(g.header)},
                     {"field", g.field == kNoField ? nlohmann::ordered_json() : nlohmann::ordered_json(wire::field_name(g.field))},
                     {"offset", g.offset},
                     {"message", diag_message(d, g)}});
  }
  auto& uncertain = r["uncertain"] = nlohmann::ordered_json::object();
  for (unsigned i = 0; i < d.n_emitted; ++i)
    if (d.emitted[i].uncertain != wire::Choice::none)
      uncertain[wire::field_name(d.emitted[i].field)] = wire::choice_info(d.emitted[i].uncertain).id;
  // How far each of those choices can be trusted, in the choices' id order (the Scapy record sorts them).
  auto& confidence = r["confidence"] = nlohmann::ordered_json::object();
  std::bitset<static_cast<size_t>(wire::Choice::COUNT)> cited;
  for (unsigned i = 0; i < d.n_emitted; ++i) cited.set(static_cast<size_t>(d.emitted[i].uncertain));
  std::vector<const wire::ChoiceInfo*> choices;
  for (size_t c = 1; c < cited.size(); ++c)
    if (cited[c]) choices.push_back(&wire::choice_info(static_cast<wire::Choice>(c)));
  std::sort(choices.begin(), choices.end(), [](auto* a, auto* b) { return std::strcmp(a->id, b->id) < 0; });
  for (const wire::ChoiceInfo* c : choices) confidence[c->id] = c->confidence;
  impl_->text += r.dump();
  impl_->text += '\n';
}

namespace {

// Fields worth a glance in a summary, in order; enum values print by name.
constexpr wire::Field kSummaryFields[] = {
    wire::Field::uet_pds_ctl_type,       wire::Field::uet_pds_psn,         wire::Field::uet_pds_cack_psn,
    wire::Field::uet_pds_nack_code,      wire::Field::uet_pds_pkt_id,      wire::Field::uet_pds_spdcid,
    wire::Field::uet_pds_dpdcid,         wire::Field::uet_ses_opcode,      wire::Field::uet_ses_job_id,
    wire::Field::uet_ses_message_id,     wire::Field::uet_ses_initiator,   wire::Field::uet_ses_match_bits,
    wire::Field::uet_ses_memory_key,     wire::Field::uet_ses_request_length, wire::Field::uet_ses_atomic_opcode,
    wire::Field::uet_ses_rsp_opcode,     wire::Field::uet_ses_rsp_return_code, wire::Field::uet_ses_rsp_job_id,
};

const char* short_field(wire::Field f) {
  const char* name = wire::field_name(f);
  const char* dot = name;
  for (const char* p = name; *p; ++p)
    if (*p == '.') dot = p + 1;
  return dot;
}

}  // namespace

std::string summary_line(const Decoded& d, const FrameMeta& meta) {
  std::string s = "#" + std::to_string(meta.number) + " ";
  auto field_text = [&](wire::Field f) -> std::string {
    const wire::FieldInfo& info = wire::field_info(f);
    if (const char* n = wire::enum_name(info.enumeration, d.values[static_cast<size_t>(f)])) return n;
    return format_value(d, f);
  };
  if (auto src = d.get(wire::Field::ip_src)) {
    s += format_value(d, wire::Field::ip_src) + " > " + format_value(d, wire::Field::ip_dst);
  } else if (d.get(wire::Field::ipv6_src)) {
    s += format_value(d, wire::Field::ipv6_src) + " > " + format_value(d, wire::Field::ipv6_dst);
  }
  if (d.get(wire::Field::udp_srcport))
    s += " udp " + format_value(d, wire::Field::udp_srcport) + ">" + format_value(d, wire::Field::udp_dstport);
  s += " [";
  s += status_name(d.status());
  s += "]";
  for (unsigned i = 0; i < d.n_layers; ++i) {
    const char* h = wire::header_name(d.layers[i]);
    if (h[0] == 'u' && h[1] == 'e' && h[2] == 't') {
      s += ' ';
      s += h + 4;  // drop "uet."
    }
  }
  if (auto t = d.get(wire::Field::uet_pds_type)) s += " " + field_text(wire::Field::uet_pds_type);
  for (wire::Field f : kSummaryFields)
    if (d.get(f)) s += std::string(" ") + short_field(f) + "=" + field_text(f);
  if (d.status() == Status::uet || d.status() == Status::malformed) s += " payload=" + std::to_string(d.payload_len);
  for (unsigned i = 0; i < d.n_diags; ++i) {
    s += " !";
    s += diag_kind_name(d.diags[i].kind);
    s += ":";
    s += d.diags[i].field == kNoField ? wire::header_name(d.diags[i].header) : wire::field_name(d.diags[i].field);
  }
  return s;
}

}  // namespace uet::codec
