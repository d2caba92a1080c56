// Every MySQL/MariaDB column type at its extremes, end to end: a real MariaDB 10.11, the real tidemark binary,
// the real Kafka broker, the tests' own consumer (issue #4, Tests). Each field of each record is compared with
// a value known without Tidemark: what the server returns for the row through the tests' own client (its text
// form, HEX() for bytes), or the literal that was inserted (FLOAT, whose text form the server shortens),
// converted here to the JSON rendering docs/types.md documents.
//
// Then binlog_row_metadata MINIMAL and NO_LOG (issue #4, item 4) on a throwaway server: names, primary keys,
// ENUM/SET members, signedness and character sets come from information_schema (the every-type round trip
// again, and a table whose key is not its first column), are read again after a DDL, and a definition that
// changed while the daemon was stopped is the documented fatal error.

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <signal.h>

#include <charconv>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "mariadb_server.hpp"
#include "mysql_fixture.hpp"

namespace tidemark::test {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using Row = std::vector<std::optional<std::string>>;

// ---- Conversions from the server's text forms to the documented JSON rendering (written here, not Tidemark's).

std::string unhex(const std::string& hex) {
  if (hex.size() % 2) throw std::runtime_error("odd hex: " + hex.substr(0, 40));
  std::string out;
  out.reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

std::string base64(const std::string& bytes) {
  static const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const uint32_t n = (uint32_t(uint8_t(bytes[i])) << 16) | (uint32_t(uint8_t(bytes[i + 1])) << 8) | uint8_t(bytes[i + 2]);
    out += {alphabet[n >> 18], alphabet[(n >> 12) & 63], alphabet[(n >> 6) & 63], alphabet[n & 63]};
  }
  if (i + 1 == bytes.size()) {
    const uint32_t n = uint32_t(uint8_t(bytes[i])) << 16;
    out += {alphabet[n >> 18], alphabet[(n >> 12) & 63], '=', '='};
  } else if (i + 2 == bytes.size()) {
    const uint32_t n = (uint32_t(uint8_t(bytes[i])) << 16) | (uint32_t(uint8_t(bytes[i + 1])) << 8);
    out += {alphabet[n >> 18], alphabet[(n >> 12) & 63], alphabet[(n >> 6) & 63], '='};
  }
  return out;
}

// Days since 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's days_from_civil).
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

struct Civil {
  int64_t y = 0;
  unsigned mo = 0, d = 0, h = 0, mi = 0, s = 0, micros = 0;
  bool zero_in_date() const { return mo == 0 || d == 0; }
};

// "HH:MM:SS[.ffffff]" with HH of any length; the fraction right-padded to microseconds.
void parse_clock(const std::string& text, unsigned& h, unsigned& mi, unsigned& s, unsigned& micros) {
  const size_t c1 = text.find(':'), c2 = text.find(':', c1 + 1), dot = text.find('.');
  h = static_cast<unsigned>(std::stoul(text.substr(0, c1)));
  mi = static_cast<unsigned>(std::stoul(text.substr(c1 + 1, 2)));
  s = static_cast<unsigned>(std::stoul(text.substr(c2 + 1, 2)));
  micros = 0;
  if (dot != std::string::npos) {
    std::string f = text.substr(dot + 1);
    f.resize(6, '0');
    micros = static_cast<unsigned>(std::stoul(f));
  }
}

// "YYYY-MM-DD[ HH:MM:SS[.ffffff]]"
Civil parse_civil(const std::string& text) {
  Civil c;
  c.y = std::stoll(text.substr(0, 4));
  c.mo = static_cast<unsigned>(std::stoul(text.substr(5, 2)));
  c.d = static_cast<unsigned>(std::stoul(text.substr(8, 2)));
  if (text.size() > 10) parse_clock(text.substr(11), c.h, c.mi, c.s, c.micros);
  return c;
}

int64_t civil_micros(const Civil& c) {
  return days_from_civil(c.y, c.mo, c.d) * 86'400'000'000LL +
         (int64_t(c.h) * 3600 + c.mi * 60 + c.s) * 1'000'000LL + c.micros;
}

enum class Kind { Int, Decimal, Float, Double, Bit1, BitN, Year, Date, Time, DateTime, Timestamp, Text, Bytes };

struct Column {
  std::string name;
  std::string definition;
  Kind kind;
  bool nullable = true;
  int bytes = 0;  // BIT(n): ceil(n/8)
};

// What the server is asked for a column: its text form, or HEX() for byte strings.
std::string select_expression(const Column& c) {
  switch (c.kind) {
    case Kind::Bit1: return "`" + c.name + "` + 0";
    case Kind::BitN: return "LPAD(HEX(`" + c.name + "`), " + std::to_string(2 * c.bytes) + ", '0')";
    case Kind::Bytes: return "HEX(`" + c.name + "`)";
    case Kind::Year: return "`" + c.name + "` + 0";
    default: return "`" + c.name + "`";
  }
}

// The JSON docs/types.md documents for the server's answer `text` (FLOAT: the inserted literal instead).
json expected_json(const Column& c, const std::optional<std::string>& text) {
  if (!text) return nullptr;
  const std::string& t = *text;
  switch (c.kind) {
    case Kind::Int: return json::parse(t);
    case Kind::Decimal: case Kind::Text: return t;
    case Kind::Float: {
      // "the float's shortest decimal text read as a double"
      const float f = std::strtof(t.c_str(), nullptr);
      char buf[64];
      const auto r = std::to_chars(buf, buf + sizeof buf, f);
      return std::strtod(std::string(buf, r.ptr).c_str(), nullptr);
    }
    case Kind::Double: return std::strtod(t.c_str(), nullptr);
    case Kind::Bit1: return t != "0";
    case Kind::BitN: case Kind::Bytes: return base64(unhex(t));
    case Kind::Year: return std::stoll(t);
    case Kind::Date: {
      const Civil d = parse_civil(t);
      if (d.zero_in_date()) return c.nullable ? json(nullptr) : json(0);
      return days_from_civil(d.y, d.mo, d.d);
    }
    case Kind::Time: {
      const bool negative = !t.empty() && t[0] == '-';
      unsigned h, mi, s, micros;
      parse_clock(negative ? t.substr(1) : t, h, mi, s, micros);
      const int64_t v = (int64_t(h) * 3600 + mi * 60 + s) * 1'000'000LL + micros;
      return negative ? -v : v;
    }
    case Kind::DateTime: {
      const Civil d = parse_civil(t);
      if (d.zero_in_date()) return c.nullable ? json(nullptr) : json(0);
      return civil_micros(d);
    }
    case Kind::Timestamp: {
      const Civil d = parse_civil(t);
      if (d.zero_in_date()) return c.nullable ? json(nullptr) : json("1970-01-01T00:00:00Z");
      std::string iso = t.substr(0, 10) + "T" + t.substr(11, 8);
      if (d.micros != 0) {
        std::string f = t.substr(20);
        f.resize(6, '0');
        iso += "." + f;
      }
      return iso + "Z";
    }
  }
  return nullptr;
}

std::string sql_quote(const std::string& s) {
  std::string out = "'";
  for (char ch : s) {
    if (ch == '\'' || ch == '\\') out.push_back('\\');
    out.push_back(ch);
  }
  return out + "'";
}

// A topic that takes records of up to 16 MB (the 1 MB BLOB is 1.4 MB in base64): created here, before
// MySqlFixture::create_table, which accepts an existing topic.
void create_big_topic(const std::string& bootstrap, const std::string& topic) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), err, sizeof err);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (!rk) throw std::runtime_error(err);
  rd_kafka_NewTopic_t* new_topic = rd_kafka_NewTopic_new(topic.c_str(), 1, 1, err, sizeof err);
  rd_kafka_NewTopic_set_config(new_topic, "max.message.bytes", "16777216");
  rd_kafka_queue_t* queue = rd_kafka_queue_new(rk);
  rd_kafka_CreateTopics(rk, &new_topic, 1, nullptr, queue);
  rd_kafka_event_t* event = rd_kafka_queue_poll(queue, 30000);
  std::string failure = event ? "" : "CreateTopics timed out";
  if (event && rd_kafka_event_error(event)) failure = rd_kafka_event_error_string(event);
  if (event) {
    size_t count = 0;
    const rd_kafka_topic_result_t** topics =
        rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(event), &count);
    for (size_t i = 0; i < count; ++i)
      if (rd_kafka_topic_result_error(topics[i]) != RD_KAFKA_RESP_ERR_NO_ERROR)
        failure = rd_kafka_topic_result_error_string(topics[i]);
    rd_kafka_event_destroy(event);
  }
  rd_kafka_queue_destroy(queue);
  rd_kafka_NewTopic_destroy(new_topic);
  rd_kafka_destroy(rk);
  if (!failure.empty()) throw std::runtime_error("create topic " + topic + ": " + failure);
}

