// JSON text appended to a string, byte for byte what nlohmann::json::dump() writes for the same values:
// the record writer (record.cpp) writes its records this way, since building and dumping a json tree
// per frame cost about 120,000 instructions of a record's 123,000.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

namespace uet::codec::json_text {

// A string in quotes. Escapes as dump() does: the two-character forms of \b \f \n \r \t, \" and \\, other
// bytes below 0x20 as \u00xx (lowercase hex); everything else, 0x7f and non-ASCII bytes too, as it is.
// (dump() throws on invalid UTF-8; a record never holds any, and a decoder must not stop on one.)
inline void append_string(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  size_t plain = 0;  // start of the bytes not yet copied
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s.data() + plain, i - plain);
    plain = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 15];
    }
  }
  out.append(s.data() + plain, s.size() - plain);
  out += '"';
}

// A number in decimal (uint64_t, int64_t and the smaller integers).
template <typename Int>
void append_number(std::string& out, Int v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

// An object's `"key":`.
inline void append_key(std::string& out, std::string_view key) {
  append_string(out, key);
  out += ':';
}

// An unsigned number in decimal with at least `width` digits, zeros in front (printf's %0*u).
inline void append_padded(std::string& out, uint32_t v, unsigned width) {
  char buf[16];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  const auto digits = static_cast<unsigned>(r.ptr - buf);
  if (digits < width) out.append(width - digits, '0');
  out.append(buf, r.ptr);
}

}  // namespace uet::codec::json_text
