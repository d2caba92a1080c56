#pragma once
// The reader over one binlog event payload (little-endian, MySQL's packed integers; core/byte_reader.hpp),
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

namespace tidemark::mysql {

// An event that could not be decoded. `event_type` is the header's type code; `offset` is the byte
// offset within the event (header included) where the problem was found; `message` says what was being
// read and what was wrong.
struct DecodeError {
  uint8_t event_type = 0;
  size_t offset = 0;
  std::string message;

  // "event 30 (WRITE_ROWS_EVENT) at byte offset 41: row 3: column 2 (DECIMAL): ..."
  std::string to_string() const;
};

using CursorFailure = tidemark::CursorFailure;

// The reader with the binlog's integers: little-endian, plus the big-endian ones of temporal and DECIMAL
// values and MySQL's packed integers.
class BinlogCursor : public ByteReader {
 public:
  using ByteReader::ByteReader;

  bool read_u8(uint8_t& out, const char* what = "byte") { return read_le(out, sizeof out, what); }
  bool read_u16(uint16_t& out, const char* what = "uint16") { return read_le(out, sizeof out, what); }
  bool read_u24(uint32_t& out, const char* what = "uint24") { return read_le(out, 3, what); }
  bool read_u32(uint32_t& out, const char* what = "uint32") { return read_le(out, sizeof out, what); }
  bool read_u48(uint64_t& out, const char* what = "uint48") { return read_le(out, 6, what); }
  bool read_u64(uint64_t& out, const char* what = "uint64") { return read_le(out, sizeof out, what); }
  // An unsigned little-endian integer of 1..8 bytes.
  bool read_uint(size_t bytes, uint64_t& out, const char* what = "integer") { return read_le(out, bytes, what); }
  // A big-endian unsigned integer of 1..8 bytes (DECIMAL, TIME2, DATETIME2 and TIMESTAMP2 are big-endian).
  bool read_uint_be(size_t bytes, uint64_t& out, const char* what = "big-endian integer") {
    return read_be(out, bytes, what);
  }

  // MySQL's length-encoded integer ("packed integer"): < 0xfb one byte; 0xfc + 2; 0xfd + 3; 0xfe + 8.
  // 0xfb (NULL) and 0xff are errors here.
  bool read_packed(uint64_t& out, const char* what = "packed integer") {
    uint8_t first = 0;
    const size_t start = offset();
    if (!read_u8(first, what)) return false;
    if (first < 0xfb) {
      out = first;
      return true;
    }
    switch (first) {
      case 0xfc: return read_le(out, 2, what);
      case 0xfd: return read_le(out, 3, what);
      case 0xfe: return read_le(out, 8, what);
      default: {
        char hex[3];
        std::snprintf(hex, sizeof hex, "%02x", first);
        return fail(start, std::string("invalid ") + what + ": first byte 0x" + hex);
      }
    }
  }

  // A string preceded by its length as a 1-byte integer / a packed integer.
  bool read_u8_prefixed(std::string_view& out, const char* what = "string") {
    uint8_t n = 0;
    return read_u8(n, what) && read_bytes(n, out, what);
  }
  bool read_packed_prefixed(std::string_view& out, const char* what = "string") {
    uint64_t n = 0;
    if (!read_packed(n, what)) return false;
    if (n > remaining())
      return fail(std::string("truncated ") + what + ": length " + std::to_string(n) + ", " +
                  std::to_string(remaining()) + " bytes left");
    return read_bytes(static_cast<size_t>(n), out, what);
  }

  // The failure as a DecodeError of `event_type`.
  DecodeError error(uint8_t event_type) const {
    if (!failure()) return DecodeError{event_type, offset(), "unknown failure"};
    return DecodeError{event_type, failure()->offset, failure()->message};
  }
};

// The writing half, for encoders and tests.
template <typename U>
inline void put_le(std::string& out, U v, size_t bytes = sizeof(U)) {
  static_assert(std::is_unsigned_v<U>);
  for (size_t i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
inline void put_packed(std::string& out, uint64_t v) {
  if (v < 0xfb) {
    out.push_back(static_cast<char>(v));
  } else if (v <= 0xffff) {
    out.push_back(static_cast<char>(0xfc));
    put_le<uint64_t>(out, v, 2);
  } else if (v <= 0xffffff) {
    out.push_back(static_cast<char>(0xfd));
    put_le<uint64_t>(out, v, 3);
  } else {
    out.push_back(static_cast<char>(0xfe));
    put_le<uint64_t>(out, v, 8);
  }
}

}  // namespace tidemark::mysql
