// JsonWriter and append_json_escaped against independent references: a byte-at-a-time escaper written
// from RFC 8259, nlohmann::json's parser, RFC 4648's base64 test vectors and strtod.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sink/json_writer.hpp"

namespace tidemark {
namespace {

// Length of the well-formed UTF-8 sequence starting at s[i] (RFC 3629 section 3: shortest form only, no
// surrogates, nothing above U+10FFFF), or 0. Written by decoding the code point and checking its range.
size_t reference_utf8_length(std::string_view s, size_t i) {
  const auto lead = static_cast<unsigned char>(s[i]);
  size_t length;
  uint32_t cp;
  if ((lead & 0xE0) == 0xC0) {
    length = 2;
    cp = lead & 0x1Fu;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3;
    cp = lead & 0x0Fu;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4;
    cp = lead & 0x07u;
  } else {
    return 0;  // ASCII is handled elsewhere; 0x80..0xBF and 0xF8..0xFF never start a sequence
  }
  if (s.size() - i < length) return 0;
  for (size_t k = 1; k < length; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3Fu);
  }
  static constexpr uint32_t kMinimum[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMinimum[length]) return 0;             // overlong
  if (cp >= 0xD800 && cp <= 0xDFFF) return 0;      // surrogate
  if (cp > 0x10FFFF) return 0;                     // beyond Unicode
  return length;
}

// RFC 8259 section 7: '"', '\\' and U+0000..U+001F must be escaped; short forms where JSON has them,
// \u00xx otherwise. JSON text is UTF-8 (section 8.1): as json_writer.hpp documents, each byte that does not
// start a well-formed UTF-8 sequence becomes U+FFFD; well-formed sequences pass unchanged.
std::string reference_escape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      if (const size_t n = reference_utf8_length(s, i); n != 0) {
        out.append(s.substr(i, n));
        i += n;
      } else {
        out += "\xEF\xBF\xBD";
        ++i;
      }
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case 0x08: out += "\\b"; break;
      case 0x0c: out += "\\f"; break;
      case 0x0a: out += "\\n"; break;
      case 0x0d: out += "\\r"; break;
      case 0x09: out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
  return out;
}

std::string escaped(std::string_view s) {
  std::string out;
  append_json_escaped(out, s);
  return out;
}

// Random strings from several alphabets, so that both clean 8-byte words and every kind of special byte
// turn up at every offset.
std::string random_string(std::mt19937_64& rng, size_t length) {
  std::uniform_int_distribution<int> kind_dist(0, 3);
  std::uniform_int_distribution<int> byte_dist(0, 255);
  std::uniform_int_distribution<int> printable(0x20, 0x7e);
  std::uniform_int_distribution<int> high(0x80, 0xff);
  std::uniform_int_distribution<int> percent(0, 99);
  static constexpr unsigned char kSpecials[] = {'"', '\\', 0x00, 0x01, 0x08, 0x09, 0x0a, 0x0c, 0x0d, 0x1f, 0x20, 0x7f, 0x80, 0xff};
  std::uniform_int_distribution<size_t> special(0, sizeof kSpecials - 1);
  const int kind = kind_dist(rng);
  std::string s;
  if (kind == 3 && percent(rng) < 50) {
    // Mostly well-formed UTF-8 with some damage: cut sequences, stray continuation bytes, overlongs,
    // surrogates and code points past U+10FFFF.
    static const char* const kPieces[] = {"a", "\"", "\n", "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80",
                                          "\xF4\x8F\xBF\xBF", "\xEF\xBF\xBF", "\xC3", "\xE2\x82", "\xF0\x9F\x98",
                                          "\x80", "\xBF", "\xC0\xAF", "\xE0\x80\xAF", "\xED\xA0\x80",
                                          "\xF4\x90\x80\x80", "\xF5\x80\x80\x80", "\xFF", "\xC2\x80", "\xDF\xBF"};
    std::uniform_int_distribution<size_t> piece(0, std::size(kPieces) - 1);
    while (s.size() < length) s += kPieces[piece(rng)];
    s.resize(length);
    return s;
  }
  for (size_t i = 0; i < length; ++i) {
    int c;
    switch (kind) {
      case 0: c = byte_dist(rng); break;                                              // any byte
      case 1: c = percent(rng) < 5 ? kSpecials[special(rng)] : printable(rng); break;  // mostly clean ASCII
      case 2: c = percent(rng) < 5 ? kSpecials[special(rng)] : high(rng); break;       // mostly bytes >= 0x80
      default: c = kSpecials[special(rng)]; break;                                     // only edge bytes
    }
    s += static_cast<char>(c);
  }
  return s;
}