std::vector<Column> type_columns() {
  return {
      {"id", "INT NOT NULL PRIMARY KEY", Kind::Int, false},
      {"ti", "TINYINT", Kind::Int},
      {"tiu", "TINYINT UNSIGNED", Kind::Int},
      {"si", "SMALLINT", Kind::Int},
      {"siu", "SMALLINT UNSIGNED", Kind::Int},
      {"mi", "MEDIUMINT", Kind::Int},
      {"miu", "MEDIUMINT UNSIGNED", Kind::Int},
      {"i", "INT", Kind::Int},
      {"iu", "INT UNSIGNED", Kind::Int},
      {"bi", "BIGINT", Kind::Int},
      {"biu", "BIGINT UNSIGNED", Kind::Int},
      {"d65", "DECIMAL(65,30)", Kind::Decimal},
      {"d10", "DECIMAL(10,0)", Kind::Decimal},
      {"d52", "DECIMAL(5,2)", Kind::Decimal},
      {"d206", "DECIMAL(20,6)", Kind::Decimal},
      {"f", "FLOAT", Kind::Float},
      {"dbl", "DOUBLE", Kind::Double},
      {"b1", "BIT(1)", Kind::Bit1},
      {"b12", "BIT(12)", Kind::BitN, true, 2},
      {"b64", "BIT(64)", Kind::BitN, true, 8},
      {"y", "YEAR", Kind::Year},
      {"dt", "DATE", Kind::Date},
      {"dtnn", "DATE NOT NULL DEFAULT '2000-01-01'", Kind::Date, false},
      {"tm", "TIME(6)", Kind::Time},
      {"tm0", "TIME", Kind::Time},
      {"dtm", "DATETIME(6)", Kind::DateTime},
      {"dtm0", "DATETIME(0)", Kind::DateTime},
      {"dtmnn", "DATETIME(3) NOT NULL DEFAULT '2000-01-01 00:00:00'", Kind::DateTime, false},
      {"ts", "TIMESTAMP(6) NULL", Kind::Timestamp},
      {"ts0", "TIMESTAMP(0) NULL", Kind::Timestamp},
      {"c4", "CHAR(10) CHARACTER SET utf8mb4", Kind::Text},
      {"v4", "VARCHAR(100) CHARACTER SET utf8mb4", Kind::Text},
      {"t4", "TEXT CHARACTER SET utf8mb4", Kind::Text},
      {"c3", "CHAR(10) CHARACTER SET utf8mb3", Kind::Text},
      {"v3", "VARCHAR(100) CHARACTER SET utf8mb3", Kind::Text},
      {"cl", "CHAR(10) CHARACTER SET latin1", Kind::Text},
      {"vl", "VARCHAR(100) CHARACTER SET latin1", Kind::Text},
      {"tl", "TEXT CHARACTER SET latin1", Kind::Text},
      {"cyr", "VARCHAR(20) CHARACTER SET cp1251", Kind::Text},
      {"sj", "VARCHAR(20) CHARACTER SET sjis", Kind::Text},
      {"gb", "TEXT CHARACTER SET gbk", Kind::Text},
      {"u16", "VARCHAR(20) CHARACTER SET utf16", Kind::Text},
      {"u32", "CHAR(5) CHARACTER SET utf32", Kind::Text},
      {"bin", "BINARY(16)", Kind::Bytes},
      {"vbin", "VARBINARY(100)", Kind::Bytes},
      {"bl", "BLOB", Kind::Bytes},
      {"tbl", "TINYBLOB", Kind::Bytes},
      {"mbl", "MEDIUMBLOB", Kind::Bytes},
      {"lbl", "LONGBLOB", Kind::Bytes},
      {"lt", "LONGTEXT CHARACTER SET utf8mb4", Kind::Text},
      {"e", "ENUM('a','bb','ccc with space','é')", Kind::Text},
      {"s", "SET('x','y','z','w')", Kind::Text},
      {"j", "JSON", Kind::Text},
      {"g", "GEOMETRY", Kind::Bytes},
      {"p", "POINT", Kind::Bytes},
      {"u", "UUID", Kind::Text},
      {"i4", "INET4", Kind::Text},
      {"i6", "INET6", Kind::Text},
      {"nn", "VARCHAR(10) NOT NULL DEFAULT ''", Kind::Text, false},
  };
}

