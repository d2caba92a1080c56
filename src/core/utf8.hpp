#pragma once
// UTF-8 well-formedness, for every place that must hand on valid text (JSON output, decoded strings).

#include <cstddef>
#include <string_view>

namespace tidemark {

inline constexpr std::string_view kUtf8Replacement = "\xEF\xBF\xBD";  // U+FFFD, as Java decoders emit

// The sequence that starts at `p` (p < end). Well-formed (RFC 3629: no overlongs, no surrogates, at most
// U+10FFFF): `valid` and its length. Otherwise the length of its maximal ill-formed subpart (at least 1):
// the bytes that one U+FFFD replaces under Unicode's recommended substitution.
struct Utf8Sequence {
  size_t length = 0;
  bool valid = false;
};

inline Utf8Sequence utf8_sequence(const unsigned char* p, const unsigned char* end) {
  const unsigned char lead = *p;
  if (lead < 0x80) return {1, true};
  size_t length = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) lo = 0xA0;
    if (lead == 0xED) hi = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) lo = 0x90;
    if (lead == 0xF4) hi = 0x8F;
  } else {
    return {1, false};
  }
  size_t k = 1;
  for (; k < length && p + k < end; ++k) {
    const unsigned char c = p[k];
    if (k == 1 ? (c < lo || c > hi) : (c < 0x80 || c > 0xBF)) break;
  }
  return {k, k == length};
}

}  // namespace tidemark
