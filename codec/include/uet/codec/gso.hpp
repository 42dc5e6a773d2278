// UDP GSO super-datagrams (codec/DECODE-OUTPUT.md, "GSO runs"). A sender with UDP segmentation offload hands
// the kernel one datagram holding several UET packets at a fixed stride (gso_size; the last may be shorter),
// and a capture on the sending host shows it as one frame. decode() reads the first packet and reports the
// rest as trailing_bytes; these functions find the run behind those bytes and decode its other segments.
// decode() itself stays one packet per frame: a caller that wants the run asks for it.
#pragma once

#include <cstdint>
#include <optional>

#include "uet/codec/decoded.hpp"

namespace uet::codec {

struct GsoRun {
  uint32_t offset = 0;     // where segment 0, the frame's own UET packet, begins in the frame
  uint32_t stride = 0;     // every segment but the last is this long: the first packet's own length
  uint32_t count = 0;      // segments, 2 or more
  uint32_t end = 0;        // where the datagram's bytes end (the UDP length, or the capture's cut)
  bool malformed = false;  // a segment after the first has a diagnostic
  DecodeOptions options;   // the frame's decode options, which its segments follow

  uint32_t segment_offset(uint32_t i) const { return offset + i * stride; }
  // Segment i (1 <= i < count) decoded on its own from the UET layer, over exactly its bytes; offsets and
  // byte strings stay relative to the frame.
  void decode_segment(const Decoded& frame, uint32_t i, Decoded& out) const;
};

// When `frame` (decode() of a whole frame) holds, after UDP, its UET packet followed by at least one more
// at the stride of the first, the run; its trailing_bytes diagnostic then moves past the run, or goes when
// the run takes every byte. Otherwise nullopt and `frame` is untouched. `scratch` is work space.
std::optional<GsoRun> take_gso_run(Decoded& frame, const DecodeOptions& options, Decoded& scratch);

// The status of a frame with its run: malformed when any of its packets has a diagnostic.
Status frame_status(const Decoded& frame, const GsoRun* run);

}  // namespace uet::codec