std::string bits(const std::string& ones_and_zeros) { return "b'" + ones_and_zeros + "'"; }

// 1 MiB of bytes that do not compress, every value 0..255 present.
std::string large_blob_hex() {
  static const char* digits = "0123456789ABCDEF";
  std::string hex;
  hex.reserve(2 << 20);
  uint32_t x = 12345;
  for (size_t i = 0; i < (1u << 20); ++i) {
    x = x * 1103515245u + 12345u;
    const uint8_t b = static_cast<uint8_t>(x >> 16);
    hex.push_back(digits[b >> 4]);
    hex.push_back(digits[b & 15]);
  }
  return hex;
}

// SQL literals of each row, by column (missing: the column's default, NULL for nullable ones).
std::vector<std::map<std::string, std::string>> type_rows() {
  const std::string nines35(35, '9'), nines30(30, '9');
  return {
      {// 1: maxima
       {"id", "1"}, {"ti", "127"}, {"tiu", "255"}, {"si", "32767"}, {"siu", "65535"}, {"mi", "8388607"},
       {"miu", "16777215"}, {"i", "2147483647"}, {"iu", "4294967295"}, {"bi", "9223372036854775807"},
       {"biu", "18446744073709551615"}, {"d65", nines35 + "." + nines30}, {"d10", "9999999999"}, {"d52", "999.99"},
       {"d206", "99999999999999.999999"}, {"f", "3.4028235e38"}, {"dbl", "1.7976931348623157e308"},
       {"b1", bits("1")}, {"b12", bits("111111111111")}, {"b64", bits(std::string(64, '1'))}, {"y", "2155"},
       {"dt", "'9999-12-31'"}, {"dtnn", "'9999-12-31'"}, {"tm", "'838:59:59.000000'"}, {"tm0", "'838:59:59'"},
       {"dtm", "'9999-12-31 23:59:59.999999'"}, {"dtm0", "'9999-12-31 23:59:59'"},
       {"dtmnn", "'9999-12-31 23:59:59.999'"}, {"ts", "'2038-01-19 03:14:07.999999'"},
       {"ts0", "'2038-01-19 03:14:07'"}, {"c4", sql_quote("😀 é ✓")}, {"v4", sql_quote("emoji 😀🎉 and 𝄞 clef")},
       {"t4", "REPEAT('𝄞😀', 1000)"}, {"c3", sql_quote("héllo ✓")}, {"v3", sql_quote("ü€ 3-byte ✓ ☃")},
       {"cl", sql_quote("€éÿ")}, {"vl", sql_quote("café € ‰ ƒ Œ")}, {"tl", sql_quote("Ærø “quoted” – dash")},
       {"cyr", sql_quote("Привет, мир №1")}, {"sj", sql_quote("日本語テキスト ｱｲｳ")}, {"gb", sql_quote("中文字符 测试")},
       {"u16", sql_quote("😀 utf16 𝄞")}, {"u32", sql_quote("😀a ")},
       {"bin", "X'00112233445566778899AABBCCDDEEFF'"}, {"vbin", "X'00FF0080'"}, {"bl", "X'DEADBEEF00'"},
       {"tbl", "X'00'"}, {"mbl", "X'0102030405'"}, {"lbl", "X'0A0B'"}, {"lt", "REPEAT('long ✓ ', 10000)"},
       {"e", sql_quote("é")}, {"s", "'x,y,z,w'"}, {"j", sql_quote(R"({"a": [1, 2.5, "😀"], "b": null, "c": {"d": true}})")},
       {"g", "ST_GeomFromText('LINESTRING(0 0, 1 1, 2 0)', 4326)"}, {"p", "ST_PointFromText('POINT(1.5 -2.25)')"},
       {"u", "'123e4567-e89b-12d3-a456-426614174000'"}, {"i4", "'255.255.255.255'"},
       {"i6", "'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'"}, {"nn", "'max'"}},
      {// 2: minima
       {"id", "2"}, {"ti", "-128"}, {"tiu", "0"}, {"si", "-32768"}, {"siu", "0"}, {"mi", "-8388608"}, {"miu", "0"},
       {"i", "-2147483648"}, {"iu", "0"}, {"bi", "-9223372036854775808"}, {"biu", "0"},
       {"d65", "-" + nines35 + "." + nines30}, {"d10", "-9999999999"}, {"d52", "-999.99"}, {"d206", "-0.000001"},
       {"f", "-3.4028235e38"}, {"dbl", "-1.7976931348623157e308"}, {"b1", bits("0")}, {"b12", bits("101010101010")},
       {"b64", bits("1")}, {"y", "1901"}, {"dt", "'1000-01-01'"}, {"dtnn", "'1000-01-01'"},
       {"tm", "'-838:59:59.000000'"}, {"tm0", "'-838:59:59'"}, {"dtm", "'1000-01-01 00:00:00.000000'"},
       {"dtm0", "'1000-01-01 00:00:00'"}, {"dtmnn", "'1000-01-01 00:00:00.001'"},
       {"ts", "'1970-01-01 00:00:01.000000'"}, {"ts0", "'1970-01-01 00:00:01'"}, {"c4", "' x'"},
       {"v4", "'  leading and trailing  '"}, {"t4", sql_quote("tab\there\nnewline \"quotes\" \\ backslash")},
       {"c3", "'a'"}, {"v3", "''"}, {"cl", "' '"}, {"vl", "'x'"}, {"tl", "''"}, {"cyr", "''"}, {"sj", "''"}, {"gb", "''"}, {"u16", "''"}, {"u32", "''"}, {"bin", "X'FF'"}, {"vbin", "X''"},
       {"bl", "X''"}, {"tbl", "X'FF'"}, {"mbl", "X''"}, {"lbl", "X''"}, {"lt", "''"}, {"e", "'a'"}, {"s", "''"},
       {"j", "'[]'"}, {"g", "ST_GeomFromText('POINT(0 0)')"}, {"p", "POINT(-180, 90)"},
       {"u", "'00000000-0000-0000-0000-000000000000'"}, {"i4", "'0.0.0.0'"}, {"i6", "'::'"}, {"nn", "''"}},
      {// 3: NULL in every nullable column
       {"id", "3"}},
      {// 4: zeros, empty strings, zero dates, the empty set, ENUM's error value
       {"id", "4"}, {"ti", "0"}, {"tiu", "0"}, {"si", "0"}, {"siu", "0"}, {"mi", "0"}, {"miu", "0"}, {"i", "0"},
       {"iu", "0"}, {"bi", "0"}, {"biu", "0"}, {"d65", "0"}, {"d10", "0"}, {"d52", "0"}, {"d206", "0"}, {"f", "0"},
       {"dbl", "0"}, {"b1", "0"}, {"b12", "0"}, {"b64", "0"}, {"y", "0"}, {"dt", "'0000-00-00'"},
       {"dtnn", "'0000-00-00'"}, {"tm", "'00:00:00.000000'"}, {"tm0", "'00:00:00'"},
       {"dtm", "'0000-00-00 00:00:00'"}, {"dtm0", "'0000-00-00 00:00:00'"}, {"dtmnn", "'0000-00-00 00:00:00'"},
       {"ts", "'0000-00-00 00:00:00'"}, {"ts0", "'0000-00-00 00:00:00'"}, {"c4", "''"}, {"v4", "''"}, {"t4", "''"},
       {"c3", "''"}, {"v3", "''"}, {"cl", "''"}, {"vl", "''"}, {"tl", "''"}, {"bin", "''"}, {"vbin", "''"},
       {"bl", "''"}, {"tbl", "''"}, {"mbl", "''"}, {"lbl", "''"}, {"lt", "''"}, {"e", "''"}, {"s", "''"},
       {"j", "'{}'"}, {"u", "'abcdef00-0000-0000-0000-000000000000'"}, {"i4", "'0.0.0.0'"},
       {"i6", "'::ffff:1.2.3.0'"}, {"nn", "''"}},
      {// 5: in between, the 1 MiB BLOB, year 0, zero-in-date values, negative TIME with a fraction
       {"id", "5"}, {"ti", "1"}, {"tiu", "128"}, {"si", "-1"}, {"siu", "32768"}, {"mi", "-1"}, {"miu", "8388608"},
       {"i", "-1"}, {"iu", "2147483648"}, {"bi", "-1"}, {"biu", "9223372036854775808"},
       {"d65", "-0.000000000000000000000000000001"}, {"d10", "1"}, {"d52", "-0.01"},
       {"d206", "12345678901234.567891"}, {"f", "1.17549435e-38"}, {"dbl", "5e-324"}, {"b1", "1"},
       {"b12", bits("1")}, {"b64", bits("1" + std::string(62, '0') + "1")}, {"y", "1999"}, {"dt", "'2024-02-00'"},
       {"dtnn", "'2024-00-00'"}, {"tm", "'-12:34:56.789012'"}, {"tm0", "'-00:00:01'"},
       {"dtm", "'2024-02-29 12:34:56.123456'"}, {"dtm0", "'0000-01-01 00:00:00'"},
       {"dtmnn", "'2024-02-29 23:59:59.999'"}, {"ts", "'2024-02-29 12:34:56.000001'"},
       {"ts0", "'2024-02-29 12:34:56'"}, {"c4", "'abc'"}, {"v4", "'x'"}, {"t4", "''"}, {"c3", "''"}, {"v3", "'x'"},
       {"cl", sql_quote("é")}, {"vl", "''"}, {"tl", sql_quote("€")}, {"bin", "X'0102'"}, {"vbin", "X'000000'"},
       {"bl", "X'00'"}, {"tbl", "''"}, {"mbl", "REPEAT(X'AB', 70000)"}, {"lbl", "X'" + large_blob_hex() + "'"},
       {"lt", "'x'"}, {"e", "'bb'"}, {"s", "'w,x'"}, {"j", sql_quote(R"("just a string")")},
       {"g", "ST_GeomFromText('POLYGON((0 0,10 0,10 10,0 10,0 0))')"}, {"p", "POINT(0, 0)"},
       {"u", "'ffffffff-ffff-ffff-ffff-ffffffffffff'"}, {"i4", "'1.2.3.4'"}, {"i6", "'2001:db8::1'"}, {"nn", "'n'"}},
  };
}

