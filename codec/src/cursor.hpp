// The decoding state that the generated node functions (wire_decode_gen.cpp) work on.
// Kept tiny and inline: it is on the per-field hot path of uet-decode.
#pragma once

#include <cstdint>
#include <cstring>

#include "uet/codec/decoded.hpp"

namespace uet::codec::detail {

// What a node function returns: the next node, or one of these.
inline constexpr int kEnd = -1;   // the graph ended normally
inline constexpr int kStop = -2;  // a fatal diagnostic ended decoding

inline uint64_t load_be8(const uint8_t* p) { return p[0]; }
inline uint64_t load_be16(const uint8_t* p) { return (uint64_t{p[0]} << 8) | p[1]; }
inline uint64_t load_be32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return __builtin_bswap32(v);
}
inline uint64_t load_be64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return __builtin_bswap64(v);
}
inline uint64_t sign_extend(uint64_t v, unsigned bits) {
  const uint64_t m = uint64_t{1} << (bits - 1);
  return (v ^ m) - m;
}

struct Cursor {
  const uint8_t* frame;
  const uint8_t* p;    // start of the node being decoded
  const uint8_t* end;  // end of the bytes this layer may use (after IP/UDP bounds)
  Decoded& out;
  const DecodeOptions& options;
  wire::Header header = wire::Header::COUNT;  // header being decoded
  uint16_t header_mark = 0;                   // n_emitted when that header began
  const uint8_t* header_start = nullptr;      // where that header began
  wire::Field payload_field = kNoField;       // a payload_length field to check when decoding ends
  wire::Header payload_header = wire::Header::COUNT;
  bool packet_ended = false;                  // ended at a `payload: none` node: nothing may follow
  const uint8_t* cipher_end = nullptr;        // set by clear_text(): where the ciphertext and ICV end

  uint32_t at(const uint8_t* q) const { return static_cast<uint32_t>(q - frame); }
  // The spec version the decode follows, as an index into wire::SpecVersion.
  unsigned version() const { return static_cast<unsigned>(options.spec_version); }
  size_t left() const { return static_cast<size_t>(end - p); }

  void diag(DiagKind kind, wire::Header h, wire::Field f, const uint8_t* where, uint64_t value,
            const char* detail = nullptr, wire::Choice choice = wire::Choice::none) {
    if (out.n_diags < Decoded::kMaxDiags) out.diags[out.n_diags++] = {kind, h, f, at(where), value, detail, choice};
  }

  // Room for n bytes of a node? If not: a truncated diagnostic, and the fields of a header already
  // begun by an earlier node of the same header are withdrawn (a truncated header yields no fields).
  [[gnu::always_inline]] bool need(size_t n, wire::Header h, bool dispatch) {
    if (left() >= n) [[likely]] return true;
    return truncated(n, h, dispatch);
  }
  [[gnu::noinline]] bool truncated(size_t n, wire::Header h, bool dispatch) {
    diag(DiagKind::truncated, h, kNoField, p, n);
    if (!dispatch && h == header) {
      for (unsigned i = header_mark; i < out.n_emitted; ++i) out.present.reset(static_cast<size_t>(out.emitted[i].field));
      out.n_emitted = header_mark;
      --out.n_layers;
      p = header_start;  // the bytes of a truncated header count as payload
    }
    return false;
  }

  // Where the UET part of the frame begins (a UET node after the encapsulation, the first one only: the
  // entropy header leads to another): a GSO run's first segment.
  void enter_uet() {
    if (out.reached_uet) return;
    out.uet_offset = at(p);
    out.uet_layer = out.n_layers;
  }

  void begin_header(wire::Header h) {
    if (h == header) return;
    header = h;
    header_mark = out.n_emitted;
    header_start = p;
    if (out.n_layers < Decoded::kMaxLayers) out.layers[out.n_layers++] = h;
  }

  // No capacity check: the generator sizes `emitted` for the longest path of the graph.
  [[gnu::always_inline]] void emit(wire::Field f, uint64_t v, wire::Choice uncertain) {
    out.values[static_cast<size_t>(f)] = v;
    out.present.set(static_cast<size_t>(f));
    out.emitted[out.n_emitted++] = {f, uncertain};
  }
  void set(wire::Field f, uint64_t v) { out.values[static_cast<size_t>(f)] = v; }
  uint64_t val(wire::Field f) const { return out.values[static_cast<size_t>(f)]; }

  // The parse graph's ends that say more than kEnd: the UET packet is complete (anything after it is
  // trailing_bytes), or the frame is an IP fragment (not decoded past IP on its own).
  int packet_ends() {
    packet_ended = true;
    return kEnd;
  }
  int fragment_ends() {
    out.fragment = true;
    return kEnd;
  }

  // A `clear_text` edge: only the `clear` bytes after p (never the ICV at the end) are decoded on;
  // the end of the UET packet lies in the ciphertext, so its payload checks do not apply.
  void clear_text(size_t clear, size_t icv) {
    cipher_end = end;
    const size_t room = left() > icv ? left() - icv : 0;
    end = p + (clear < room ? clear : room);
  }

  bool already_reported(wire::Field f) const {
    for (unsigned i = 0; i < out.n_diags; ++i)
      if (out.diags[i].field == f) return true;
    return false;
  }
  int select_error(wire::Field f, wire::Header h) {
    if (!already_reported(f)) diag(DiagKind::unknown_value, h, f, p, val(f));
    return kStop;
  }

  // IP/UDP length fields: trim the bytes that follow to what the header says, or report.
  bool bounds(wire::Field f, bool includes_header, size_t header_size, wire::Header h) {
    const uint64_t total = val(f) + (includes_header ? 0 : header_size);
    if (total < header_size) {
      diag(DiagKind::inconsistent_length, h, f, p, val(f));
      p += header_size;  // the header itself was decoded and is listed: it is not payload
      return false;
    }
    if (total <= left()) {
      end = p + total;
    } else if (out.caplen == out.len) {
      diag(DiagKind::inconsistent_length, h, f, p, val(f));
    }
    return true;
  }
};

}  // namespace uet::codec::detail
