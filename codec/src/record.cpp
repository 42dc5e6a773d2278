// JSON records, one per line, with the fields in the order in which they are on the wire; and summary lines.
#include "uet/codec/record.hpp"

#include <algorithm>
#include <bitset>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "json_text.hpp"

namespace uet::codec {

struct RecordWriter::Impl {
  std::string text;
  Decoded segment;  // a GSO run's segments, decoded one at a time as the record is written
};

RecordWriter::RecordWriter() : impl_(std::make_unique<Impl>()) {}
RecordWriter::~RecordWriter() = default;

std::string_view RecordWriter::text() const { return impl_->text; }

void RecordWriter::clear() { impl_->text.clear(); }

namespace {

using json_text::append_key;
using json_text::append_number;
using json_text::append_string;

// `"name":` of every field, escaped once: a record names each of its fields.
const std::string& field_key(wire::Field f) {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k(wire::kFieldCount);
    for (size_t i = 0; i < wire::kFieldCount; ++i) append_key(k[i], wire::field_name(static_cast<wire::Field>(i)));
    return k;
  }();
  return keys[static_cast<size_t>(f)];
}

// A field's value: numbers as JSON numbers, byte strings and addresses as text (format_value).
void append_field_value(std::string& out, const Decoded& d, wire::Field f) {
  const uint64_t v = d.values[static_cast<size_t>(f)];
  switch (wire::field_info(f).kind) {
    case wire::Kind::uint_:
    case wire::Kind::reserved:
      append_number(out, v);
      return;
    case wire::Kind::int_:
      append_number(out, static_cast<int64_t>(v));
      return;
    default:
      // The text of these kinds (hex digits, ':' and '.') needs no escaping.
      out += '"';
      append_value(out, d, f);
      out += '"';
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
    case DiagKind::trailing_bytes:
      std::snprintf(msg, sizeof msg, "%" PRIu64 " bytes follow the end of the UET packet at offset %u", g.value, g.offset);
      break;
    case DiagKind::job_id_zero:
      std::snprintf(msg, sizeof msg, "%s = 0: a request without a JobID (choice %s)", wire::field_name(g.field),
                    wire::choice_info(g.choice).id);
      break;
    case DiagKind::fragment_overlap:
    case DiagKind::fragment_inconsistent:
      std::snprintf(msg, sizeof msg, "%s; the fragment is not used", g.detail ? g.detail : "?");
      break;
    default:
      std::snprintf(msg, sizeof msg, "%s = %" PRIu64 " (0x%" PRIx64 ")", wire::field_name(g.field), g.value, g.value);
  }
  return msg;
}

// What a record says of one UET packet (the frame's own, or a GSO segment's), from "layers" to "confidence".
void append_packet(std::string& out, const Decoded& d) {
  out += "\"layers\":[";
  for (unsigned i = 0; i < d.n_layers; ++i) {
    if (i) out += ',';
    append_string(out, wire::header_name(d.layers[i]));
  }
  // A field is emitted at most once per frame (the code generator checks every path of spec/wire.yaml).
  out += "],\"fields\":{";
  for (unsigned i = 0; i < d.n_emitted; ++i) {
    if (i) out += ',';
    out += field_key(d.emitted[i].field);
    append_field_value(out, d, d.emitted[i].field);
  }
  out += "},\"payload_len\":";
  append_number(out, d.payload_len);
  out += ",\"diagnostics\":[";
  for (unsigned i = 0; i < d.n_diags; ++i) {
    const Diagnostic& g = d.diags[i];
    if (i) out += ',';
    out += "{\"kind\":";
    append_string(out, diag_kind_name(g.kind));
    out += ",\"header\":";
    append_string(out, wire::header_name(g.header));
    out += ",\"field\":";
    if (g.field == kNoField)
      out += "null";
    else
      append_string(out, wire::field_name(g.field));
    out += ",\"offset\":";
    append_number(out, g.offset);
    out += ",\"message\":";
    append_string(out, diag_message(d, g));
    if (g.choice != wire::Choice::none) {
      out += ",\"choice\":";
      append_string(out, wire::choice_info(g.choice).id);
    }
    out += '}';
  }
  out += "],\"uncertain\":{";
  bool first = true;
  for (unsigned i = 0; i < d.n_emitted; ++i) {
    if (d.emitted[i].uncertain == wire::Choice::none) continue;
    if (!first) out += ',';
    first = false;
    out += field_key(d.emitted[i].field);
    append_string(out, wire::choice_info(d.emitted[i].uncertain).id);
  }
  // How far each of those choices can be trusted, in the choices' id order (the Scapy record sorts them).
  out += "},\"confidence\":{";
  std::bitset<static_cast<size_t>(wire::Choice::COUNT)> cited;
  for (unsigned i = 0; i < d.n_emitted; ++i) cited.set(static_cast<size_t>(d.emitted[i].uncertain));
  const wire::ChoiceInfo* choices[static_cast<size_t>(wire::Choice::COUNT)];
  size_t n_choices = 0;
  for (size_t c = 1; c < cited.size(); ++c)
    if (cited[c]) choices[n_choices++] = &wire::choice_info(static_cast<wire::Choice>(c));
  std::sort(choices, choices + n_choices, [](auto* a, auto* b) { return std::strcmp(a->id, b->id) < 0; });
  for (size_t i = 0; i < n_choices; ++i) {
    if (i) out += ',';
    append_key(out, choices[i]->id);
    append_string(out, choices[i]->confidence);
  }
  out += '}';
}

// A packet's place in its GSO run: {"segment":i,"offset":o,"stride":s}, and the run's count on segment 0.
void append_gso_place(std::string& out, const GsoRun& run, uint32_t i) {
  out += "\"gso\":{\"segment\":";
  append_number(out, i);
  out += ",\"offset\":";
  append_number(out, run.segment_offset(i));
  out += ",\"stride\":";
  append_number(out, run.stride);
  if (i == 0) {
    out += ",\"count\":";
    append_number(out, run.count);
  }
  out += '}';
}

}  // namespace

