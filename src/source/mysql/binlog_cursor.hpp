#pragma once
// A bounds-checked reader over one binlog event payload (little-endian, MySQL's packed integers), and the
// error type of the decoders built on it. Same contract as the PostgreSQL cursor: no exceptions, every
// read returns false when the bytes are not there, and the first failure (offset, what, why) is kept, so
// a decoder may read several fields and check once.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

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

struct CursorFailure {
  size_t offset = 0;
  std::string message;
};

class BinlogCursor {
 public:
  // `base_offset` is added to reported offsets, so a cursor over an event body reports offsets within
  // the whole event.
  explicit BinlogCursor(std::string_view data, size_t base_offset = 0) noexcept
      : data_(data), base_(base_offset) {}
  template <typename S>
    requires std::is_same_v<S, std::string>
  explicit BinlogCursor(S&&, size_t = 0) = delete;  // would keep a view of a temporary

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
    if (!ensure(bytes, what)) return false;
    uint64_t v = 0;
    for (size_t i = 0; i < bytes; ++i) v = (v << 8) | static_cast<unsigned char>(data_[pos_ + i]);
    pos_ += bytes;
    out = v;
    return true;
  }

  // MySQL's length-encoded integer ("packed integer"): < 0xfb one byte; 0xfc + 2; 0xfd + 3; 0xfe + 8.
  // 0xfb (NULL) and 0xff are errors here.
  bool read_packed(uint64_t& out, const char* what = "packed integer") {
    uint8_t first = 0;
    const size_t start = pos_;
    if (!read_u8(first, what)) return false;
    if (first < 0xfb) {
      out = first;
      return true;
    }
    switch (first) {
      case 0xfc: return read_le(out, 2, what);
      case 0xfd: return read_le(out, 3, what);
      case 0xfe: return read_le(out, 8, what);
      default: return fail_at(start, std::string("invalid ") + what + ": first byte 0x" + hex(first));
    }
  }

  bool read_bytes(size_t n, std::string_view& out, const char* what = "bytes") {
    if (!ensure(n, what)) return false;
    out = data_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  bool skip(size_t n, const char* what = "bytes") {
    std::string_view ignored;
    return read_bytes(n, ignored, what);
  }

  // A string preceded by its length as a 1-byte integer / a packed integer.
  bool read_u8_prefixed(std::string_view& out, const char* what = "string") {
    uint8_t n = 0;
    return read_u8(n, what) && read_bytes(n, out, what);
  }
  bool read_packed_prefixed(std::string_view& out, const char* what = "string") {
    uint64_t n = 0;
    if (!read_packed(n, what)) return false;
    if (n > remaining()) return fail_at(pos_, std::string("truncated ") + what + ": length " + std::to_string(n) +
                                                  ", " + std::to_string(remaining()) + " bytes left");
    return read_bytes(static_cast<size_t>(n), out, what);
  }

  std::string_view read_rest() {
    if (failed()) return {};
    std::string_view rest = data_.substr(pos_);
    pos_ = data_.size();
    return rest;
  }
  std::string_view peek_rest() const { return failed() ? std::string_view{} : data_.substr(pos_); }

  // Offsets include `base_offset`.
  size_t offset() const noexcept { return base_ + pos_; }
  size_t remaining() const noexcept { return data_.size() - pos_; }
  bool at_end() const noexcept { return pos_ == data_.size(); }

  bool failed() const noexcept { return failure_.has_value(); }
  const std::optional<CursorFailure>& failure() const noexcept { return failure_; }

  // Records a failure at the current position (an invariant of the decoded data); keeps an earlier one.
  // Always returns false.
  bool fail(std::string message) { return fail_at(pos_, std::move(message)); }
  void prefix_failure(std::string_view context) {
    if (failure_) failure_->message.insert(0, context);
  }

  // The failure as a DecodeError of `event_type`.
  DecodeError error(uint8_t event_type) const {
    if (!failure_) return DecodeError{event_type, offset(), "unknown failure"};
    return DecodeError{event_type, failure_->offset, failure_->message};
  }

 private:
  static std::string hex(uint8_t b) {
    char buf[3];
    std::snprintf(buf, sizeof buf, "%02x", b);
    return buf;
  }
  bool fail_at(size_t local_pos, std::string message) {
    if (!failure_) failure_ = CursorFailure{base_ + local_pos, std::move(message)};
    return false;
  }
  bool ensure(size_t n, const char* what) {
    if (failed()) return false;
    if (n > remaining()) {
      return fail_at(pos_, std::string("truncated ") + what + ": needs " + std::to_string(n) + " bytes, " +
                               std::to_string(remaining()) + " left");
    }
    return true;
  }
  template <typename U>
  bool read_le(U& out, size_t bytes, const char* what) {
    static_assert(std::is_unsigned_v<U>);
    if (!ensure(bytes, what)) return false;
    U v = 0;
    for (size_t i = 0; i < bytes; ++i) v |= static_cast<U>(static_cast<U>(static_cast<unsigned char>(data_[pos_ + i])) << (8 * i));
    pos_ += bytes;
    out = v;
    return true;
  }

  std::string_view data_;
  size_t base_ = 0;
  size_t pos_ = 0;
  std::optional<CursorFailure> failure_;
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