TEST(JsonEscape, MatchesReferenceOnRandomStrings) {
  std::mt19937_64 rng(20240611);
  for (int round = 0; round < 40000; ++round) {
    const size_t length = static_cast<size_t>(round % 41);  // 0..40: empty, tails, one and several 8-byte words
    const std::string s = random_string(rng, length);
    ASSERT_EQ(escaped(s), reference_escape(s)) << "input bytes: " << ::testing::PrintToString(s);
  }
}

TEST(JsonEscape, EveryByteAtEveryOffsetOfTheWord) {
  // Each byte value alone in a clean string, at each position of two words and a tail.
  for (const char filler : {'a', static_cast<char>(0x80), static_cast<char>(0xff), '!'}) {
    for (int b = 0; b < 256; ++b) {
      for (size_t pos = 0; pos < 35; ++pos) {  // two 16-byte blocks and a 3-byte tail
        std::string s(35, filler);
        s[pos] = static_cast<char>(b);
        ASSERT_EQ(escaped(s), reference_escape(s)) << "byte " << b << " at " << pos << " filler " << int(filler);
      }
    }
  }
}

TEST(JsonEscape, EveryAdjacentBytePairInAWord) {
  // Borrows between neighbouring bytes are where word-at-a-time tricks go wrong.
  std::string s(8, 'x');
  for (int a = 0; a < 256; ++a) {
    for (int b = 0; b < 256; ++b) {
      s[3] = static_cast<char>(a);
      s[4] = static_cast<char>(b);
      ASSERT_EQ(escaped(s), reference_escape(s)) << a << "," << b;
    }
  }
}

TEST(JsonEscape, OutputIsAlwaysValidJsonText) {
  // Whatever the bytes, the result must be a JSON string that a strict (UTF-8 validating) parser accepts.
  std::mt19937_64 rng(31337);
  for (int round = 0; round < 20000; ++round) {
    const std::string s = random_string(rng, static_cast<size_t>(round % 41));
    std::string doc;
    JsonWriter(doc).string(s);
    nlohmann::json parsed;
    ASSERT_NO_THROW(parsed = nlohmann::json::parse(doc)) << ::testing::PrintToString(s);
    ASSERT_TRUE(parsed.is_string());
  }
}

TEST(JsonEscape, MalformedUtf8BecomesReplacementCharacters) {
  const std::string r = "\xEF\xBF\xBD";
  EXPECT_EQ(escaped("\xC3\xA9"), "\xC3\xA9");
  EXPECT_EQ(escaped("\xF0\x9F\x98\x80"), "\xF0\x9F\x98\x80");
  EXPECT_EQ(escaped("\xF4\x8F\xBF\xBF"), "\xF4\x8F\xBF\xBF");  // U+10FFFF, the last code point
  EXPECT_EQ(escaped("\xC3"), r);                                      // cut short
  EXPECT_EQ(escaped("x\xE2\x82"), "x" + r + r);                        // one per byte that starts nothing
  EXPECT_EQ(escaped("\x80"), r);                                      // stray continuation byte
  EXPECT_EQ(escaped("\xC0\xAF"), r + r);                              // overlong '/'
  EXPECT_EQ(escaped("\xE0\x80\xAF"), r + r + r);                      // overlong '/'
  EXPECT_EQ(escaped("\xED\xA0\x80"), r + r + r);                      // UTF-16 surrogate
  EXPECT_EQ(escaped("\xF4\x90\x80\x80"), r + r + r + r);              // past U+10FFFF
  EXPECT_EQ(escaped("\xFF\""), r + "\\\"");
  EXPECT_EQ(escaped("\xC3\"\xA9"), r + "\\\"" + r);
}

TEST(JsonEscape, AppendsToWhatIsThere) {
  std::string out = "prefix:";
  append_json_escaped(out, "a\"b");
  EXPECT_EQ(out, "prefix:a\\\"b");
}

