// PostgreSQL text output forms to Values. First hand-checked cases; then a live PostgreSQL 15 (started by
// scripts/test.sh) as the oracle: for many extreme and special values of every type, the server prints the
// value's text form (the same output function pgoutput uses) next to an independent numeric oracle it
// computes itself (epoch microseconds, day differences, the binary send form in hex...), and the parser's
// Value must agree with the oracle.

#include <gtest/gtest.h>

#include <libpq-fe.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "source/postgres/pg_value_parser.hpp"

namespace tidemark::pg {
namespace {

// ---------------------------------------------------------------------------------------------------------
// Helpers

std::string show(const Value& v);

std::string show_array(const Array& a) {
  std::string s = "Array{";
  for (size_t i = 0; i < a.items.size(); ++i) s += (i ? ", " : "") + show(a.items[i]);
  return s + "}";
}

std::string show(const Value& value) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        std::ostringstream o;
        if constexpr (std::is_same_v<T, Null>) {
          o << "Null";
        } else if constexpr (std::is_same_v<T, Unavailable>) {
          o << "Unavailable";
        } else if constexpr (std::is_same_v<T, bool>) {
          o << "bool " << (x ? "true" : "false");
        } else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, uint64_t>) {
          o << "int " << x;
        } else if constexpr (std::is_same_v<T, double>) {
          char buf[40];
          const auto r = std::to_chars(buf, buf + sizeof buf, x);
          o << "double " << std::string(buf, r.ptr);
        } else if constexpr (std::is_same_v<T, Decimal>) {
          o << "Decimal " << x.text;
        } else if constexpr (std::is_same_v<T, std::string>) {
          o << "string '" << x << "'";
        } else if constexpr (std::is_same_v<T, Bytes>) {
          o << "Bytes[" << x.data.size() << "]";
        } else if constexpr (std::is_same_v<T, Date>) {
          o << "Date " << x.days;
        } else if constexpr (std::is_same_v<T, Time>) {
          o << "Time " << x.micros;
        } else if constexpr (std::is_same_v<T, Timestamp>) {
          o << "Timestamp " << x.micros;
        } else if constexpr (std::is_same_v<T, TimestampTz>) {
          o << "TimestampTz " << x.micros;
        } else if constexpr (std::is_same_v<T, Interval>) {
          o << "Interval " << x.months << "m " << x.days << "d " << x.micros << "us";
        } else if constexpr (std::is_same_v<T, Json>) {
          o << "Json " << x.text;
        } else if constexpr (std::is_same_v<T, Uuid>) {
          o << "Uuid " << uuid_to_string(x);
        } else if constexpr (std::is_same_v<T, Array>) {
          o << show_array(x);
        }
        return o.str();
      },
      value.v);
}

const PgTypeRegistry& builtins() {
  static const PgTypeRegistry registry;
  return registry;
}

void expect_parse(uint32_t type_oid, std::string_view text, const Value& expected,
                  const PgTypeRegistry& types = builtins()) {
  SCOPED_TRACE("type " + std::to_string(type_oid) + " text '" + std::string(text) + "'");
  const PgParseResult r = parse_pg_text(type_oid, -1, text, types);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_TRUE(r.value() == expected) << "got " << show(r.value()) << ", want " << show(expected);
}

PgParseError expect_error(uint32_t type_oid, std::string_view text, const PgTypeRegistry& types = builtins()) {
  SCOPED_TRACE("type " + std::to_string(type_oid) + " text '" + std::string(text) + "'");
  const PgParseResult r = parse_pg_text(type_oid, -1, text, types);
  EXPECT_FALSE(r.ok()) << "parsed as " << show(r.value());
  return r.ok() ? PgParseError{} : r.error();
}

double parsed_double(uint32_t type_oid, std::string_view text) {
  const PgParseResult r = parse_pg_text(type_oid, -1, text, builtins());
  if (!r.ok() || !std::holds_alternative<double>(r.value().v)) {
    ADD_FAILURE() << "'" << text << "' did not parse to a double";
    return 0;
  }
  return std::get<double>(r.value().v);
}

std::string shortest(double d) {
  char buf[40];
  const auto r = std::to_chars(buf, buf + sizeof buf, d);
  return std::string(buf, r.ptr);
}

uint64_t bits_of(double d) {
  uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}

uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// A decimal number's significant digits and power of ten, so that "1.2345679e+08" and "123456790" compare
// equal: "12345679e1".
std::string normalized_decimal(std::string_view s) {
  std::string digits;
  bool negative = false;
  size_t i = 0;
  if (i < s.size() && s[i] == '-') {
    negative = true;
    ++i;
  }
  long point = -1, n = 0, exponent = 0;
  for (; i < s.size() && s[i] != 'e' && s[i] != 'E'; ++i) {
    if (s[i] == '.') {
      point = n;
      continue;
    }
    digits.push_back(s[i]);
    ++n;
  }
  if (point < 0) point = n;
  if (i < s.size()) {
    std::string_view e = s.substr(i + 1);
    if (!e.empty() && e.front() == '+') e.remove_prefix(1);
    std::from_chars(e.data(), e.data() + e.size(), exponent);
  }
  size_t leading = 0;
  while (leading < digits.size() && digits[leading] == '0') ++leading;
  digits.erase(0, leading);
  point -= static_cast<long>(leading);
  while (!digits.empty() && digits.back() == '0') digits.pop_back();
  if (digits.empty()) return negative ? "-0" : "0";
  return (negative ? "-" : "") + digits + "e" + std::to_string(point + exponent - static_cast<long>(digits.size()));
}

std::string unhex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

