#pragma once
// A bounds-checked reader over one message of PostgreSQL's wire protocols (network byte order), and the
// error type of the decoders built on it. No exceptions: every read returns false when the bytes are not
// there, and the cursor remembers the first failure (offset, what was being read, why). After a failure
// the cursor is stuck: later reads fail too and do not overwrite the first failure, so a decoder may
// read several fields and check once.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

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

// Where and why a cursor read failed.
struct CursorFailure {
  size_t offset = 0;    // where the failing read started
  std::string message;  // e.g. "truncated relation id: needs 4 bytes, 2 left"
};

class ByteCursor {
 public:
  explicit ByteCursor(std::string_view data) noexcept : data_(data) {}
  // The cursor keeps a view: a temporary std::string would be gone before the first read.
  template <typename S>
    requires std::is_same_v<S, std::string>
  explicit ByteCursor(S&&) = delete;

  // Fixed-size integers in network byte order. `what` names the field in the failure message.
  bool read_u8(uint8_t& out, const char* what = "byte") { return read_be(out, what); }
  bool read_u16(uint16_t& out, const char* what = "uint16") { return read_be(out, what); }
  bool read_u32(uint32_t& out, const char* what = "uint32") { return read_be(out, what); }
  bool read_u64(uint64_t& out, const char* what = "uint64") { return read_be(out, what); }
  bool read_i16(int16_t& out, const char* what = "int16") { return read_signed(out, what); }
  bool read_i32(int32_t& out, const char* what = "int32") { return read_signed(out, what); }
  bool read_i64(int64_t& out, const char* what = "int64") { return read_signed(out, what); }

  // A NUL-terminated string (PostgreSQL's String): `out` excludes the NUL, which is consumed. Fails when
  // no NUL follows before the end.
  bool read_cstring(std::string_view& out, const char* what = "string") {
    if (failed()) return false;
    // memchr must not see a null pointer, even with length 0 (an empty string_view may have one).
    const void* nul = remaining() == 0 ? nullptr : std::memchr(data_.data() + pos_, '\0', remaining());
    if (nul == nullptr) {
      fail(pos_, std::string("unterminated ") + what + ": no NUL in the " + std::to_string(remaining()) +
                     " remaining bytes");
      return false;
    }
    const auto length = static_cast<size_t>(static_cast<const char*>(nul) - (data_.data() + pos_));
    out = data_.substr(pos_, length);
    pos_ += length + 1;
    return true;
  }

  // Exactly `n` bytes, as a view into the underlying buffer.
  bool read_bytes(size_t n, std::string_view& out, const char* what = "bytes") {
    if (!ensure(n, what)) return false;
    out = data_.substr(pos_, n);
    pos_ += n;
    return true;
  }

  // The next byte without consuming it; nullopt at the end (not a failure).
  std::optional<uint8_t> peek_u8() const {
    if (failed() || pos_ >= data_.size()) return std::nullopt;
    return static_cast<uint8_t>(data_[pos_]);
  }

  // Everything not read yet (consumed).
  std::string_view read_rest() {
    if (failed()) return {};
    std::string_view rest = data_.substr(pos_);
    pos_ = data_.size();
    return rest;
  }

  size_t offset() const noexcept { return pos_; }
  size_t size() const noexcept { return data_.size(); }
  size_t remaining() const noexcept { return data_.size() - pos_; }
  bool at_end() const noexcept { return pos_ == data_.size(); }

  bool failed() const noexcept { return failure_.has_value(); }
  const std::optional<CursorFailure>& failure() const noexcept { return failure_; }

  // Records a failure found by the caller (an invariant of the decoded data); keeps an earlier one.
  // Always returns false, so that `return c.fail(...);` reads naturally.
  bool fail(size_t offset, std::string message) {
    if (!failure_) failure_ = CursorFailure{offset, std::move(message)};
    return false;
  }

  // Prepends context ("new tuple: column 3: ") to the recorded failure, if any. Lets a decoder name where
  // it was without building strings on the success path.
  void prefix_failure(std::string_view context) {
    if (failure_) failure_->message.insert(0, context);
  }

 private:
  bool ensure(size_t n, const char* what) {
    if (failed()) return false;
    if (n > remaining()) {
      fail(pos_, std::string("truncated ") + what + ": needs " + std::to_string(n) + " bytes, " +
                     std::to_string(remaining()) + " left");
      return false;
    }
    return true;
  }

  template <typename U>
  bool read_be(U& out, const char* what) {
    if (!ensure(sizeof(U), what)) return false;
    U value = 0;
    for (size_t i = 0; i < sizeof(U); ++i) {
      value = static_cast<U>((value << 8) | static_cast<U>(static_cast<unsigned char>(data_[pos_ + i])));
    }
    pos_ += sizeof(U);
    out = value;
    return true;
  }

  // Two's complement reinterpretation (well defined since C++20).
  template <typename S>
  bool read_signed(S& out, const char* what) {
    std::make_unsigned_t<S> u = 0;
    if (!read_be(u, what)) return false;
    out = static_cast<S>(u);
    return true;
  }

  std::string_view data_;
  size_t pos_ = 0;
  std::optional<CursorFailure> failure_;
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