const std::map<std::string, std::string> kRow4Update = {
    {"ti", "-1"}, {"f", "0.1"}, {"dbl", "0.1"}, {"v4", sql_quote("updated 🎉")}, {"s", "'y,w'"},
    {"tm", "'-00:00:00.000001'"}, {"dt", "'0000-01-01'"}, {"e", "'ccc with space'"},
    {"j", sql_quote(R"({"updated": [true, false]})")}, {"bin", "X'AB'"}, {"dtm", "'1970-01-01 00:00:00.000001'"},
    {"ts", "'1970-01-01 00:00:01.5'"}, {"y", "2000"}, {"i6", "'::1'"}, {"cl", sql_quote("Œ")}};

// The server's view of every row: id -> the select_expression of each column (FLOAT: the inserted literal).
std::map<int, Row> server_rows(MySqlSession& s, const std::string& table, const std::vector<Column>& columns,
                               const std::map<int, std::optional<std::string>>& float_literals) {
  std::string sql = "SELECT ";
  for (size_t i = 0; i < columns.size(); ++i) sql += (i ? ", " : "") + select_expression(columns[i]);
  sql += " FROM `" + table + "` ORDER BY id";
  std::map<int, Row> out;
  for (auto& row : s.rows(sql)) {
    const int id = std::stoi(*row[0]);
    for (size_t i = 0; i < columns.size(); ++i)
      if (columns[i].kind == Kind::Float && row[i]) row[i] = float_literals.at(id);
    out[id] = std::move(row);
  }
  return out;
}

