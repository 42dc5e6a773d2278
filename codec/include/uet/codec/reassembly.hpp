// Reassembly of IP fragments across the frames of a capture (codec/DECODE-OUTPUT.md, "IP fragments").
//
// decode() is per frame and stateless: it stops at an IP fragment (Status::fragment). A reader of a
// capture hands each decoded frame to a Reassembler; when a fragment completes its datagram, the
// Reassembler gives back a frame holding the whole datagram, which the reader decodes as it would a
// captured one and reports on the completing frame.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "uet/codec/decoded.hpp"

namespace uet::codec {

// A datagram put back together: the link-layer and IP header of its first fragment, with the IP header
// rewritten to say the datagram is whole, followed by all its data.
struct Reassembled {
  std::vector<uint8_t> frame;
  std::vector<uint64_t> from;  // frame numbers of its fragments, in offset order
};

class Reassembler {
 public:
  // Datagrams held at once. A fragment of a new datagram beyond this drops the datagram held longest
  // (its fragments stay reported as fragments); each datagram holds at most 64 KiB.
  static constexpr size_t kDefaultMaxDatagrams = 256;

  explicit Reassembler(size_t max_datagrams = kDefaultMaxDatagrams) : max_datagrams_(max_datagrams) {}

  // Takes frame `number` as decoded. A fragment captured whole is held; one that overlaps a fragment
  // held or contradicts the datagram's length gets a fragment_overlap or fragment_inconsistent
  // diagnostic in `decoded` and is not used. Returns the reassembled datagram when this fragment
  // completed it (valid until the next call), nullptr otherwise.
  const Reassembled* add(uint64_t number, Decoded& decoded) {
    // Inline so that a frame that is no fragment costs one test.
    return decoded.fragment ? add_fragment(number, decoded) : nullptr;
  }

  size_t held() const { return held_.size(); }

 private:
  struct Key {
    uint8_t version, proto;
    uint32_t id;
    std::array<uint8_t, 16> src, dst;
    bool operator==(const Key&) const = default;
  };
  struct Piece {
    uint32_t start, len;
    uint64_t frame;
  };
  struct Datagram {
    Key key;
    std::vector<uint8_t> data;
    std::vector<Piece> pieces;
    std::optional<uint32_t> end;  // set by the last fragment (no more-fragments flag)
    uint32_t received = 0;        // bytes held; the pieces never overlap
    std::vector<uint8_t> head;    // from the fragment at offset 0: link-layer and IP header
    uint32_t ip_at = 0;           // where the IP header starts in `head`
  };

  const Reassembled* add_fragment(uint64_t number, Decoded& decoded);
  const Reassembled* complete(Datagram& dg, Decoded& decoded, uint32_t diag_at);

  size_t max_datagrams_;
  std::vector<Datagram> held_;  // oldest first
  Reassembled done_;
};

}  // namespace uet::codec
