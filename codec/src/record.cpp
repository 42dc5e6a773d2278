// JSON records with RapidJSON's streaming writer (no DOM per frame: uet-decode prints millions).
#include "uet/codec/record.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cinttypes>
#include <cstdio>

namespace uet::codec {

struct RecordWriter::Impl {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer{buffer};
};

RecordWriter::RecordWriter() : impl_(std::make_unique<Impl>()) {}
RecordWriter::~RecordWriter() = default;

std::string_view RecordWriter::text() const { return {impl_->buffer.GetString(), impl_->buffer.GetSize()}; }

void RecordWriter::clear() { impl_->buffer.Clear(); }

namespace {

template <typename W>
void write_value(W& w, const Decoded& d, wire::Field f) {
  const uint64_t v = d.values[static_cast<size_t>(f)];
  switch (wire::field_info(f).kind) {
    case wire::Kind::uint_:
    case wire::Kind::reserved:
      w.Uint64(v);
      return;
    case wire::Kind::int_:
      w.Int64(static_cast<int64_t>(v));
      return;
    default: {
      const std::string s = format_value(d, f);
      w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
    }
  }
}

}  // namespace

void RecordWriter::write(const Decoded& d, const FrameMeta& meta) {
  auto& w = impl_->writer;
  w.Reset(impl_->buffer);
  char ts[48];
  std::snprintf(ts, sizeof ts, meta.ts_nanos ? "%" PRId64 ".%09u" : "%" PRId64 ".%06u", meta.ts_sec, meta.ts_frac);
  w.StartObject();
  w.Key("frame");
  w.Uint64(meta.number);
  w.Key("ts");
  w.String(ts);
  w.Key("caplen");
  w.Uint(d.caplen);
  w.Key("len");
  w.Uint(d.len);
  w.Key("status");
  w.String(status_name(d.status()));
  w.Key("layers");
  w.StartArray();
  for (unsigned i = 0; i < d.n_layers; ++i) w.String(wire::header_name(d.layers[i]));
  w.EndArray();
  w.Key("fields");
  w.StartObject();
  for (unsigned i = 0; i < d.n_emitted; ++i) {
    w.Key(wire::field_name(d.emitted[i].field));
    write_value(w, d, d.emitted[i].field);
  }
  w.EndObject();
  w.Key("payload_len");
  w.Uint(d.payload_len);
  w.Key("diagnostics");
  w.StartArray();
  for (unsigned i = 0; i < d.n_diags; ++i) {
    const Diagnostic& g = d.diags[i];
    w.StartObject();
    w.Key("kind");
    w.String(diag_kind_name(g.kind));
    w.Key("header");
    w.String(wire::header_name(g.header));
    w.Key("field");
    if (g.field == kNoField) {
      w.Null();
    } else {
      w.String(wire::field_name(g.field));
    }
    w.Key("offset");
    w.Uint(g.offset);
    w.Key("message");
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
    w.String(msg);
    w.EndObject();
  }
  w.EndArray();
  w.Key("uncertain");
  w.StartObject();
  for (unsigned i = 0; i < d.n_emitted; ++i) {
    if (d.emitted[i].uncertain == wire::Choice::none) continue;
    w.Key(wire::field_name(d.emitted[i].field));
    w.String(wire::choice_info(d.emitted[i].uncertain).id);
  }
  w.EndObject();
  w.EndObject();
  impl_->buffer.Put('\n');
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