void expect_row(const json& image, const std::vector<Column>& columns, const Row& server, const std::string& what) {
  ASSERT_TRUE(image.is_object()) << what << ": " << image.dump().substr(0, 500);
  EXPECT_EQ(image.size(), columns.size()) << what;
  for (size_t i = 0; i < columns.size(); ++i) {
    const Column& c = columns[i];
    ASSERT_TRUE(image.contains(c.name)) << what << ": no field " << c.name;
    const json expected = expected_json(c, server[i]);
    const json& actual = image[c.name];
    if (expected.is_number_float() && actual.is_number()) {
      EXPECT_EQ(actual.get<double>(), expected.get<double>()) << what << " column " << c.name << " (" << c.definition
                                                              << "), server text " << server[i].value_or("NULL");
    } else {
      EXPECT_EQ(actual, expected) << what << " column " << c.name << " (" << c.definition << "), server text "
                                  << server[i].value_or("NULL").substr(0, 200) << "; got "
                                  << actual.dump().substr(0, 200);
    }
  }
}

// The whole round trip on the fixture's server (whatever its binlog_row_metadata).
void every_type_round_trips(MySqlFixture& f) {
  const std::string t = f.table("mytypes");
  const auto columns = type_columns();
  std::string definition;
  for (const auto& c : columns) definition += (definition.empty() ? "" : ", ") + ("`" + c.name + "` " + c.definition);
  create_big_topic(f.bootstrap, f.topic(t));
  f.create_table(t, definition);
  MySqlConfigOptions options;
  options.sink_yaml = "sink:\n  type: kafka\n  kafka:\n    bootstrap_servers: " + f.bootstrap +
                      "\n    properties:\n      message.max.bytes: \"16000000\"\n";
  f.write_config({t}, options);
  ASSERT_TRUE(f.start_and_wait_until_streaming()) << f.daemon.stderr_text();

  MySqlSession s(f.db);
  // Zero dates and zero-in-date values, and ENUM's error value, need a non-strict mode.
  s.exec("SET sql_mode = ''");
  const auto rows = type_rows();
  std::map<int, std::optional<std::string>> floats;
  for (const auto& row : rows) {
    std::string names, values;
    for (const auto& [name, literal] : row) {
      names += (names.empty() ? "`" : ", `") + name + "`";
      values += (values.empty() ? "" : ", ") + literal;
    }
    s.exec("INSERT INTO `" + t + "` (" + names + ") VALUES (" + values + ")");
    const int id = std::stoi(row.at("id"));
    floats[id] = row.count("f") ? std::optional<std::string>(row.at("f")) : std::nullopt;
  }
  const auto inserted = server_rows(s, t, columns, floats);
  ASSERT_EQ(inserted.size(), rows.size());

  std::string assignments;
  for (const auto& [name, literal] : kRow4Update) assignments += (assignments.empty() ? "`" : ", `") + name + "` = " + literal;
  s.exec("UPDATE `" + t + "` SET " + assignments + " WHERE id = 4");
  floats[4] = kRow4Update.at("f");
  const auto updated = server_rows(s, t, columns, floats);
  s.exec("DELETE FROM `" + t + "` WHERE id = 2");

  // The rows hold what the test means to cover (the server's own view, before comparing Tidemark's).
  auto column_index = [&](const std::string& name) {
    for (size_t i = 0; i < columns.size(); ++i)
      if (columns[i].name == name) return i;
    throw std::runtime_error("no column " + name);
  };
  EXPECT_EQ(inserted.at(1)[column_index("biu")], "18446744073709551615");
  EXPECT_EQ(inserted.at(1)[column_index("d65")], std::string(35, '9') + "." + std::string(30, '9'));
  EXPECT_EQ(s.value("SELECT HEX(cl) FROM `" + t + "` WHERE id = 1"), "80E9FF") << "latin1 is cp1252";
  EXPECT_EQ(inserted.at(1)[column_index("c4")], "😀 é ✓");
  EXPECT_EQ(inserted.at(2)[column_index("tm")], "-838:59:59.000000");
  EXPECT_EQ(inserted.at(4)[column_index("dt")], "0000-00-00");
  EXPECT_EQ(inserted.at(4)[column_index("e")], "");
  EXPECT_EQ(inserted.at(4)[column_index("bin")], std::string(32, '0'));
  EXPECT_EQ(inserted.at(5)[column_index("tm")], "-12:34:56.789012");
  EXPECT_EQ(inserted.at(5)[column_index("lbl")]->size(), size_t(2 << 20));
  EXPECT_EQ(inserted.at(5)[column_index("s")], "x,w");
  EXPECT_EQ(updated.at(4)[column_index("tm")], "-00:00:00.000001");

  // c for 1..5, u for 4, d for 2 and its tombstone.
  const auto records = f.read_until(f.topic(t), 8, 120s);
  ASSERT_EQ(records.size(), 8u) << f.daemon.stderr_text();
  for (size_t n = 0; n < 5; ++n) {
    const int id = static_cast<int>(n) + 1;
    ASSERT_TRUE(records[n].value) << "record " << n;
    EXPECT_EQ(json::parse(*records[n].key), json({{"id", id}}));
    const json c = json::parse(*records[n].value);
    EXPECT_EQ(c["op"], "c");
    EXPECT_TRUE(c["before"].is_null());
    expect_row(c["after"], columns, inserted.at(id), "insert of row " + std::to_string(id));
  }
  ASSERT_TRUE(records[5].value);
  EXPECT_EQ(json::parse(*records[5].key), json({{"id", 4}}));
  const json u = json::parse(*records[5].value);
  EXPECT_EQ(u["op"], "u");
  expect_row(u["before"], columns, inserted.at(4), "update of row 4, before");
  expect_row(u["after"], columns, updated.at(4), "update of row 4, after");
  ASSERT_TRUE(records[6].value);
  EXPECT_EQ(json::parse(*records[6].key), json({{"id", 2}}));
  const json d = json::parse(*records[6].value);
  EXPECT_EQ(d["op"], "d");
  EXPECT_TRUE(d["after"].is_null());
  expect_row(d["before"], columns, inserted.at(2), "delete of row 2");
  EXPECT_FALSE(records[7].value.has_value()) << "tombstone";
  EXPECT_EQ(json::parse(*records[7].key), json({{"id", 2}}));

  ASSERT_EQ(f.daemon.stop(SIGTERM), 0) << f.daemon.stderr_text();
}

