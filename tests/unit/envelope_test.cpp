// Value rendering and the Debezium-style envelope, checked against independent computations (gmtime_r,
// a naive day count, nlohmann::json) rather than against the serializer's own output.

#include <gtest/gtest.h>

#include <time.h>

#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "sink/envelope_serializer.hpp"
#include "tidemark/change_event.hpp"
#include "tidemark/version.hpp"

namespace tidemark {
namespace {

using nlohmann::json;

std::string render(const Value& v) {
  std::string out;
  write_json_value(v, out);
  return out;
}

json parsed(const Value& v) { return json::parse(render(v)); }

TEST(ValueRendering, Scalars) {
  EXPECT_EQ(render(Null{}), "null");
  EXPECT_EQ(render(Unavailable{}), "\"__debezium_unavailable_value\"");
  EXPECT_EQ(render(true), "true");
  EXPECT_EQ(render(false), "false");
  EXPECT_EQ(render(int64_t{-42}), "-42");
  EXPECT_EQ(render(std::numeric_limits<int64_t>::min()), "-9223372036854775808");
  EXPECT_EQ(render(std::numeric_limits<uint64_t>::max()), "18446744073709551615");
  EXPECT_EQ(render(1.5), "1.5");
  EXPECT_EQ(render(std::numeric_limits<double>::quiet_NaN()), "\"NaN\"");
  EXPECT_EQ(render(-std::numeric_limits<double>::infinity()), "\"-Infinity\"");
}

TEST(ValueRendering, TextLikeValuesAreJsonStrings) {
  // Decimal keeps its exact text, as a string.
  EXPECT_EQ(render(Decimal{"-123.4500"}), "\"-123.4500\"");
  EXPECT_EQ(render(Decimal{"NaN"}), "\"NaN\"");
  EXPECT_EQ(render(Decimal{"12345678901234567890.123456789"}), "\"12345678901234567890.123456789\"");
  // Strings are escaped.
  const std::string tricky = "a\"b\\c\nd\x01\xc3\xa9";
  EXPECT_EQ(parsed(tricky).get<std::string>(), tricky);
  // Json documents are carried as strings (io.debezium.data.Json), not embedded.
  const std::string doc = R"({"a":[1,2,{"b":"c"}]})";
  const json j = parsed(Json{doc});
  ASSERT_TRUE(j.is_string());
  EXPECT_EQ(j.get<std::string>(), doc);
}

TEST(ValueRendering, BytesAreBase64) {
  EXPECT_EQ(render(Bytes{std::string("\x00\xff", 2)}), "\"AP8=\"");
  EXPECT_EQ(render(Bytes{"foobar"}), "\"Zm9vYmFy\"");
  EXPECT_EQ(render(Bytes{""}), "\"\"");
}

TEST(ValueRendering, DateTimeAndTimestampAreNumbers) {
  EXPECT_EQ(render(Date{0}), "0");
  EXPECT_EQ(render(Date{19000}), "19000");
  EXPECT_EQ(render(Date{-1}), "-1");
  EXPECT_EQ(render(Date{kDateInfinity}), "2147483647");
  EXPECT_EQ(render(Date{kDateMinusInfinity}), "-2147483648");
  EXPECT_EQ(render(Time{0}), "0");
  EXPECT_EQ(render(Time{-3'600'000'000LL}), "-3600000000");
  EXPECT_EQ(render(Time{838LL * 3'600'000'000LL}), "3016800000000");
  EXPECT_EQ(render(Timestamp{1'700'000'000'123'456LL}), "1700000000123456");
  EXPECT_EQ(render(Timestamp{-1}), "-1");
  EXPECT_EQ(render(Timestamp{kTimestampInfinity}), "9223372036854775807");
  EXPECT_EQ(render(Timestamp{kTimestampMinusInfinity}), "-9223372036854775808");
}

TEST(ValueRendering, Uuid) {
  Uuid u;
  for (size_t i = 0; i < 16; ++i) u.bytes[i] = static_cast<uint8_t>(i * 0x11);
  EXPECT_EQ(render(u), "\"00112233-4455-6677-8899-aabbccddeeff\"");
  Uuid back;
  ASSERT_TRUE(parse_uuid("00112233-4455-6677-8899-AABBCCDDEEFF", back));
  EXPECT_EQ(back, u);
  Uuid bad;
  EXPECT_FALSE(parse_uuid("00112233-4455-6677-8899-aabbccddeeZZ", bad));
  EXPECT_FALSE(parse_uuid("00112233-4455-6677-8899-aabbccddee", bad));
  EXPECT_FALSE(parse_uuid("00112233-4455-6677-8899-aabbccddeeff00", bad));
}

TEST(ValueRendering, ArraysNestAndHoldNulls) {
  const Value v = Array{{int64_t{1}, Null{}, Array{{std::string("x"), Null{}}}, Array{}, Decimal{"1.0"}}};
  EXPECT_EQ(render(v), "[1,null,[\"x\",null],[],\"1.0\"]");
  EXPECT_EQ(render(Array{}), "[]");
  const json j = parsed(Array{{Array{{Array{{int64_t{7}}}}}}});
  EXPECT_EQ(j, json::parse("[[[7]]]"));
}

// ---- TimestampTz against independent computations ----

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// ISO-8601 UTC from gmtime_r, with ISO's expanded years outside 0000..9999.
std::string reference_iso(int64_t micros) {
  const int64_t secs = floor_div(micros, 1'000'000);
  int64_t frac = micros % 1'000'000;  // not micros - secs * 1e6: that overflows next to INT64_MIN
  if (frac < 0) frac += 1'000'000;
  const time_t t = static_cast<time_t>(secs);
  struct tm tm {};
  if (gmtime_r(&t, &tm) == nullptr) return "gmtime_r failed";
  const long long year = static_cast<long long>(tm.tm_year) + 1900;
  char ybuf[32];
  if (year < 0)
    std::snprintf(ybuf, sizeof ybuf, "-%04lld", -year);
  else if (year > 9999)
    std::snprintf(ybuf, sizeof ybuf, "+%lld", year);
  else
    std::snprintf(ybuf, sizeof ybuf, "%04lld", year);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s-%02d-%02dT%02d:%02d:%02d", ybuf, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                tm.tm_sec);
  std::string out = buf;
  if (frac != 0) {
    std::snprintf(buf, sizeof buf, ".%06lld", static_cast<long long>(frac));
    out += buf;
  }
  return out + "Z";
}

std::string iso(int64_t micros) {
  std::string out;
  append_iso_timestamp_utc(out, micros);
  return out;
}

bool is_leap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

// Days from 1970-01-01 to January 1st of `year`, one year at a time.
int64_t days_to_new_year(int64_t year) {
  int64_t days = 0;
  for (int64_t y = 1970; y < year; ++y) days += is_leap(y) ? 366 : 365;
  for (int64_t y = year; y < 1970; ++y) days -= is_leap(y) ? 366 : 365;
  return days;
}

constexpr int64_t kMicrosPerDay = 86'400'000'000LL;

TEST(TimestampTz, KnownInstants) {
  EXPECT_EQ(iso(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(iso(1), "1970-01-01T00:00:00.000001Z");
  EXPECT_EQ(iso(-1), "1969-12-31T23:59:59.999999Z");
  EXPECT_EQ(iso(1'500'000), "1970-01-01T00:00:01.500000Z");
  EXPECT_EQ(iso(-1'000'000), "1969-12-31T23:59:59Z");
  EXPECT_EQ(iso(951'782'400'000'000LL), "2000-02-29T00:00:00Z");  // a leap day of a year divisible by 400
  EXPECT_EQ(iso(days_to_new_year(10000) * kMicrosPerDay), "+10000-01-01T00:00:00Z");
  EXPECT_EQ(iso(days_to_new_year(10000) * kMicrosPerDay - 1), "9999-12-31T23:59:59.999999Z");
  EXPECT_EQ(iso(days_to_new_year(0) * kMicrosPerDay), "0000-01-01T00:00:00Z");
  EXPECT_EQ(iso(days_to_new_year(-1) * kMicrosPerDay + 3'723'000'004LL), "-0001-01-01T01:02:03.000004Z");
  EXPECT_EQ(iso(days_to_new_year(1) * kMicrosPerDay), "0001-01-01T00:00:00Z");
  EXPECT_EQ(iso(kTimestampInfinity), "infinity");
  EXPECT_EQ(iso(kTimestampMinusInfinity), "-infinity");
}

TEST(TimestampTz, MatchesGmtimeOnRandomInstants) {
  std::mt19937_64 rng(42);
  // Ranges: around the epoch, the years 0001..9999, and the whole int64 microsecond range.
  std::uniform_int_distribution<int64_t> near(-10 * 365 * kMicrosPerDay, 60 * 365 * kMicrosPerDay);
  std::uniform_int_distribution<int64_t> common(days_to_new_year(1) * kMicrosPerDay, days_to_new_year(10000) * kMicrosPerDay - 1);
  std::uniform_int_distribution<int64_t> any(kTimestampMinusInfinity + 1, kTimestampInfinity - 1);
  std::uniform_int_distribution<int> pick(0, 3);
  for (int i = 0; i < 50000; ++i) {
    int64_t micros;
    switch (pick(rng)) {
      case 0: micros = near(rng); break;
      case 1: micros = common(rng); break;
      case 2: micros = any(rng); break;
      default: micros = floor_div(common(rng), 1'000'000) * 1'000'000; break;  // whole seconds: no fraction
    }
    ASSERT_EQ(iso(micros), reference_iso(micros)) << micros;
  }
}

// The instants right next to the sentinels are ordinary values and must render without arithmetic
// overflow (UBSan reports signed overflow in an instrumented build).
TEST(TimestampTz, ExtremeInstantsNextToTheSentinels) {
  EXPECT_EQ(iso(kTimestampInfinity - 1), reference_iso(kTimestampInfinity - 1));
  EXPECT_EQ(iso(kTimestampInfinity - 1), "+294247-01-10T04:00:54.775806Z");
  EXPECT_EQ(iso(kTimestampMinusInfinity + 1), reference_iso(kTimestampMinusInfinity + 1));
  EXPECT_EQ(iso(kTimestampMinusInfinity + 1), "-290308-12-21T19:59:05.224193Z");
  for (int64_t step = 0; step < 86'400'000'000LL; step += 3'599'999'999LL) {  // the whole first day
    ASSERT_EQ(iso(kTimestampMinusInfinity + 1 + step), reference_iso(kTimestampMinusInfinity + 1 + step)) << step;
  }
}

TEST(TimestampTz, RenderedAsJsonString) {
  EXPECT_EQ(render(TimestampTz{0}), "\"1970-01-01T00:00:00Z\"");
  EXPECT_EQ(render(TimestampTz{kTimestampInfinity}), "\"infinity\"");
  EXPECT_EQ(render(TimestampTz{kTimestampMinusInfinity}), "\"-infinity\"");
}

// ---- Interval ----

std::string interval(int32_t months, int32_t days, int64_t micros) {
  std::string out;
  append_iso_interval(out, Interval{months, days, micros});
  return out;
}

constexpr int64_t kHour = 3'600'000'000LL;
constexpr int64_t kMinute = 60'000'000LL;
constexpr int64_t kSecond = 1'000'000LL;

TEST(IntervalRendering, EveryComponentWithItsOwnSign) {
  EXPECT_EQ(interval(0, 0, 0), "P0Y0M0DT0H0M0S");
  EXPECT_EQ(interval(14, 3, kHour + 2 * kMinute + 3 * kSecond), "P1Y2M3DT1H2M3S");
  EXPECT_EQ(interval(-14, -3, -(kHour + 2 * kMinute + 3 * kSecond)), "P-1Y-2M-3DT-1H-2M-3S");
  // Fields are independent: a month is not 30 days, 100 hours are not 4 days.
  EXPECT_EQ(interval(1, -1, 90 * kSecond), "P0Y1M-1DT0H1M30S");
  EXPECT_EQ(interval(0, 0, 100 * kHour), "P0Y0M0DT100H0M0S");
  EXPECT_EQ(interval(0, 0, -30 * kSecond), "P0Y0M0DT0H0M-30S");
  EXPECT_EQ(interval(12, 0, 0), "P1Y0M0DT0H0M0S");
  EXPECT_EQ(interval(-1, 0, 0), "P0Y-1M0DT0H0M0S");
  EXPECT_EQ(render(Interval{14, 3, 0}), "\"P1Y2M3DT0H0M0S\"");
}

TEST(IntervalRendering, ExtremeFieldsDoNotOverflow) {
  const std::string s = interval(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::min(),
                                 std::numeric_limits<int64_t>::min());
  // -2147483648 months = -178956970 years -8 months; INT64_MIN us = -2562047788 h -0 min -54.775808 s
  EXPECT_EQ(s.substr(0, s.find('T')), "P-178956970Y-8M-2147483648D");
  EXPECT_NE(s.find("T-2562047788H0M-54."), std::string::npos) << s;
}

// Debezium's io.debezium.time.Interval.toIsoString renders seconds with
// BigDecimal.stripTrailingZeros().toPlainString(): 3.5 seconds is "3.5S", not "3.500000S".
TEST(IntervalRendering, FractionalSecondsAsDebeziumWritesThem) {
  EXPECT_EQ(interval(0, 0, 3'500'000), "P0Y0M0DT0H0M3.5S");
  EXPECT_EQ(interval(0, 0, 1'230'000), "P0Y0M0DT0H0M1.23S");
  EXPECT_EQ(interval(0, 0, 1), "P0Y0M0DT0H0M0.000001S");
  EXPECT_EQ(interval(0, 0, -500'000), "P0Y0M0DT0H0M-0.5S");
  EXPECT_EQ(interval(-14, -3, -(kHour + 2 * kMinute + 3 * kSecond + 250'000)), "P-1Y-2M-3DT-1H-2M-3.25S");
}

// ---- The envelope ----

TableSchemaPtr make_table(std::string db, std::string schema, std::string table, std::vector<std::string> columns,
                          std::vector<size_t> key) {
  auto t = std::make_shared<TableSchema>();
  t->id = TableId{std::move(db), std::move(schema), std::move(table)};
  t->columns = std::move(columns);
  t->key_columns = std::move(key);
  return t;
}

json envelope(EnvelopeSerializer& s, const ChangeEvent& e, int64_t now_ms) {
  std::string out;
  s.write_value(e, out, now_ms);
  return json::parse(out);
}

TEST(Envelope, PostgresUpdate) {
  const auto table = make_table("shop", "public", "orders", {"id", "we\"ird", "note"}, {0});
  ChangeEvent e;
  e.table = table;
  e.op = Op::Update;
  e.before = Row{int64_t{7}, std::string("old"), Null{}};
  e.after = Row{int64_t{7}, std::string("new"), Unavailable{}};
  e.source.connector = ConnectorKind::Postgres;
  e.source.commit_ts_ms = 1'700'000'000'000;
  e.source.txid = 555;
  e.source.lsn = 0x16B3748;
  EnvelopeSerializer s(EnvelopeOptions{"pipeline-1"});
  const json j = envelope(s, e, 1'700'000'000'999);

  EXPECT_EQ(j.at("before"), json::parse(R"({"id":7,"we\"ird":"old","note":null})"));
  EXPECT_EQ(j.at("after"), json::parse(R"({"id":7,"we\"ird":"new","note":"__debezium_unavailable_value"})"));
  EXPECT_EQ(j.at("op"), "u");
  EXPECT_EQ(j.at("ts_ms"), 1'700'000'000'999);
  EXPECT_TRUE(j.at("transaction").is_null());
  const json& src = j.at("source");
  EXPECT_EQ(src.at("version"), std::string(kVersion));
  EXPECT_EQ(src.at("connector"), "postgresql");
  EXPECT_EQ(src.at("name"), "pipeline-1");
  EXPECT_EQ(src.at("ts_ms"), 1'700'000'000'000);
  EXPECT_EQ(src.at("snapshot"), "false");
  EXPECT_EQ(src.at("db"), "shop");
  EXPECT_EQ(src.at("schema"), "public");
  EXPECT_EQ(src.at("table"), "orders");
  EXPECT_EQ(src.at("txId"), 555);
  EXPECT_EQ(src.at("lsn"), 0x16B3748);
  EXPECT_TRUE(src.at("commit_lsn").is_null()) << "not set on this event";
  EXPECT_EQ(j.size(), 6u) << j.dump();  // before, after, source, op, ts_ms, transaction

  // Field order, as docs/event-format.md lists it.
  std::string text;
  s.write_value(e, text, 1);
  const auto ordered = nlohmann::ordered_json::parse(text);
  std::vector<std::string> keys;
  for (auto it = ordered.begin(); it != ordered.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"before", "after", "source", "op", "ts_ms", "transaction"}));
  std::vector<std::string> source_keys;
  for (auto it = ordered["source"].begin(); it != ordered["source"].end(); ++it) source_keys.push_back(it.key());
  EXPECT_EQ(source_keys, (std::vector<std::string>{"version", "connector", "name", "ts_ms", "snapshot", "db", "schema",
                                                   "table", "txId", "lsn", "commit_lsn"}));
}

TEST(Envelope, ShortImageLeavesOutTrailingColumns) {
  ChangeEvent e;
  e.table = make_table("d", "s", "t", {"a", "b", "c"}, {0});
  e.op = Op::Create;
  e.after = Row{int64_t{1}};
  e.source.connector = ConnectorKind::Postgres;
  EnvelopeSerializer s(EnvelopeOptions{"n"});
  EXPECT_EQ(envelope(s, e, 0).at("after"), json::parse(R"({"a":1})"));
}

TEST(Envelope, PostgresWithoutTxIdOrLsnHasNulls) {
  ChangeEvent e;
  e.table = make_table("d", "s", "t", {"a"}, {});
  e.op = Op::Create;
  e.after = Row{int64_t{1}};
  e.source.connector = ConnectorKind::Postgres;
  EnvelopeSerializer s(EnvelopeOptions{"n"});
  const json j = envelope(s, e, 0);
  EXPECT_TRUE(j.at("source").at("txId").is_null());
  EXPECT_TRUE(j.at("source").at("lsn").is_null());
  EXPECT_TRUE(j.at("source").at("commit_lsn").is_null());
  EXPECT_TRUE(j.at("before").is_null());
  EXPECT_EQ(j.at("after"), json::parse(R"({"a":1})"));
}

TEST(Envelope, MySqlDelete) {
  ChangeEvent e;
  e.table = make_table("inventory", "", "customers", {"id", "email"}, {0});
  e.op = Op::Delete;
  e.before = Row{int64_t{1001}, std::string("a@b.c")};
  e.source.connector = ConnectorKind::MySql;
  e.source.commit_ts_ms = 123;
  e.source.server_id = 223344;
  e.source.gtid = "3E11FA47-71CA-11E1-9E33-C80AA9429562:23";
  e.source.file = "mysql-bin.000003";
  e.source.pos = 154;
  e.source.row = 2;
  e.snapshot = SnapshotMarker::Last;
  EnvelopeSerializer s(EnvelopeOptions{"dbserver1"});
  const json j = envelope(s, e, 456);
  EXPECT_EQ(j.at("before"), json::parse(R"({"id":1001,"email":"a@b.c"})"));
  EXPECT_TRUE(j.at("after").is_null());
  EXPECT_EQ(j.at("op"), "d");
  const json& src = j.at("source");
  EXPECT_EQ(src.at("connector"), "mysql");
  EXPECT_EQ(src.at("name"), "dbserver1");
  EXPECT_EQ(src.at("snapshot"), "last");
  EXPECT_EQ(src.at("db"), "inventory");
  EXPECT_FALSE(src.contains("schema")) << src.dump();
  EXPECT_EQ(src.at("table"), "customers");
  EXPECT_EQ(src.at("server_id"), 223344);
  EXPECT_EQ(src.at("gtid"), "3E11FA47-71CA-11E1-9E33-C80AA9429562:23");
  EXPECT_EQ(src.at("file"), "mysql-bin.000003");
  EXPECT_EQ(src.at("pos"), 154);
  EXPECT_EQ(src.at("row"), 2);
  EXPECT_EQ(src.at("ts_ms"), 123);

  e.source.gtid.clear();
  EXPECT_TRUE(envelope(s, e, 456).at("source").at("gtid").is_null());
}

TEST(Envelope, GeneratorSourceAndSnapshotMarkers) {
  ChangeEvent e;
  e.table = make_table("generator", "", "t0", {"id"}, {0});
  e.op = Op::Read;
  e.after = Row{int64_t{3}};
  e.source.connector = ConnectorKind::Generator;
  e.source.sequence = 99;
  EnvelopeSerializer s(EnvelopeOptions{"gen"});
  json j = envelope(s, e, 1);
  EXPECT_EQ(j.at("op"), "r");
  EXPECT_EQ(j.at("source").at("connector"), "generator");
  EXPECT_EQ(j.at("source").at("sequence"), 99);
  EXPECT_EQ(j.at("source").at("db"), "generator");
  EXPECT_EQ(j.at("source").at("table"), "t0");
  EXPECT_FALSE(j.at("source").contains("schema"));
  e.source.sequence.reset();
  EXPECT_TRUE(envelope(s, e, 1).at("source").at("sequence").is_null());

  for (const auto& [marker, text] : std::vector<std::pair<SnapshotMarker, std::string>>{
           {SnapshotMarker::No, "false"}, {SnapshotMarker::Yes, "true"}, {SnapshotMarker::Last, "last"},
           {SnapshotMarker::Incremental, "incremental"}}) {
    e.snapshot = marker;
    EXPECT_EQ(envelope(s, e, 1).at("source").at("snapshot"), text);
  }
}

TEST(Envelope, TruncateHasNoImages) {
  ChangeEvent e;
  e.table = make_table("d", "s", "t", {"a"}, {0});
  e.op = Op::Truncate;
  e.source.connector = ConnectorKind::Postgres;
  EnvelopeSerializer s(EnvelopeOptions{"n"});
  const json j = envelope(s, e, 5);
  EXPECT_EQ(j.at("op"), "t");
  EXPECT_TRUE(j.at("before").is_null());
  EXPECT_TRUE(j.at("after").is_null());
}

TEST(Envelope, ExplicitOpAndImagesKeepTheEventsSource) {
  ChangeEvent e;
  e.table = make_table("d", "s", "t", {"id", "v"}, {0});
  e.op = Op::Update;
  e.before = Row{int64_t{1}, std::string("a")};
  e.after = Row{int64_t{2}, std::string("b")};
  e.source.connector = ConnectorKind::Postgres;
  e.source.lsn = 77;
  EnvelopeSerializer s(EnvelopeOptions{"n"});
  std::string out;
  s.write_value(e, Op::Delete, &*e.before, nullptr, out, 9);
  const json j = json::parse(out);
  EXPECT_EQ(j.at("op"), "d");
  EXPECT_EQ(j.at("before"), json::parse(R"({"id":1,"v":"a"})"));
  EXPECT_TRUE(j.at("after").is_null());
  EXPECT_EQ(j.at("source").at("lsn"), 77);
}

TEST(Envelope, EveryValueTypeInARowParses) {
  Uuid u;
  u.bytes.fill(0xab);
  const std::vector<std::string> columns = {"null", "unavail", "b", "i", "u", "d", "dec", "s", "bytes", "date",
                                            "time", "ts", "tstz", "iv", "json", "uuid", "arr"};
  ChangeEvent e;
  e.table = make_table("d", "s", "all_types", columns, {3});
  e.op = Op::Create;
  e.after = Row{Null{}, Unavailable{}, true, int64_t{-5}, uint64_t{5}, 2.5, Decimal{"1.10"}, std::string("x\ty"),
                Bytes{"foo"}, Date{-3}, Time{4}, Timestamp{5}, TimestampTz{-1}, Interval{1, 2, 3'000'000},
                Json{"{\"k\":null}"}, u, Array{{int64_t{1}, Null{}}}};
  e.source.connector = ConnectorKind::Postgres;
  EnvelopeSerializer s(EnvelopeOptions{"n"});
  const json j = envelope(s, e, 0);
  const json expected = json::parse(R"({
    "null": null, "unavail": "__debezium_unavailable_value", "b": true, "i": -5, "u": 5, "d": 2.5,
    "dec": "1.10", "s": "x\ty", "bytes": "Zm9v", "date": -3, "time": 4, "ts": 5,
    "tstz": "1969-12-31T23:59:59.999999Z", "iv": "P0Y1M2DT0H0M3S", "json": "{\"k\":null}",
    "uuid": "abababab-abab-abab-abab-abababababab", "arr": [1, null]})");
  EXPECT_EQ(j.at("after"), expected);
}

TEST(Envelope, SerializerSwitchesBetweenTables) {
  const auto a = make_table("db_a", "sa", "ta", {"x"}, {0});
  const auto b = make_table("db_b", "sb", "tb", {"y"}, {0});
  EnvelopeSerializer s(EnvelopeOptions{"n"});
  for (int i = 0; i < 6; ++i) {
    const bool use_a = i % 3 != 1;
    ChangeEvent e;
    e.table = use_a ? a : b;
    e.op = Op::Create;
    e.after = Row{int64_t{i}};
    e.source.connector = ConnectorKind::Postgres;
    const json j = envelope(s, e, 0);
    EXPECT_EQ(j.at("source").at("db"), use_a ? "db_a" : "db_b");
    EXPECT_EQ(j.at("source").at("schema"), use_a ? "sa" : "sb");
    EXPECT_EQ(j.at("source").at("table"), use_a ? "ta" : "tb");
    EXPECT_EQ(j.at("after").at(use_a ? "x" : "y"), i);
  }
}

// ---- Keys ----

TEST(Keys, SingleColumnKey) {
  const auto t = make_table("d", "s", "t", {"id", "name"}, {0});
  EnvelopeSerializer s(EnvelopeOptions{"n"});
  std::string out;
  ASSERT_TRUE(s.write_key(*t, Row{int64_t{42}, std::string("x")}, out));
  EXPECT_EQ(out, "{\"id\":42}");
}

TEST(Keys, CompositeKeyInKeyOrder) {
  const auto t = make_table("d", "s", "t", {"a", "b", "c"}, {2, 0});
  EnvelopeSerializer s(EnvelopeOptions{"n"});
  std::string out = "K=";
  ASSERT_TRUE(s.write_key(*t, Row{int64_t{1}, std::string("ignored"), std::string("x\"y")}, out));
  EXPECT_EQ(out, "K={\"c\":\"x\\\"y\",\"a\":1}");
  const auto ordered = nlohmann::ordered_json::parse(out.substr(2));
  ASSERT_EQ(ordered.size(), 2u);
  EXPECT_EQ(ordered.begin().key(), "c");
}

TEST(Keys, TableWithoutKeyWritesNothing) {
  const auto t = make_table("d", "s", "t", {"a"}, {});
  EnvelopeSerializer s(EnvelopeOptions{"n"});
  std::string out = "unchanged";
  EXPECT_FALSE(s.write_key(*t, Row{int64_t{1}}, out));
  EXPECT_EQ(out, "unchanged");
}

TEST(Keys, KeyColumnMissingFromImageIsUnavailable) {
  const auto t = make_table("d", "s", "t", {"a", "b"}, {1});
  EnvelopeSerializer s(EnvelopeOptions{"n"});
  std::string out;
  ASSERT_TRUE(s.write_key(*t, Row{int64_t{1}}, out));
  EXPECT_EQ(json::parse(out), json::parse(R"({"b":"__debezium_unavailable_value"})"));
}

}  // namespace
}  // namespace tidemark