// The record of codec/DECODE-OUTPUT.md, written as text in one pass: keys in this order, fields in wire order.
void RecordWriter::write(const Decoded& d, const FrameMeta& meta) {
  std::string& out = impl_->text;
  out += "{\"frame\":";
  append_number(out, meta.number);
  out += ",\"ts\":\"";
  append_number(out, meta.ts_sec);
  out += '.';
  json_text::append_padded(out, meta.ts_frac, meta.ts_nanos ? 9 : 6);
  out += '"';
  out += ",\"caplen\":";
  append_number(out, d.caplen);
  out += ",\"len\":";
  append_number(out, d.len);
  out += ",\"status\":";
  append_string(out, status_name(frame_status(d, meta.gso)));
  out += ',';
  append_packet(out, d);
  if (meta.gso) {
    out += ',';
    append_gso_place(out, *meta.gso, 0);
    // The run's other packets, each decoded again on its own: a record holds no more than one at a time.
    out += ",\"segments\":[";
    Decoded& segment = impl_->segment;
    for (uint32_t i = 1; i < meta.gso->count; ++i) {
      meta.gso->decode_segment(d, i, segment);
      out += i > 1 ? ",{" : "{";
      append_gso_place(out, *meta.gso, i);
      out += ",\"status\":";
      append_string(out, status_name(segment.status()));
      out += ',';
      append_packet(out, segment);
      out += '}';
    }
    out += ']';
  }
  if (!meta.reassembled_from.empty()) {
    out += ",\"reassembled_from\":[";
    for (size_t i = 0; i < meta.reassembled_from.size(); ++i) {
      if (i) out += ',';
      append_number(out, meta.reassembled_from[i]);
    }
    out += ']';
  }
  out += "}\n";
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

// The UET part of a summary: headers, PDS type, the fields worth a glance, payload and diagnostics.
void append_packet_summary(std::string& s, const Decoded& d) {
  auto field_text = [&](wire::Field f) -> std::string {
    const wire::FieldInfo& info = wire::field_info(f);
    if (const char* n = wire::enum_name(info.enumeration, d.values[static_cast<size_t>(f)])) return n;
    return format_value(d, f);
  };
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
  if (d.status() != Status::non_uet) s += " payload=" + std::to_string(d.payload_len);
  for (unsigned i = 0; i < d.n_diags; ++i) {
    s += " !";
    s += diag_kind_name(d.diags[i].kind);
    s += ":";
    s += d.diags[i].field == kNoField ? wire::header_name(d.diags[i].header) : wire::field_name(d.diags[i].field);
  }
}

}  // namespace

std::string summary_line(const Decoded& d, const FrameMeta& meta) {
  std::string s = "#" + std::to_string(meta.number) + " ";
  if (auto src = d.get(wire::Field::ip_src)) {
    s += format_value(d, wire::Field::ip_src) + " > " + format_value(d, wire::Field::ip_dst);
  } else if (d.get(wire::Field::ipv6_src)) {
    s += format_value(d, wire::Field::ipv6_src) + " > " + format_value(d, wire::Field::ipv6_dst);
  }
  if (d.get(wire::Field::udp_srcport))
    s += " udp " + format_value(d, wire::Field::udp_srcport) + ">" + format_value(d, wire::Field::udp_dstport);
  s += " [";
  s += status_name(frame_status(d, meta.gso));
  s += "]";
  if (meta.gso) s += " gso " + std::to_string(meta.gso->count) + "x" + std::to_string(meta.gso->stride);
  append_packet_summary(s, d);
  if (meta.gso) {
    auto segment = std::make_unique<Decoded>();
    for (uint32_t i = 1; i < meta.gso->count; ++i) {
      meta.gso->decode_segment(d, i, *segment);
      s += " | #" + std::to_string(i);
      append_packet_summary(s, *segment);
    }
  }
  for (size_t i = 0; i < meta.reassembled_from.size(); ++i)
    s += (i ? ",#" : " reassembled from #") + std::to_string(meta.reassembled_from[i]);
  return s;
}

}  // namespace uet::codec
