#pragma once
// A bounds-checked reader over one message of a wire protocol, for the decoders of both logs: the
// PostgreSQL cursor (network byte order) and the binlog cursor (little-endian, packed integers) add
// their named reads on top of it.
//
// No exceptions: every read returns false when the bytes are not there, and the reader keeps the first
// failure (offset, what was being read, why). After a failure it is stuck: later reads fail too and do
// not overwrite the first failure, so a decoder may read several fields and check once.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace tidemark {

// Where and why a read failed: `offset` includes the reader's base offset.
struct CursorFailure {
  size_t offset = 0;    // where the failing read started
  std::string message;  // e.g. "truncated relation id: needs 4 bytes, 2 left"
};

class ByteReader {
 public:
  // `base_offset` is added to reported offsets (a reader over an event body reports offsets within the
  // whole event).
  explicit ByteReader(std::string_view data, size_t base_offset = 0) noexcept : data_(data), base_(base_offset) {}
  // The reader keeps a view: a temporary std::string would be gone before the first read.
  template <typename S>
    requires std::is_same_v<S, std::string>
  explicit ByteReader(S&&, size_t = 0) = delete;

  // Unsigned integers of `bytes` (1..sizeof(U)) bytes, in network (big-endian) or little-endian order.
  template <typename U>
  bool read_be(U& out, size_t bytes, const char* what) {
    static_assert(std::is_unsigned_v<U>);
    if (!ensure(bytes, what)) return false;
    U value = 0;
    for (size_t i = 0; i < bytes; ++i)
      value = static_cast<U>((value << 8) | static_cast<U>(static_cast<unsigned char>(data_[pos_ + i])));
    pos_ += bytes;
    out = value;
    return true;
  }
  template <typename U>
  bool read_le(U& out, size_t bytes, const char* what) {
    static_assert(std::is_unsigned_v<U>);
    if (!ensure(bytes, what)) return false;
    U value = 0;
    for (size_t i = 0; i < bytes; ++i)
      value |= static_cast<U>(static_cast<U>(static_cast<unsigned char>(data_[pos_ + i])) << (8 * i));
    pos_ += bytes;
    out = value;
    return true;
  }

  // Exactly `n` bytes, as a view into the underlying buffer.
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

  // A NUL-terminated string: `out` excludes the NUL, which is consumed. Fails when no NUL follows.
  bool read_cstring(std::string_view& out, const char* what = "string") {
    if (failed()) return false;
    // memchr must not see a null pointer, even with length 0 (an empty string_view may have one).
    const void* nul = remaining() == 0 ? nullptr : std::memchr(data_.data() + pos_, '\0', remaining());
    if (nul == nullptr)
      return fail(std::string("unterminated ") + what + ": no NUL in the " + std::to_string(remaining()) +
                  " remaining bytes");
    const auto length = static_cast<size_t>(static_cast<const char*>(nul) - (data_.data() + pos_));
    out = data_.substr(pos_, length);
    pos_ += length + 1;
    return true;
  }

  // The next byte without consuming it; nullopt at the end (not a failure).
  std::optional<uint8_t> peek_u8() const {
    if (failed() || pos_ >= data_.size()) return std::nullopt;
    return static_cast<uint8_t>(data_[pos_]);
  }
  // Everything not read yet: consumed, or only looked at.
  std::string_view read_rest() {
    if (failed()) return {};
    std::string_view rest = data_.substr(pos_);
    pos_ = data_.size();
    return rest;
  }
  std::string_view peek_rest() const { return failed() ? std::string_view{} : data_.substr(pos_); }

  // Offsets include `base_offset`.
  size_t offset() const noexcept { return base_ + pos_; }
  size_t size() const noexcept { return data_.size(); }
  size_t remaining() const noexcept { return data_.size() - pos_; }
  bool at_end() const noexcept { return pos_ == data_.size(); }

  bool failed() const noexcept { return failure_.has_value(); }
  const std::optional<CursorFailure>& failure() const noexcept { return failure_; }

  // Records a failure found by the caller (an invariant of the decoded data), at the current position or
  // at `offset` (as offset() reports it); keeps an earlier one. Always returns false, so that
  // `return c.fail(...);` reads naturally.
  bool fail(std::string message) { return fail(offset(), std::move(message)); }
  bool fail(size_t at, std::string message) {
    if (!failure_) failure_ = CursorFailure{at, std::move(message)};
    return false;
  }

  // Prepends context ("new tuple: column 3: ") to the recorded failure, if any. Lets a decoder name where
  // it was without building strings on the success path.
  void prefix_failure(std::string_view context) {
    if (failure_) failure_->message.insert(0, context);
  }

 protected:
  bool ensure(size_t n, const char* what) {
    if (failed()) return false;
    if (n > remaining())
      return fail(std::string("truncated ") + what + ": needs " + std::to_string(n) + " bytes, " +
                  std::to_string(remaining()) + " left");
    return true;
  }

 private:
  std::string_view data_;
  size_t base_ = 0;
  size_t pos_ = 0;
  std::optional<CursorFailure> failure_;
};

}  // namespace tidemark