TEST(MySqlTypes, EveryTypeRoundTripsAtItsExtremes) {
  MySqlFixture f;
  ASSERT_EQ(mysql_value(f.root, "SELECT @@GLOBAL.binlog_row_metadata"), "FULL");
  every_type_round_trips(f);
}

// binlog_row_metadata MINIMAL (signedness and character sets in TABLE_MAP, no names, keys or ENUM/SET
// members) and NO_LOG (nothing): what is missing comes from information_schema, and is read again after a DDL.
// One throwaway server for the suite (the shared server keeps FULL); each test sets the mode with SET GLOBAL.
class MySqlRowMetadata : public ::testing::TestWithParam<std::string> {
 protected:
  static void TearDownTestSuite() { server_.reset(); }
  void SetUp() override {
    if (!server_ && error_.empty()) {
      try {
        server_ = std::make_unique<ThrowawayMariaDb>(std::vector<std::string>{"--binlog-row-metadata=MINIMAL"});
      } catch (const std::exception& e) {
        error_ = e.what();
      }
    }
    if (!server_) FAIL() << "throwaway MariaDB: " << error_;
  }
  static inline std::unique_ptr<ThrowawayMariaDb> server_;
  static inline std::string error_;
};

TEST_P(MySqlRowMetadata, NamesKeysEnumsSignednessAndCharsetsComeFromTheCatalogAndFollowAlterTable) {
  const std::string mode = GetParam();
  mysql_exec(server_->target(true), "SET GLOBAL binlog_row_metadata = '" + mode + "'");
  ASSERT_EQ(mysql_value(server_->target(true), "SELECT @@GLOBAL.binlog_row_metadata"), mode);
  MySqlFixture f;
  f.db = server_->target();
  f.root = server_->target(true);
  const std::string t = f.table("mymeta");
  // The key is not the first column, and its columns are not in table order.
  f.create_table(t,
                 "a INT, k VARCHAR(20) CHARACTER SET latin1 NOT NULL, id BIGINT UNSIGNED NOT NULL, "
                 "e ENUM('red','green','blue'), s SET('x','y','z'), tu TINYINT UNSIGNED, iu INT UNSIGNED, "
                 "bu BIGINT UNSIGNED, v VARCHAR(50) CHARACTER SET utf8mb4, c3 CHAR(5) CHARACTER SET utf8mb3, "
                 "PRIMARY KEY (id, k)");
  f.write_config({t});
  ASSERT_TRUE(f.start_and_wait_until_streaming()) << f.daemon.stderr_text();

  MySqlSession s(f.db);
  s.exec("INSERT INTO `" + t + "` VALUES (-1, 'é€', 18446744073709551615, 'blue', 'z,x', 255, 4294967295, " +
         "18446744073709551615, '😀 ok', 'ü✓'), (2, 'a', 1, 'red', '', 200, 3000000000, 9223372036854775808, 'b', '')");
  s.exec("UPDATE `" + t + "` SET e = 'green', tu = 254, s = 'y' WHERE id = 1");
  auto records = f.read_until(f.topic(t), 3);
  ASSERT_EQ(records.size(), 3u) << f.daemon.stderr_text();
  const json key1 = {{"id", 18446744073709551615ULL}, {"k", "é€"}};
  const json key2 = {{"id", 1}, {"k", "a"}};
  const json row1 = {{"a", -1},       {"k", "é€"},          {"id", 18446744073709551615ULL},
                     {"e", "blue"},   {"s", "x,z"},         {"tu", 255},
                     {"iu", 4294967295LL}, {"bu", 18446744073709551615ULL}, {"v", "😀 ok"}, {"c3", "ü✓"}};
  json row2 = {{"a", 2},     {"k", "a"},  {"id", 1},  {"e", "red"},       {"s", ""},
               {"tu", 200},  {"iu", 3000000000LL}, {"bu", 9223372036854775808ULL}, {"v", "b"}, {"c3", ""}};
  EXPECT_EQ(json::parse(*records[0].key), key1);
  EXPECT_EQ(json::parse(*records[0].value)["after"], row1);
  EXPECT_EQ(json::parse(*records[1].key), key2);
  EXPECT_EQ(json::parse(*records[1].value)["after"], row2);
  EXPECT_EQ(json::parse(*records[2].key), key2);
  const json u = json::parse(*records[2].value);
  EXPECT_EQ(u["op"], "u");
  EXPECT_EQ(u["before"], row2);
  json row2b = row2;
  row2b["e"] = "green";
  row2b["tu"] = 254;
  row2b["s"] = "y";
  EXPECT_EQ(u["after"], row2b);

  // A column in the middle, with members of its own, and one at the end: the catalog is read again after the
  // DDL's QUERY event, so the rows logged after it are described by the new definition.
  s.exec("ALTER TABLE `" + t + "` ADD COLUMN added ENUM('p','q','€') CHARACTER SET latin1 DEFAULT 'q' AFTER a, " +
         "ADD COLUMN mu MEDIUMINT UNSIGNED DEFAULT 16777215");
  s.exec("INSERT INTO `" + t + "` (a, added, k, id, e, s, tu, iu, bu, v, c3) VALUES (3, '€', 'c', 3, 'blue', " +
         "'x,y,z', 1, 1, 1, 'c', 'c')");
  s.exec("UPDATE `" + t + "` SET added = 'p' WHERE id = 1");
  records = f.read_until(f.topic(t), 5);
  ASSERT_EQ(records.size(), 5u) << f.daemon.stderr_text();
  const json c3 = json::parse(*records[3].value);
  EXPECT_EQ(json::parse(*records[3].key), json({{"id", 3}, {"k", "c"}}));
  EXPECT_EQ(c3["after"], json({{"a", 3}, {"added", "€"}, {"k", "c"}, {"id", 3}, {"e", "blue"}, {"s", "x,y,z"},
                               {"tu", 1}, {"iu", 1}, {"bu", 1}, {"v", "c"}, {"c3", "c"}, {"mu", 16777215}}))
      << c3.dump();
  const json u2 = json::parse(*records[4].value);
  EXPECT_EQ(json::parse(*records[4].key), key2);
  json before = row2b;
  before["added"] = "q";
  before["mu"] = 16777215;
  EXPECT_EQ(u2["before"], before);
  json after = before;
  after["added"] = "p";
  EXPECT_EQ(u2["after"], after);

  ASSERT_EQ(f.daemon.stop(SIGTERM), 0) << f.daemon.stderr_text();
}

