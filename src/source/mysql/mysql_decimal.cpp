#include "source/mysql/mysql_decimal.hpp"

#include <array>
#include <cstdint>
#include <string_view>

namespace tidemark::mysql {

namespace {

constexpr int kDigitsPerGroup = 9;
constexpr std::array<size_t, 10> kDigitBytes = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};
constexpr std::array<uint32_t, 10> kPow10 = {1,      10,      100,      1000,      10000,
                                             100000, 1000000, 10000000, 100000000, 1000000000};

bool valid(int precision, int scale) { return precision >= 1 && precision <= 65 && scale >= 0 && scale <= 30 && scale <= precision; }

// Appends `value` as exactly `digits` decimal digits.
void append_digits(std::string& out, uint32_t value, int digits) {
  char buf[9];
  for (int i = digits - 1; i >= 0; --i) {
    buf[i] = static_cast<char>('0' + value % 10);
    value /= 10;
  }
  out.append(buf, static_cast<size_t>(digits));
}

}  // namespace

size_t mysql_decimal_size(int precision, int scale) {
  if (!valid(precision, scale)) return 0;
  const int intg = precision - scale;
  return static_cast<size_t>(intg / kDigitsPerGroup) * 4 + kDigitBytes[static_cast<size_t>(intg % kDigitsPerGroup)] +
         static_cast<size_t>(scale / kDigitsPerGroup) * 4 + kDigitBytes[static_cast<size_t>(scale % kDigitsPerGroup)];
}

bool read_mysql_decimal(BinlogCursor& cursor, int precision, int scale, std::string& out) {
  if (!valid(precision, scale)) {
    return cursor.fail("invalid DECIMAL precision " + std::to_string(precision) + " / scale " + std::to_string(scale));
  }
  const size_t size = mysql_decimal_size(precision, scale);
  const size_t start = cursor.offset();
  std::string_view raw;
  if (!cursor.read_bytes(size, raw, "DECIMAL")) return false;
  std::array<unsigned char, 32> b{};  // at most 30 bytes for DECIMAL(65,x)
  for (size_t i = 0; i < size; ++i) b[i] = static_cast<unsigned char>(raw[i]);
  const bool negative = (b[0] & 0x80) == 0;
  b[0] ^= 0x80;
  if (negative) {
    for (size_t i = 0; i < size; ++i) b[i] = static_cast<unsigned char>(~b[i]);
  }
  size_t pos = 0;
  bool bad = false;
  auto take = [&](size_t n, int digits) {
    uint32_t v = 0;
    for (size_t i = 0; i < n; ++i) v = (v << 8) | b[pos + i];
    pos += n;
    if (v >= kPow10[static_cast<size_t>(digits)]) bad = true;
    return v;
  };
  const int intg = precision - scale;
  const int intg0 = intg / kDigitsPerGroup, intg0x = intg % kDigitsPerGroup;
  const int frac0 = scale / kDigitsPerGroup, frac0x = scale % kDigitsPerGroup;

  std::string digits;  // integer digits, leading zeros included
  digits.reserve(static_cast<size_t>(intg));
  if (intg0x > 0) append_digits(digits, take(kDigitBytes[static_cast<size_t>(intg0x)], intg0x), intg0x);
  for (int g = 0; g < intg0; ++g) append_digits(digits, take(4, kDigitsPerGroup), kDigitsPerGroup);
  std::string fraction;
  fraction.reserve(static_cast<size_t>(scale));
  for (int g = 0; g < frac0; ++g) append_digits(fraction, take(4, kDigitsPerGroup), kDigitsPerGroup);
  if (frac0x > 0) append_digits(fraction, take(kDigitBytes[static_cast<size_t>(frac0x)], frac0x), frac0x);
  if (bad) {
    return cursor.fail("invalid DECIMAL(" + std::to_string(precision) + "," + std::to_string(scale) +
                       ") bytes at offset " + std::to_string(start) + ": a digit group exceeds its digits");
  }
  const size_t first = digits.find_first_not_of('0');
  const bool zero = first == std::string::npos && fraction.find_first_not_of('0') == std::string::npos;
  out.clear();
  if (negative && !zero) out.push_back('-');
  if (first == std::string::npos) {
    out.push_back('0');
  } else {
    out.append(digits, first);
  }
  if (scale > 0) {
    out.push_back('.');
    out.append(fraction);
  }
  return true;
}

}  // namespace tidemark::mysql
