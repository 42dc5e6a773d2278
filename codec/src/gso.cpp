// Finding a UDP GSO run behind a frame's trailing bytes, and decoding its segments.
#include "uet/codec/gso.hpp"

#include <algorithm>

namespace uet::codec {
namespace {

// The frame's trailing_bytes diagnostic, which decode() adds last, or nullptr.
Diagnostic* trailing(Decoded& frame) {
  if (frame.n_diags == 0) return nullptr;
  Diagnostic& last = frame.diags[frame.n_diags - 1];
  return last.kind == DiagKind::trailing_bytes ? &last : nullptr;
}

// GSO is UDP's: UET directly over IP (the entropy header) has no segmentation offload.
bool over_udp(const Decoded& frame) {
  return frame.reached_uet && frame.has_layer(wire::Header::udp) && !frame.has_layer(wire::Header::uet_entropy);
}

bool same_headers(const Decoded& segment, const Decoded& frame) {
  const unsigned n = frame.n_layers - frame.uet_layer;
  return segment.n_layers == n && std::equal(segment.layers.begin(), segment.layers.begin() + n,
                                             frame.layers.begin() + frame.uet_layer);
}

// A segment joins the run when its bytes are one whole UET packet laid out as the first: the walk ends
// normally, lists the same headers, and the packet's own lengths fill the segment exactly (no bytes after
// it, none missing). Its other diagnostics are its own and do not end the run.
bool forms_segment(const Decoded& segment, const Decoded& frame) {
  if (!segment.ended || !same_headers(segment, frame)) return false;
  for (unsigned i = 0; i < segment.n_diags; ++i) {
    const DiagKind kind = segment.diags[i].kind;
    if (kind == DiagKind::trailing_bytes || kind == DiagKind::inconsistent_length) return false;
  }
  return true;
}

}  // namespace

void GsoRun::decode_segment(const Decoded& frame, uint32_t i, Decoded& out) const {
  const uint32_t start = segment_offset(i);
  decode_range(frame.frame, frame.caplen, frame.len, start, std::min(start + stride, end), wire::Node::uet, options,
               out);
}

std::optional<GsoRun> take_gso_run(Decoded& frame, const DecodeOptions& options, Decoded& scratch) {
  Diagnostic* rest = trailing(frame);
  if (!rest || !over_udp(frame) || rest->offset <= frame.uet_offset) return std::nullopt;
  GsoRun run;
  run.offset = frame.uet_offset;
  run.stride = rest->offset - frame.uet_offset;
  run.end = rest->offset + static_cast<uint32_t>(rest->value);
  run.count = 1;
  run.options = options;
  // Segment i starts at offset + i * stride, strictly further each time: the loop ends.
  for (uint32_t start = rest->offset; start < run.end; start += run.stride) {
    run.decode_segment(frame, run.count, scratch);
    if (!forms_segment(scratch, frame)) break;
    run.malformed |= scratch.n_diags != 0;
    ++run.count;
  }
  if (run.count < 2) return std::nullopt;
  const uint32_t after = run.segment_offset(run.count);
  if (after >= run.end) {
    --frame.n_diags;  // every trailing byte is a segment of the run
  } else {
    rest->value = run.end - after;  // the bytes after the run form no segment
    rest->offset = after;
  }
  return run;
}

Status frame_status(const Decoded& frame, const GsoRun* run) {
  return run && run->malformed ? Status::malformed : frame.status();
}

}  // namespace uet::codec