// Every type again, described by information_schema instead of TABLE_MAP: unsigned integers, character sets
// (latin1, utf8mb3), ENUM/SET members, UUID/INET/JSON.
TEST_P(MySqlRowMetadata, EveryTypeRoundTripsAtItsExtremes) {
  const std::string mode = GetParam();
  mysql_exec(server_->target(true), "SET GLOBAL binlog_row_metadata = '" + mode + "'");
  MySqlFixture f;
  f.db = server_->target();
  f.root = server_->target(true);
  every_type_round_trips(f);
}

// The documented limit: information_schema describes a table as it is now. Rows logged before an ADD COLUMN
// and read after it (the daemon was stopped in between) no longer match it: a fatal error that says so and
// names the fix, never a guess, and nothing of those rows is published.
TEST_P(MySqlRowMetadata, ADefinitionChangedWhileStoppedIsAClearErrorNotAGuess) {
  const std::string mode = GetParam();
  mysql_exec(server_->target(true), "SET GLOBAL binlog_row_metadata = '" + mode + "'");
  MySqlFixture f;
  f.db = server_->target();
  f.root = server_->target(true);
  const std::string t = f.table("mylimit");
  f.create_table(t, "id INT PRIMARY KEY, v VARCHAR(10)");
  f.write_config({t});
  ASSERT_TRUE(f.start_and_wait_until_streaming()) << f.daemon.stderr_text();
  MySqlSession s(f.db);
  s.exec("INSERT INTO `" + t + "` VALUES (1, 'one')");
  ASSERT_EQ(f.read_until(f.topic(t), 1).size(), 1u) << f.daemon.stderr_text();
  ASSERT_EQ(f.daemon.stop(SIGTERM), 0) << f.daemon.stderr_text();

  s.exec("INSERT INTO `" + t + "` VALUES (2, 'two')");
  s.exec("ALTER TABLE `" + t + "` ADD COLUMN extra INT");
  f.daemon.start();
  const auto status = f.daemon.process().wait_for_exit(60s);
  ASSERT_TRUE(status.has_value()) << "the daemon kept running: " << f.daemon.stderr_text();
  EXPECT_NE(*status, 0);
  const std::string err = f.daemon.stderr_text();
  EXPECT_NE(err.find("has 2 columns in the binlog but 3 in information_schema"), std::string::npos) << err;
  EXPECT_NE(err.find("Set binlog_row_metadata=FULL"), std::string::npos) << err;
  const auto records = consume_all(f.bootstrap, f.topic(t));
  ASSERT_EQ(records.size(), 1u) << "row 2 must not be published with a guessed description";
}

INSTANTIATE_TEST_SUITE_P(Modes, MySqlRowMetadata, ::testing::Values("MINIMAL", "NO_LOG"));

}  // namespace
}  // namespace tidemark::test
