#include "tidemark/value.hpp"

namespace tidemark {

void append_uuid(std::string& out, const Uuid& u) {
  static constexpr char kHex[] = "0123456789abcdef";
  char text[36];
  size_t at = 0;
  for (size_t i = 0; i < u.bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) text[at++] = '-';
    text[at++] = kHex[u.bytes[i] >> 4];
    text[at++] = kHex[u.bytes[i] & 0x0f];
  }
  out.append(text, sizeof text);
}

std::string uuid_to_string(const Uuid& u) {
  std::string out;
  append_uuid(out, u);
  return out;
}

namespace {
int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

bool parse_uuid(std::string_view text, Uuid& out) {
  size_t byte = 0;
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '-') {
      ++i;
      continue;
    }
    if (i + 1 >= text.size() || byte >= out.bytes.size()) return false;
    const int hi = hex_digit(text[i]);
    const int lo = hex_digit(text[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out.bytes[byte++] = static_cast<uint8_t>(hi << 4 | lo);
    i += 2;
  }
  return byte == out.bytes.size();
}

}  // namespace tidemark