TEST(JsonEscape, KnownEscapes) {
  EXPECT_EQ(escaped(std::string("\0", 1)), "\\u0000");
  EXPECT_EQ(escaped("\x1f"), "\\u001f");
  EXPECT_EQ(escaped("\n\r\t\b\f"), "\\n\\r\\t\\b\\f");
  EXPECT_EQ(escaped("\x7f"), "\x7f");
  EXPECT_EQ(escaped("/"), "/");
  EXPECT_EQ(escaped("h\xc3\xa9llo"), "h\xc3\xa9llo");
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

TEST(JsonEscape, ValidUtf8RoundTripsThroughAJsonParser) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> range_dist(0, 4);
  for (int round = 0; round < 20000; ++round) {
    const size_t length = static_cast<size_t>(round % 41);
    std::string s;
    while (s.size() < length) {
      uint32_t cp = 0;
      switch (range_dist(rng)) {
        case 0: cp = std::uniform_int_distribution<uint32_t>(0, 0x1f)(rng); break;
        case 1: cp = std::uniform_int_distribution<uint32_t>(0x20, 0x7f)(rng); break;
        case 2: cp = std::uniform_int_distribution<uint32_t>(0x80, 0x7ff)(rng); break;
        case 3:
          do cp = std::uniform_int_distribution<uint32_t>(0x800, 0xffff)(rng);
          while (cp >= 0xd800 && cp <= 0xdfff);  // surrogates are not characters
          break;
        default: cp = std::uniform_int_distribution<uint32_t>(0x10000, 0x10ffff)(rng); break;
      }
      append_utf8(s, cp);
    }
    std::string doc;
    JsonWriter(doc).string(s);
    nlohmann::json parsed;
    ASSERT_NO_THROW(parsed = nlohmann::json::parse(doc)) << ::testing::PrintToString(doc);
    ASSERT_TRUE(parsed.is_string());
    ASSERT_EQ(parsed.get<std::string>(), s);
  }
}

TEST(JsonWriter, MemberPrefixEscapesTheName) {
  EXPECT_EQ(JsonWriter::member_prefix("id"), "\"id\":");
  EXPECT_EQ(JsonWriter::member_prefix("we\"ird\\"), "\"we\\\"ird\\\\\":");
  const auto doc = nlohmann::json::parse("{" + JsonWriter::member_prefix("a\nb") + "1}");
  EXPECT_EQ(doc.at("a\nb"), 1);
}

std::string base64_of(std::string_view bytes) {
  std::string out;
  JsonWriter(out).base64(bytes);
  return out;
}

TEST(JsonWriter, Base64Rfc4648Vectors) {
  // RFC 4648 section 10.
  EXPECT_EQ(base64_of(""), "\"\"");
  EXPECT_EQ(base64_of("f"), "\"Zg==\"");
  EXPECT_EQ(base64_of("fo"), "\"Zm8=\"");
  EXPECT_EQ(base64_of("foo"), "\"Zm9v\"");
  EXPECT_EQ(base64_of("foob"), "\"Zm9vYg==\"");
  EXPECT_EQ(base64_of("fooba"), "\"Zm9vYmE=\"");
  EXPECT_EQ(base64_of("foobar"), "\"Zm9vYmFy\"");
  // Every bit of the alphabet's ends: 0xfb 0xff 0xbf is "+/+/".
  EXPECT_EQ(base64_of("\xfb\xff\xbf"), "\"+/+/\"");
  EXPECT_EQ(base64_of(std::string("\0\0\0", 3)), "\"AAAA\"");
}

// An independent decoder for the round trip below.
std::string base64_decode(std::string_view text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (const char c : text) {
    if (c == '=') break;
    const int v = value(c);
    if (v < 0) throw std::runtime_error("bad base64 character");
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  return out;
}

TEST(JsonWriter, Base64RoundTripsRandomBytes) {
  std::mt19937_64 rng(99);
  std::uniform_int_distribution<int> byte_dist(0, 255);
  for (size_t length = 0; length < 200; ++length) {
    std::string bytes;
    for (size_t i = 0; i < length; ++i) bytes += static_cast<char>(byte_dist(rng));
    const std::string out = base64_of(bytes);
    ASSERT_EQ(out.size(), 2 + (length + 2) / 3 * 4);
    ASSERT_EQ(out.front(), '"');
    ASSERT_EQ(out.back(), '"');
    ASSERT_EQ(base64_decode(std::string_view(out).substr(1, out.size() - 2)), bytes) << length;
  }
}

TEST(JsonWriter, Base64AppendsToWhatIsThere) {
  std::string out = "[1,";
  JsonWriter(out).base64("foo");
  EXPECT_EQ(out, "[1,\"Zm9v\"");
}

std::string int_text(int64_t v) {
  std::string out;
  JsonWriter(out).integer(v);
  return out;
}
std::string uint_text(uint64_t v) {
  std::string out;
  JsonWriter(out).unsigned_integer(v);
  return out;
}
std::string double_text(double v) {
  std::string out;
  JsonWriter(out).number(v);
  return out;
}

TEST(JsonWriter, Integers) {
  EXPECT_EQ(int_text(0), "0");
  EXPECT_EQ(int_text(-1), "-1");
  EXPECT_EQ(int_text(std::numeric_limits<int64_t>::min()), "-9223372036854775808");
  EXPECT_EQ(int_text(std::numeric_limits<int64_t>::max()), "9223372036854775807");
  EXPECT_EQ(uint_text(0), "0");
  EXPECT_EQ(uint_text(std::numeric_limits<uint64_t>::max()), "18446744073709551615");
  EXPECT_EQ(nlohmann::json::parse(int_text(std::numeric_limits<int64_t>::min())).get<int64_t>(),
            std::numeric_limits<int64_t>::min());
  EXPECT_EQ(nlohmann::json::parse(uint_text(std::numeric_limits<uint64_t>::max())).get<uint64_t>(),
            std::numeric_limits<uint64_t>::max());
}

TEST(JsonWriter, NonFiniteDoublesAreStrings) {
  EXPECT_EQ(double_text(std::numeric_limits<double>::quiet_NaN()), "\"NaN\"");
  EXPECT_EQ(double_text(-std::numeric_limits<double>::quiet_NaN()), "\"NaN\"");
  EXPECT_EQ(double_text(std::numeric_limits<double>::infinity()), "\"Infinity\"");
  EXPECT_EQ(double_text(-std::numeric_limits<double>::infinity()), "\"-Infinity\"");
}

// Number of significant digits in a decimal rendering ("-1.2500e+10" has 3).
size_t significant_digits(const std::string& text) {
  std::string digits;
  for (const char c : text) {
    if (c == 'e' || c == 'E') break;
    if (c >= '0' && c <= '9') digits += c;
  }
  const size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) return 1;
  const size_t last = digits.find_last_not_of('0');
  return last - first + 1;
}

