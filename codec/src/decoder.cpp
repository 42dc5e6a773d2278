// Runs the generated node functions over a frame and finishes the record.
#include <arpa/inet.h>

#include <charconv>
#include <cstdio>
#include <string>

#include "cursor.hpp"
#include "uet/codec/decoded.hpp"

namespace uet::codec {
namespace detail {
using NodeFn = int (*)(Cursor&);
extern const NodeFn kNodeFns[wire::kNodeCount];
}  // namespace detail

const char* diag_kind_name(DiagKind kind) {
  switch (kind) {
    case DiagKind::truncated: return "truncated";
    case DiagKind::reserved_nonzero: return "reserved_nonzero";
    case DiagKind::unknown_value: return "unknown_value";
    case DiagKind::invalid_value: return "invalid_value";
    case DiagKind::inconsistent_length: return "inconsistent_length";
    case DiagKind::trailing_bytes: return "trailing_bytes";
    case DiagKind::job_id_zero: return "job_id_zero";
    case DiagKind::fragment_overlap: return "fragment_overlap";
    case DiagKind::fragment_inconsistent: return "fragment_inconsistent";
  }
  return "?";
}

const char* status_name(Status status) {
  switch (status) {
    case Status::uet: return "uet";
    case Status::malformed: return "malformed";
    case Status::non_uet: return "non-uet";
    case Status::fragment: return "fragment";
  }
  return "?";
}

const char* Decoded::uncertain_of(wire::Field field) const {
  for (unsigned i = 0; i < n_emitted; ++i)
    if (emitted[i].field == field && emitted[i].uncertain != wire::Choice::none)
      return wire::choice_info(emitted[i].uncertain).id;
  return "";
}

void decode(const uint8_t* frame, uint32_t caplen, uint32_t len, wire::Node root, const DecodeOptions& options,
            Decoded& out) {
  decode_range(frame, caplen, len, 0, caplen, root, options, out);
}

void decode_range(const uint8_t* frame, uint32_t caplen, uint32_t len, uint32_t start, uint32_t stop, wire::Node root,
                  const DecodeOptions& options, Decoded& out) {
  out.frame = frame;
  out.caplen = caplen;
  out.len = len;
  out.reached_uet = false;
  out.fragment = false;
  out.uet_offset = 0;
  out.uet_layer = 0;
  out.n_emitted = 0;
  out.present.reset();
  out.n_layers = 0;
  out.n_diags = 0;
  detail::Cursor c{frame, frame + start, frame + stop, out, options};
  // The node functions call their successors themselves; they return kEnd or kStop.
  const int next = detail::kNodeFns[static_cast<size_t>(root)](c);
  out.ended = next == detail::kEnd;
  out.payload_offset = c.at(c.p);
  if (c.cipher_end) c.end = c.cipher_end;  // clear text after TSS: the ciphertext and ICV are payload
  size_t payload = c.left();
  if (next == detail::kEnd && !c.cipher_end) {
    // Bytes after a complete UET packet (several packets in one datagram, as with UDP segmentation
    // offload, or junk) are reported, never taken as its payload.
    if (c.packet_ended && payload) {
      c.diag(DiagKind::trailing_bytes, c.header, kNoField, c.p, payload);
      payload = 0;
    } else if (c.payload_field != kNoField) {
      const uint64_t said = c.val(c.payload_field);
      if (payload > said) {
        c.diag(DiagKind::trailing_bytes, c.payload_header, c.payload_field, c.p + said, payload - said);
        payload = said;
      } else if (payload < said && caplen == len) {
        c.diag(DiagKind::inconsistent_length, c.payload_header, c.payload_field, c.p, said);
      }
    }
  }
  out.payload_len = static_cast<uint32_t>(payload);
}

std::optional<wire::Node> root_for_linktype(int linktype) { return wire::root_for_linktype(linktype); }

void append_value(std::string& out, const Decoded& d, wire::Field field) {
  static constexpr char kHex[] = "0123456789abcdef";
  const wire::FieldInfo& info = wire::field_info(field);
  const uint64_t v = d.values[static_cast<size_t>(field)];
  char buf[INET6_ADDRSTRLEN + 1];
  switch (info.kind) {
    case wire::Kind::int_: {
      const auto r = std::to_chars(buf, buf + sizeof buf, static_cast<int64_t>(v));
      out.append(buf, r.ptr);
      return;
    }
    case wire::Kind::mac: {
      const uint8_t* b = d.bytes_of(field);
      char* at = buf;
      for (unsigned i = 0; i < 6; ++i) {
        if (i) *at++ = ':';
        *at++ = kHex[b[i] >> 4];
        *at++ = kHex[b[i] & 15];
      }
      out.append(buf, at);
      return;
    }
    case wire::Kind::ipv4:
      out += inet_ntop(AF_INET, d.bytes_of(field), buf, sizeof buf) ? buf : "?";
      return;
    case wire::Kind::ipv6:
      out += inet_ntop(AF_INET6, d.bytes_of(field), buf, sizeof buf) ? buf : "?";
      return;
    case wire::Kind::bytes: {
      const uint8_t* b = d.bytes_of(field);
      const size_t at = out.size();
      out.resize(at + 2 * size_t{info.nbytes});
      for (unsigned i = 0; i < info.nbytes; ++i) {
        out[at + 2 * i] = kHex[b[i] >> 4];
        out[at + 2 * i + 1] = kHex[b[i] & 15];
      }
      return;
    }
    case wire::Kind::uint_:
    case wire::Kind::reserved:
      break;
  }
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

std::string format_value(const Decoded& d, wire::Field field) {
  std::string s;
  append_value(s, d, field);
  return s;
}

}  // namespace uet::codec
