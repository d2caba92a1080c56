#pragma once
// Reads a fuzz input front to back: fixed-size fields first, the rest as the payload. Running out of
// bytes yields zeros, so every input, however short, is a valid one for the harness.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tidemark::fuzz {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : data_(reinterpret_cast<const char*>(data), size) {}

  uint8_t u8() {
    if (pos_ >= data_.size()) return 0;
    return static_cast<uint8_t>(data_[pos_++]);
  }
  uint16_t u16() {
    const uint16_t lo = u8();
    return static_cast<uint16_t>(lo | static_cast<uint16_t>(u8()) << 8);
  }
  uint32_t u32() {
    const uint32_t lo = u16();
    return lo | static_cast<uint32_t>(u16()) << 16;
  }
  // Up to `n` bytes (fewer at the end).
  std::string_view bytes(size_t n) {
    const std::string_view out = data_.substr(pos_, n);
    pos_ += out.size();
    return out;
  }
  // Up to the next `separator` (consumed, not returned), or the rest.
  std::string_view until(char separator) {
    const size_t end = data_.find(separator, pos_);
    const std::string_view out = data_.substr(pos_, end == std::string_view::npos ? std::string_view::npos : end - pos_);
    pos_ = end == std::string_view::npos ? data_.size() : end + 1;
    return out;
  }
  std::string_view rest() { return bytes(data_.size() - pos_); }
  bool at_end() const { return pos_ >= data_.size(); }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

}  // namespace tidemark::fuzz