// The fewest significant digits with which %.*e reads back to exactly `v`.
size_t shortest_digits(double v) {
  for (int precision = 0; precision < 17; ++precision) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*e", precision, v);
    if (std::strtod(buf, nullptr) == v) return static_cast<size_t>(precision + 1);
  }
  return 17;
}

void expect_exact_shortest(double v) {
  const std::string text = double_text(v);
  SCOPED_TRACE(text);
  char* end = nullptr;
  const double back = std::strtod(text.c_str(), &end);
  ASSERT_EQ(end, text.c_str() + text.size());
  ASSERT_EQ(std::memcmp(&back, &v, sizeof v), 0) << "does not read back to the same double";
  nlohmann::json parsed;
  ASSERT_NO_THROW(parsed = nlohmann::json::parse(text));  // a JSON number, not something strtod alone accepts
  ASSERT_TRUE(parsed.is_number());
  ASSERT_EQ(parsed.get<double>(), v);
  const size_t digits = shortest_digits(v);
  if (significant_digits(text) != digits) {
    // Allowed only when plain integer notation (which spells out every digit of a large integral value) is
    // shorter than the scientific notation with the fewest digits: to_chars picks the fewest characters.
    char sci[64];
    std::snprintf(sci, sizeof sci, "%.*e", static_cast<int>(digits) - 1, v);
    ASSERT_EQ(text.find_first_of(".eE"), std::string::npos) << "not the shortest rendering; shortest is " << sci;
    ASSERT_LE(text.size(), std::strlen(sci)) << "not the shortest rendering; shortest is " << sci;
    ASSERT_EQ(std::strtod(sci, nullptr), v);
  }
}

TEST(JsonWriter, DoublesRoundTripExactly) {
  for (const double v : {0.0, 1.0, -1.0, 0.1, 0.2, 0.30000000000000004, 1.0 / 3.0, 2.0 / 3.0, 100.0, 1e21, 1e22,
                         123456789012345680.0, 9007199254740993.0, 5e-324, 2.2250738585072014e-308,
                         std::numeric_limits<double>::max(), std::numeric_limits<double>::lowest(),
                         std::numeric_limits<double>::epsilon(), -1.5e-300, 3.141592653589793})
    expect_exact_shortest(v);

  std::mt19937_64 rng(1234);
  for (int i = 0; i < 20000; ++i) {
    const uint64_t bits = rng();
    double v;
    std::memcpy(&v, &bits, sizeof v);
    if (!std::isfinite(v)) continue;
    expect_exact_shortest(v);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(JsonWriter, NegativeZeroKeepsItsSign) {
  const std::string text = double_text(-0.0);
  const double back = std::strtod(text.c_str(), nullptr);
  EXPECT_EQ(back, 0.0);
  EXPECT_TRUE(std::signbit(back)) << text;
}

TEST(JsonWriter, Literals) {
  std::string out;
  JsonWriter w(out);
  w.raw('[');
  w.null();
  w.raw(',');
  w.boolean(true);
  w.raw(',');
  w.boolean(false);
  w.raw(",");
  w.string("x");
  w.raw(']');
  EXPECT_EQ(out, "[null,true,false,\"x\"]");
}

}  // namespace
}  // namespace tidemark
