// Printing a decoded frame: the JSON record of codec/DECODE-OUTPUT.md, or a one-line summary.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "uet/codec/decoded.hpp"
#include "uet/codec/gso.hpp"

namespace uet::codec {

struct FrameMeta {
  uint64_t number;     // 1-based
  int64_t ts_sec;
  uint32_t ts_frac;    // microseconds or nanoseconds
  bool ts_nanos;
  // A datagram reassembled from IP fragments: their frame numbers in offset order (empty otherwise).
  std::span<const uint64_t> reassembled_from = {};
  // The frame's GSO run (take_gso_run), whose segments the record adds; nullptr when it has none.
  const GsoRun* gso = nullptr;
};

// Appends JSON records, one per line, to an internal buffer; the caller drains it.
class RecordWriter {
 public:
  RecordWriter();
  ~RecordWriter();
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

  void write(const Decoded& decoded, const FrameMeta& meta);
  std::string_view text() const;
  void clear();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// "#12 198.18.0.1:50001 > 198.18.0.2:4793 ROD_REQ psn=7 syn | std UET_SEND som eom job=0x000123 ..."
std::string summary_line(const Decoded& decoded, const FrameMeta& meta);

}  // namespace uet::codec
