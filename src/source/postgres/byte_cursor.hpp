#pragma once
// The reader over one message of PostgreSQL's wire protocols (network byte order, core/byte_reader.hpp),
// its writing half, and the error type of the decoders built on it.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/byte_reader.hpp"

namespace tidemark::pg {

// A message that could not be decoded. `kind` is the message's first byte ('\0' for an empty message);
// `offset` is the byte offset within the decoded buffer where the problem was found (always ≤ its size);
// `message` says what was being read and what was wrong.
struct DecodeError {
  char kind = '\0';
  size_t offset = 0;
  std::string message;

  // "message 'I' (0x49) at byte offset 17: Insert: new tuple: ..."
  std::string to_string() const {
    char head[64];
    const auto byte = static_cast<unsigned char>(kind);
    if (byte >= 0x20 && byte < 0x7F) {
      std::snprintf(head, sizeof head, "message '%c' (0x%02x) at byte offset %zu: ", kind, byte, offset);
    } else {
      std::snprintf(head, sizeof head, "message 0x%02x at byte offset %zu: ", byte, offset);
    }
    return head + message;
  }
};

using CursorFailure = tidemark::CursorFailure;

// The reader with PostgreSQL's fixed-size integers, in network byte order. `what` names the field in
// the failure message.
class ByteCursor : public ByteReader {
 public:
  using ByteReader::ByteReader;

  bool read_u8(uint8_t& out, const char* what = "byte") { return read_be(out, sizeof out, what); }
  bool read_u16(uint16_t& out, const char* what = "uint16") { return read_be(out, sizeof out, what); }
  bool read_u32(uint32_t& out, const char* what = "uint32") { return read_be(out, sizeof out, what); }
  bool read_u64(uint64_t& out, const char* what = "uint64") { return read_be(out, sizeof out, what); }
  bool read_i16(int16_t& out, const char* what = "int16") { return read_signed(out, what); }
  bool read_i32(int32_t& out, const char* what = "int32") { return read_signed(out, what); }
  bool read_i64(int64_t& out, const char* what = "int64") { return read_signed(out, what); }

 private:
  // Two's complement reinterpretation (well defined since C++20).
  template <typename S>
  bool read_signed(S& out, const char* what) {
    std::make_unsigned_t<S> u = 0;
    if (!read_be(u, sizeof u, what)) return false;
    out = static_cast<S>(u);
    return true;
  }
};

// Appends integers in network byte order: the writing half, for encoders and tests.
inline void put_u8(std::string& out, uint8_t v) { out.push_back(static_cast<char>(v)); }
template <typename U>
inline void put_be(std::string& out, U v) {
  static_assert(std::is_unsigned_v<U>);
  for (size_t i = sizeof(U); i-- > 0;) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
inline void put_u16(std::string& out, uint16_t v) { put_be(out, v); }
inline void put_u32(std::string& out, uint32_t v) { put_be(out, v); }
inline void put_u64(std::string& out, uint64_t v) { put_be(out, v); }
inline void put_i32(std::string& out, int32_t v) { put_be(out, static_cast<uint32_t>(v)); }
inline void put_i64(std::string& out, int64_t v) { put_be(out, static_cast<uint64_t>(v)); }
// A NUL-terminated string; `s` must not contain NUL (callers check).
inline void put_cstring(std::string& out, std::string_view s) {
  out.append(s);
  out.push_back('\0');
}

}  // namespace tidemark::pg
