// Walks the generated parse graph for the tests: every path from a root to a normal end, and field
// values that make a frame follow exactly that path.
#pragma once

#include <cstdint>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "uet/codec/decoded.hpp"
#include "uet/codec/encoder.hpp"

namespace uet::codec::test {

struct Step {
  wire::Node node;
  int edge;  // index of the case taken (into the node's cases), or -1 for the default
};

struct GraphPath {
  std::vector<Step> steps;
  std::string name;  // for test names: the non-dispatch nodes, '_'-joined
  // A spec version every edge of the path holds in (the default one when it can): decode with options().
  wire::SpecVersion version = wire::kSpecVersionDefault;
  std::vector<wire::Node> nodes() const;
  DecodeOptions options() const {
    DecodeOptions o;
    o.spec_version = version;
    return o;
  }
};

// gtest prints a path by its name.
inline void PrintTo(const GraphPath& p, std::ostream* os) { *os << p.name; }

// Every path from `root` that ends normally (a case or default leading to `end`).
std::vector<GraphPath> paths_from(wire::Node root);

// Every path from the UET layer on, under the first Ethernet/IPv4/UDP path that reaches it; each is
// named after its UET part.
std::vector<GraphPath> uet_paths_over_ethernet();

// The path `prefix` (ending at a node with an edge to `junction`) continued by `suffix` (from junction).
GraphPath join(const GraphPath& prefix, const GraphPath& suffix);

// A frame built to follow the path, with the values that went into it.
struct BuiltFrame {
  std::vector<uint8_t> bytes;
  FieldValues values;
  std::vector<uint8_t> payload;
};

// Values chosen with `rng` so that every select on the path takes the path's edge, every enum field
// holds a listed value, `invalid`/`require` are respected, and sizes/lengths are derived by the encoder.
BuiltFrame build_frame(const GraphPath& path, std::mt19937_64& rng, size_t payload_len = 7);

// The fields a decoder must emit for this path and these values, in order.
std::vector<wire::Field> expected_fields(const GraphPath& path, const FieldValues& values);

// The layer names of the path, in order.
std::vector<wire::Header> expected_layers(const GraphPath& path);

// Offset of each step's node in the frame built with these values (dispatch nodes take no bytes).
std::vector<size_t> node_offsets(const GraphPath& path, const FieldValues& values);

// Bit width of `field` as laid out in `node` (0 for byte strings).
unsigned field_bits(wire::Node node, wire::Field field);

}  // namespace uet::codec::test
