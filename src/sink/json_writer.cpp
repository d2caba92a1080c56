#include "sink/json_writer.hpp"

#include <charconv>
#include <cmath>
#include <cstring>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "core/utf8.hpp"

namespace tidemark {

namespace {

constexpr uint64_t kOnes = 0x0101010101010101ULL;
constexpr uint64_t kHighBits = 0x8080808080808080ULL;

// Non-zero iff some byte of `word` is below 0x20, or is '"' or '\\' (bytes >= 0x80 never match, so
// UTF-8 sequences pass through untouched).
inline uint64_t needs_escape(uint64_t word) {
  const uint64_t control = (word - kOnes * 0x20) & ~word;
  const uint64_t quote = word ^ (kOnes * '"');
  const uint64_t backslash = word ^ (kOnes * '\\');
  const uint64_t has_quote = (quote - kOnes) & ~quote;
  const uint64_t has_backslash = (backslash - kOnes) & ~backslash;
  return (control | has_quote | has_backslash) & kHighBits;
}

inline bool byte_needs_escape(unsigned char c) { return c < 0x20 || c == '"' || c == '\\'; }

void append_escape(std::string& out, unsigned char c) {
  static constexpr char kHex[] = "0123456789abcdef";
  switch (c) {
    case '"': out.append("\\\""); return;
    case '\\': out.append("\\\\"); return;
    case '\n': out.append("\\n"); return;
    case '\r': out.append("\\r"); return;
    case '\t': out.append("\\t"); return;
    case '\b': out.append("\\b"); return;
    case '\f': out.append("\\f"); return;
    default: {
      const char buf[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xf]};
      out.append(buf, sizeof buf);
    }
  }
}

}  // namespace

namespace {

// The first byte at or after `p` that needs attention, or `end`: a byte to escape, or a byte >= 0x80 whose
// UTF-8 sequence must be checked.
const char* find_special(const char* p, const char* const end) {
#ifdef __SSE2__
  // 16 bytes per step: '"', '\\', bytes <= 0x1f (saturating subtract leaves exactly those at zero), and
  // bytes >= 0x80 (their top bit is what movemask collects).
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i max_control = _mm_set1_epi8(0x1f);
  const __m128i zero = _mm_setzero_si128();
  while (end - p >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i hits = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                                      _mm_or_si128(_mm_cmpeq_epi8(_mm_subs_epu8(v, max_control), zero), v));
    if (const int mask = _mm_movemask_epi8(hits); mask != 0) return p + __builtin_ctz(static_cast<unsigned>(mask));
    p += 16;
  }
#endif
  while (end - p >= 8) {
    uint64_t word;
    std::memcpy(&word, p, sizeof word);
    if ((needs_escape(word) | (word & kHighBits)) != 0) break;
    p += 8;
  }
  while (p < end && !byte_needs_escape(static_cast<unsigned char>(*p)) && static_cast<unsigned char>(*p) < 0x80) ++p;
  return p;
}

}  // namespace

void append_json_escaped(std::string& out, std::string_view s) {
  const char* p = s.data();
  const char* const end = p + s.size();
  for (;;) {
    const char* const hit = find_special(p, end);
    out.append(p, static_cast<size_t>(hit - p));
    if (hit == end) return;
    const auto c = static_cast<unsigned char>(*hit);
    if (c < 0x80) {
      append_escape(out, c);
      p = hit + 1;
      continue;
    }
    const auto* u = reinterpret_cast<const unsigned char*>(hit);
    const Utf8Sequence seq = utf8_sequence(u, reinterpret_cast<const unsigned char*>(end));
    const size_t length = seq.valid ? seq.length : 0;
    if (length == 0) {
      out.append(kUtf8Replacement);  // JSON must be UTF-8: a stray byte becomes U+FFFD, never raw bytes
      p = hit + 1;
    } else {
      out.append(hit, length);
      p = hit + length;
    }
  }
}

void JsonWriter::integer(int64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out_.append(buf, static_cast<size_t>(r.ptr - buf));
}

void JsonWriter::unsigned_integer(uint64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out_.append(buf, static_cast<size_t>(r.ptr - buf));
}

void JsonWriter::number(double v) {
  if (std::isnan(v)) {
    out_.append("\"NaN\"");
    return;
  }
  if (std::isinf(v)) {
    out_.append(v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    return;
  }
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out_.append(buf, static_cast<size_t>(r.ptr - buf));
}

void JsonWriter::string(std::string_view s) {
  out_.push_back('"');
  append_json_escaped(out_, s);
  out_.push_back('"');
}

void JsonWriter::base64(std::string_view bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  out_.push_back('"');
  const size_t start = out_.size();
  out_.resize(start + (bytes.size() + 2) / 3 * 4);
  char* dst = out_.data() + start;
  const auto* src = reinterpret_cast<const unsigned char*>(bytes.data());
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t n = uint32_t{src[i]} << 16 | uint32_t{src[i + 1]} << 8 | src[i + 2];
    *dst++ = kAlphabet[n >> 18];
    *dst++ = kAlphabet[(n >> 12) & 63];
    *dst++ = kAlphabet[(n >> 6) & 63];
    *dst++ = kAlphabet[n & 63];
  }
  if (const size_t rest = bytes.size() - i; rest > 0) {
    const uint32_t n = uint32_t{src[i]} << 16 | (rest == 2 ? uint32_t{src[i + 1]} << 8 : 0);
    *dst++ = kAlphabet[n >> 18];
    *dst++ = kAlphabet[(n >> 12) & 63];
    *dst++ = rest == 2 ? kAlphabet[(n >> 6) & 63] : '=';
    *dst++ = '=';
  }
  out_.push_back('"');
}

std::string JsonWriter::member_prefix(std::string_view name) {
  std::string out = "\"";
  append_json_escaped(out, name);
  out += "\":";
  return out;
}

}  // namespace tidemark
