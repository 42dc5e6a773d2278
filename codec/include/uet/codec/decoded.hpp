// A decoded frame: the C++ form of the record described in codec/DECODE-OUTPUT.md.
#pragma once

#include <array>
#include <bitset>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "uet/wire/wire_gen.hpp"

namespace uet::codec {

// job_id_zero is a check that rests on a choice (job-id-zero-invalid), not on the spec. The last two are
// given by reassembly (uet/codec/reassembly.hpp), never by decode().
enum class DiagKind : uint8_t {
  truncated, reserved_nonzero, unknown_value, invalid_value, inconsistent_length, trailing_bytes, job_id_zero,
  fragment_overlap, fragment_inconsistent
};
const char* diag_kind_name(DiagKind kind);

enum class Status : uint8_t { uet, malformed, non_uet, fragment };
const char* status_name(Status status);

inline constexpr wire::Field kNoField = wire::Field::COUNT;

struct Diagnostic {
  DiagKind kind;
  wire::Header header;
  wire::Field field;          // kNoField for truncated and reserved_nonzero
  uint32_t offset;            // byte offset in the frame
  uint64_t value;             // the offending value, or bytes needed for truncated
  const char* detail;         // reserved field name, or nullptr
  wire::Choice choice = wire::Choice::none;  // the choice a check rests on (job_id_zero), else none
};

struct Emitted {
  wire::Field field;
  wire::Choice uncertain;     // Choice::none when the layout is certain
};

struct DecodeOptions {
  uint16_t udp_port = wire::kUdpPort;
  // Values, fields and edges that differ between spec versions follow this one (spec/wire.yaml spec_versions).
  wire::SpecVersion spec_version = wire::kSpecVersionDefault;
  // A secure domain's confidentiality offset (choice tss-coverage): the bytes after a TSS header that
  // are clear text and decoded; 0 (the default) decodes nothing after TSS.
  uint32_t tss_conf_offset = 0;
};

class Decoded {
 public:
  static constexpr size_t kMaxEmitted = wire::kMaxFieldsOnPath;
  static constexpr size_t kMaxLayers = wire::kMaxHeadersOnPath;
  static constexpr size_t kMaxDiags = wire::kMaxFieldsOnPath + 8;

  const uint8_t* frame = nullptr;
  uint32_t caplen = 0;
  uint32_t len = 0;
  bool reached_uet = false;
  bool fragment = false;      // an IP fragment: decoding stopped after the IP header (or IPv6 fragment header)
  bool ended = false;         // the walk reached an end of the parse graph (no fatal diagnostic stopped it)
  uint32_t uet_offset = 0;    // where the UET part begins (when reached_uet), and its first entry in `layers`
  uint8_t uet_layer = 0;
  uint32_t payload_offset = 0;
  uint32_t payload_len = 0;

  uint16_t n_emitted = 0;
  uint8_t n_layers = 0;
  uint8_t n_diags = 0;
  std::array<Emitted, kMaxEmitted> emitted;
  std::array<wire::Header, kMaxLayers> layers;
  std::array<Diagnostic, kMaxDiags> diags;
  // Value of each field decoded in this frame, indexed by field; byte-string kinds hold their offset
  // in the frame. Only fields decoded in this frame are meaningful: read them through get().
  std::array<uint64_t, wire::kFieldCount> values;
  // Which fields were emitted, so get() is one test rather than a walk of `emitted` (the reference FEP
  // reads a dozen fields of every frame it receives).
  std::bitset<wire::kFieldCount> present;

  Status status() const {
    if (n_diags) return Status::malformed;
    if (fragment) return Status::fragment;
    return reached_uet ? Status::uet : Status::non_uet;
  }
  // The value of an emitted field, or nullopt when the frame does not carry it.
  std::optional<uint64_t> get(wire::Field field) const {
    if (!present[static_cast<size_t>(field)]) return std::nullopt;
    return values[static_cast<size_t>(field)];
  }
  bool has_layer(wire::Header header) const {
    for (unsigned i = 0; i < n_layers; ++i)
      if (layers[i] == header) return true;
    return false;
  }
  // The choices id under which an emitted field was decoded, or "" when its layout is certain.
  const char* uncertain_of(wire::Field field) const;
  // A byte-string field (bytes/mac/ipv4/ipv6) as a pointer into the frame; length from wire::field_info.
  const uint8_t* bytes_of(wire::Field field) const { return frame + values[static_cast<size_t>(field)]; }
};

// Decode one frame starting at the node for its link type. Never reads outside [frame, frame+caplen).
void decode(const uint8_t* frame, uint32_t caplen, uint32_t len, wire::Node root, const DecodeOptions& options,
            Decoded& out);
// Decode only the bytes [start, stop) of a frame (start <= stop <= caplen), from `root`, as if nothing else
// were there; offsets and byte strings stay relative to the frame. One segment of a GSO run (uet/codec/gso.hpp).
void decode_range(const uint8_t* frame, uint32_t caplen, uint32_t len, uint32_t start, uint32_t stop, wire::Node root,
                  const DecodeOptions& options, Decoded& out);

// The root node for a pcap LINKTYPE, or nullopt for a link type the suite does not decode.
std::optional<wire::Node> root_for_linktype(int linktype);

// Text of one field value as the record prints it (numbers in decimal, addresses, hex bytes).
std::string format_value(const Decoded& decoded, wire::Field field);
// The same text appended to `out`: the JSON writer formats every field of every frame, and a string per
// value was a good part of its time.
void append_value(std::string& out, const Decoded& decoded, wire::Field field);

}  // namespace uet::codec