// Independent reading of "HH:MM:SS[.ffffff]Z".
std::optional<int64_t> zoned_time_micros(const std::string& s) {
  unsigned h = 0, m = 0, sec = 0;
  char z = 0;
  if (s.size() == 9 && std::sscanf(s.c_str(), "%2u:%2u:%2u%c", &h, &m, &sec, &z) == 4 && z == 'Z') {
    return (int64_t{h} * 3600 + m * 60 + sec) * 1'000'000;
  }
  unsigned frac = 0;
  if (s.size() == 16 && s[8] == '.' && std::sscanf(s.c_str(), "%2u:%2u:%2u.%6u%c", &h, &m, &sec, &frac, &z) == 5 &&
      z == 'Z' && frac != 0) {
    return (int64_t{h} * 3600 + m * 60 + sec) * 1'000'000 + frac;
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------------------
// Hand-checked cases

TEST(PgTypeRegistry, KnowsTheBuiltinsAndTheirArrays) {
  const PgTypeRegistry types;
  ASSERT_NE(types.find(oid::kInt4), nullptr);
  EXPECT_EQ(types.find(oid::kInt4)->name, "int4");
  EXPECT_EQ(types.find(oid::kInt4)->category, 'N');
  const PgTypeInfo* array = types.find(oid::kInt4Array);
  ASSERT_NE(array, nullptr);
  EXPECT_EQ(array->category, 'A');
  EXPECT_EQ(array->element_oid, oid::kInt4);
  EXPECT_EQ(array->name, "_int4");
  // Every array type points to a known scalar type, and every scalar has exactly one array type.
  int arrays = 0, scalars = 0;
  for (uint32_t o = 1; o < 10000; ++o) {
    const PgTypeInfo* t = PgTypeRegistry::builtin(o);
    if (!t) continue;
    if (t->category == 'A') {
      ++arrays;
      ASSERT_NE(PgTypeRegistry::builtin(t->element_oid), nullptr) << t->name;
      EXPECT_EQ("_" + PgTypeRegistry::builtin(t->element_oid)->name, t->name);
    } else {
      ++scalars;
      EXPECT_EQ(t->element_oid, 0u) << t->name;
    }
  }
  EXPECT_EQ(scalars, 31);
  EXPECT_EQ(arrays, 31);
  EXPECT_EQ(types.find(600), nullptr);  // point: not known
  EXPECT_EQ(types.type_name(600), "oid 600");
}

TEST(PgTypeRegistry, RegistersRuntimeTypesButNeverOverridesBuiltins) {
  PgTypeRegistry types;
  EXPECT_FALSE(types.add({oid::kInt4, 'S', 0, 0, "evil", {}}));
  EXPECT_FALSE(types.add({0, 'E', 0, 0, "zero", {}}));
  EXPECT_EQ(types.find(oid::kInt4)->name, "int4");
  EXPECT_TRUE(types.add({16390, 'E', 0, 0, "mood", {}}));
  EXPECT_TRUE(types.add({16389, 'A', 16390, 0, "_mood", {}}));
  EXPECT_TRUE(types.add({16400, 'N', 0, oid::kInt4, "posint", {}}));
  EXPECT_TRUE(types.add({16401, 'N', 0, 16400, "posint2", {}}));  // domain over a domain
  EXPECT_TRUE(types.add({16402, 'A', oid::kInt4, 0, "_int4_again", {}}));
  EXPECT_TRUE(types.add({16403, 'A', 0, oid::kTextArray, "textlist", {}}));  // domain over text[]
  EXPECT_EQ(types.registered_count(), 6u);
  EXPECT_EQ(types.type_name(16400), "posint");

  expect_parse(16390, "happy", std::string("happy"), types);
  expect_parse(16389, "{sad,\"very happy\",NULL}", Array{{std::string("sad"), std::string("very happy"), Null{}}},
               types);
  expect_parse(16400, "42", int64_t{42}, types);
  expect_parse(16401, "-7", int64_t{-7}, types);
  expect_parse(16402, "{1,2}", Array{{int64_t{1}, int64_t{2}}}, types);
  expect_parse(16403, "{a,b}", Array{{std::string("a"), std::string("b")}}, types);
  const PgParseError e = expect_error(16401, "x", types);
  EXPECT_EQ(e.type_oid, oid::kInt4);
  EXPECT_NE(e.message.find("domain posint"), std::string::npos) << e.message;

  // Replacing a registration (a type altered, or an OID reused after a drop) takes effect.
  EXPECT_TRUE(types.add({16390, 'N', 0, oid::kInt8, "mood_now_a_domain", {}}));
  expect_parse(16390, "5", int64_t{5}, types);

  // A domain cycle (not possible in PostgreSQL, but the registry takes what it is given) ends in an error.
  EXPECT_TRUE(types.add({16500, 'U', 0, 16501, "a", {}}));
  EXPECT_TRUE(types.add({16501, 'U', 0, 16500, "b", {}}));
  EXPECT_NE(expect_error(16500, "x", types).message.find("nest"), std::string::npos);
}

TEST(PgValueParser, UnknownTypesAndNonArrayCategoriesGiveTheirText) {
  PgTypeRegistry types;
  expect_parse(600, "(1,2)", std::string("(1,2)"));               // point
  expect_parse(3904, "[1,10)", std::string("[1,10)"));             // int4range
  expect_parse(1017, "{\"(1,2)\"}", std::string("{\"(1,2)\"}"));  // point[], its element type unknown
  expect_parse(99999, "", std::string(""));
  ASSERT_TRUE(types.add({16600, 'C', 0, 0, "pair", {}}));
  expect_parse(16600, "(1,\"a b\")", std::string("(1,\"a b\")"), types);
  // A registered array of an unknown element type: elements as text.
  ASSERT_TRUE(types.add({16601, 'A', 600, 0, "_point", {}}));
  expect_parse(16601, "{\"(1,2)\",NULL}", Array{{std::string("(1,2)"), Null{}}}, types);
  // box[] as the source registers it from pg_type: box's array delimiter is ';', so the array stays text.
  ASSERT_TRUE(types.add({1020, 'A', 603, 0, "_box", {}}));
  expect_parse(1020, "{(1,1),(0,0);(2,2),(1,1)}", std::string("{(1,1),(0,0);(2,2),(1,1)}"), types);
}

TEST(PgValueParser, Integers) {
  expect_parse(oid::kInt2, "-32768", int64_t{-32768});
  expect_parse(oid::kInt2, "32767", int64_t{32767});
  expect_parse(oid::kInt4, "-2147483648", int64_t{-2147483648LL});
  expect_parse(oid::kInt4, "0", int64_t{0});
  expect_parse(oid::kInt8, "-9223372036854775808", std::numeric_limits<int64_t>::min());
  expect_parse(oid::kInt8, "9223372036854775807", std::numeric_limits<int64_t>::max());
  expect_parse(oid::kOid, "4294967295", int64_t{4294967295LL});
  for (const char* bad : {"", "-", "1.0", "+1", " 1", "1 ", "9223372036854775808", "0x10", "1e3"}) {
    expect_error(oid::kInt8, bad);
  }
}

TEST(PgValueParser, NumericIsExactText) {
  expect_parse(oid::kNumeric, "0", Decimal{"0"});
  expect_parse(oid::kNumeric, "-1234.5600", Decimal{"-1234.5600"});
  expect_parse(oid::kNumeric, "0.00000000000000000001", Decimal{"0.00000000000000000001"});
  expect_parse(oid::kNumeric, "NaN", Decimal{"NaN"});
  expect_parse(oid::kNumeric, "Infinity", Decimal{"Infinity"});
  expect_parse(oid::kNumeric, "-Infinity", Decimal{"-Infinity"});
  const std::string big = "-" + std::string(1000, '9') + "." + std::string(1000, '1');
  expect_parse(oid::kNumeric, big, Decimal{big});
  for (const char* bad : {"", "-", ".5", "5.", "1e5", "+1", "1.2.3", "nan", "inf", "1,000", " 1"}) {
    expect_error(oid::kNumeric, bad);
  }
}

TEST(PgValueParser, FloatsIncludingSpecialValues) {
  EXPECT_TRUE(std::isnan(parsed_double(oid::kFloat8, "NaN")));
  EXPECT_EQ(parsed_double(oid::kFloat8, "Infinity"), std::numeric_limits<double>::infinity());
  EXPECT_EQ(parsed_double(oid::kFloat4, "-Infinity"), -std::numeric_limits<double>::infinity());
  const double negative_zero = parsed_double(oid::kFloat8, "-0");
  EXPECT_EQ(negative_zero, 0.0);
  EXPECT_TRUE(std::signbit(negative_zero));
  EXPECT_EQ(parsed_double(oid::kFloat8, "5e-324"), std::numeric_limits<double>::denorm_min());
  EXPECT_EQ(parsed_double(oid::kFloat8, "1.7976931348623157e+308"), std::numeric_limits<double>::max());
  EXPECT_EQ(parsed_double(oid::kFloat8, "2.2250738585072014e-308"), std::numeric_limits<double>::min());
  EXPECT_EQ(parsed_double(oid::kFloat8, "1.2345678901234568e+17"), 1.2345678901234568e+17);
  EXPECT_EQ(parsed_double(oid::kFloat8, "1e-05"), 1e-05);
  for (const char* bad : {"", "inf", "nan", "-nan", "infinity", "1e999", "-1e999", "1,5", "0x1p3", "1e", "--1"}) {
    expect_error(oid::kFloat8, bad);
  }
}

TEST(PgValueParser, Float4TextIsReadAsADoubleSoItPrintsAsPostgresPrintedIt) {
  // PostgreSQL's float4 text is the shortest text that reads back as the same float4. Read as a double, the
  // JSON number has exactly those digits (Debezium's float32 prints the same way); read as a float and
  // widened, 0.1 would print as 0.10000000149011612.
  for (const char* text : {"0.1", "1.1", "3.4028235e+38", "1.1754944e-38", "1e-45", "1.4e-45", "16777217",
                           "1.2345679e+08", "7.038531e-26", "-0.3", "100", "1e+20"}) {
    SCOPED_TRACE(text);
    const double d = parsed_double(oid::kFloat4, text);
    EXPECT_EQ(normalized_decimal(shortest(d)), normalized_decimal(text));
    // A consumer reading the JSON number as a float32 gets the float4 the text denotes.
    const std::string json = shortest(d);
    float from_json = 0, from_pg = 0;
    std::from_chars(json.data(), json.data() + json.size(), from_json);
    std::from_chars(text, text + std::strlen(text), from_pg);
    EXPECT_EQ(bits_of(from_json), bits_of(from_pg));
  }
  EXPECT_EQ(shortest(parsed_double(oid::kFloat4, "0.1")), "0.1");
  EXPECT_NE(shortest(static_cast<double>(0.1f)), "0.1");  // what widening would have given
}

TEST(PgValueParser, Booleans) {
  expect_parse(oid::kBool, "t", true);
  expect_parse(oid::kBool, "f", false);
  expect_parse(oid::kBool, "true", true);
  for (const char* bad : {"", "T", "yes", "1", "tt"}) expect_error(oid::kBool, bad);
}

TEST(PgValueParser, TextTypesKeepTheirTextExactly) {
  for (const uint32_t type : {oid::kText, oid::kVarchar, oid::kBpchar, oid::kName, oid::kChar, oid::kXml, oid::kInet,
                              oid::kCidr, oid::kMacaddr, oid::kMacaddr8}) {
    expect_parse(type, "", std::string(""));
  }
  expect_parse(oid::kBpchar, "ab   ", std::string("ab   "));  // bpchar's padding, as PostgreSQL prints it
  expect_parse(oid::kText, "\xF0\x9F\x98\x80 \xC3\xA9", std::string("\xF0\x9F\x98\x80 \xC3\xA9"));
  expect_parse(oid::kText, "a,b{c}\"d\\e\nNULL", std::string("a,b{c}\"d\\e\nNULL"));
  expect_parse(oid::kChar, "\\303", std::string("\\303"));  // "char" with the high bit set, as PostgreSQL 15 prints it
  expect_parse(oid::kInet, "192.168.1.5/24", std::string("192.168.1.5/24"));
  expect_parse(oid::kMacaddr8, "08:00:2b:01:02:03:04:05", std::string("08:00:2b:01:02:03:04:05"));
  expect_parse(oid::kXml, "<a x=\"1\">&amp;</a>", std::string("<a x=\"1\">&amp;</a>"));
}

TEST(PgValueParser, ByteaHexAndEscapeFormats) {
  expect_parse(oid::kBytea, "\\x", Bytes{""});
  expect_parse(oid::kBytea, "\\x00ff5C41", Bytes{std::string("\x00\xff\x5c\x41", 4)});
  expect_parse(oid::kBytea, "", Bytes{""});
  expect_parse(oid::kBytea, "\\000\\377\\\\A'\\012", Bytes{std::string("\x00\xff\\A'\n", 6)});
  expect_parse(oid::kBytea, "abc", Bytes{"abc"});
  for (const char* bad : {"\\x0", "\\xzz", "\\x0g", "\\", "a\\b", "\\400", "\\12"}) expect_error(oid::kBytea, bad);
}

TEST(PgValueParser, Dates) {
  expect_parse(oid::kDate, "1970-01-01", Date{0});
  expect_parse(oid::kDate, "2024-01-01", Date{19723});
  expect_parse(oid::kDate, "1969-12-31", Date{-1});
  expect_parse(oid::kDate, "2000-02-29", Date{11016});
  expect_parse(oid::kDate, "0001-01-01", Date{-719162});
  // 1 BC is astronomical year 0 (a leap year), so 0001-01-01 BC is 366 days before 0001-01-01.
  expect_parse(oid::kDate, "0001-01-01 BC", Date{-719162 - 366});
  expect_parse(oid::kDate, "0001-02-29 BC", Date{-719162 - 366 + 59});
  expect_parse(oid::kDate, "0001-12-31 BC", Date{-719163});
  expect_parse(oid::kDate, "4714-11-24 BC", Date{-2440588});  // Julian day 0
  expect_parse(oid::kDate, "0044-03-15 BC", Date{-735160});
  expect_parse(oid::kDate, "5874897-12-31", Date{2145042905});  // PostgreSQL's last date
  expect_parse(oid::kDate, "infinity", Date{kDateInfinity});
  expect_parse(oid::kDate, "-infinity", Date{kDateMinusInfinity});
  for (const char* bad : {"", "2023-02-29", "0004-02-29 BC", "2024-13-01", "2024-00-10", "2024-01-32", "0000-01-01 BC",
                          "24-01-01", "2024-1-01", "01/02/2024", "2024-01-01 AD", "2024-01-01 ", "epoch", "Infinity",
                          "2024-01-01 00:00:00"}) {
    expect_error(oid::kDate, bad);
  }
}

TEST(PgValueParser, TimesOfDay) {
  expect_parse(oid::kTime, "00:00:00", Time{0});
  expect_parse(oid::kTime, "12:34:56.789", Time{45296789000});
  expect_parse(oid::kTime, "23:59:59.999999", Time{86399999999});
  expect_parse(oid::kTime, "24:00:00", Time{86400000000});
  expect_parse(oid::kTime, "00:00:00.000001", Time{1});
  for (const char* bad : {"", "24:00:00.000001", "25:00:00", "12:60:00", "12:00:60", "12:00", "1:00:00", "12:00:00.",
                          "12:00:00.1234567", "12:00:00+00", "allballs"}) {
    expect_error(oid::kTime, bad);
  }
}

TEST(PgValueParser, TimesWithZoneBecomeUtcZonedTimeText) {
  expect_parse(oid::kTimeTz, "12:00:00+05:30", std::string("06:30:00Z"));
  expect_parse(oid::kTimeTz, "12:00:00+00", std::string("12:00:00Z"));
  expect_parse(oid::kTimeTz, "23:00:00-05", std::string("04:00:00Z"));  // wraps past midnight
  expect_parse(oid::kTimeTz, "01:00:00+02", std::string("23:00:00Z"));
  expect_parse(oid::kTimeTz, "00:00:00.5+00", std::string("00:00:00.500000Z"));
  expect_parse(oid::kTimeTz, "23:59:59.999999-15:59", std::string("15:58:59.999999Z"));
  expect_parse(oid::kTimeTz, "00:00:00+15:59:59", std::string("08:00:01Z"));
  expect_parse(oid::kTimeTz, "24:00:00+00", std::string("00:00:00Z"));
  for (const char* bad : {"", "12:00:00", "12:00:00+5", "12:00:00+05:3", "12:00:00 +05", "12:00:00+05:30:", "12:00:00Z"}) {
    expect_error(oid::kTimeTz, bad);
  }
  EXPECT_EQ(format_utc_time(0), "00:00:00Z");
  EXPECT_EQ(format_utc_time(86399999999), "23:59:59.999999Z");
  EXPECT_EQ(format_utc_time(45296789000), "12:34:56.789000Z");
}

TEST(PgValueParser, Timestamps) {
  expect_parse(oid::kTimestamp, "1970-01-01 00:00:00", Timestamp{0});
  expect_parse(oid::kTimestamp, "2024-01-01 00:00:00.123456", Timestamp{1704067200123456});
  expect_parse(oid::kTimestamp, "1969-12-31 23:59:59.999999", Timestamp{-1});
  expect_parse(oid::kTimestamp, "0044-03-15 12:34:56.789 BC", Timestamp{-735160LL * 86400000000 + 45296789000});
  expect_parse(oid::kTimestamp, "4714-11-24 00:00:00 BC", Timestamp{-2440588LL * 86400000000});
  expect_parse(oid::kTimestamp, "infinity", Timestamp{kTimestampInfinity});
  expect_parse(oid::kTimestamp, "-infinity", Timestamp{kTimestampMinusInfinity});
  // The last instant int64 microseconds since 1970 can hold is the infinity sentinel itself; one before it
  // is the largest Timestamp; PostgreSQL's timestamps go on to 294276-12-31, which is an error.
  expect_parse(oid::kTimestamp, "294247-01-10 04:00:54.775806", Timestamp{kTimestampInfinity - 1});
  expect_error(oid::kTimestamp, "294247-01-10 04:00:54.775807");
  const PgParseError e = expect_error(oid::kTimestamp, "294276-12-31 23:59:59.999999");
  EXPECT_NE(e.message.find("int64"), std::string::npos);
  for (const char* bad : {"", "2024-01-01", "2024-01-01T00:00:00", "2024-01-01 24:00:00", "2024-01-01 00:00:00+00",
                          "2024-01-01 00:00", "Mon Jan 01 00:00:00 2024", "2024-02-30 00:00:00"}) {
    expect_error(oid::kTimestamp, bad);
  }
}

TEST(PgValueParser, TimestampsWithZoneAreUtcInstants) {
  const TimestampTz new_year{1704067200000000};
  expect_parse(oid::kTimestampTz, "2024-01-01 00:00:00+00", new_year);
  expect_parse(oid::kTimestampTz, "2024-01-01 05:30:00+05:30", new_year);
  expect_parse(oid::kTimestampTz, "2023-12-31 20:30:00-03:30", new_year);
  expect_parse(oid::kTimestampTz, "2023-12-31 16:00:00-08", new_year);
  expect_parse(oid::kTimestampTz, "2024-01-01 00:00:00+00:00:00", new_year);
  // Local mean time offsets have seconds: Amsterdam in 1900 was +00:19:32.
  expect_parse(oid::kTimestampTz, "1900-01-01 00:19:32+00:19:32", TimestampTz{-2208988800000000});
  expect_parse(oid::kTimestampTz, "0044-03-15 18:28:24.789+05:53:28 BC",
               TimestampTz{-735160LL * 86400000000 + 45296789000});
  expect_parse(oid::kTimestampTz, "infinity", TimestampTz{kTimestampInfinity});
  expect_parse(oid::kTimestampTz, "-infinity", TimestampTz{kTimestampMinusInfinity});
  // Beyond int64 microseconds: the ISO text the envelope would have written for the instant.
  expect_parse(oid::kTimestampTz, "294276-12-31 23:59:59.999999+00", std::string("+294276-12-31T23:59:59.999999Z"));
  expect_parse(oid::kTimestampTz, "294277-01-01 05:29:59+05:30", std::string("+294276-12-31T23:59:59Z"));
  expect_parse(oid::kTimestampTz, "294247-01-10 04:00:54.775806+00", TimestampTz{kTimestampInfinity - 1});
  expect_parse(oid::kTimestampTz, "294247-01-10 04:00:54.775807+00", std::string("+294247-01-10T04:00:54.775807Z"));
  for (const char* bad : {"", "2024-01-01 00:00:00", "2024-01-01 00:00:00 UTC", "2024-01-01 00:00:00+0530",
                          "2024-01-01 00:00:00Z", "2024-01-01 00:00:00+05:30 AD"}) {
    expect_error(oid::kTimestampTz, bad);
  }
}

TEST(PgValueParser, IntervalsInPostgresStyle) {
  constexpr int64_t kHour = 3600000000;
  expect_parse(oid::kInterval, "00:00:00", Interval{0, 0, 0});
  expect_parse(oid::kInterval, "1 year 2 mons -3 days +04:05:06.789",
               Interval{14, -3, 4 * kHour + 5 * 60000000 + 6789000});
  expect_parse(oid::kInterval, "-1 years -2 mons +3 days -04:05:06.789",
               Interval{-14, 3, -(4 * kHour + 5 * 60000000 + 6789000)});
  expect_parse(oid::kInterval, "-00:00:01", Interval{0, 0, -1000000});
  expect_parse(oid::kInterval, "-00:00:00.5", Interval{0, 0, -500000});
  expect_parse(oid::kInterval, "1 day -00:00:01", Interval{0, 1, -1000000});
  expect_parse(oid::kInterval, "-1 days +00:00:01", Interval{0, -1, 1000000});
  expect_parse(oid::kInterval, "1 mon 15 days", Interval{1, 15, 0});
  expect_parse(oid::kInterval, "11 mons", Interval{11, 0, 0});
  expect_parse(oid::kInterval, "178956970 years 7 mons", Interval{std::numeric_limits<int32_t>::max(), 0, 0});
  expect_parse(oid::kInterval, "-178956970 years -8 mons", Interval{std::numeric_limits<int32_t>::min(), 0, 0});
  expect_parse(oid::kInterval, "-2147483648 days", Interval{0, std::numeric_limits<int32_t>::min(), 0});
  expect_parse(oid::kInterval, "2562047788:00:54.775807", Interval{0, 0, std::numeric_limits<int64_t>::max()});
  expect_parse(oid::kInterval, "-2562047788:00:54.775808", Interval{0, 0, std::numeric_limits<int64_t>::min()});
  for (const char* bad : {"", "1 years 2", "1 week", "@ 1 year", "P1Y", "1 year 2 mons 3 days 04:05",
                          "2562047788:00:54.775808", "-2562047788:00:54.775809", "178956970 years 8 mons",
                          "2147483648 days", "04:05:06 1 day", "1  day", "1 day ", "00:00:00 00:00:00", "1:00:00"}) {
    expect_error(oid::kInterval, bad);
  }
}

TEST(PgValueParser, UuidJsonMoneyBits) {
  Uuid u;
  ASSERT_TRUE(parse_uuid("3f2504e0-4f89-11d3-9a0c-0305e82c3301", u));
  expect_parse(oid::kUuid, "3f2504e0-4f89-11d3-9a0c-0305e82c3301", u);
  for (const char* bad : {"", "3f2504e04f8911d39a0c0305e82c3301", "3f2504e0-4f89-11d3-9a0c-0305e82c330",
                          "{3f2504e0-4f89-11d3-9a0c-0305e82c3301}", "3f2504e0-4f89-11d3-9a0c-0305e82c330g"}) {
    expect_error(oid::kUuid, bad);
  }
  expect_parse(oid::kJson, "{\"a\": [1, 2.50, null]}", Json{"{\"a\": [1, 2.50, null]}"});
  expect_parse(oid::kJsonb, "\"\xF0\x9F\x98\x80\"", Json{"\"\xF0\x9F\x98\x80\""});

  expect_parse(oid::kMoney, "$0.00", Decimal{"0.00"});
  expect_parse(oid::kMoney, "$1,234.56", Decimal{"1234.56"});
  expect_parse(oid::kMoney, "-$1,234.56", Decimal{"-1234.56"});
  expect_parse(oid::kMoney, "-$1.00", Decimal{"-1.00"});
  expect_parse(oid::kMoney, "($1.00)", Decimal{"-1.00"});
  expect_parse(oid::kMoney, "$-1.00", Decimal{"-1.00"});
  expect_parse(oid::kMoney, "$92,233,720,368,547,758.07", Decimal{"92233720368547758.07"});
  expect_parse(oid::kMoney, "-$92,233,720,368,547,758.08", Decimal{"-92233720368547758.08"});
  for (const char* bad : {"", "$", "-$", "1.234,56 \xE2\x82\xAC", "$1,,234.56", "$,1.00", "$1.", "--$1.00", "-$-1.00",
                          "EUR 1.00", "$1.00.00"}) {
    expect_error(oid::kMoney, bad);
  }

  expect_parse(oid::kBit, "1010", std::string("1010"));
  expect_parse(oid::kVarbit, "", std::string(""));
  expect_error(oid::kVarbit, "10x");
}

TEST(PgValueParser, Arrays) {
  const auto s = [](const char* t) { return Value(std::string(t)); };
  expect_parse(oid::kInt4Array, "{}", Array{});
  expect_parse(oid::kInt4Array, "{1,2,NULL}", Array{{int64_t{1}, int64_t{2}, Null{}}});
  expect_parse(oid::kInt4Array, "{{1,2},{3,4}}",
               Array{{Array{{int64_t{1}, int64_t{2}}}, Array{{int64_t{3}, int64_t{4}}}}});
  expect_parse(oid::kInt4Array, "[0:1]={1,2}", Array{{int64_t{1}, int64_t{2}}});
  expect_parse(oid::kInt4Array, "[1:1][-2:-1]={{1,2}}", Array{{Array{{int64_t{1}, int64_t{2}}}}});
  expect_parse(oid::kInt4Array, "{{{1}},{{NULL}}}", Array{{Array{{Array{{int64_t{1}}}}}, Array{{Array{{Null{}}}}}}});
  expect_parse(oid::kTextArray, R"({"a,b","{x}","\"q\"","back\\slash","NULL",NULL,""," sp ",nUlL,plain})",
               Array{{s("a,b"), s("{x}"), s("\"q\""), s("back\\slash"), s("NULL"), Null{}, s(""), s(" sp "), Null{},
                      s("plain")}});
  // Input syntax PostgreSQL does not print, but accepts: white space around elements, backslashes unquoted.
  expect_parse(oid::kTextArray, "{ a , \"b\" ,c\\,d }", Array{{s("a"), s("b"), s("c,d")}});
  expect_parse(oid::kTimestampArray, "{\"2024-01-01 00:00:00\",infinity}",
               Array{{Timestamp{1704067200000000}, Timestamp{kTimestampInfinity}}});
  expect_parse(oid::kByteaArray, R"({"\\x00ff",NULL})", Array{{Bytes{std::string("\x00\xff", 2)}, Null{}}});
  expect_parse(oid::kJsonbArray, R"({"{\"a\": 1}",null})", Array{{Json{"{\"a\": 1}"}, Null{}}});
  expect_parse(oid::kFloat8Array, "{-Infinity,1.5,-0}", Array{{-std::numeric_limits<double>::infinity(), 1.5, -0.0}});
  const PgParseResult nan = parse_pg_text(oid::kFloat8Array, -1, "{NaN}", builtins());  // NaN != NaN
  ASSERT_TRUE(nan.ok());
  EXPECT_TRUE(std::isnan(std::get<double>(std::get<Array>(nan.value().v).items[0].v)));
  expect_parse(oid::kNumericArray, "{1.50,NaN,-Infinity}", Array{{Decimal{"1.50"}, Decimal{"NaN"}, Decimal{"-Infinity"}}});
  expect_parse(oid::kMoneyArray, "{\"$1,000.00\",-$0.01}", Array{{Decimal{"1000.00"}, Decimal{"-0.01"}}});

  for (const char* bad : {"", "{", "}", "{1,2", "{1,,2}", "{1,2}}", "{1}x", "1,2", "{\"1}", "[0:1]{1,2}", "[0]={1}",
                          "[a:b]={1}", "{{1},2}", "{1,{2}}", "{{1,2},{3}}", "{{1},{2,3}}", "{{{1}},{2}}", "{{}}", "{{1},{}}", "{{{{{{{1}}}}}}}", "{,}", "{1,}", "{\"a\"b}"}) {
    expect_error(oid::kInt4Array, bad);
  }
  // A bad element reports the element's type and text.
  const PgParseError e = expect_error(oid::kInt4Array, "{1,x2,3}");
  EXPECT_EQ(e.type_oid, oid::kInt4);
  EXPECT_EQ(e.type_name, "int4");
  EXPECT_EQ(e.text, "x2");
  EXPECT_NE(e.message.find("_int4"), std::string::npos) << e.message;
  // A malformed array reports the array.
  const PgParseError m = expect_error(oid::kInt4Array, "{1,2");
  EXPECT_EQ(m.type_oid, oid::kInt4Array);
  EXPECT_EQ(m.text, "{1,2");
}

