// SQL literals of the database sink (src/sink/database/sql_values.hpp): every value kind into both
// dialects, the target-type rules, escaping, arrays, and every refusal. tests/integration/
// sql_values_roundtrip_test.cpp proves the same literals on the real servers.

#include "sink/database/sql_values.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/civil_time.hpp"

namespace tidemark::dbsink {
namespace {

constexpr Dialect PG = Dialect::Postgres;
constexpr Dialect MY = Dialect::MySql;

// The literal, or "ERROR: <message>". Appends after existing text, which must stay untouched.
std::string lit(Dialect d, const Value& v, std::string_view type = "", const ColumnInfo* source = nullptr) {
  std::string out = "<";
  const auto error = append_sql_literal(out, d, v, source, type);
  if (error) {
    EXPECT_EQ(out, "<") << "an error must leave the buffer as it was";
    return "ERROR: " + *error;
  }
  EXPECT_EQ(out.substr(0, 1), "<");
  return out.substr(1);
}

bool is_error(const std::string& s) { return s.rfind("ERROR: ", 0) == 0; }

#define EXPECT_ERROR(expr, fragment)                                                    \
  do {                                                                                  \
    const std::string r_ = (expr);                                                      \
    EXPECT_TRUE(is_error(r_)) << "expected an error, got " << r_;                       \
    EXPECT_NE(r_.find(fragment), std::string::npos) << "message lacks '" << (fragment) << "': " << r_; \
  } while (0)

Date date(int64_t y, unsigned m, unsigned d) { return Date{static_cast<int32_t>(days_from_civil(y, m, d))}; }

int64_t micros(int64_t y, unsigned mo, unsigned d, int64_t h = 0, int64_t mi = 0, int64_t s = 0, int64_t us = 0) {
  return days_from_civil(y, mo, d) * 86'400'000'000LL + ((h * 60 + mi) * 60 + s) * 1'000'000LL + us;
}

int64_t tod(int64_t h, int64_t m, int64_t s, int64_t us = 0) { return ((h * 60 + m) * 60 + s) * 1'000'000LL + us; }

ColumnInfo kind(ColumnKind k, uint32_t length = 0) {
  ColumnInfo c;
  c.kind = k;
  c.length = length;
  return c;
}

Uuid sample_uuid() {
  Uuid u;
  EXPECT_TRUE(parse_uuid("123e4567-e89b-12d3-a456-426614174000", u));
  return u;
}

// ---- Null, Unavailable ------------------------------------------------------------------------------------

TEST(SqlValues, NullIsNullEverywhere) {
  for (const Dialect d : {PG, MY}) {
    EXPECT_EQ(lit(d, Null{}), "NULL");
    EXPECT_EQ(lit(d, Null{}, "integer"), "NULL");
    EXPECT_EQ(lit(d, Null{}, "text"), "NULL");
  }
}

TEST(SqlValues, UnavailableIsAlwaysAnError) {
  for (const Dialect d : {PG, MY}) {
    for (const char* type : {"", "text", "integer", "json", "varchar(10)", "longtext"}) {
      EXPECT_ERROR(lit(d, Unavailable{}, type), "unavailable");
    }
  }
  EXPECT_ERROR(lit(PG, Array{{Value(int64_t{1}), Value(Unavailable{})}}, "integer[]"), "array element an unavailable");
  EXPECT_ERROR(lit(MY, Array{{Value(Unavailable{})}}, "json"), "unavailable");
}

// ---- booleans and integers -------------------------------------------------------------------------------

TEST(SqlValues, Booleans) {
  EXPECT_EQ(lit(PG, true), "true");
  EXPECT_EQ(lit(PG, false, "boolean"), "false");
  EXPECT_EQ(lit(PG, true, "integer"), "1");
  EXPECT_EQ(lit(PG, false, "smallint"), "0");
  EXPECT_EQ(lit(PG, true, "numeric(1,0)"), "1");
  EXPECT_EQ(lit(PG, true, "double precision"), "1");
  EXPECT_EQ(lit(PG, true, "bit(1)"), "B'1'");
  EXPECT_EQ(lit(PG, false, "bit varying(1)"), "B'0'");
  EXPECT_EQ(lit(PG, true, "text"), "'true'");
  EXPECT_EQ(lit(MY, true), "1");
  EXPECT_EQ(lit(MY, false, "tinyint(1)"), "0");
  EXPECT_EQ(lit(MY, true, "bit(1)"), "1");
  EXPECT_EQ(lit(MY, true, "varchar(5)"), "'1'");
  EXPECT_EQ(lit(MY, false, "enum('0','1')"), "'0'");
}

TEST(SqlValues, Integers) {
  const ColumnInfo tinyint1 = kind(ColumnKind::Int16);
  for (const Dialect d : {PG, MY}) {
    EXPECT_EQ(lit(d, int64_t{42}), "42");
    EXPECT_EQ(lit(d, int64_t{-7}, "integer"), "-7");
    EXPECT_EQ(lit(d, std::numeric_limits<int64_t>::min()), "-9223372036854775808");
    EXPECT_EQ(lit(d, std::numeric_limits<int64_t>::max()), "9223372036854775807");
    EXPECT_EQ(lit(d, std::numeric_limits<uint64_t>::max()), "18446744073709551615");
  }
  EXPECT_EQ(lit(MY, std::numeric_limits<uint64_t>::max(), "bigint(20) unsigned"), "18446744073709551615");
  EXPECT_EQ(lit(PG, std::numeric_limits<uint64_t>::max(), "numeric(20,0)"), "18446744073709551615");
  // MySQL TINYINT(1) into a PostgreSQL boolean: 0 and 1 only.
  EXPECT_EQ(lit(PG, int64_t{1}, "boolean", &tinyint1), "true");
  EXPECT_EQ(lit(PG, int64_t{0}, "boolean", &tinyint1), "false");
  EXPECT_EQ(lit(PG, uint64_t{1}, "boolean"), "true");
  EXPECT_ERROR(lit(PG, int64_t{2}, "boolean", &tinyint1), "only 0 and 1");
  EXPECT_ERROR(lit(PG, int64_t{-1}, "boolean"), "integer -1 cannot be written to the PostgreSQL column of type 'boolean'");
  EXPECT_EQ(lit(MY, int64_t{5}, "tinyint(1)", &tinyint1), "5");
  EXPECT_EQ(lit(PG, int64_t{5}, "text"), "'5'");
  EXPECT_EQ(lit(MY, int64_t{5}, "enum('5','6')"), "'5'");  // a bare 5 would be the fifth member
  EXPECT_EQ(lit(MY, int64_t{2024}, "year(4)"), "2024");
}

// ---- floating point and decimals ----------------------------------------------------------------------

TEST(SqlValues, Doubles) {
  const double inf = std::numeric_limits<double>::infinity();
  // MySQL: plain shortest round-trip digits. PostgreSQL: the same digits quoted, so that the column's own
  // input function reads them (an unquoted 0.1 is numeric, and `real_column = 0.1` would miss).
  EXPECT_EQ(lit(MY, 0.1), "0.1");
  EXPECT_EQ(lit(PG, 0.1), "'0.1'");
  EXPECT_EQ(lit(MY, 1.5, "double"), "1.5");
  EXPECT_EQ(lit(PG, 1.5, "double precision"), "'1.5'");
  EXPECT_EQ(lit(PG, 0.1, "real"), "'0.1'");
  EXPECT_EQ(lit(PG, 0.1, "numeric(10,2)"), "'0.1'");
  EXPECT_EQ(lit(MY, 1.7976931348623157e308), "1.7976931348623157e+308");
  EXPECT_EQ(lit(PG, 1.7976931348623157e308), "'1.7976931348623157e+308'");
  EXPECT_EQ(lit(MY, 5e-324), "5e-324");
  EXPECT_EQ(lit(PG, 5e-324), "'5e-324'");
  EXPECT_EQ(lit(MY, -2.5e-10), "-2.5e-10");
  EXPECT_EQ(lit(PG, -2.5e-10), "'-2.5e-10'");
  // Into integer columns: integer digits, unquoted; a fraction or more than 64 bits is an error.
  for (const Dialect d : {PG, MY}) {
    EXPECT_EQ(lit(d, 3.0, "integer"), "3");
    EXPECT_EQ(lit(d, -0.0, "bigint"), "0");
    EXPECT_EQ(lit(d, 1e18, "bigint"), "1000000000000000000");
    EXPECT_EQ(lit(d, -9223372036854775808.0, "bigint"), "-9223372036854775808");
    EXPECT_EQ(lit(d, 1.8e19, "bigint"), "18000000000000000000");
    EXPECT_ERROR(lit(d, 3.5, "bigint"), "round away its fraction");
    EXPECT_ERROR(lit(d, 1e20, "bigint"), "beyond the 64-bit integers");
  }
  EXPECT_EQ(lit(PG, -0.0), "'-0'");
  EXPECT_EQ(lit(MY, -0.0, "double"), "-0e0");  // -0 alone is the integer 0
  EXPECT_EQ(lit(PG, std::nan(""), "double precision"), "'NaN'");
  EXPECT_EQ(lit(PG, inf, "real"), "'Infinity'");
  EXPECT_EQ(lit(PG, -inf), "'-Infinity'");
  EXPECT_EQ(lit(PG, inf, "numeric"), "'Infinity'");
  EXPECT_ERROR(lit(PG, std::nan(""), "integer"), "no NaN or infinity");
  EXPECT_ERROR(lit(MY, std::nan(""), "double"), "double NaN cannot be written to the MySQL column of type 'double'");
  EXPECT_ERROR(lit(MY, inf), "no NaN or infinity");
  EXPECT_ERROR(lit(MY, -inf, "float"), "double -Infinity");
  // Text columns take the text, also of what a MySQL number cannot hold.
  EXPECT_EQ(lit(MY, std::nan(""), "varchar(10)"), "'NaN'");
  EXPECT_EQ(lit(PG, -inf, "text"), "'-Infinity'");
  EXPECT_EQ(lit(PG, 0.25, "character varying(10)"), "'0.25'");
}

TEST(SqlValues, Decimals) {
  for (const Dialect d : {PG, MY}) {
    EXPECT_EQ(lit(d, Decimal{"-1234.5600"}), "-1234.5600");
    EXPECT_EQ(lit(d, Decimal{"0"}, "numeric(10,2)"), "0");
    EXPECT_EQ(lit(d, Decimal{"12.00"}, "integer"), "12.00");
    EXPECT_ERROR(lit(d, Decimal{"12.50"}, "bigint"), "round away its fraction");
    // The text is written unquoted: anything but a number is refused.
    EXPECT_ERROR(lit(d, Decimal{"1; DROP TABLE t"}), "not a decimal number");
    EXPECT_ERROR(lit(d, Decimal{"1e5"}), "not a decimal number");
    EXPECT_ERROR(lit(d, Decimal{""}), "not a decimal number");
    EXPECT_ERROR(lit(d, Decimal{"1."}), "not a decimal number");
    EXPECT_ERROR(lit(d, Decimal{"-"}), "not a decimal number");
  }
  EXPECT_EQ(lit(PG, Decimal{"NaN"}, "numeric"), "'NaN'");
  EXPECT_EQ(lit(PG, Decimal{"Infinity"}, "numeric(10,2)"), "'Infinity'");
  EXPECT_EQ(lit(PG, Decimal{"-Infinity"}, "double precision"), "'-Infinity'");
  EXPECT_ERROR(lit(PG, Decimal{"NaN"}, "integer"), "no NaN or infinity");
  EXPECT_ERROR(lit(MY, Decimal{"NaN"}, "decimal(10,2)"), "decimal NaN cannot be written to the MySQL column");
  EXPECT_ERROR(lit(MY, Decimal{"-Infinity"}), "no NaN or infinity");
  EXPECT_EQ(lit(MY, Decimal{"Infinity"}, "varchar(20)"), "'Infinity'");
  EXPECT_EQ(lit(PG, Decimal{"1.50"}, "text"), "'1.50'");
  // PostgreSQL real and double precision columns read numbers with their own input function.
  EXPECT_EQ(lit(PG, Decimal{"0.1"}, "real"), "'0.1'");
  EXPECT_EQ(lit(PG, int64_t{16777217}, "real"), "'16777217'");
  EXPECT_EQ(lit(MY, Decimal{"0.1"}, "float"), "0.1");
}

// ---- strings --------------------------------------------------------------------------------------------

TEST(SqlValues, PostgresStringsDoubleQuotesAndKeepBackslashes) {
  EXPECT_EQ(lit(PG, std::string("it's")), "'it''s'");
  EXPECT_EQ(lit(PG, std::string("''")), "''''''");
  EXPECT_EQ(lit(PG, std::string("a\\b\"c\n")), "'a\\b\"c\n'");
  EXPECT_EQ(lit(PG, std::string()), "''");
  EXPECT_EQ(lit(PG, std::string("caf\xc3\xa9"), "text"), "'caf\xc3\xa9'");
  EXPECT_ERROR(lit(PG, std::string("ab\0cd", 5), "text"), "NUL byte (at byte 2)");
  EXPECT_ERROR(lit(PG, std::string("\0", 1)), "PostgreSQL text cannot hold");
  EXPECT_ERROR(lit(PG, std::string("x\0", 2), "varchar(3)"), "string 'x\\x00'");
  // Text into bytea: its bytes (bytea's input would read the backslash as an escape).
  EXPECT_EQ(lit(PG, std::string("a\\b"), "bytea"), "'\\x615c62'");
  EXPECT_EQ(lit(PG, std::string("0101"), "bit(4)"), "'0101'");  // PostgreSQL's bit strings arrive as text
}

TEST(SqlValues, MySqlStringsEscapeWithBackslashes) {
  EXPECT_EQ(lit(MY, std::string("it's")), "'it\\'s'");
  EXPECT_EQ(lit(MY, std::string("\0\n\r\\'\"\x1a", 7)), "'\\0\\n\\r\\\\\\'\\\"\\Z'");
  EXPECT_EQ(lit(MY, std::string("plain text\t"), "varchar(20)"), "'plain text\t'");
  EXPECT_EQ(lit(MY, std::string()), "''");
  EXPECT_EQ(lit(MY, std::string("caf\xc3\xa9 \xe2\x82\xac"), "longtext"), "'caf\xc3\xa9 \xe2\x82\xac'");
  EXPECT_EQ(lit(MY, std::string("a\\b"), "varbinary(10)"), "'a\\\\b'");
  // PostgreSQL bit strings into BIT(n).
  EXPECT_EQ(lit(MY, std::string("0101"), "bit(4)"), "b'0101'");
  EXPECT_ERROR(lit(MY, std::string("0121"), "bit(4)"), "string of 0s and 1s");
  EXPECT_ERROR(lit(MY, std::string(), "bit(4)"), "string of 0s and 1s");
}

TEST(SqlValues, EnumsAndSetsAreText) {
  const ColumnInfo e = kind(ColumnKind::Enum);
  const ColumnInfo s = kind(ColumnKind::EnumSet);
  EXPECT_EQ(lit(PG, std::string("happy"), "mood", &e), "'happy'");
  EXPECT_EQ(lit(MY, std::string("it's"), "enum('a','it''s')", &e), "'it\\'s'");
  EXPECT_EQ(lit(MY, std::string("x,z"), "set('x','y','z')", &s), "'x,z'");
  EXPECT_EQ(lit(PG, std::string("x,z"), "text", &s), "'x,z'");
}

// ---- bytes and bits -----------------------------------------------------------------------------------

TEST(SqlValues, Bytes) {
  const Bytes b{std::string("\x00\xff'\\", 4)};
  EXPECT_EQ(lit(PG, b), "'\\x00ff275c'");
  EXPECT_EQ(lit(PG, b, "bytea"), "'\\x00ff275c'");
  EXPECT_EQ(lit(PG, Bytes{}, "bytea"), "'\\x'");
  EXPECT_EQ(lit(MY, b), "X'00ff275c'");
  EXPECT_EQ(lit(MY, b, "blob"), "X'00ff275c'");
  EXPECT_EQ(lit(MY, Bytes{}, "varbinary(4)"), "X''");
  // Text columns: PostgreSQL's bytea text, MySQL's own conversion of the bytes.
  EXPECT_EQ(lit(PG, b, "text"), "'\\x00ff275c'");
  EXPECT_EQ(lit(MY, Bytes{"abc"}, "varchar(10)"), "X'616263'");
}

TEST(SqlValues, BitsHaveExactlyTheDeclaredLength) {
  const ColumnInfo bit12 = kind(ColumnKind::Bits, 12);
  const Bytes v{std::string("\x0a\xaa", 2)};  // b'101010101010'
  EXPECT_EQ(lit(PG, v, "bit(12)", &bit12), "B'101010101010'");
  EXPECT_EQ(lit(PG, v, "", &bit12), "B'101010101010'");
  EXPECT_EQ(lit(PG, v, "bit varying(12)", &bit12), "B'101010101010'");
  EXPECT_EQ(lit(MY, v, "bit(12)", &bit12), "b'101010101010'");
  EXPECT_EQ(lit(MY, v, "", &bit12), "b'101010101010'");
  // As a number, as bytes, as text.
  EXPECT_EQ(lit(PG, v, "bigint", &bit12), "2730");
  EXPECT_EQ(lit(PG, v, "numeric(20,0)", &bit12), "2730");
  EXPECT_EQ(lit(MY, v, "bigint(20) unsigned", &bit12), "2730");
  EXPECT_EQ(lit(PG, v, "bytea", &bit12), "'\\x0aaa'");
  EXPECT_EQ(lit(MY, v, "varbinary(2)", &bit12), "X'0aaa'");
  EXPECT_EQ(lit(PG, v, "text", &bit12), "'101010101010'");
  EXPECT_EQ(lit(MY, v, "varchar(12)", &bit12), "'101010101010'");
  // Leading zero bits are kept; a length beyond the bytes pads with zeros.
  const ColumnInfo bit3 = kind(ColumnKind::Bits, 3);
  EXPECT_EQ(lit(PG, Bytes{std::string("\x05", 1)}, "bit(3)", &bit3), "B'101'");
  EXPECT_EQ(lit(MY, Bytes{std::string("\x01", 1)}, "bit(3)", &bit3), "b'001'");
  const ColumnInfo bit10 = kind(ColumnKind::Bits, 10);
  EXPECT_EQ(lit(PG, Bytes{std::string("\x03", 1)}, "bit(10)", &bit10), "B'0000000011'");
  // No declared length: every bit of the bytes.
  const ColumnInfo bits = kind(ColumnKind::Bits);
  EXPECT_EQ(lit(MY, Bytes{std::string("\x80\x01", 2)}, "", &bits), "b'1000000000000001'");
  // BIT(64), all ones.
  const ColumnInfo bit64 = kind(ColumnKind::Bits, 64);
  const Bytes ones{std::string(8, '\xff')};
  EXPECT_EQ(lit(PG, ones, "bit(64)", &bit64), "B'" + std::string(64, '1') + "'");
  EXPECT_EQ(lit(MY, ones, "bigint(20) unsigned", &bit64), "18446744073709551615");
  // A bit above the declared length is set: the value does not fit.
  const ColumnInfo bit4 = kind(ColumnKind::Bits, 4);
  EXPECT_ERROR(lit(PG, Bytes{std::string("\x1f", 1)}, "bit(4)", &bit4), "above its declared 4 bits");
  EXPECT_ERROR(lit(MY, Bytes{std::string("\x08", 1)}, "bit(3)", &bit3), "above its declared 3 bits");
  // More than 64 bits cannot be a number.
  const ColumnInfo bit72 = kind(ColumnKind::Bits, 72);
  EXPECT_ERROR(lit(PG, Bytes{std::string(9, '\x01')}, "numeric", &bit72), "64-bit number");
}

// ---- dates and times -------------------------------------------------------------------------------------

TEST(SqlValues, Dates) {
  for (const Dialect d : {PG, MY}) {
    EXPECT_EQ(lit(d, date(2024, 2, 29)), "'2024-02-29'");
    EXPECT_EQ(lit(d, date(1970, 1, 1), "date"), "'1970-01-01'");
    EXPECT_EQ(lit(d, date(1, 1, 1)), "'0001-01-01'");
    EXPECT_EQ(lit(d, date(9999, 12, 31)), "'9999-12-31'");
  }
  // PostgreSQL: BC years (astronomical year 0 is 1 BC), years beyond 9999, infinity.
  EXPECT_EQ(lit(PG, date(0, 1, 1), "date"), "'0001-01-01 BC'");
  EXPECT_EQ(lit(PG, date(-4712, 1, 1), "date"), "'4713-01-01 BC'");
  EXPECT_EQ(lit(PG, date(10000, 1, 1), "date"), "'10000-01-01'");
  EXPECT_EQ(lit(PG, date(5874897, 12, 31)), "'5874897-12-31'");
  EXPECT_EQ(lit(PG, Date{kDateInfinity}, "date"), "'infinity'");
  EXPECT_EQ(lit(PG, Date{kDateMinusInfinity}), "'-infinity'");
  EXPECT_EQ(lit(PG, date(2024, 1, 2), "timestamp without time zone"), "'2024-01-02'");
  // MySQL: years 0..9999.
  EXPECT_EQ(lit(MY, date(0, 1, 1), "date"), "'0000-01-01'");
  EXPECT_ERROR(lit(MY, date(10000, 1, 1), "date"), "date 10000-01-01 cannot be written to the MySQL column of type 'date'");
  EXPECT_ERROR(lit(MY, date(-1, 12, 31)), "years 0 and 9999");
  EXPECT_ERROR(lit(MY, Date{kDateInfinity}, "date"), "date infinity cannot be written");
  EXPECT_ERROR(lit(MY, Date{kDateMinusInfinity}), "no infinite dates");
  // Text columns take any date's text.
  EXPECT_EQ(lit(MY, Date{kDateInfinity}, "varchar(20)"), "'infinity'");
  EXPECT_EQ(lit(MY, date(10000, 1, 1), "text"), "'10000-01-01'");
  EXPECT_EQ(lit(PG, date(0, 1, 1), "text"), "'0001-01-01 BC'");
  EXPECT_EQ(lit(MY, date(-1, 12, 31), "text"), "'-0001-12-31'");  // MySQL's text: the astronomical year
}

TEST(SqlValues, Times) {
  for (const Dialect d : {PG, MY}) {
    EXPECT_EQ(lit(d, Time{0}), "'00:00:00'");
    EXPECT_EQ(lit(d, Time{tod(12, 34, 56, 789000)}), "'12:34:56.789000'");
    EXPECT_EQ(lit(d, Time{tod(23, 59, 59, 999999)}, "time(6)"), "'23:59:59.999999'");
    EXPECT_EQ(lit(d, Time{tod(0, 0, 0, 1)}), "'00:00:00.000001'");
  }
  // PostgreSQL's time: 00:00:00 to 24:00:00; longer or negative durations only into interval.
  EXPECT_EQ(lit(PG, Time{tod(24, 0, 0)}, "time without time zone"), "'24:00:00'");
  EXPECT_ERROR(lit(PG, Time{tod(24, 0, 0, 1)}, "time without time zone"), "00:00:00 to 24:00:00");
  EXPECT_ERROR(lit(PG, Time{-1}), "time -00:00:00.000001 cannot be written to a PostgreSQL column");
  EXPECT_EQ(lit(PG, Time{-tod(838, 59, 59)}, "interval"), "'-838:59:59'");
  EXPECT_EQ(lit(PG, Time{tod(100, 0, 0)}, "interval"), "'100:00:00'");
  EXPECT_EQ(lit(PG, Time{tod(12, 0, 0)}, "time with time zone"), "'12:00:00'");
  EXPECT_EQ(lit(PG, Time{-tod(1, 0, 0)}, "text"), "'-01:00:00'");
  // MySQL's TIME: ±838:59:59.
  EXPECT_EQ(lit(MY, Time{-tod(838, 59, 59)}, "time"), "'-838:59:59'");
  EXPECT_EQ(lit(MY, Time{tod(838, 59, 59)}, "time(6)"), "'838:59:59'");
  EXPECT_EQ(lit(MY, Time{-tod(0, 0, 1, 500000)}), "'-00:00:01.500000'");
  EXPECT_ERROR(lit(MY, Time{tod(838, 59, 59, 1)}, "time(6)"), "-838:59:59 to 838:59:59");
  EXPECT_ERROR(lit(MY, Time{-tod(839, 0, 0)}), "time -839:00:00");
  EXPECT_EQ(lit(MY, Time{tod(900, 0, 0)}, "varchar(20)"), "'900:00:00'");
}

TEST(SqlValues, Timestamps) {
  const int64_t t = micros(2024, 1, 1, 12, 34, 56, 123456);
  for (const Dialect d : {PG, MY}) {
    EXPECT_EQ(lit(d, Timestamp{t}), "'2024-01-01 12:34:56.123456'");
    EXPECT_EQ(lit(d, Timestamp{0}), "'1970-01-01 00:00:00'");
    EXPECT_EQ(lit(d, Timestamp{-1}), "'1969-12-31 23:59:59.999999'");
    EXPECT_EQ(lit(d, Timestamp{micros(9999, 12, 31, 23, 59, 59, 999999)}), "'9999-12-31 23:59:59.999999'");
  }
  EXPECT_EQ(lit(PG, Timestamp{micros(0, 1, 1, 12)}, "timestamp without time zone"), "'0001-01-01 12:00:00 BC'");
  EXPECT_EQ(lit(PG, Timestamp{kTimestampInfinity - 1}), "'294247-01-10 04:00:54.775806'");
  EXPECT_EQ(lit(PG, Timestamp{kTimestampInfinity}), "'infinity'");
  EXPECT_EQ(lit(PG, Timestamp{kTimestampMinusInfinity}, "timestamp(3) without time zone"), "'-infinity'");
  // MySQL DATETIME: years 0..9999; no infinity.
  EXPECT_EQ(lit(MY, Timestamp{micros(0, 1, 1)}, "datetime"), "'0000-01-01 00:00:00'");
  EXPECT_ERROR(lit(MY, Timestamp{micros(10000, 1, 1)}, "datetime(6)"), "years 0 and 9999");
  EXPECT_ERROR(lit(MY, Timestamp{kTimestampInfinity}, "datetime"), "timestamp infinity cannot be written");
  // MySQL TIMESTAMP: 1970-01-01 00:00:01 to 2038-01-19 03:14:07.999999 (the session is UTC).
  EXPECT_EQ(lit(MY, Timestamp{1'000'000}, "timestamp"), "'1970-01-01 00:00:01'");
  EXPECT_ERROR(lit(MY, Timestamp{0}, "timestamp(6)"), "1970-01-01 00:00:01 to 2038-01-19 03:14:07.999999");
  EXPECT_EQ(lit(MY, Timestamp{0}, "varchar(30)"), "'1970-01-01 00:00:00'");
}

TEST(SqlValues, TimestampsWithTimeZone) {
  const int64_t t = micros(2024, 1, 1, 0, 0, 0, 500000);
  EXPECT_EQ(lit(PG, TimestampTz{t}), "'2024-01-01 00:00:00.500000+00'");
  EXPECT_EQ(lit(PG, TimestampTz{t}, "timestamp with time zone"), "'2024-01-01 00:00:00.500000+00'");
  EXPECT_EQ(lit(PG, TimestampTz{micros(-43, 3, 15, 12)}), "'0044-03-15 12:00:00+00 BC'");
  EXPECT_EQ(lit(PG, TimestampTz{kTimestampInfinity}), "'infinity'");
  EXPECT_EQ(lit(PG, TimestampTz{kTimestampMinusInfinity}), "'-infinity'");
  EXPECT_EQ(lit(PG, TimestampTz{t}, "text"), "'2024-01-01 00:00:00.500000+00'");
  // MySQL: the UTC wall clock without a zone.
  EXPECT_EQ(lit(MY, TimestampTz{t}), "'2024-01-01 00:00:00.500000'");
  EXPECT_EQ(lit(MY, TimestampTz{t}, "datetime(6)"), "'2024-01-01 00:00:00.500000'");
  EXPECT_EQ(lit(MY, TimestampTz{t}, "timestamp(6)"), "'2024-01-01 00:00:00.500000'");
  EXPECT_EQ(lit(MY, TimestampTz{micros(2038, 1, 19, 3, 14, 7, 999999)}, "timestamp(6)"),
            "'2038-01-19 03:14:07.999999'");
  EXPECT_ERROR(lit(MY, TimestampTz{micros(2038, 1, 19, 3, 14, 8)}, "timestamp"), "a DATETIME column would hold it");
  EXPECT_ERROR(lit(MY, TimestampTz{0}, "timestamp"), "timestamp with time zone 1970-01-01 00:00:00+00");
  EXPECT_EQ(lit(MY, TimestampTz{0}, "datetime"), "'1970-01-01 00:00:00'");
  EXPECT_ERROR(lit(MY, TimestampTz{micros(10000, 1, 1)}), "years 0 and 9999");
  EXPECT_ERROR(lit(MY, TimestampTz{kTimestampMinusInfinity}), "no infinite timestamps");
  EXPECT_EQ(lit(MY, TimestampTz{t}, "text"), "'2024-01-01 00:00:00.500000'");
}

TEST(SqlValues, Intervals) {
  const Interval iv{14, 3, tod(4, 5, 6, 789000)};
  EXPECT_EQ(lit(PG, iv), "'14 mons 3 days 04:05:06.789000'");
  EXPECT_EQ(lit(PG, iv, "interval"), "'14 mons 3 days 04:05:06.789000'");
  EXPECT_EQ(lit(PG, Interval{-1, 2, -1'000'000}), "'-1 mons 2 days -00:00:01'");
  EXPECT_EQ(lit(PG, Interval{}), "'0 mons 0 days 00:00:00'");
  EXPECT_EQ(lit(PG, Interval{std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::max(),
                             std::numeric_limits<int64_t>::max()}),
            "'2147483647 mons 2147483647 days 2562047788:00:54.775807'");
  EXPECT_EQ(lit(PG, Interval{std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::min(),
                             std::numeric_limits<int64_t>::min()}),
            "'-2147483648 mons -2147483648 days -9223372036854775808 microseconds'");
  EXPECT_EQ(lit(PG, iv, "text"), "'14 mons 3 days 04:05:06.789000'");
  EXPECT_ERROR(lit(MY, iv), "interval P1Y2M3DT4H5M6.789S cannot be written to a MySQL column");
  EXPECT_ERROR(lit(MY, iv, "time"), "no interval type");
  EXPECT_EQ(lit(MY, iv, "varchar(40)"), "'P1Y2M3DT4H5M6.789S'");
}

// ---- what the column's precision would round ------------------------------------------------------------

TEST(SqlValues, DecimalScaleIsNeverRoundedAway) {
  for (const Dialect d : {PG, MY}) {
    const char* type = d == PG ? "numeric(10,2)" : "decimal(10,2)";
    EXPECT_EQ(lit(d, Decimal{"1.230"}, type), "1.230");
    EXPECT_EQ(lit(d, Decimal{"-7"}, type), "-7");
    EXPECT_ERROR(lit(d, Decimal{"1.239"}, type), "keeps 2 decimal places");
    EXPECT_ERROR(lit(d, 0.125, type), "double 0.125 cannot be written");
    EXPECT_ERROR(lit(d, 1e-5, type), "keeps 2 decimal places");
  }
  EXPECT_EQ(lit(PG, 0.5, "numeric(10,2)"), "'0.5'");
  EXPECT_EQ(lit(MY, 1e20, "decimal(30,2)"), "1e+20");
  EXPECT_EQ(lit(PG, Decimal{"1.23456789"}, "numeric"), "1.23456789");  // no typmod: any scale
  EXPECT_ERROR(lit(PG, Decimal{"1.5"}, "numeric(5)"), "keeps 0 decimal places");
  EXPECT_ERROR(lit(MY, Decimal{"1.5"}, "decimal"), "keeps 0 decimal places");  // DECIMAL is DECIMAL(10,0)
  EXPECT_EQ(lit(MY, Decimal{"15"}, "decimal unsigned"), "15");
  EXPECT_ERROR(lit(PG, Array{{Value(Decimal{"1.25"})}}, "numeric(5,1)[]"), "array element decimal 1.25");
  EXPECT_EQ(lit(PG, Decimal{"1.239"}, "text"), "'1.239'");
}

TEST(SqlValues, FractionalSecondsAreNeverRoundedAway) {
  const int64_t t = micros(2024, 1, 2, 3, 4, 5, 123456);
  const int64_t ms = micros(2024, 1, 2, 3, 4, 5, 123000);
  EXPECT_ERROR(lit(PG, Timestamp{t}, "timestamp(3) without time zone"), "keeps 3 fractional second digits");
  EXPECT_EQ(lit(PG, Timestamp{ms}, "timestamp(3) without time zone"), "'2024-01-02 03:04:05.123000'");
  EXPECT_EQ(lit(PG, Timestamp{t}, "timestamp without time zone"), "'2024-01-02 03:04:05.123456'");
  EXPECT_EQ(lit(PG, Timestamp{kTimestampInfinity}, "timestamp(0) without time zone"), "'infinity'");
  EXPECT_ERROR(lit(PG, TimestampTz{t}, "timestamp(0) with time zone"), "keeps 0 fractional second digits");
  EXPECT_ERROR(lit(PG, Time{tod(1, 2, 3, 500000)}, "time(0) without time zone"), "fractional second digits");
  EXPECT_ERROR(lit(PG, Array{{Value(Timestamp{t})}}, "timestamp(0) without time zone[]"), "array element timestamp");
  // MySQL: no (n) means no fraction.
  EXPECT_ERROR(lit(MY, Timestamp{t}, "datetime"), "keeps 0 fractional second digits");
  EXPECT_EQ(lit(MY, Timestamp{micros(2024, 1, 2, 3, 4, 5)}, "datetime"), "'2024-01-02 03:04:05'");
  EXPECT_EQ(lit(MY, Timestamp{ms}, "datetime(3)"), "'2024-01-02 03:04:05.123000'");
  EXPECT_ERROR(lit(MY, TimestampTz{t}, "timestamp(3)"), "keeps 3 fractional second digits");
  EXPECT_ERROR(lit(MY, Time{tod(1, 2, 3, 500000)}, "time"), "keeps 0 fractional second digits");
  EXPECT_EQ(lit(MY, Time{tod(1, 2, 3, 500000)}, "time(1)"), "'01:02:03.500000'");
  EXPECT_EQ(lit(MY, Timestamp{t}, "varchar(30)"), "'2024-01-02 03:04:05.123456'");
}

TEST(SqlValues, TimestampsIntoDateColumnsOnlyAtMidnight) {
  for (const Dialect d : {PG, MY}) {
    EXPECT_EQ(lit(d, Timestamp{micros(2024, 1, 2)}, "date"), "'2024-01-02'");
    EXPECT_EQ(lit(d, TimestampTz{micros(2024, 1, 2)}, "date"), "'2024-01-02'");
    EXPECT_ERROR(lit(d, Timestamp{micros(2024, 1, 2, 12)}, "date"), "would drop its time of day");
  }
  EXPECT_EQ(lit(PG, Timestamp{micros(0, 1, 2)}, "date"), "'0001-01-02 BC'");
  EXPECT_EQ(lit(PG, Timestamp{kTimestampInfinity}, "date"), "'infinity'");
  EXPECT_ERROR(lit(MY, Timestamp{kTimestampInfinity}, "date"), "no infinite timestamps");
}

// ---- documents, UUIDs ------------------------------------------------------------------------------------

TEST(SqlValues, Json) {
  const Json j{"{\"a\": \"it's\", \"b\": \"x\\\\y\"}"};
  EXPECT_EQ(lit(PG, j, "jsonb"), "'{\"a\": \"it''s\", \"b\": \"x\\\\y\"}'");
  EXPECT_EQ(lit(PG, j, "json"), "'{\"a\": \"it''s\", \"b\": \"x\\\\y\"}'");
  EXPECT_EQ(lit(PG, j, "text"), "'{\"a\": \"it''s\", \"b\": \"x\\\\y\"}'");
  EXPECT_EQ(lit(MY, j, "json"), "'{\\\"a\\\": \\\"it\\'s\\\", \\\"b\\\": \\\"x\\\\\\\\y\\\"}'");
  EXPECT_EQ(lit(MY, j, "longtext"), lit(MY, j, "json"));
  EXPECT_ERROR(lit(PG, Json{std::string("\"\0\"", 3)}, "jsonb"), "NUL byte");
}

TEST(SqlValues, Uuids) {
  const Uuid u = sample_uuid();
  for (const Dialect d : {PG, MY}) {
    EXPECT_EQ(lit(d, u), "'123e4567-e89b-12d3-a456-426614174000'");
    EXPECT_EQ(lit(d, u, "uuid"), "'123e4567-e89b-12d3-a456-426614174000'");
  }
  EXPECT_EQ(lit(MY, u, "char(36)"), "'123e4567-e89b-12d3-a456-426614174000'");
  EXPECT_EQ(lit(MY, u, "binary(16)"), "X'123e4567e89b12d3a456426614174000'");
  EXPECT_EQ(lit(PG, u, "bytea"), "'\\x123e4567e89b12d3a456426614174000'");
  EXPECT_EQ(lit(PG, u, "text"), "'123e4567-e89b-12d3-a456-426614174000'");
}

// ---- arrays ----------------------------------------------------------------------------------------------

Array ints(std::initializer_list<std::optional<int64_t>> xs) {
  Array a;
  for (const auto& x : xs) a.items.push_back(x ? Value(*x) : Value(Null{}));
  return a;
}

TEST(SqlValues, PostgresArrays) {
  EXPECT_EQ(lit(PG, ints({1, std::nullopt, 3}), "integer[]"), "'{\"1\",NULL,\"3\"}'");
  EXPECT_EQ(lit(PG, Array{}, "integer[]"), "'{}'");
  EXPECT_EQ(lit(PG, Array{{Value(ints({1, 2})), Value(ints({3, 4}))}}, "integer[]"), "'{{\"1\",\"2\"},{\"3\",\"4\"}}'");
  // Element quoting: \" and \\ inside the element, ' doubled for the whole literal; "NULL" is a string.
  const Array strings{{Value(std::string("a\"b")), Value(std::string("c\\d")), Value(std::string("it's")),
                       Value(std::string("NULL")), Value(std::string()), Value(std::string("x, {y}")), Value(Null{})}};
  EXPECT_EQ(lit(PG, strings, "text[]"),
            "'{\"a\\\"b\",\"c\\\\d\",\"it''s\",\"NULL\",\"\",\"x, {y}\",NULL}'");
  EXPECT_EQ(lit(PG, strings), lit(PG, strings, "text[]"));
  EXPECT_ERROR(lit(PG, Array{{Value(std::string("a\0b", 3))}}, "text[]"), "NUL byte");
  // Elements take their type's text: bytea's backslash is escaped inside the element.
  EXPECT_EQ(lit(PG, Array{{Value(Bytes{"\x01"})}}, "bytea[]"), "'{\"\\\\x01\"}'");
  EXPECT_EQ(lit(PG, Array{{Value(date(2024, 1, 1)), Value(Date{kDateInfinity})}}, "date[]"),
            "'{\"2024-01-01\",\"infinity\"}'");
  EXPECT_EQ(lit(PG, Array{{Value(TimestampTz{0})}}, "timestamp with time zone[]"), "'{\"1970-01-01 00:00:00+00\"}'");
  EXPECT_EQ(lit(PG, Array{{Value(Interval{1, 2, 3})}}, "interval[]"), "'{\"1 mons 2 days 00:00:00.000003\"}'");
  EXPECT_EQ(lit(PG, Array{{Value(sample_uuid())}}, "uuid[]"), "'{\"123e4567-e89b-12d3-a456-426614174000\"}'");
  EXPECT_EQ(lit(PG, Array{{Value(std::nan("")), Value(-0.0), Value(1.5)}}, "double precision[]"),
            "'{\"NaN\",\"-0\",\"1.5\"}'");
  EXPECT_EQ(lit(PG, Array{{Value(Json{"{\"k\": \"v\"}"})}}, "jsonb[]"), "'{\"{\\\"k\\\": \\\"v\\\"}\"}'");
  // The element type's rules apply.
  EXPECT_EQ(lit(PG, ints({0, 1}), "boolean[]"), "'{\"false\",\"true\"}'");
  EXPECT_ERROR(lit(PG, ints({2}), "boolean[]"), "array element integer 2 cannot be written to the PostgreSQL column of type 'boolean'");
  EXPECT_ERROR(lit(PG, Array{{Value(Time{tod(25, 0, 0)})}}, "time without time zone[]"), "array element time 25:00:00");
  EXPECT_ERROR(lit(PG, Array{{Value(std::nan(""))}}, "integer[]"), "no NaN or infinity");
  // Into text: the array literal's text. Into json/jsonb: a JSON array.
  EXPECT_EQ(lit(PG, ints({1, std::nullopt}), "text"), "'{\"1\",NULL}'");
  EXPECT_EQ(lit(PG, Array{{Value(int64_t{1}), Value(Null{}), Value(std::string("it's"))}}, "jsonb"),
            "'[1,null,\"it''s\"]'");
}

TEST(SqlValues, MySqlArraysAreJsonOrNothing) {
  const Array a{{Value(int64_t{1}), Value(Null{}), Value(std::string("it's \"q\"")), Value(true), Value(1.5),
                 Value(Decimal{"-0.50"}), Value(Json{"{\"k\":[1]}"}), Value(ints({2, 3}))}};
  EXPECT_EQ(lit(MY, a, "json"), "'[1,null,\\\"it\\'s \\\\\\\"q\\\\\\\"\\\",true,1.5,-0.50,{\\\"k\\\":[1]},[2,3]]'");
  EXPECT_EQ(lit(MY, a, "longtext"), lit(MY, a, "json"));
  EXPECT_ERROR(lit(MY, a), "array of 8 elements cannot be written to a MySQL column: MySQL has no arrays");
  EXPECT_ERROR(lit(MY, a, "int(11)"), "MySQL has no arrays");
  // Temporal values and bytes as strings.
  const Array t{{Value(date(2024, 1, 2)), Value(Time{tod(1, 2, 3)}), Value(Timestamp{0}), Value(TimestampTz{500000}),
                 Value(Interval{1, 0, 0}), Value(sample_uuid()), Value(Bytes{"\xff"})}};
  EXPECT_EQ(lit(MY, t, "json"),
            "'[\\\"2024-01-02\\\",\\\"01:02:03\\\",\\\"1970-01-01 00:00:00\\\",\\\"1970-01-01T00:00:00.500000Z\\\","
            "\\\"P0Y1M0DT0H0M0S\\\",\\\"123e4567-e89b-12d3-a456-426614174000\\\",\\\"/w==\\\"]'");
  // What JSON cannot hold.
  EXPECT_ERROR(lit(MY, Array{{Value(std::nan(""))}}, "json"), "array element double NaN");
  EXPECT_ERROR(lit(MY, Array{{Value(Decimal{"Infinity"})}}, "json"), "JSON has no NaN or infinity");
  EXPECT_ERROR(lit(MY, Array{{Value(std::string("\xff"))}}, "json"), "not valid UTF-8");
  EXPECT_ERROR(lit(MY, Array{{Value(Decimal{"007"})}}, "json"), "leading zeros");
}

// ---- identifiers -----------------------------------------------------------------------------------------

TEST(SqlValues, Identifiers) {
  std::string out;
  append_identifier(out, PG, "plain");
  EXPECT_EQ(out, "\"plain\"");
  out.clear();
  append_identifier(out, PG, "we\"ird`na\"\"me");
  EXPECT_EQ(out, "\"we\"\"ird`na\"\"\"\"me\"");
  out.clear();
  append_identifier(out, MY, "we\"ird`na``me");
  EXPECT_EQ(out, "`we\"ird``na````me`");
  out = "x.";
  append_identifier(out, MY, "");
  EXPECT_EQ(out, "x.``");
}

// The literal is appended: what precedes it stays.
TEST(SqlValues, AppendsToWhatIsThere) {
  std::string out = "INSERT INTO t VALUES (";
  ASSERT_FALSE(append_sql_literal(out, PG, Value(std::string("a'b")), nullptr, "text"));
  out += ", ";
  ASSERT_FALSE(append_sql_literal(out, PG, Value(int64_t{5}), nullptr, "integer"));
  out += ")";
  EXPECT_EQ(out, "INSERT INTO t VALUES ('a''b', 5)");
}

// COPY's text fields of PostgreSQL literals: what the input function reads as the literal's value, or
// "REFUSED" where only the SQL literal says it.
std::string copy_field(std::string_view literal, std::string_view type) {
  std::string out = "<";
  if (!append_copy_field(out, literal, type)) {
    EXPECT_EQ(out, "<") << "a refusal must leave the buffer as it was";
    return "REFUSED";
  }
  return out.substr(1);
}

TEST(SqlValues, CopyFieldsOfPostgresLiterals) {
  EXPECT_EQ(copy_field("NULL", "integer"), "\\N");
  EXPECT_EQ(copy_field("''", "text"), "");
  EXPECT_EQ(copy_field("'it''s'", "text"), "it's");
  EXPECT_EQ(copy_field("'a\\b\tc\nd\re'", "character varying(100)"), "a\\\\b\\tc\\nd\\re");
  EXPECT_EQ(copy_field("'\\x0aff'", "bytea"), "\\\\x0aff");
  EXPECT_EQ(copy_field("'2026-12-04 10:00:00+00'", "timestamp with time zone"), "2026-12-04 10:00:00+00");
  EXPECT_EQ(copy_field("'{\"a\",NULL}'", "text[]"), "{\"a\",NULL}");
  EXPECT_EQ(copy_field("'0.1'", "double precision"), "0.1");
  EXPECT_EQ(copy_field("-42", "bigint"), "-42");
  EXPECT_EQ(copy_field("12.5e3", "numeric(10,2)"), "12.5e3");
  EXPECT_EQ(copy_field("true", "boolean"), "true");
  EXPECT_EQ(copy_field("B'0101'", "bit(4)"), "0101");
  // Unquoted forms whose SQL meaning the input function would not keep: the SQL path.
  EXPECT_EQ(copy_field("5", "json"), "REFUSED");
  EXPECT_EQ(copy_field("20260101", "date"), "REFUSED");
  EXPECT_EQ(copy_field("1e2", "integer"), "REFUSED");
  EXPECT_EQ(copy_field("-", "integer"), "REFUSED");
  EXPECT_EQ(copy_field("1", "boolean"), "REFUSED");
  EXPECT_EQ(copy_field("true", "integer"), "REFUSED");
  EXPECT_EQ(copy_field("B'1'", "text"), "REFUSED");
}

}  // namespace
}  // namespace tidemark::dbsink
