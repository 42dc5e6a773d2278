// Encoding UET frames from field values, driven by the same tables as the decoder.
#pragma once

#include <array>
#include <bitset>
#include <cstdint>
#include <optional>
#include <utility>
#include <span>
#include <stdexcept>
#include <vector>

#include "uet/wire/wire_gen.hpp"

namespace uet::codec {

class EncodeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Values of fields by name; a field not set encodes as 0. Reserved bits always encode as 0.
class FieldValues {
 public:
  FieldValues& set(wire::Field field, uint64_t value);
  FieldValues& set_bytes(wire::Field field, std::vector<uint8_t> bytes);
  bool has(wire::Field field) const { return set_[index(field)]; }
  uint64_t get(wire::Field field) const { return values_[index(field)]; }
  // The bytes of a byte-string field, or an empty vector when it was not set.
  const std::vector<uint8_t>& bytes(wire::Field field) const;

 private:
  static size_t index(wire::Field f) { return static_cast<size_t>(f); }
  // Built once per packet by the reference FEP: no heap allocation unless a byte string is set.
  std::array<uint64_t, wire::kFieldCount> values_{};
  std::bitset<wire::kFieldCount> set_;
  std::vector<std::pair<wire::Field, std::vector<uint8_t>>> bytes_;  // byte strings are few: kept sparse
};

// Encode the nodes of `path` in order, then `payload`. Fields the caller did not set are derived where
// the path determines them: each select field from the edge the path takes (e.g. uet.pds.type for the
// node that follows), each bounds field (ip.len, udp.length, ipv6.plen) and payload_length field from
// the bytes that follow; `values` is completed with what was derived. Throws EncodeError when the
// path is not a path of the graph.
std::vector<uint8_t> encode_path(std::span<const wire::Node> path, FieldValues& values,
                                 std::span<const uint8_t> payload = {}, uint16_t udp_port = wire::kUdpPort);

// encode_path with the walk of the graph done once: for senders that build many frames along the same
// path (the reference FEP). encode() gives the bytes encode_path gives. Paths whose header sizes depend
// on the frame (size rules) or that carry bounds fields (IP and UDP lengths) are refused at construction
// with EncodeError, as are sequences of nodes that are not a path of the graph.
class PathEncoder {
 public:
  explicit PathEncoder(std::span<const wire::Node> path, uint16_t udp_port = wire::kUdpPort);
  std::vector<uint8_t> encode(FieldValues& values, std::span<const uint8_t> payload = {}) const;
  size_t header_size() const { return header_size_; }
  // Rewrite one field in the headers of a frame this encoder made: for senders that keep a frame as a
  // template and change a message id or a length. Throws EncodeError for a field the path does not lay
  // out, or lays out only under a `when` condition (its place depends on other values).
  void rewrite(std::span<uint8_t> frame, wire::Field field, uint64_t value) const;

  struct Slot {
    uint32_t at;  // byte offset in the frame
    const wire::FieldLayout* layout;
  };
  // Where a field lies in this encoder's frames (a dispatch node may lay it out twice), found once so that
  // a sender rewriting it per message does not search the path each time.
  struct Place {
    std::array<Slot, 2> slots{};
    uint8_t count = 0;
    uint32_t end = 0;  // bytes a frame needs for every slot
  };
  // Throws EncodeError where rewrite(frame, field, value) would.
  Place place_of(wire::Field field) const;
  // rewrite() at a place found by place_of; throws EncodeError for a frame too short for it.
  static void rewrite(std::span<uint8_t> frame, const Place& place, uint64_t value);

 private:
  struct Select {
    wire::Field field;
    std::optional<uint64_t> value;  // nullopt: a default edge, which the caller's value must take
    wire::Node from, to;
  };
  std::vector<Select> selects_;
  std::vector<wire::Field> payload_lengths_;  // set to the payload's size unless the caller set them
  std::vector<Slot> slots_;  // in encode_path's order: the nodes in turn, then the dispatch nodes again
  size_t header_size_ = 0;
  uint16_t udp_port_;
};

// The value the path implies for the select field of `from` to reach `to`, if the edge is a case.
// Throws EncodeError when `to` does not follow `from`.
std::optional<uint64_t> edge_value(wire::Node from, wire::Node to, uint16_t udp_port = wire::kUdpPort);

// Does `value` of a select field match this case of the parse graph?
bool case_matches(const wire::CaseInfo& c, uint64_t value, uint16_t udp_port = wire::kUdpPort);

// Write `bits` bits of `value` at bit `bit` of byte `at` (big-endian, MSB first) without touching
// the other bits of those bytes.
void put_bits(uint8_t* buf, size_t at, unsigned bit, unsigned bits, uint64_t value);

}  // namespace uet::codec
