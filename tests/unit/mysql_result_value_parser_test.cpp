// The chunk SELECT's values (binary protocol) map to the binlog decoder's Values, and keys to their KeyText.
// The live comparison with the decoder is tests/integration/mysql_snapshot_reader_test.cpp; these cover the
// rules one by one, including what a server rarely produces (TIME split into days, undefined latin1 bytes).

#include <gtest/gtest.h>

#include <limits>

#include "source/mysql/result_value_parser.hpp"

namespace tidemark::mysql {
namespace {

ResultColumn column(enum_field_types type, bool nullable = true) {
  ResultColumn c;
  c.type = type;
  c.nullable = nullable;
  return c;
}

Value parse(const ResultColumn& c, const WireValue& w) {
  Value v;
  std::string error;
  EXPECT_TRUE(parse_result_value(c, w, v, error)) << error;
  return v;
}

std::optional<std::string> key(const ResultColumn& c, const WireValue& w) {
  std::optional<std::string> text;
  std::string error;
  EXPECT_TRUE(result_key_text(c, w, text, error)) << error;
  return text;
}

WireValue bytes(std::string b) {
  WireValue w;
  w.bytes = std::move(b);
  return w;
}

WireValue integer(uint64_t v) {
  WireValue w;
  w.integer = v;
  return w;
}

MYSQL_TIME civil(unsigned y, unsigned mo, unsigned d, unsigned h = 0, unsigned mi = 0, unsigned s = 0, unsigned long us = 0) {
  MYSQL_TIME t{};
  t.year = y;
  t.month = mo;
  t.day = d;
  t.hour = h;
  t.minute = mi;
  t.second = s;
  t.second_part = us;
  return t;
}

WireValue temporal(MYSQL_TIME t) {
  WireValue w;
  w.time = t;
  return w;
}

TEST(MySqlResultValueParser, IntegersAsTheDecoder) {
  ResultColumn tiny_unsigned = column(MYSQL_TYPE_TINY);
  tiny_unsigned.is_unsigned = true;
  EXPECT_EQ(parse(tiny_unsigned, integer(255)), Value(int64_t{255}));
  ResultColumn big_unsigned = column(MYSQL_TYPE_LONGLONG);
  big_unsigned.is_unsigned = true;
  EXPECT_EQ(parse(big_unsigned, integer(std::numeric_limits<uint64_t>::max())), Value(std::numeric_limits<uint64_t>::max()));
  EXPECT_EQ(parse(big_unsigned, integer(1)), Value(uint64_t{1})) << "BIGINT UNSIGNED is always uint64";
  EXPECT_EQ(key(big_unsigned, integer(std::numeric_limits<uint64_t>::max())), "18446744073709551615");
  const ResultColumn big = column(MYSQL_TYPE_LONGLONG);
  EXPECT_EQ(parse(big, integer(static_cast<uint64_t>(-1))), Value(int64_t{-1}));
  EXPECT_EQ(key(big, integer(static_cast<uint64_t>(std::numeric_limits<int64_t>::min()))), "-9223372036854775808");
  EXPECT_EQ(parse(column(MYSQL_TYPE_YEAR), integer(0)), Value(int64_t{0}));
  EXPECT_EQ(parse(column(MYSQL_TYPE_YEAR), integer(2155)), Value(int64_t{2155}));
  WireValue null;
  null.is_null = true;
  EXPECT_EQ(parse(big, null), Value(Null{}));
  EXPECT_EQ(key(big, null), std::nullopt);
}

TEST(MySqlResultValueParser, FloatIsTheShortestFloatTextAsADoubleAndItsKeyTheExactDouble) {
  WireValue w;
  w.f = 0.1f;
  EXPECT_EQ(parse(column(MYSQL_TYPE_FLOAT), w), Value(0.1));
  // The server compares a FLOAT column as the widened double: the key must be exactly that.
  EXPECT_EQ(key(column(MYSQL_TYPE_FLOAT), w), "1.0000000149011612e-01");
  w.f = 3.4028235e38f;
  EXPECT_EQ(parse(column(MYSQL_TYPE_FLOAT), w), Value(3.4028235e38));
  w.f = 7.038531e-26f;  // one of the two floats that (float)double would move to a neighbour
  EXPECT_EQ(parse(column(MYSQL_TYPE_FLOAT), w), Value(7.038531e-26));
  WireValue d;
  d.d = 5e-324;
  EXPECT_EQ(parse(column(MYSQL_TYPE_DOUBLE), d), Value(5e-324));
  EXPECT_EQ(key(column(MYSQL_TYPE_DOUBLE), d), "5e-324");
  d.d = -0.1;
  EXPECT_EQ(key(column(MYSQL_TYPE_DOUBLE), d), "-1e-01");
}

TEST(MySqlResultValueParser, TimeIsSignedMicrosecondsBeyondADay) {
  MYSQL_TIME t{};
  t.neg = 1;
  t.hour = 838;
  t.minute = 59;
  t.second = 59;
  const int64_t max = (838LL * 3600 + 59 * 60 + 59) * 1'000'000;
  EXPECT_EQ(parse(column(MYSQL_TYPE_TIME), temporal(t)), Value(Time{-max}));
  EXPECT_EQ(key(column(MYSQL_TYPE_TIME), temporal(t)), "-838:59:59");
  t.day = 34;  // the same value with whole days apart
  t.hour = 22;
  EXPECT_EQ(parse(column(MYSQL_TYPE_TIME), temporal(t)), Value(Time{-max}));
  MYSQL_TIME f{};
  f.neg = 1;
  f.hour = 12;
  f.minute = 34;
  f.second = 56;
  f.second_part = 789012;
  EXPECT_EQ(parse(column(MYSQL_TYPE_TIME), temporal(f)), Value(Time{-((12LL * 3600 + 34 * 60 + 56) * 1'000'000 + 789012)}));
  EXPECT_EQ(key(column(MYSQL_TYPE_TIME), temporal(f)), "-12:34:56.789012");
}

TEST(MySqlResultValueParser, DatesAndZeroDates) {
  EXPECT_EQ(parse(column(MYSQL_TYPE_DATE), temporal(civil(2024, 1, 1))), Value(Date{19723}));
  EXPECT_EQ(parse(column(MYSQL_TYPE_DATE), temporal(civil(0, 1, 1))), Value(Date{-719528})) << "year 0 is a real date";
  EXPECT_EQ(parse(column(MYSQL_TYPE_DATE), temporal(civil(0, 0, 0))), Value(Null{}));
  EXPECT_EQ(parse(column(MYSQL_TYPE_DATE, false), temporal(civil(0, 0, 0))), Value(Date{0}));
  EXPECT_EQ(parse(column(MYSQL_TYPE_DATE), temporal(civil(2024, 2, 0))), Value(Null{}));
  EXPECT_EQ(parse(column(MYSQL_TYPE_DATE, false), temporal(civil(2024, 0, 0))), Value(Date{0}));
  // The key keeps the stored text, so a NOT NULL zero date is found again.
  EXPECT_EQ(key(column(MYSQL_TYPE_DATE, false), temporal(civil(0, 0, 0))), "0000-00-00");
  EXPECT_EQ(parse(column(MYSQL_TYPE_DATETIME), temporal(civil(2024, 2, 29, 12, 34, 56, 123456))),
            Value(Timestamp{1709210096123456}));
  EXPECT_EQ(key(column(MYSQL_TYPE_DATETIME), temporal(civil(2024, 2, 29, 12, 34, 56, 123456))), "2024-02-29 12:34:56.123456");
  EXPECT_EQ(key(column(MYSQL_TYPE_DATETIME), temporal(civil(1000, 1, 1))), "1000-01-01 00:00:00");
  EXPECT_EQ(parse(column(MYSQL_TYPE_DATETIME, false), temporal(civil(0, 0, 0))), Value(Timestamp{0}));
  EXPECT_EQ(parse(column(MYSQL_TYPE_TIMESTAMP), temporal(civil(2038, 1, 19, 3, 14, 7, 999999))),
            Value(TimestampTz{2147483647999999}));
  EXPECT_EQ(parse(column(MYSQL_TYPE_TIMESTAMP), temporal(civil(0, 0, 0))), Value(Null{}));
  EXPECT_EQ(parse(column(MYSQL_TYPE_TIMESTAMP, false), temporal(civil(0, 0, 0))), Value(TimestampTz{0}));
}

TEST(MySqlResultValueParser, DecimalTextIsKeptAndChecked) {
  const ResultColumn d = column(MYSQL_TYPE_NEWDECIMAL);
  EXPECT_EQ(parse(d, bytes("-0.000001")), Value(Decimal{"-0.000001"}));
  EXPECT_EQ(parse(d, bytes("12345678.90")), Value(Decimal{"12345678.90"}));
  EXPECT_EQ(key(d, bytes("-999.99")), "-999.99");
  for (const char* bad : {"1e5", "", "-", "1.", ".5", "1,5", "NaN"}) {
    Value v;
    std::string error;
    EXPECT_FALSE(parse_result_value(d, bytes(bad), v, error)) << bad;
    EXPECT_NE(error.find("DECIMAL"), std::string::npos);
  }
}

TEST(MySqlResultValueParser, BitOneIsBoolWiderBitsAreBytes) {
  ResultColumn b1 = column(MYSQL_TYPE_BIT);
  b1.bits = 1;
  EXPECT_EQ(parse(b1, bytes(std::string(1, '\1'))), Value(true));
  EXPECT_EQ(parse(b1, bytes(std::string(1, '\0'))), Value(false));
  EXPECT_EQ(key(b1, bytes(std::string(1, '\1'))), "01");
  ResultColumn b12 = column(MYSQL_TYPE_BIT);
  b12.bits = 12;
  EXPECT_EQ(parse(b12, bytes("\x0a\xaa")), Value(Bytes{"\x0a\xaa"}));
  EXPECT_EQ(key(b12, bytes("\x0a\xaa")), "0AAA");
}

TEST(MySqlResultValueParser, TextIsConvertedByCollationAndByteStringsStayBytes) {
  ResultColumn latin1 = column(MYSQL_TYPE_VAR_STRING);
  latin1.collation = 8;  // latin1_swedish_ci: MySQL's latin1 is cp1252
  EXPECT_EQ(parse(latin1, bytes("\x80 caf\xe9 \x81")), Value(std::string("€ café \xc2\x81")));
  EXPECT_EQ(key(latin1, bytes("caf\xe9")), "café");
  ResultColumn utf8 = column(MYSQL_TYPE_STRING);
  utf8.collation = 45;
  EXPECT_EQ(parse(utf8, bytes("😀 x")), Value(std::string("😀 x")));
  ResultColumn binary = column(MYSQL_TYPE_STRING);
  binary.collation = kBinaryCollation;
  EXPECT_EQ(parse(binary, bytes(std::string("ab\0\0", 4))), Value(Bytes{std::string("ab\0\0", 4)}));
  EXPECT_EQ(key(binary, bytes(std::string("ab\0\xff", 4))), "616200FF");
  // Without a collation the BLOB types are bytes and the others text, as in the decoder.
  EXPECT_EQ(parse(column(MYSQL_TYPE_BLOB), bytes("x")), Value(Bytes{"x"}));
  EXPECT_EQ(parse(column(MYSQL_TYPE_VAR_STRING), bytes("x")), Value(std::string("x")));
  EXPECT_EQ(parse(column(MYSQL_TYPE_GEOMETRY), bytes(std::string("\x10\0\0\0\1", 5))), Value(Bytes{std::string("\x10\0\0\0\1", 5)}));
}

TEST(MySqlResultValueParser, MariaDbTypesAsTheDecoderRendersThem) {
  ResultColumn uuid = column(MYSQL_TYPE_STRING);
  uuid.extended = ExtendedType::Uuid;
  Uuid u;
  ASSERT_TRUE(parse_uuid("123e4567-e89b-12d3-a456-426614174000", u));
  EXPECT_EQ(parse(uuid, bytes("123e4567-e89b-12d3-a456-426614174000")), Value(u));
  EXPECT_EQ(key(uuid, bytes("123e4567-e89b-12d3-a456-426614174000")), "123e4567-e89b-12d3-a456-426614174000");
  ResultColumn inet6 = column(MYSQL_TYPE_STRING);
  inet6.extended = ExtendedType::Inet6;
  EXPECT_EQ(parse(inet6, bytes("2001:0db8:0:0::0001")), Value(std::string("2001:db8::1")));
  EXPECT_EQ(parse(inet6, bytes("::ffff:1.2.3.0")), Value(std::string("::ffff:1.2.3.0")));
  ResultColumn inet4 = column(MYSQL_TYPE_STRING);
  inet4.extended = ExtendedType::Inet4;
  EXPECT_EQ(parse(inet4, bytes("255.255.255.255")), Value(std::string("255.255.255.255")));
  ResultColumn json = column(MYSQL_TYPE_BLOB);
  json.collation = 46;
  json.extended = ExtendedType::Json;
  EXPECT_EQ(parse(json, bytes(R"({"a": [1, 2.5]})")), Value(Json{R"({"a": [1, 2.5]})"}));
  Value v;
  std::string error;
  EXPECT_FALSE(parse_result_value(uuid, bytes("not a uuid"), v, error));
  EXPECT_FALSE(parse_result_value(inet6, bytes("1.2.3"), v, error));
}

TEST(MySqlResultValueParser, EnumAndSetKeysAreTheirNumbers) {
  ResultColumn e = column(MYSQL_TYPE_STRING);
  e.is_enum = true;
  e.collation = 45;
  e.members = {"a", "bb", "é"};
  EXPECT_EQ(parse(e, bytes("é")), Value(std::string("é")));
  EXPECT_EQ(key(e, bytes("é")), "3");
  EXPECT_EQ(key(e, bytes("")), "0") << "the error value ''";
  ResultColumn s = column(MYSQL_TYPE_STRING);
  s.is_set = true;
  s.collation = 45;
  s.members = {"x", "y", "z", "w"};
  EXPECT_EQ(key(s, bytes("x,w")), "9");
  EXPECT_EQ(key(s, bytes("")), "0");
  std::optional<std::string> text;
  std::string error;
  EXPECT_FALSE(result_key_text(e, bytes("nope"), text, error));
}

TEST(MySqlResultValueParser, KeyLiteralKinds) {
  auto kind = [](std::string data_type, uint32_t collation = 0) {
    CatalogColumn c;
    c.data_type = std::move(data_type);
    c.collation = collation;
    return key_literal_kind(c);
  };
  EXPECT_EQ(kind("int"), KeyLiteral::Number);
  EXPECT_EQ(kind("decimal"), KeyLiteral::Number);
  EXPECT_EQ(kind("float"), KeyLiteral::Number);
  EXPECT_EQ(kind("enum", 45), KeyLiteral::Number);
  EXPECT_EQ(kind("bit"), KeyLiteral::Bits);
  EXPECT_EQ(kind("varbinary", kBinaryCollation), KeyLiteral::Hex);
  EXPECT_EQ(kind("varchar", 45), KeyLiteral::String);
  EXPECT_EQ(kind("datetime"), KeyLiteral::String);
  EXPECT_EQ(kind("uuid"), KeyLiteral::String);
}

}  // namespace
}  // namespace tidemark::mysql