TEST(PgValueParser, ErrorsNameTheTypeAndTheText) {
  const PgParseError e = expect_error(oid::kInt4, "abc");
  EXPECT_EQ(e.type_oid, oid::kInt4);
  EXPECT_EQ(e.type_name, "int4");
  EXPECT_EQ(e.text, "abc");
  EXPECT_EQ(e.to_string(), "cannot parse int4 (oid 23) value 'abc': not an integer");
  const std::string long_text(100000, 'x');
  const PgParseError l = expect_error(oid::kDate, long_text);
  EXPECT_EQ(l.text.size(), long_text.size());
  EXPECT_LT(l.to_string().size(), 400u);
}

TEST(PgValueParser, RandomGarbageNeverCrashes) {
  std::mt19937 rng(7);
  const std::string alphabet = "0123456789-+:. {}\",\\[]=xNULBCinfty$()e";
  std::vector<uint32_t> all;
  for (uint32_t o = 1; o < 4000; ++o) {
    if (PgTypeRegistry::builtin(o)) all.push_back(o);
  }
  for (int i = 0; i < 20000; ++i) {
    std::string text(rng() % 24, ' ');
    for (char& c : text) c = alphabet[rng() % alphabet.size()];
    const PgParseResult r = parse_pg_text(all[rng() % all.size()], -1, text, builtins());
    if (!r.ok()) {
      EXPECT_FALSE(r.error().message.empty());
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// The live server as the oracle

struct QueryResult {
  std::vector<std::vector<std::optional<std::string>>> rows;
  std::string error;  // empty when the query succeeded
};

class PgLive : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    setup_error_.clear();
    const char* port = std::getenv("TIDEMARK_PG_PORT");
    if (port == nullptr || *port == '\0') {
      setup_error_ =
          "TIDEMARK_PG_PORT is not set: run the tests through ./scripts/test.sh, which starts PostgreSQL 15 and "
          "exports TIDEMARK_PG_* (by hand: scripts/servers.sh start postgres && . .run/env.sh)";
      return;
    }
    const auto env = [](const char* name, const char* fallback) {
      const char* v = std::getenv(name);
      return std::string(v && *v ? v : fallback);
    };
    const std::string base = "host=" + env("TIDEMARK_PG_HOST", "127.0.0.1") + " port=" + port +
                             " user=" + env("TIDEMARK_PG_ROOT_USER", "postgres") +
                             " password=" + env("TIDEMARK_PG_ROOT_PASSWORD", "postgres") +
                             " connect_timeout=10 client_encoding=UTF8";
    // Our own database, created once; concurrent runs may race to create it.
    PGconn* admin = PQconnectdb((base + " dbname=postgres").c_str());
    if (PQstatus(admin) != CONNECTION_OK) {
      setup_error_ = std::string("cannot connect to PostgreSQL: ") + PQerrorMessage(admin);
      PQfinish(admin);
      return;
    }
    PGresult* r = PQexec(admin, "SELECT 1 FROM pg_database WHERE datname = 'pgtypes_test'");
    const bool exists = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1;
    PQclear(r);
    if (!exists) {
      r = PQexec(admin, "CREATE DATABASE pgtypes_test");
      const char* state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
      if (PQresultStatus(r) != PGRES_COMMAND_OK && !(state && std::string(state) == "42P04")) {
        setup_error_ = std::string("CREATE DATABASE pgtypes_test: ") + PQerrorMessage(admin);
      }
      PQclear(r);
    }
    PQfinish(admin);
    if (!setup_error_.empty()) return;
    conn_ = PQconnectdb((base + " dbname=pgtypes_test").c_str());
    if (PQstatus(conn_) != CONNECTION_OK) {
      setup_error_ = std::string("cannot connect to pgtypes_test: ") + PQerrorMessage(conn_);
      return;
    }
    // The enum and domain types live in this session's temporary schema: gone when the connection ends,
    // however the process ends, and private to it when several test processes run at once.
    schema_ = "pg_temp";
    const std::string s = schema_;
    const std::string setup =
        "CREATE TYPE " + s + ".mood AS ENUM ('sad', 'ok', 'happy \xF0\x9F\x98\x80', 'with,comma', 'quo\"te', " +
        "'back\\slash', 'NULL', ''); " +
        "CREATE DOMAIN " + s + ".posint AS int4 CHECK (VALUE > 0); " +
        "CREATE DOMAIN " + s + ".bigposint AS " + s + ".posint; " +  // a domain over a domain
        "CREATE DOMAIN " + s + ".label AS text CHECK (VALUE <> 'forbidden'); " +
        "CREATE DOMAIN " + s + ".money_amount AS numeric(12,2); " +
        "CREATE DOMAIN " + s + ".intlist AS int4[]; ";  // a domain over an array
    r = PQexec(conn_, setup.c_str());
    if (PQresultStatus(r) != PGRES_COMMAND_OK) setup_error_ = std::string("setup: ") + PQerrorMessage(conn_);
    PQclear(r);
    if (!setup_error_.empty()) return;
    // Register the schema's types as the source does from pg_type for the Type messages it receives.
    types_ = PgTypeRegistry();
    const QueryResult t = query(
        "SELECT oid, typcategory, typelem, typbasetype, typname FROM pg_type "
        "WHERE typnamespace = pg_my_temp_schema()");
    if (!t.error.empty() || t.rows.size() < 12) {
      setup_error_ = "reading pg_type: " + t.error;
      return;
    }
    for (const auto& row : t.rows) {
      PgTypeInfo info;
      info.oid = static_cast<uint32_t>(std::stoul(*row[0]));
      info.category = (*row[1])[0];
      info.element_oid = info.category == 'A' ? static_cast<uint32_t>(std::stoul(*row[2])) : 0;
      info.base_oid = static_cast<uint32_t>(std::stoul(*row[3]));
      info.name = *row[4];
      if (!types_.add(info)) setup_error_ = "cannot register " + info.name;
    }
  }

  static void TearDownTestSuite() {
    if (conn_ != nullptr) {
      PQfinish(conn_);  // drops the temporary types
      conn_ = nullptr;
    }
  }

  void SetUp() override {
    if (!setup_error_.empty()) FAIL() << setup_error_;
    // Every test starts from the defaults pgoutput sees, and the same random values.
    exec("RESET ALL");
    exec("SET client_encoding = 'UTF8'");
    exec("SELECT setseed(0.4242)");
  }

  static QueryResult query(const std::string& sql) {
    QueryResult out;
    PGresult* r = PQexec(conn_, sql.c_str());
    if (PQresultStatus(r) != PGRES_TUPLES_OK && PQresultStatus(r) != PGRES_COMMAND_OK) {
      out.error = PQerrorMessage(conn_);
      PQclear(r);
      return out;
    }
    for (int i = 0; i < PQntuples(r); ++i) {
      auto& row = out.rows.emplace_back();
      for (int j = 0; j < PQnfields(r); ++j) {
        if (PQgetisnull(r, i, j)) {
          row.emplace_back(std::nullopt);
        } else {
          row.emplace_back(std::string(PQgetvalue(r, i, j), static_cast<size_t>(PQgetlength(r, i, j))));
        }
      }
    }
    PQclear(r);
    return out;
  }

  static void exec(const std::string& sql) {
    const QueryResult r = query(sql);
    ASSERT_TRUE(r.error.empty()) << sql << ": " << r.error;
  }

  static std::string with(std::string expr, const std::string& v) {
    for (size_t at = expr.find("{v}"); at != std::string::npos; at = expr.find("{v}", at + v.size())) {
      expr.replace(at, 3, v);
    }
    return expr;
  }

  // An oracle: a SQL expression over {v} computed by the server, and the check of a parsed Value against it.
  struct Oracle {
    std::string expr;
    std::function<void(const Value& got, const std::string& oracle)> check;
  };

  // For every row of `source` (one column v): parse v's text as pgoutput would send it (the OID is
  // pg_typeof(v), so domains keep theirs) and check the Value against the oracle. Returns the row count.
  static size_t check_values(const std::string& source, const Oracle& oracle) {
    const std::string sql = "SELECT v, pg_typeof(v)::oid, " + with(oracle.expr, "v") + " FROM (" + source +
                            ") AS t(v) WHERE v IS NOT NULL";
    const QueryResult r = query(sql);
    EXPECT_TRUE(r.error.empty()) << sql << ": " << r.error;
    for (const auto& row : r.rows) {
      const std::string& text = *row[0];
      const auto type_oid = static_cast<uint32_t>(std::stoul(*row[1]));
      SCOPED_TRACE("text '" + text + "' (type " + types_.type_name(type_oid) + "), oracle '" + row[2].value_or("NULL") +
                   "'");
      const PgParseResult parsed = parse_pg_text(type_oid, -1, text, types_);
      if (!parsed.ok()) {
        ADD_FAILURE() << parsed.error().to_string();
        continue;
      }
      if (!row[2]) {
        ADD_FAILURE() << "the oracle is NULL";
        continue;
      }
      oracle.check(parsed.value(), *row[2]);
      if (testing::Test::HasFailure()) break;  // one failing row is enough to read
    }
    EXPECT_FALSE(r.rows.empty()) << sql;
    return r.rows.size();
  }

  // The same for arrays: the oracle is applied to every element (unnest, row-major), and the Array's shape
  // must match array_ndims and cardinality.
  static size_t check_arrays(const std::string& source, const Oracle& element) {
    const std::string sql =
        "SELECT v, pg_typeof(v)::oid, coalesce(array_ndims(v), 1), cardinality(v), "
        "(SELECT string_agg(CASE WHEN e IS NULL THEN '' ELSE " + with(element.expr, "e") +
        " END, '|' ORDER BY i) FROM unnest(v) WITH ORDINALITY AS u(e, i)), "
        "(SELECT string_agg(CASE WHEN e IS NULL THEN 'n' ELSE 'v' END, '' ORDER BY i) "
        "FROM unnest(v) WITH ORDINALITY AS u(e, i)) "
        "FROM (" + source + ") AS t(v) WHERE v IS NOT NULL";
    const QueryResult r = query(sql);
    EXPECT_TRUE(r.error.empty()) << sql << ": " << r.error;
    for (const auto& row : r.rows) {
      const std::string& text = *row[0];
      const auto type_oid = static_cast<uint32_t>(std::stoul(*row[1]));
      SCOPED_TRACE("array text '" + text + "' (type " + types_.type_name(type_oid) + ")");
      const PgParseResult parsed = parse_pg_text(type_oid, -1, text, types_);
      if (!parsed.ok()) {
        ADD_FAILURE() << parsed.error().to_string();
        continue;
      }
      const int ndims = std::stoi(*row[2]);
      const size_t count = std::stoul(*row[3]);
      std::vector<std::string> oracles;
      if (row[4]) {
        std::string_view all = *row[4];
        for (size_t at = 0;;) {
          const size_t bar = all.find('|', at);
          oracles.emplace_back(all.substr(at, bar == std::string_view::npos ? std::string_view::npos : bar - at));
          if (bar == std::string_view::npos) break;
          at = bar + 1;
        }
      }
      const std::string nulls = row[5].value_or("");
      // Flatten, checking that every leaf sits at depth ndims.
      std::vector<const Value*> leaves;
      bool shape_ok = std::holds_alternative<Array>(parsed.value().v);
      const std::function<void(const Value&, int)> walk = [&](const Value& v, int depth) {
        if (depth <= ndims) {
          if (!std::holds_alternative<Array>(v.v)) {
            shape_ok = false;
            return;
          }
          for (const Value& item : std::get<Array>(v.v).items) walk(item, depth + 1);
        } else {
          leaves.push_back(&v);
        }
      };
      if (shape_ok) walk(parsed.value(), 1);
      const bool sizes_ok = leaves.size() == count && nulls.size() == count && (count == 0 || oracles.size() == count);
      if (!shape_ok || !sizes_ok) {
        ADD_FAILURE() << "shape: " << ndims << " dimensions, " << count << " elements (" << nulls.size() << " in the "
                      << "NULL mask, " << oracles.size() << " oracles), parsed " << show(parsed.value());
        break;
      }
      for (size_t i = 0; i < count; ++i) {
        SCOPED_TRACE("element " + std::to_string(i));
        if (nulls[i] == 'n') {
          EXPECT_TRUE(leaves[i]->is_null()) << show(*leaves[i]);
        } else {
          element.check(*leaves[i], oracles[i]);
        }
      }
      if (testing::Test::HasFailure()) break;
    }
    EXPECT_FALSE(r.rows.empty()) << sql;
    return r.rows.size();
  }

  // ---- oracles

  static Oracle integer_oracle() {
    return {"{v}::int8::text", [](const Value& got, const std::string& o) {
              ASSERT_TRUE(std::holds_alternative<int64_t>(got.v)) << show(got);
              EXPECT_EQ(std::to_string(std::get<int64_t>(got.v)), o);
            }};
  }

  static Oracle numeric_oracle() {
    // The exact text, and the scale (NULL for NaN and the infinities).
    return {"{v}::text || ':' || coalesce(scale({v})::text, '-')", [](const Value& got, const std::string& o) {
              ASSERT_TRUE(std::holds_alternative<Decimal>(got.v)) << show(got);
              const std::string& text = std::get<Decimal>(got.v).text;
              const size_t colon = o.rfind(':');
              EXPECT_EQ(text, o.substr(0, colon));
              const std::string scale = o.substr(colon + 1);
              if (scale != "-") {
                const size_t point = text.find('.');
                EXPECT_EQ(point == std::string::npos ? 0 : text.size() - point - 1, std::stoul(scale));
              }
            }};
  }

  static Oracle float8_oracle() {
    return {"encode(float8send({v}), 'hex')", [](const Value& got, const std::string& o) {
              ASSERT_TRUE(std::holds_alternative<double>(got.v)) << show(got);
              const double d = std::get<double>(got.v);
              const uint64_t server_bits = std::stoull(o, nullptr, 16);
              double server;
              std::memcpy(&server, &server_bits, sizeof server);
              if (std::isnan(server)) {
                EXPECT_TRUE(std::isnan(d));
              } else {
                EXPECT_EQ(bits_of(d), server_bits) << shortest(d) << " vs " << shortest(server);
              }
            }};
  }

  static Oracle float4_oracle() {
    // The server's float4 bits, and its text.
    return {"encode(float4send({v}), 'hex') || ':' || {v}::text", [](const Value& got, const std::string& o) {
              ASSERT_TRUE(std::holds_alternative<double>(got.v)) << show(got);
              const double d = std::get<double>(got.v);
              const auto server_bits = static_cast<uint32_t>(std::stoul(o.substr(0, 8), nullptr, 16));
              const std::string pg_text = o.substr(9);
              float server;
              std::memcpy(&server, &server_bits, sizeof server);
              if (std::isnan(server)) {
                EXPECT_TRUE(std::isnan(d));
                return;
              }
              if (std::isinf(server)) {
                EXPECT_EQ(d, static_cast<double>(server));
                return;
              }
              // The JSON number (shortest double text) has PostgreSQL's digits...
              const std::string json = shortest(d);
              EXPECT_EQ(normalized_decimal(json), normalized_decimal(pg_text)) << json << " vs " << pg_text;
              // ...and reads back, as a float32, as the server's float4.
              float back = 0;
              std::from_chars(json.data(), json.data() + json.size(), back);
              EXPECT_EQ(bits_of(back), server_bits) << json;
              EXPECT_EQ(std::signbit(d), std::signbit(server));
            }};
  }

  static Oracle bytes_as_string_oracle(const std::string& send_function) {
    return {"encode(" + send_function + "({v}), 'hex')", [](const Value& got, const std::string& o) {
              ASSERT_TRUE(std::holds_alternative<std::string>(got.v)) << show(got);
              EXPECT_EQ(std::get<std::string>(got.v), unhex(o));
            }};
  }

  static Oracle text_oracle() { return bytes_as_string_oracle("textsend"); }

  // The text, as UTF-8 bytes: for types whose Value is their text. (For inet, the cast to text always adds
  // the netmask; abbrev() is documented to give the output function's text.)
  static Oracle via_text_oracle(const std::string& to_text = "{v}::text") {
    return {"encode(convert_to(" + to_text + ", 'UTF8'), 'hex')", [](const Value& got, const std::string& o) {
              ASSERT_TRUE(std::holds_alternative<std::string>(got.v)) << show(got);
              EXPECT_EQ(std::get<std::string>(got.v), unhex(o));
            }};
  }

  static Oracle date_oracle() {
    return {"CASE WHEN isfinite({v}) THEN ({v} - date '1970-01-01')::text ELSE {v}::text END",
            [](const Value& got, const std::string& o) {
              ASSERT_TRUE(std::holds_alternative<Date>(got.v)) << show(got);
              const int32_t days = std::get<Date>(got.v).days;
              if (o == "infinity") {
                EXPECT_EQ(days, kDateInfinity);
              } else if (o == "-infinity") {
                EXPECT_EQ(days, kDateMinusInfinity);
              } else {
                EXPECT_EQ(std::to_string(days), o);
              }
            }};
  }

  static Oracle time_oracle() {
    return {"(extract(epoch from {v}) * 1000000)::int8::text", [](const Value& got, const std::string& o) {
              ASSERT_TRUE(std::holds_alternative<Time>(got.v)) << show(got);
              EXPECT_EQ(std::to_string(std::get<Time>(got.v).micros), o);
            }};
  }

  static Oracle timetz_oracle() {
    // extract(epoch) of a timetz is the UTC time of day, not reduced to one day.
    return {"(extract(epoch from {v}) * 1000000)::int8::text", [](const Value& got, const std::string& o) {
              ASSERT_TRUE(std::holds_alternative<std::string>(got.v)) << show(got);
              const int64_t day = 86400000000;
              const int64_t want = ((std::stoll(o) % day) + day) % day;
              const auto micros = zoned_time_micros(std::get<std::string>(got.v));
              ASSERT_TRUE(micros.has_value()) << "not HH:MM:SS[.ffffff]Z: " << std::get<std::string>(got.v);
              EXPECT_EQ(*micros, want);
            }};
  }

  // Julian day and microseconds of the day (of the UTC wall clock for timestamptz), which stay exact over
  // PostgreSQL's whole range (extract(epoch) falls back to float beyond int64); plus the ISO text.
  static Oracle timestamp_oracle(bool with_zone) {
    const std::string wall = with_zone ? "({v} AT TIME ZONE 'UTC')" : "{v}";
    return {"CASE WHEN isfinite({v}) THEN to_char(" + wall + ", 'J') || ':' || (extract(epoch from " + wall +
                "::time) * 1000000)::int8::text || ':' || to_char(" + wall +
                ", 'YYYY-MM-DD\"T\"HH24:MI:SS.US') ELSE {v}::text END",
            [with_zone](const Value& got, const std::string& o) {
              if (o == "infinity" || o == "-infinity") {
                const int64_t want = o == "infinity" ? kTimestampInfinity : kTimestampMinusInfinity;
                if (with_zone) {
                  EXPECT_TRUE(got == Value(TimestampTz{want})) << show(got);
                } else {
                  EXPECT_TRUE(got == Value(Timestamp{want})) << show(got);
                }
                return;
              }
              const size_t c1 = o.find(':'), c2 = o.find(':', c1 + 1);
              const int64_t days = std::stoll(o.substr(0, c1)) - 2440588;
              const int64_t tod = std::stoll(o.substr(c1 + 1, c2 - c1 - 1));
              int64_t micros = 0;
              const bool fits = !__builtin_mul_overflow(days, int64_t{86400000000}, &micros) &&
                                !__builtin_add_overflow(micros, tod, &micros) && micros != kTimestampInfinity;
              if (fits) {
                if (with_zone) {
                  ASSERT_TRUE(std::holds_alternative<TimestampTz>(got.v)) << show(got);
                  EXPECT_EQ(std::get<TimestampTz>(got.v).micros, micros);
                } else {
                  ASSERT_TRUE(std::holds_alternative<Timestamp>(got.v)) << show(got);
                  EXPECT_EQ(std::get<Timestamp>(got.v).micros, micros);
                }
                return;
              }
              // Beyond int64 microseconds (only timestamptz gets here: the timestamp sources stay below).
              ASSERT_TRUE(with_zone);
              ASSERT_TRUE(std::holds_alternative<std::string>(got.v)) << show(got);
              std::string iso = o.substr(c2 + 1);
              if (iso.ends_with(".000000")) iso.resize(iso.size() - 7);
              EXPECT_EQ(std::get<std::string>(got.v), "+" + iso + "Z");
            }};
  }

  static Oracle interval_oracle() {
    // extract(year) and extract(month) split the months field (12 * year + month = months, with C signs);
    // extract(hour), (minute) and (microseconds) split the microseconds field the same way.
    return {"(extract(year from {v}) * 12 + extract(month from {v}))::numeric(30,0)::text || ':' || "
            "extract(day from {v})::numeric(30,0)::text || ':' || "
            "(extract(hour from {v}) * 3600000000 + extract(minute from {v}) * 60000000 + "
            "extract(microseconds from {v}))::numeric(30,0)::text",
            [](const Value& got, const std::string& o) {
              ASSERT_TRUE(std::holds_alternative<Interval>(got.v)) << show(got);
              const Interval& iv = std::get<Interval>(got.v);
              EXPECT_EQ(std::to_string(iv.months) + ":" + std::to_string(iv.days) + ":" + std::to_string(iv.micros), o);
            }};
  }

  static Oracle uuid_oracle() {
    return {"encode(uuid_send({v}), 'hex')", [](const Value& got, const std::string& o) {
              ASSERT_TRUE(std::holds_alternative<Uuid>(got.v)) << show(got);
              const Uuid& u = std::get<Uuid>(got.v);
              EXPECT_EQ(std::string(reinterpret_cast<const char*>(u.bytes.data()), u.bytes.size()), unhex(o));
            }};
  }

  static Oracle bytea_oracle() {
    return {"encode({v}, 'hex')", [](const Value& got, const std::string& o) {
              ASSERT_TRUE(std::holds_alternative<Bytes>(got.v)) << show(got);
              EXPECT_EQ(std::get<Bytes>(got.v).data, unhex(o));
            }};
  }

  static Oracle json_oracle() {
    return {"encode(convert_to({v}::text, 'UTF8'), 'hex')", [](const Value& got, const std::string& o) {
              ASSERT_TRUE(std::holds_alternative<Json>(got.v)) << show(got);
              EXPECT_EQ(std::get<Json>(got.v).text, unhex(o));
            }};
  }

  static Oracle money_oracle() {
    return {"{v}::numeric::text", [](const Value& got, const std::string& o) {
              ASSERT_TRUE(std::holds_alternative<Decimal>(got.v)) << show(got);
              EXPECT_EQ(std::get<Decimal>(got.v).text, o);
            }};
  }

  static Oracle bool_oracle() {
    return {"{v}::int::text", [](const Value& got, const std::string& o) {
              ASSERT_TRUE(std::holds_alternative<bool>(got.v)) << show(got);
              EXPECT_EQ(std::get<bool>(got.v) ? "1" : "0", o);
            }};
  }

  static Oracle char_oracle() {
    // "char" is one byte; PostgreSQL 15 prints a byte with the high bit set as \ooo, and the zero byte as ''.
    return {"encode(charsend({v}), 'hex')", [](const Value& got, const std::string& o) {
              ASSERT_TRUE(std::holds_alternative<std::string>(got.v)) << show(got);
              const auto b = static_cast<unsigned char>(unhex(o)[0]);
              std::string want;
              if (b >= 0x80) {
                want = {'\\', static_cast<char>('0' + (b >> 6)), static_cast<char>('0' + (b >> 3 & 7)),
                        static_cast<char>('0' + (b & 7))};
              } else if (b != 0) {
                want = std::string(1, static_cast<char>(b));
              }
              EXPECT_EQ(std::get<std::string>(got.v), want);
            }};
  }

  static inline PGconn* conn_ = nullptr;
  static inline std::string setup_error_;
  static inline std::string schema_;
  static inline PgTypeRegistry types_;
};

// A VALUES list of literals cast to a type.
std::string values_of(const std::vector<std::string>& literals, const std::string& type) {
  std::string sql = "VALUES ";
  for (size_t i = 0; i < literals.size(); ++i) sql += (i ? ", ((" : "((") + literals[i] + ")::" + type + ")";
  return sql;
}

std::string quoted(const std::string& s) {
  std::string out = "'";
  for (const char c : s) {
    if (c == '\'') out += '\'';
    out += c;
  }
  return out + "'";
}

TEST_F(PgLive, Integers) {
  check_values(values_of({"-32768", "32767", "0", "-1"}, "int2"), integer_oracle());
  check_values(values_of({"-2147483648", "2147483647", "0"}, "int4"), integer_oracle());
  check_values(values_of({"-9223372036854775808", "9223372036854775807", "0", "1", "-1"}, "int8"), integer_oracle());
  check_values(values_of({"0", "4294967295", "2147483648", "1259"}, "oid"), integer_oracle());
  check_values("SELECT (floor(random() * 2^62) * (CASE WHEN random() < 0.5 THEN -2 ELSE 2 END))::int8 "
               "FROM generate_series(1, 1000)",
               integer_oracle());
  check_values("SELECT floor((random() - 0.5) * 2^31)::int4 FROM generate_series(1, 500)", integer_oracle());
  check_values("SELECT floor((random() - 0.5) * 2^16)::int2 FROM generate_series(1, 500)", integer_oracle());
}

TEST_F(PgLive, Numerics) {
  check_values(values_of({"'NaN'", "'Infinity'", "'-Infinity'", "0", "'-0.000'", "1e-20", "'0.1'", "'123.4500'",
                          "'-1234.5600'", "'1e131071'", "'1e-16383'", "'-99999999999999999999.99999999999999999999'",
                          "repeat('9', 1000)", "'-' || repeat('1', 500) || '.' || repeat('2', 500)",
                          "'0.' || repeat('0', 999) || '1'"},
                         "numeric"),
               numeric_oracle());
  check_values("SELECT round(((random() - 0.5) * 10 ^ (random() * 60 - 30))::numeric, (random() * 40)::int) "
               "FROM generate_series(1, 1000)",
               numeric_oracle());
  check_values(values_of({"'1.5'", "'-0.01'", "0"}, "numeric(10,4)"), numeric_oracle());
}

TEST_F(PgLive, Floats) {
  const std::vector<std::string> specials = {"'NaN'", "'Infinity'", "'-Infinity'", "'0'", "'-0'", "'0.1'",
                                             "'1.1'", "'-3.5'", "'100'", "'1e20'", "'1e-5'"};
  std::vector<std::string> f8 = specials;
  for (const char* v : {"'4.9e-324'", "'2.2250738585072009e-308'", "'2.2250738585072014e-308'",
                        "'1.7976931348623157e308'", "'-1.7976931348623157e308'", "'123456789012345678'",
                        "'0.30000000000000004'", "'9007199254740993'", "'1e22'", "'1e23'"}) {
    f8.emplace_back(v);
  }
  std::vector<std::string> f4 = specials;
  for (const char* v : {"'1e-45'", "'1.1754942e-38'", "'1.17549435e-38'", "'3.4028235e38'", "'-3.4028235e38'",
                        "'16777217'", "'123456790'", "'7.038531e-26'", "'0.333333343'"}) {
    f4.emplace_back(v);
  }
  for (const char* digits : {"1", "3"}) {  // the default, and what JDBC sets: both give shortest exact text
    SCOPED_TRACE(std::string("extra_float_digits ") + digits);
    exec(std::string("SET extra_float_digits = ") + digits);
    check_values(values_of(f8, "float8"), float8_oracle());
    check_values(values_of(f4, "float4"), float4_oracle());
    check_values("SELECT ((random() - 0.5) * 10 ^ (random() * 616 - 308))::float8 FROM generate_series(1, 3000)",
                 float8_oracle());
    check_values("SELECT random() FROM generate_series(1, 1000)", float8_oracle());
    check_values("SELECT ((CASE WHEN random() < 0.5 THEN -1 ELSE 1 END) * (0.1 + random()) * "
                 "10 ^ (random() * 82 - 44))::float4 FROM generate_series(1, 5000)",
                 float4_oracle());
    check_values("SELECT random()::float4 FROM generate_series(1, 1000)", float4_oracle());
  }
}

TEST_F(PgLive, BooleansAndTextTypes) {
  check_values(values_of({"true", "false"}, "bool"), bool_oracle());
  const std::vector<std::string> texts = {"''",
                                          "' '",
                                          "'a'",
                                          "'\xC3\xA9t\xC3\xA9'",
                                          "'\xF0\x9F\x98\x80\xF0\x9F\x90\x98 4-byte'",
                                          "'a,b{c}\"d\\e'",
                                          "'NULL'",
                                          "E'line\\nbreak\\ttab'",
                                          "'  padded  '",
                                          "repeat('x\xF0\x9F\x98\x80', 30000)"};
  check_values(values_of(texts, "text"), text_oracle());
  check_values(values_of(texts, "varchar"), bytes_as_string_oracle("varcharsend"));
  check_values(values_of(texts, "varchar(3)"), bytes_as_string_oracle("varcharsend"));
  check_values(values_of(texts, "bpchar(12)"), bytes_as_string_oracle("bpcharsend"));  // with its padding
  check_values(values_of(texts, "bpchar"), bytes_as_string_oracle("bpcharsend"));
  check_values(values_of(texts, "name"), bytes_as_string_oracle("namesend"));
  check_values(values_of({"'a'", "''", "' '", "'\xC3\xA9'", "'\\'", "'\"'"}, "\"char\""), char_oracle());
  check_values("SELECT chr(i)::\"char\" FROM generate_series(1, 127) AS i", char_oracle());
  check_values("SELECT i::\"char\" FROM generate_series(-128, 127) AS i", char_oracle());  // int4 to "char": the byte
  // Types whose Value is their text.
  check_values(values_of({"'<a x=\"1\">&amp;\xF0\x9F\x98\x80</a>'", "''", "'text only'"}, "xml"), via_text_oracle());
  check_values(values_of({"'192.168.1.5/24'", "'::1'", "'2001:db8::ff00:42:8329/64'", "'10.0.0.1'"}, "inet"),
               via_text_oracle("abbrev({v})"));
  check_values(values_of({"'10.0.0.0/8'", "'2001:db8::/32'"}, "cidr"), via_text_oracle());
  check_values(values_of({"'08:00:2b:01:02:03'", "'ff:ff:ff:ff:ff:ff'"}, "macaddr"), via_text_oracle());
  check_values(values_of({"'08:00:2b:01:02:03:04:05'"}, "macaddr8"), via_text_oracle());
  check_values(values_of({"B''", "B'1'", "B'0101'"}, "varbit"), via_text_oracle());
  check_values(values_of({"B'1'", "B'10100000'"}, "bit(8)"), via_text_oracle());
  check_values("SELECT (floor(random() * 2^31)::int8)::bit(31)::varbit FROM generate_series(1, 50)", via_text_oracle());
}

TEST_F(PgLive, ByteaInBothOutputFormats) {
  const std::string source =
      "SELECT x FROM (VALUES (''::bytea), ('\\x00'::bytea), ('\\x5c'::bytea), ('\\x5c5c78'::bytea), "
      "(convert_to('\xF0\x9F\x98\x80', 'UTF8'))) AS a(x) "
      "UNION ALL SELECT decode(string_agg(lpad(to_hex(i), 2, '0'), '' ORDER BY i), 'hex') "
      "FROM generate_series(0, 255) AS i "
      "UNION ALL SELECT decode(md5(i::text) || md5((i * 7)::text), 'hex') FROM generate_series(1, 300) AS i";
  for (const char* format : {"hex", "escape"}) {
    SCOPED_TRACE(format);
    exec(std::string("SET bytea_output = ") + format);
    check_values(source, bytea_oracle());
  }
}

TEST_F(PgLive, UuidJsonMoney) {
  check_values(values_of({"'00000000-0000-0000-0000-000000000000'", "'ffffffff-ffff-ffff-ffff-ffffffffffff'",
                          "'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'"},
                         "uuid"),
               uuid_oracle());
  check_values("SELECT gen_random_uuid() FROM generate_series(1, 200)", uuid_oracle());
  const std::vector<std::string> docs = {"'{}'", "'[]'", "'null'", "'\"\xF0\x9F\x98\x80\"'", "'\"a\\\\b\\\"c\"'",
                                         "'{\"a\": [1, 2.50, null, true], \"b\": {\"c\": \"x,y{z}\"}}'",
                                         "'  {\"spaced\"  :  1 }  '", "'1e400'"};
  check_values(values_of(docs, "json"), json_oracle());
  check_values(values_of(docs, "jsonb"), json_oracle());
  // money as lc_monetary=C prints it; the server's default here is C.UTF-8, which prints the same.
  const std::vector<std::string> amounts = {"0", "'-1234.56'", "'1234.56'", "'0.01'", "'-0.01'",
                                            "'92233720368547758.07'", "'-92233720368547758.08'"};
  check_values(values_of(amounts, "money"), money_oracle());
  exec("SET lc_monetary = 'C'");
  check_values(values_of(amounts, "money"), money_oracle());
  check_values("SELECT ((random() - 0.5) * 10 ^ (random() * 12))::numeric(20,2)::money FROM generate_series(1, 500)",
               money_oracle());
}

TEST_F(PgLive, Dates) {
  check_values(values_of({"'infinity'", "'-infinity'", "'1970-01-01'", "'1969-12-31'", "'2000-02-29'",
                          "'0001-01-01'", "'0001-12-31 BC'", "'0001-01-01 BC'", "'0001-02-29 BC'", "'0005-02-29 BC'",
                          "'0044-03-15 BC'", "'4714-11-24 BC'", "'5874897-12-31'", "'9999-12-31'", "'10000-01-01'"},
                         "date"),
               date_oracle());
  check_values("SELECT date '4714-11-24 BC' + floor(random() * (date '5874897-12-31' - date '4714-11-24 BC'))::int "
               "FROM generate_series(1, 3000)",
               date_oracle());
  check_values("SELECT date '0001-01-01' - floor(random() * 1721424)::int FROM generate_series(1, 1000)",
               date_oracle());  // BC and early AD, leap years of both eras
}

TEST_F(PgLive, Times) {
  check_values(values_of({"'00:00:00'", "'23:59:59.999999'", "'24:00:00'", "'12:34:56.789'", "'00:00:00.000001'"},
                         "time"),
               time_oracle());
  check_values("SELECT time '00:00:00' + random() * interval '24 hours' FROM generate_series(1, 1000)", time_oracle());
  check_values(values_of({"'12:34:56.789'", "'12:34:56.789'"}, "time(1)"), time_oracle());
  check_values(values_of({"'00:00:00+00'", "'12:00:00+05:30'", "'23:59:59.999999-15:59'", "'00:00:00+15:59:59'",
                          "'24:00:00+00'", "'24:00:00-05'", "'00:00:00.5-00:00:01'"},
                         "timetz"),
               timetz_oracle());
  check_values("SELECT ((time '00:00:00' + random() * interval '24 hours')::text || "
               "(CASE WHEN random() < 0.5 THEN '+' ELSE '-' END) || "
               "to_char(floor(random() * 16)::int, 'FM00') || ':' || to_char(floor(random() * 60)::int, 'FM00') || "
               "':' || to_char(floor(random() * 60)::int, 'FM00'))::timetz FROM generate_series(1, 1000)",
               timetz_oracle());
}

TEST_F(PgLive, TimestampsInManyZones) {
  const std::vector<std::string> naive = {
      "'infinity'", "'-infinity'", "'1970-01-01 00:00:00'", "'1969-12-31 23:59:59.999999'",
      "'2024-02-29 12:34:56.789'", "'0044-03-15 12:34:56.789 BC'", "'0001-01-01 00:00:00 BC'",
      "'4714-11-24 00:00:00 BC'", "'9999-12-31 23:59:59.999999'", "'10000-01-01 00:00:00'",
      "'294247-01-10 04:00:54.775806'"};
  check_values(values_of(naive, "timestamp"), timestamp_oracle(false));
  // (A difference of such timestamps overflows PostgreSQL's interval: add whole days, then a time of day.)
  check_values("SELECT timestamp '4714-11-24 00:00:00 BC' + make_interval(days => floor(random() * "
               "(date '294246-12-31' - date '4714-11-24 BC'))::int) + floor(random() * 86400000000) * "
               "interval '1 microsecond' FROM generate_series(1, 2000)",
               timestamp_oracle(false));
  check_values(values_of({"'2024-01-01 00:00:00.123'"}, "timestamp(0)"), timestamp_oracle(false));

  const std::vector<std::string> instants = {
      "'infinity'", "'-infinity'", "'1970-01-01 00:00:00+00'", "'2024-01-01 00:00:00+00'",
      "'2024-07-01 12:00:00.000001+00'", "'1900-01-01 00:00:00+00'", "'1800-06-01 12:00:00+00'",
      "'0044-03-15 12:34:56.789+00 BC'", "'4714-11-24 00:00:00+00 BC'", "'294247-01-10 04:00:54.775806+00'",
      "'294247-01-10 04:00:54.775807+00'", "'294276-12-31 23:59:59.999999+00'", "'2024-03-31 01:30:00+00'"};
  for (const char* zone : {"UTC", "Asia/Kolkata", "America/St_Johns", "Europe/Amsterdam", "Pacific/Chatham",
                           "America/Los_Angeles", "Asia/Kathmandu", "America/Sao_Paulo", "Pacific/Kiritimati",
                           "Etc/GMT+12", "Africa/Monrovia"}) {
    SCOPED_TRACE(std::string("TimeZone ") + zone);
    exec(std::string("SET TimeZone = ") + quoted(zone));
    check_values(values_of(instants, "timestamptz"), timestamp_oracle(true));
    check_values("SELECT timestamptz '4714-11-25 00:00:00+00 BC' + make_interval(days => floor(random() * "
                 "(date '294276-12-30' - date '4714-11-25 BC'))::int) + floor(random() * 86400000000) * "
                 "interval '1 microsecond' FROM generate_series(1, 1000)",
                 timestamp_oracle(true));
    check_values("SELECT timestamptz '1850-01-01 00:00:00+00' + random() * interval '250 years' "
                 "FROM generate_series(1, 500)",
                 timestamp_oracle(true));  // the zone's history: LMT, DST changes
  }
}

TEST_F(PgLive, Intervals) {
  exec("SET IntervalStyle = postgres");
  check_values(values_of({"'0'", "'1 year 2 mons -3 days 04:05:06.789'", "'-1 year -2 mons +3 days -04:05:06.789'",
                          "'-00:00:01'", "'-0.5 sec'", "'1 day -00:00:01'", "'-1 day +00:00:01'", "'1.5 months'",
                          "'178000000 years'", "'-178000000 years'", "'2147483647 mons'", "'-2147483648 mons'",
                          "'2147483647 days'", "'-2147483648 days'", "'2562047788:00:54.775807'",
                          "'-2562047788:00:54.775807'", "'1 mon'", "'-1 mons'", "'1 year'", "'-1 years'",
                          "'1 day'", "'-1 days'", "'11 mons 29 days 23:59:59.999999'"},
                         "interval"),
               interval_oracle());
  check_values(values_of({"interval '-2562047788:00:54.775807' - interval '1 microsecond'",
                          "interval '-178956970 years -8 mons -2147483648 days' + "
                          "(interval '-2562047788:00:54.775807' - interval '1 microsecond')"},
                         "interval"),
               interval_oracle());
  check_values("SELECT make_interval(years => floor(random() * 2000 - 1000)::int, "
               "months => floor(random() * 24 - 12)::int, days => floor(random() * 20000 - 10000)::int, "
               "hours => floor(random() * 200000 - 100000)::int, mins => floor(random() * 120 - 60)::int, "
               "secs => round((random() * 120 - 60)::numeric, 6)::float8) FROM generate_series(1, 2000)",
               interval_oracle());
  check_values("SELECT floor((random() - 0.5) * 2^62) * interval '1 microsecond' FROM generate_series(1, 500)",
               interval_oracle());
}

TEST_F(PgLive, EnumsAndDomains) {
  const std::string s = schema_;
  check_values("SELECT unnest(enum_range(NULL::" + s + ".mood))", via_text_oracle());
  check_values(values_of({"1", "2147483647"}, s + ".posint"), integer_oracle());
  check_values(values_of({"1", "42"}, s + ".bigposint"), integer_oracle());
  check_values(values_of({"''", "'\xF0\x9F\x98\x80'", "'a,b'"}, s + ".label"), text_oracle());
  check_values(values_of({"'1.50'", "'-0.01'"}, s + ".money_amount"), numeric_oracle());
  check_arrays(values_of({"'{1,NULL,3}'", "'{}'", "'{{1,2},{3,4}}'"}, s + ".intlist"), integer_oracle());
  check_arrays(values_of({"'{sad,NULL,\"with,comma\",\"quo\\\"te\",\"back\\\\slash\",\"NULL\",\"\"}'"}, s + ".mood[]"),
               via_text_oracle());
  check_arrays(values_of({"'{1,NULL}'"}, s + ".posint[]"), integer_oracle());
  check_arrays(values_of({"'{\"a,b\",NULL,\"}\"}'"}, s + ".label[]"), text_oracle());
}

TEST_F(PgLive, Arrays) {
  check_arrays(values_of({"'{}'", "'{1,2,NULL}'", "'{NULL}'", "'{{1,2},{3,4}}'", "'{{{1,NULL}},{{3,4}}}'",
                          "'[0:1]={1,2}'", "'[-5:-4][1:2]={{1,2},{3,4}}'", "'{-2147483648,2147483647}'"},
                         "int4[]"),
               integer_oracle());
  check_arrays(values_of({"'{-9223372036854775808,9223372036854775807,NULL}'"}, "int8[]"), integer_oracle());
  check_arrays(values_of({"'{1,2}'"}, "int2[]"), integer_oracle());
  check_arrays(values_of({"'{1,4294967295}'"}, "oid[]"), integer_oracle());
  check_arrays(values_of({"ARRAY['a,b', '{x}', '\"q\"', 'back\\slash', 'NULL', NULL, '', ' sp ', "
                          "'\xF0\x9F\x98\x80', 'a\"b\\c,d{e}f', E'new\\nline', 'nUlL']",
                          "'{{a,b},{\"c,d\",NULL}}'", "'{}'", "ARRAY[repeat('\\\"', 100)]"},
                         "text[]"),
               text_oracle());
  check_arrays(values_of({"ARRAY['ab', NULL, '']"}, "bpchar(4)[]"), bytes_as_string_oracle("bpcharsend"));
  check_arrays(values_of({"ARRAY['ab', NULL, 'x,y']"}, "varchar[]"), bytes_as_string_oracle("varcharsend"));
  check_arrays(values_of({"ARRAY['ab', NULL]"}, "name[]"), bytes_as_string_oracle("namesend"));
  check_arrays(values_of({"ARRAY['a', NULL, '\\', '\"', ',']"}, "\"char\"[]"), char_oracle());
  check_arrays(values_of({"'{t,f,NULL}'"}, "bool[]"), bool_oracle());
  check_arrays(values_of({"'{1.50,NaN,-Infinity,Infinity,NULL}'", "ARRAY[repeat('9', 1000)::numeric]"}, "numeric[]"),
               numeric_oracle());
  check_arrays(values_of({"'{NaN,-Infinity,Infinity,-0,4.9e-324,1.7976931348623157e308,NULL}'"}, "float8[]"),
               float8_oracle());
  check_arrays(values_of({"'{NaN,0.1,1e-45,3.4028235e38,7.038531e-26}'"}, "float4[]"), float4_oracle());
  for (const char* format : {"hex", "escape"}) {
    exec(std::string("SET bytea_output = ") + format);
    check_arrays(values_of({"ARRAY['\\x00ff'::bytea, NULL, ''::bytea, '\\x5c22'::bytea, '\\x2c7b7d'::bytea]"},
                           "bytea[]"),
                 bytea_oracle());
  }
  check_arrays(values_of({"'{infinity,-infinity,2024-01-01,0044-03-15 BC,NULL}'"}, "date[]"), date_oracle());
  check_arrays(values_of({"'{00:00:00,24:00:00,12:34:56.789}'"}, "time[]"), time_oracle());
  check_arrays(values_of({"'{12:00:00+05:30,NULL,23:59:59.999999-15:59}'"}, "timetz[]"), timetz_oracle());
  check_arrays(values_of({"'{infinity,\"2024-01-01 00:00:00.5\",\"0044-03-15 12:00:00 BC\",NULL}'"}, "timestamp[]"),
               timestamp_oracle(false));
  exec("SET TimeZone = 'Asia/Kolkata'");
  check_arrays(values_of({"'{-infinity,\"2024-01-01 00:00:00+00\",\"294276-12-31 23:59:59.999999+00\"}'"},
                         "timestamptz[]"),
               timestamp_oracle(true));
  check_arrays(values_of({"ARRAY['1 year 2 mons -3 days 04:05:06.789'::interval, NULL, '-00:00:01']"}, "interval[]"),
               interval_oracle());
  check_arrays(values_of({"ARRAY[gen_random_uuid(), NULL, gen_random_uuid()]"}, "uuid[]"), uuid_oracle());
  check_arrays(values_of({"ARRAY['{\"a\": [1, \"x,y\"]}', 'null', NULL, '\"\\\\\"']"}, "jsonb[]"), json_oracle());
  check_arrays(values_of({"ARRAY['{\"a\": [1, \"x,y\"]}', NULL]"}, "json[]"), json_oracle());
  check_arrays(values_of({"ARRAY['$1,000.00'::money, NULL, '-0.01']"}, "money[]"), money_oracle());
  check_arrays(values_of({"ARRAY[B'101', NULL, B'']"}, "varbit[]"), via_text_oracle());
  check_arrays(values_of({"ARRAY['192.168.0.1/24'::inet, NULL, '::1']"}, "inet[]"), via_text_oracle("abbrev({v})"));
  check_arrays(values_of({"ARRAY['<a>,</a>'::xml]"}, "xml[]"), via_text_oracle());
  // Random text arrays with every ASCII punctuation character, in random shapes.
  check_arrays("SELECT array_agg(CASE WHEN random() < 0.1 THEN NULL ELSE "
               "(SELECT string_agg(chr(32 + floor(random() * 95)::int), '') FROM generate_series(0, "
               "floor(random() * 8)::int + g * 0)) END) FROM generate_series(1, 4000) AS g GROUP BY g % 200",
               text_oracle());
}

}  // namespace
}  // namespace tidemark::pg
