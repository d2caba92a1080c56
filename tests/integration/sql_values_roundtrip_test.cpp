// The database sink's SQL literals (src/sink/database/sql_values.hpp) on the real servers: a real
// PostgreSQL 15 and a real MariaDB 10.11 (started by scripts/test.sh). For each dialect a table gets one
// column per case, declared with the case's type; append_sql_literal renders the case's value for the type
// the server's own catalog reports for that column (format_type() / COLUMN_TYPE), the literal is INSERTed,
// the column is read back as the server's text and compared with the expected text, and the literal must
// also find the row again in a WHERE clause (as the sink's UPDATE and DELETE use it). The session settings
// are the ones the sink sets (UTF-8, UTC, standard strings / backslash escapes, strict mode).

#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

#include "core/civil_time.hpp"
#include "mysql_client.hpp"
#include "pg_client.hpp"
#include "sink/database/sql_values.hpp"

namespace tidemark::test {
namespace {

using dbsink::Dialect;

struct Case {
  std::string type;  // the column's declaration in CREATE TABLE
  Value value;
  std::optional<ColumnInfo> source;
  std::optional<std::string> expected;  // the server's text of the stored value; nullopt: NULL
  std::string read = "{}";              // MySQL: the expression that reads column {} as text
  bool comparable = true;               // `column = literal` finds the row
};

ColumnInfo kind(ColumnKind k, uint32_t length = 0, ColumnKind element = ColumnKind::Unknown) {
  ColumnInfo c;
  c.kind = k;
  c.length = length;
  c.element = element;
  return c;
}

Date date(int64_t y, unsigned m, unsigned d) { return Date{static_cast<int32_t>(days_from_civil(y, m, d))}; }
int64_t tod(int64_t h, int64_t m, int64_t s, int64_t us = 0) { return ((h * 60 + m) * 60 + s) * 1'000'000LL + us; }
int64_t micros(int64_t y, unsigned mo, unsigned d, int64_t h = 0, int64_t mi = 0, int64_t s = 0, int64_t us = 0) {
  return days_from_civil(y, mo, d) * 86'400'000'000LL + tod(h, mi, s, us);
}

Uuid sample_uuid() {
  Uuid u;
  parse_uuid("123e4567-e89b-12d3-a456-426614174000", u);
  return u;
}

Array ints(std::initializer_list<std::optional<int64_t>> xs) {
  Array a;
  for (const auto& x : xs) a.items.push_back(x ? Value(*x) : Value(Null{}));
  return a;
}

std::string unique_table() {
  return "sqlv_" + std::to_string(::getpid()) + "_" +
         std::to_string(std::chrono::steady_clock::now().time_since_epoch().count() % 1000000000);
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

std::string show(const std::optional<std::string>& s) { return s ? "'" + *s + "'" : "NULL"; }

// ---- PostgreSQL ------------------------------------------------------------------------------------------

// One libpq connection with the sink's session settings.
class PgSession {
 public:
  explicit PgSession(const PgTarget& t) {
    const char* keys[] = {"host", "port", "user", "password", "dbname", nullptr};
    const char* values[] = {t.host.c_str(), t.port.c_str(), t.user.c_str(), t.password.c_str(), t.database.c_str(),
                            nullptr};
    conn_ = PQconnectdbParams(keys, values, 0);
    if (PQstatus(conn_) != CONNECTION_OK) throw std::runtime_error(std::string("connect: ") + PQerrorMessage(conn_));
    exec("SET client_encoding = 'UTF8'; SET standard_conforming_strings = on; SET TimeZone = 'UTC'; "
         "SET DateStyle = 'ISO, MDY'; SET IntervalStyle = 'postgres'; SET extra_float_digits = 1");
  }
  ~PgSession() { PQfinish(conn_); }
  PgSession(const PgSession&) = delete;
  PgSession& operator=(const PgSession&) = delete;

  void exec(const std::string& sql) { rows(sql); }

  // COPY `sql` FROM STDIN with `data` (COPY text format).
  void copy(const std::string& sql, const std::string& data) {
    PGresult* r = PQexec(conn_, sql.c_str());
    const bool started = PQresultStatus(r) == PGRES_COPY_IN;
    std::string error = started ? "" : PQresultErrorMessage(r);
    PQclear(r);
    if (!started) throw std::runtime_error(error + " in: " + sql);
    if (PQputCopyData(conn_, data.data(), static_cast<int>(data.size())) != 1 || PQputCopyEnd(conn_, nullptr) != 1)
      throw std::runtime_error(std::string("COPY: ") + PQerrorMessage(conn_));
    while (PGresult* end = PQgetResult(conn_)) {
      if (PQresultStatus(end) != PGRES_COMMAND_OK && error.empty()) error = PQresultErrorMessage(end);
      PQclear(end);
    }
    if (!error.empty()) throw std::runtime_error(error + " in: " + sql + " with " + data);
  }

  std::vector<std::vector<std::optional<std::string>>> rows(const std::string& sql) {
    PGresult* r = PQexec(conn_, sql.c_str());
    const auto status = PQresultStatus(r);
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
      const std::string error = PQresultErrorMessage(r);
      PQclear(r);
      throw std::runtime_error(error + " in: " + sql.substr(0, 300));
    }
    std::vector<std::vector<std::optional<std::string>>> out;
    for (int i = 0; i < PQntuples(r); ++i) {
      std::vector<std::optional<std::string>> row;
      for (int j = 0; j < PQnfields(r); ++j)
        row.push_back(PQgetisnull(r, i, j) ? std::nullopt
                                            : std::optional<std::string>(std::string(PQgetvalue(r, i, j),
                                                                                     static_cast<size_t>(PQgetlength(r, i, j)))));
      out.push_back(std::move(row));
    }
    PQclear(r);
    return out;
  }

 private:
  PGconn* conn_ = nullptr;
};

std::vector<Case> postgres_cases() {
  const double inf = std::numeric_limits<double>::infinity();
  const ColumnInfo tinyint1 = kind(ColumnKind::Int16);
  const ColumnInfo bit12 = kind(ColumnKind::Bits, 12);
  const ColumnInfo bit64 = kind(ColumnKind::Bits, 64);
  const Bytes bits12{std::string("\x0a\xaa", 2)};
  const std::string long_decimal = "-" + std::string(60, '9') + "." + std::string(40, '1');
  const Array strings{{Value(std::string("a\"b")), Value(std::string("c\\d")), Value(std::string("it's")),
                       Value(std::string("NULL")), Value(std::string()), Value(std::string("x, {y}")), Value(Null{})}};
  const Interval iv{14, 3, tod(4, 5, 6, 789000)};
  const int32_t imax = std::numeric_limits<int32_t>::max(), imin = std::numeric_limits<int32_t>::min();
  return {
      {"integer", Null{}, {}, std::nullopt, "{}", false},
      {"boolean", true, {}, "t"},
      {"boolean", int64_t{1}, tinyint1, "t"},
      {"boolean", int64_t{0}, tinyint1, "f"},
      {"smallint", true, {}, "1"},
      {"integer", int64_t{-2147483648LL}, {}, "-2147483648"},
      {"bigint", std::numeric_limits<int64_t>::min(), {}, "-9223372036854775808"},
      {"bigint", std::numeric_limits<int64_t>::max(), {}, "9223372036854775807"},
      {"bigint", 3.0, {}, "3"},
      {"bigint", 1e18, {}, "1000000000000000000"},
      {"real", int64_t{16777217}, {}, "1.6777216e+07"},
      {"real", Decimal{"0.1"}, {}, "0.1"},
      {"numeric(20,0)", std::numeric_limits<uint64_t>::max(), {}, "18446744073709551615"},
      {"numeric", Decimal{"-1234.5600"}, {}, "-1234.5600"},
      {"numeric", Decimal{"NaN"}, {}, "NaN"},
      {"numeric", Decimal{"Infinity"}, {}, "Infinity"},
      {"numeric", Decimal{"-Infinity"}, {}, "-Infinity"},
      {"numeric(10,2)", Decimal{"0.01"}, {}, "0.01"},
      {"numeric", Decimal{long_decimal}, {}, long_decimal},
      {"double precision", 0.1, {}, "0.1"},
      {"double precision", 1.7976931348623157e308, {}, "1.7976931348623157e+308"},
      {"double precision", 5e-324, {}, "5e-324"},
      {"double precision", -0.0, {}, "-0"},
      {"double precision", std::nan(""), {}, "NaN"},
      {"double precision", inf, {}, "Infinity"},
      {"double precision", -inf, {}, "-Infinity"},
      {"double precision", 1e21, {}, "1e+21"},
      {"real", 0.1, {}, "0.1"},
      {"real", 3.4028234663852886e38, {}, "3.4028235e+38"},
      {"text", std::string("it's a \\ back\"slash"), {}, "it's a \\ back\"slash"},
      {"text", std::string("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), {}, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
      {"text", std::string(), {}, ""},
      {"text", std::string("tab\there\nnew line\r\\N"), {}, "tab\there\nnew line\r\\N"},
      {"varchar(20)", std::string("x''y"), {}, "x''y"},
      {"char(5)", std::string("ab"), {}, "ab   "},
      {"bytea", Bytes{std::string("\x00\xff'\\", 4)}, {}, "\\x00ff275c"},
      {"bytea", Bytes{}, {}, "\\x"},
      {"bytea", std::string("a\\b"), {}, "\\x615c62"},
      {"bit(12)", bits12, bit12, "101010101010"},
      {"bit varying(64)", Bytes{std::string(8, '\xff')}, bit64, std::string(64, '1')},
      {"bit(4)", std::string("0101"), {}, "0101"},
      {"bigint", bits12, bit12, "2730"},
      {"date", date(2024, 2, 29), {}, "2024-02-29"},
      {"date", date(0, 1, 1), {}, "0001-01-01 BC"},
      {"date", date(-4712, 1, 1), {}, "4713-01-01 BC"},
      {"date", date(10000, 1, 1), {}, "10000-01-01"},
      {"date", date(5874897, 12, 31), {}, "5874897-12-31"},
      {"date", Date{kDateInfinity}, {}, "infinity"},
      {"date", Date{kDateMinusInfinity}, {}, "-infinity"},
      {"time", Time{0}, {}, "00:00:00"},
      {"time", Time{tod(24, 0, 0)}, {}, "24:00:00"},
      {"time(6)", Time{tod(12, 34, 56, 789000)}, {}, "12:34:56.789"},
      {"time", Time{tod(23, 59, 59, 999999)}, {}, "23:59:59.999999"},
      {"interval", Time{-tod(838, 59, 59)}, {}, "-838:59:59"},
      {"timetz", Time{tod(12, 0, 0)}, {}, "12:00:00+00"},
      {"timestamp", Timestamp{micros(2024, 1, 1, 12, 34, 56, 123456)}, {}, "2024-01-01 12:34:56.123456"},
      {"timestamp", Timestamp{-1}, {}, "1969-12-31 23:59:59.999999"},
      {"timestamp", Timestamp{micros(0, 1, 1, 12)}, {}, "0001-01-01 12:00:00 BC"},
      {"timestamp", Timestamp{kTimestampInfinity - 1}, {}, "294247-01-10 04:00:54.775806"},
      {"timestamp", Timestamp{kTimestampInfinity}, {}, "infinity"},
      {"timestamp", Timestamp{kTimestampMinusInfinity}, {}, "-infinity"},
      {"timestamp(3)", TimestampTz{micros(2024, 1, 1, 0, 0, 0, 500000)}, {}, "2024-01-01 00:00:00.5"},
      {"timestamptz", TimestampTz{micros(2024, 1, 1, 0, 0, 0, 500000)}, {}, "2024-01-01 00:00:00.5+00"},
      {"timestamptz(3)", TimestampTz{micros(2024, 1, 1, 0, 0, 0, 123000)}, {}, "2024-01-01 00:00:00.123+00"},
      {"date", Timestamp{micros(2024, 1, 2)}, {}, "2024-01-02"},
      {"numeric(10,2)", 0.25, {}, "0.25"},
      {"timestamptz", TimestampTz{micros(-43, 3, 15, 12)}, {}, "0044-03-15 12:00:00+00 BC"},
      {"timestamptz", TimestampTz{kTimestampInfinity}, {}, "infinity"},
      {"timestamptz", Timestamp{micros(2024, 1, 1, 12, 34, 56, 123456)}, {}, "2024-01-01 12:34:56.123456+00"},
      {"interval", iv, {}, "1 year 2 mons 3 days 04:05:06.789"},
      {"interval", Interval{-1, 2, -1'000'000}, {}, "-1 mons +2 days -00:00:01"},
      {"interval", Interval{}, {}, "00:00:00"},
      {"interval", Interval{imax, imax, std::numeric_limits<int64_t>::max()}, {},
       "178956970 years 7 mons 2147483647 days 2562047788:00:54.775807"},
      {"interval", Interval{imin, imin, std::numeric_limits<int64_t>::min()}, {},
       "-178956970 years -8 mons -2147483648 days -2562047788:00:54.775808"},
      {"json", Json{"{\"a\": \"it's\",  \"b\": \"x\\\\y\"}"}, {}, "{\"a\": \"it's\",  \"b\": \"x\\\\y\"}", "{}", false},
      {"jsonb", Json{"{\"b\":1,\"a\":[1,2]}"}, {}, "{\"a\": [1, 2], \"b\": 1}"},
      {"jsonb", Array{{Value(int64_t{1}), Value(Null{}), Value(std::string("it's"))}}, {}, "[1, null, \"it's\"]"},
      {"uuid", sample_uuid(), {}, "123e4567-e89b-12d3-a456-426614174000"},
      {"bytea", sample_uuid(), {}, "\\x123e4567e89b12d3a456426614174000"},
      {"integer[]", ints({1, std::nullopt, 3}), {}, "{1,NULL,3}"},
      {"integer[]", Array{{Value(ints({1, 2})), Value(ints({3, 4}))}}, {}, "{{1,2},{3,4}}"},
      {"integer[]", Array{}, {}, "{}"},
      {"text[]", strings, {}, "{\"a\\\"b\",\"c\\\\d\",it's,\"NULL\",\"\",\"x, {y}\",NULL}"},
      {"boolean[]", ints({0, 1}), kind(ColumnKind::Array, 0, ColumnKind::Int16), "{f,t}"},
      {"date[]", Array{{Value(date(2024, 1, 1)), Value(Date{kDateInfinity})}}, {}, "{2024-01-01,infinity}"},
      {"timestamptz[]", Array{{Value(TimestampTz{0})}}, {}, "{\"1970-01-01 00:00:00+00\"}"},
      {"bytea[]", Array{{Value(Bytes{"\x01"})}}, {}, "{\"\\\\x01\"}"},
      {"float8[]", Array{{Value(std::nan("")), Value(-0.0), Value(1.5)}}, {}, "{NaN,-0,1.5}"},
      {"interval[]", Array{{Value(Interval{1, 2, 3})}}, {}, "{\"1 mon 2 days 00:00:00.000003\"}"},
      {"uuid[]", Array{{Value(sample_uuid())}}, {}, "{123e4567-e89b-12d3-a456-426614174000}"},
      {"jsonb[]", Array{{Value(Json{"{\"k\": \"v\"}"})}}, {}, "{\"{\\\"k\\\": \\\"v\\\"}\"}"},
      // Text columns: any value's text.
      {"text", true, {}, "true"},
      {"text", iv, {}, "14 mons 3 days 04:05:06.789000"},
      {"text", Bytes{std::string("\x00\xff", 2)}, {}, "\\x00ff"},
      {"varchar(12)", bits12, bit12, "101010101010"},
      {"text", ints({1, std::nullopt}), {}, "{\"1\",NULL}"},
      {"text", TimestampTz{micros(2024, 1, 1, 0, 0, 0, 500000)}, {}, "2024-01-01 00:00:00.500000+00"},
      {"text", std::nan(""), {}, "NaN"},
      {"text", date(0, 1, 1), {}, "0001-01-01 BC"},
      {"text", sample_uuid(), {}, "123e4567-e89b-12d3-a456-426614174000"},
  };
}

// A table with a column c<i> of every case's type (dropped at the end), and those types as the catalog
// spells them: what the sink will pass.
struct CaseTable {
  CaseTable(PgSession& session, const std::vector<Case>& cases) : pg(session), table(unique_table()), types(cases.size()) {
    std::string ddl = "CREATE TABLE public." + table + " (id integer PRIMARY KEY";
    for (size_t i = 0; i < cases.size(); ++i) ddl += ", c" + std::to_string(i) + " " + cases[i].type;
    pg.exec(ddl + ")");
    for (const auto& row : pg.rows("SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = "
                                   "'public." + table + "'::regclass AND attnum > 1 AND NOT attisdropped"))
      types.at(std::stoul(row[0]->substr(1))) = *row[1];
  }
  ~CaseTable() {
    try {
      pg.exec("DROP TABLE IF EXISTS public." + table);
    } catch (...) {
    }
  }
  CaseTable(const CaseTable&) = delete;
  CaseTable& operator=(const CaseTable&) = delete;

  PgSession& pg;
  std::string table;
  std::vector<std::string> types;
};

TEST(SqlValuesRoundTrip, Postgres) {
  const PgTarget target = real_postgres(true);
  if (target.port.empty()) return;
  PgSession pg(target);
  const std::vector<Case> cases = postgres_cases();
  const CaseTable case_table(pg, cases);
  const std::string& table = case_table.table;
  const std::vector<std::string>& types = case_table.types;

  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    SCOPED_TRACE("case " + std::to_string(i) + ": " + c.type + " (catalog: " + types[i] + ")");
    const std::string column = "c" + std::to_string(i);
    std::string literal;
    const auto error = dbsink::append_sql_literal(literal, Dialect::Postgres, c.value,
                                                  c.source ? &*c.source : nullptr, types[i]);
    ASSERT_FALSE(error) << *error;
    try {
      pg.exec("INSERT INTO public." + table + " (id, " + column + ") VALUES (" + std::to_string(i) + ", " + literal + ")");
      const auto rows = pg.rows("SELECT " + column + " FROM public." + table + " WHERE id = " + std::to_string(i));
      ASSERT_EQ(rows.size(), 1u);
      EXPECT_EQ(rows[0][0], c.expected) << "literal " << literal << " read back as " << show(rows[0][0]);
      if (c.comparable) {
        const auto found = pg.rows("SELECT count(*) FROM public." + table + " WHERE id = " + std::to_string(i) +
                                   " AND " + column + " = " + literal);
        EXPECT_EQ(found.at(0).at(0), std::optional<std::string>("1")) << "WHERE " << column << " = " << literal;
      }
    } catch (const std::exception& e) {
      ADD_FAILURE() << "literal " << literal << ": " << e.what();
    }
  }
}

// The same values through COPY (the sink's path for PostgreSQL snapshot rows): each literal's COPY field,
// where append_copy_field gives one, must store what the literal stores.
TEST(SqlValuesRoundTrip, PostgresCopy) {
  const PgTarget target = real_postgres(true);
  if (target.port.empty()) return;
  PgSession pg(target);
  const std::vector<Case> cases = postgres_cases();
  const CaseTable case_table(pg, cases);
  const std::string& table = case_table.table;
  const std::vector<std::string>& types = case_table.types;

  size_t copied = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    SCOPED_TRACE("case " + std::to_string(i) + ": " + c.type + " (catalog: " + types[i] + ")");
    const std::string column = "c" + std::to_string(i);
    std::string literal;
    const auto error = dbsink::append_sql_literal(literal, Dialect::Postgres, c.value,
                                                  c.source ? &*c.source : nullptr, types[i]);
    ASSERT_FALSE(error) << *error;
    std::string field;
    if (!dbsink::append_copy_field(field, literal, types[i])) continue;
    ++copied;
    try {
      pg.copy("COPY public." + table + " (id, " + column + ") FROM STDIN", std::to_string(i) + "\t" + field + "\n");
      const auto rows = pg.rows("SELECT " + column + " FROM public." + table + " WHERE id = " + std::to_string(i));
      ASSERT_EQ(rows.size(), 1u);
      EXPECT_EQ(rows[0][0], c.expected) << "field " << field << " (literal " << literal << ") read back as "
                                        << show(rows[0][0]);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "field " << field << " (literal " << literal << "): " << e.what();
    }
  }
  EXPECT_GT(copied, cases.size() * 3 / 4) << "most values go by COPY";
}

// ---- MySQL / MariaDB ---------------------------------------------------------------------------------------

std::vector<Case> mysql_cases() {
  const ColumnInfo tinyint1 = kind(ColumnKind::Int16);
  const ColumnInfo bit12 = kind(ColumnKind::Bits, 12);
  const ColumnInfo bit64 = kind(ColumnKind::Bits, 64);
  const Bytes bits12{std::string("\x0a\xaa", 2)};
  const std::string big_decimal = "-12345678901234567890123456789012345.123456789012345678901234567890";
  const std::string escapes("a\0b\nc\rd\\e'f\"g\x1ah", 15);
  const Interval iv{14, 3, tod(4, 5, 6, 789000)};
  const Array json_array{{Value(int64_t{1}), Value(Null{}), Value(std::string("it's \"q\"")), Value(true), Value(1.5),
                          Value(Decimal{"-0.50"}), Value(Json{"{\"k\":[1]}"}), Value(ints({2, 3}))}};
  const std::string json_array_text = "[1,null,\"it's \\\"q\\\"\",true,1.5,-0.50,{\"k\":[1]},[2,3]]";
  return {
      {"int", Null{}, {}, std::nullopt, "{}", false},
      {"tinyint(1)", true, {}, "1"},
      {"tinyint(1)", int64_t{1}, tinyint1, "1"},
      {"bigint", std::numeric_limits<int64_t>::min(), {}, "-9223372036854775808"},
      {"bigint", std::numeric_limits<int64_t>::max(), {}, "9223372036854775807"},
      {"bigint unsigned", std::numeric_limits<uint64_t>::max(), {}, "18446744073709551615"},
      {"decimal(65,30)", Decimal{big_decimal}, {}, big_decimal},
      {"decimal(10,2)", Decimal{"0.01"}, {}, "0.01"},
      {"int", Decimal{"12.00"}, {}, "12"},
      {"bigint unsigned", 1.8e19, {}, "18000000000000000000"},
      {"double", 0.1, {}, "0.1"},
      {"double", 1.5, {}, "1.5"},
      {"double", 1.7976931348623157e308, {}, "1.7976931348623157e308"},
      {"double", 5e-324, {}, "5e-324"},
      {"double", -0.0, {}, "0"},  // MariaDB stores -0 as 0 in DOUBLE columns (its literal -0e0 is -0)
      {"double", 1e21, {}, "1e21"},
      {"float", 0.1, {}, "0.1", "{}", false},
      {"varchar(100)", escapes, {}, escapes},
      {"text", std::string("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), {}, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
      {"longtext", std::string(), {}, ""},
      {"char(5)", std::string("ab"), {}, "ab"},
      {"varbinary(10)", Bytes{std::string("\x00\x27\x5c\xff\x22\x0a\x0d\x1a", 8)}, {}, "00275CFF220A0D1A", "HEX({})"},
      {"binary(4)", Bytes{std::string("\x00\x01\x02\x03", 4)}, {}, "00010203", "HEX({})"},
      {"blob", Bytes{}, {}, "", "HEX({})"},
      {"varbinary(10)", escapes.substr(0, 10), {}, "6100620A630D645C6527", "HEX({})"},
      {"bit(12)", bits12, bit12, "101010101010", "BIN({})"},
      {"bit(64)", Bytes{std::string(8, '\xff')}, bit64, std::string(64, '1'), "BIN({})"},
      {"bit(4)", std::string("0101"), {}, "101", "BIN({})"},
      {"bigint", bits12, bit12, "2730"},
      {"date", date(2024, 2, 29), {}, "2024-02-29"},
      {"date", date(0, 1, 1), {}, "0000-01-01"},
      {"date", date(1, 1, 1), {}, "0001-01-01"},
      {"date", date(9999, 12, 31), {}, "9999-12-31"},
      {"time(6)", Time{-tod(838, 59, 59)}, {}, "-838:59:59.000000"},
      {"time(6)", Time{tod(838, 59, 59)}, {}, "838:59:59.000000"},
      {"time(6)", Time{tod(12, 34, 56, 789000)}, {}, "12:34:56.789000"},
      {"time(6)", Time{-tod(0, 0, 1, 500000)}, {}, "-00:00:01.500000"},
      {"time", Time{0}, {}, "00:00:00"},
      {"time(1)", Time{tod(1, 2, 3, 500000)}, {}, "01:02:03.5"},
      {"datetime", Timestamp{micros(2024, 1, 2, 3, 4, 5)}, {}, "2024-01-02 03:04:05"},
      {"datetime(3)", Timestamp{micros(2024, 1, 2, 3, 4, 5, 123000)}, {}, "2024-01-02 03:04:05.123"},
      {"date", TimestampTz{micros(2024, 1, 2)}, {}, "2024-01-02"},
      {"decimal(10,2)", 0.25, {}, "0.25"},
      {"datetime(6)", Timestamp{micros(2024, 1, 1, 12, 34, 56, 123456)}, {}, "2024-01-01 12:34:56.123456"},
      {"datetime(6)", Timestamp{micros(0, 1, 1)}, {}, "0000-01-01 00:00:00.000000"},
      {"datetime(6)", Timestamp{micros(9999, 12, 31, 23, 59, 59, 999999)}, {}, "9999-12-31 23:59:59.999999"},
      {"datetime(6)", TimestampTz{micros(2024, 1, 1, 0, 0, 0, 500000)}, {}, "2024-01-01 00:00:00.500000"},
      {"timestamp(6) NULL", TimestampTz{1'000'000}, {}, "1970-01-01 00:00:01.000000"},
      {"timestamp(6) NULL", TimestampTz{micros(2038, 1, 19, 3, 14, 7, 999999)}, {}, "2038-01-19 03:14:07.999999"},
      {"timestamp(6) NULL", Timestamp{micros(2024, 1, 1, 12, 34, 56, 123456)}, {}, "2024-01-01 12:34:56.123456"},
      {"json", Json{"{\"a\": \"it's\", \"b\": \"x\\\\y\"}"}, {}, "{\"a\": \"it's\", \"b\": \"x\\\\y\"}"},
      {"json", json_array, {}, json_array_text},
      {"uuid", sample_uuid(), {}, "123e4567-e89b-12d3-a456-426614174000"},
      {"binary(16)", sample_uuid(), {}, "123E4567E89B12D3A456426614174000", "HEX({})"},
      {"char(36)", sample_uuid(), {}, "123e4567-e89b-12d3-a456-426614174000"},
      {"enum('a','b','it''s')", std::string("it's"), kind(ColumnKind::Enum), "it's"},
      {"set('x','y','z')", std::string("x,z"), kind(ColumnKind::EnumSet), "x,z"},
      {"year", int64_t{2024}, kind(ColumnKind::Year), "2024"},
      // Text columns: any value's text.
      {"varchar(10)", true, {}, "1"},
      {"varchar(40)", iv, {}, "P1Y2M3DT4H5M6.789S"},
      {"varchar(200)", json_array, {}, json_array_text},
      {"varchar(10)", Bytes{"abc"}, {}, "abc"},
      {"varchar(12)", bits12, bit12, "101010101010"},
      {"varchar(10)", std::nan(""), {}, "NaN"},
      {"varchar(10)", Decimal{"-Infinity"}, {}, "-Infinity"},
      {"varchar(10)", Date{kDateInfinity}, {}, "infinity"},
      {"varchar(20)", date(10000, 1, 1), {}, "10000-01-01"},
      {"varchar(40)", TimestampTz{micros(2024, 1, 1, 0, 0, 0, 500000)}, {}, "2024-01-01 00:00:00.500000"},
      {"varchar(20)", Time{tod(900, 0, 0)}, {}, "900:00:00"},
  };
}

TEST(SqlValuesRoundTrip, MySql) {
  const MySqlTarget target = real_mysql(true);
  if (target.port.empty()) return;
  MySqlSession my(target);
  my.exec("SET NAMES utf8mb4; SET time_zone = '+00:00'; "
          "SET sql_mode = 'STRICT_ALL_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'");
  const std::vector<Case> cases = mysql_cases();
  const std::string name = unique_table();
  const std::string table = "`" + target.database + "`.`" + name + "`";
  std::string ddl = "CREATE TABLE " + table + " (id int PRIMARY KEY";
  for (size_t i = 0; i < cases.size(); ++i) ddl += ", c" + std::to_string(i) + " " + cases[i].type;
  my.exec(ddl + ") DEFAULT CHARSET = utf8mb4");
  struct Drop {
    MySqlSession& my;
    std::string table;
    ~Drop() {
      try {
        my.exec("DROP TABLE IF EXISTS " + table);
      } catch (...) {
      }
    }
  } drop{my, table};

  std::vector<std::string> types(cases.size());
  for (const auto& row : my.rows("SELECT COLUMN_NAME, COLUMN_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = '" +
                                 target.database + "' AND TABLE_NAME = '" + name + "' AND COLUMN_NAME <> 'id'")) {
    types.at(std::stoul(row[0]->substr(1))) = *row[1];
  }

  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    SCOPED_TRACE("case " + std::to_string(i) + ": " + c.type + " (catalog: " + types[i] + ")");
    const std::string column = "c" + std::to_string(i);
    std::string literal;
    const auto error = dbsink::append_sql_literal(literal, Dialect::MySql, c.value, c.source ? &*c.source : nullptr,
                                                  types[i]);
    ASSERT_FALSE(error) << *error;
    try {
      my.exec("INSERT INTO " + table + " (id, " + column + ") VALUES (" + std::to_string(i) + ", " + literal + ")");
      EXPECT_EQ(my.value("SHOW COUNT(*) WARNINGS"), "0") << "the server warned about " << literal;
      const auto rows =
          my.rows("SELECT " + replace_all(c.read, "{}", column) + " FROM " + table + " WHERE id = " + std::to_string(i));
      ASSERT_EQ(rows.size(), 1u);
      EXPECT_EQ(rows[0][0], c.expected) << "literal " << literal << " read back as " << show(rows[0][0]);
      if (c.comparable) {
        EXPECT_EQ(my.value("SELECT COUNT(*) FROM " + table + " WHERE id = " + std::to_string(i) + " AND " + column +
                           " = " + literal),
                  "1")
            << "WHERE " << column << " = " << literal;
      }
    } catch (const std::exception& e) {
      ADD_FAILURE() << "literal " << literal << ": " << e.what();
    }
  }
}

}  // namespace
}  // namespace tidemark::test
