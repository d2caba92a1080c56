#pragma once
// Appends JSON text to a caller-owned buffer. Hand-written because it is the hot path of the daemon:
// no intermediate DOM, no allocation per value, 8 bytes at a time through strings that need no escaping.

#include <cstdint>
#include <string>
#include <string_view>

namespace tidemark {

class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(out) {}

  void raw(std::string_view text) { out_.append(text); }
  void raw(char c) { out_.push_back(c); }
  void null() { out_.append("null"); }
  void boolean(bool b) { out_.append(b ? "true" : "false"); }
  void integer(int64_t v);
  void unsigned_integer(uint64_t v);
  // Finite doubles as the shortest text that reads back to the same double; NaN and infinities as the
  // strings "NaN", "Infinity", "-Infinity" (JSON has no literal for them).
  void number(double v);
  void string(std::string_view s);
  void base64(std::string_view bytes);

  // `"name":` with the name escaped; precomputed per column by callers that write many rows.
  static std::string member_prefix(std::string_view name);

 private:
  std::string& out_;
};

// Escapes `s` for the inside of a JSON string (no quotes added). Text must be UTF-8: each byte that does
// not start a well-formed sequence is replaced by U+FFFD.
void append_json_escaped(std::string& out, std::string_view s);

}  // namespace tidemark
