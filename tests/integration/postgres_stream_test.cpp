// The PostgreSQL source end to end, what only PostgreSQL has: every column type through to Kafka, and a slow
// or absent Kafka against a short wal_sender_timeout (the scenarios both databases share, restarts, large
// transactions and schema changes included, are in change_stream_test.cpp). Everything is checked on what
// the tests' own consumer reads back.

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "dev_broker_runner.hpp"
#include "pg_fixture.hpp"

namespace tidemark::test {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

std::string q1(const PgTarget& pg, const std::string& sql) {
  const auto rows = pg_query(pg, sql);
  if (rows.empty()) throw std::runtime_error("no row: " + sql);
  return rows[0];
}

// Finds "\"name\":<number>" in raw JSON text and returns the number's text.
std::string raw_number(const std::string& text, const std::string& name) {
  const std::string needle = "\"" + name + "\":";
  const auto at = text.find(needle);
  if (at == std::string::npos) return "<missing>";
  const auto start = at + needle.size();
  const auto end = text.find_first_of(",}", start);
  return text.substr(start, end - start);
}

// ---------------------------------------------------------------------------------------------------------------
// 1. Every type, special values included, compared with PostgreSQL's own answers.

TEST(PostgresStream, EveryTypeRoundTripsWithSpecialValuesAndNulls) {
  PgFixture f;
  const std::string t = f.table("pgtypes");
  const std::string mood = "mood_" + f.suffix;
  const std::string posint = "posint_" + f.suffix;
  pg_exec(f.pg, "CREATE TYPE " + mood + " AS ENUM ('sad', 'ok', 'happy \"quoted\"')");
  pg_exec(f.pg, "CREATE DOMAIN " + posint + " AS int CHECK (VALUE > 0)");
  pg_exec(f.pg, "CREATE TABLE " + t + " (id int PRIMARY KEY, i2 int2, i4 int4, i8 int8, num numeric, f4 float4, f8 float8, "
                "b bool, tx text, vc varchar(50), ch char(5), nm name, by bytea, d date, ts timestamp, tstz timestamptz, "
                "tm time, ttz timetz, iv interval, u uuid, j json, jb jsonb, ia int[], ta text[], en " + mood + ", "
                "dom " + posint + ", ip inet, cidr_c cidr, mac macaddr, mon money, bt bit(4), vb varbit, o oid, x xml)");
  create_topic(f.bootstrap, f.topic(t), 2);
  f.write_config({t});
  ASSERT_TRUE(f.start_and_wait_for_slot()) << f.daemon.stderr_text();

  const std::string cols = "(id, i2, i4, i8, num, f4, f8, b, tx, vc, ch, nm, by, d, ts, tstz, tm, ttz, iv, u, j, jb, ia, ta, "
                           "en, dom, ip, cidr_c, mac, mon, bt, vb, o, x)";
  // Row 1: maxima, positive specials, 4-byte UTF-8.
  pg_exec(f.pg, "INSERT INTO " + t + " " + cols + " VALUES (1, 32767, 2147483647, 9223372036854775807, "
                "'1234567890123456789012345678901234567890.0123456789', 'NaN', 'Infinity', true, "
                "'', 'emoji 😀 clef 𝄞 \"q\" \\ back', '😀', 'n\"a\\me 𝄞', '\\x00ff41', 'infinity', 'infinity', 'infinity', "
                "'24:00:00', '12:00:00+05:30', '-1 year -2 mons +3 days -04:05:06.789', "
                "'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', '{\"a\": [1, 2],   \"b\": \"x\"}', '{\"b\": 1,   \"a\": [true, null]}', "
                "'{1,NULL,-3}', ARRAY['a,b', '{c}', NULL, 'NULL', '\"q\"', 'back\\slash', ''], "
                "'happy \"quoted\"', 42, '192.168.1.5/24', '10.0.0.0/8', '08:00:2b:01:02:03', '-1234.56', B'1010', B'1', "
                "4294967295, '<a x=\"1\">t&amp;é</a>')");
  // Row 2: minima, negative specials, BC dates, control characters, nested arrays.
  pg_exec(f.pg, "INSERT INTO " + t + " " + cols + " VALUES (2, -32768, -2147483648, -9223372036854775808, "
                "'-Infinity', '-Infinity', '-0', false, "
                "E'He said \"hi\" \\\\ and\\ttab\\nnewline\\x01', '', '', '', '\\x', '0044-03-15 BC', "
                "'0044-03-15 12:00:00.5 BC', '-infinity', '00:00:00', '23:00:00-05', '-00:00:01', "
                "'00000000-0000-0000-0000-000000000000', '[]', '\"s\"', '{}', '{{a,b},{NULL,\"c,d\"}}', 'sad', 1, "
                "'::1', '2001:db8::/32', 'ff:ff:ff:ff:ff:ff', '0', B'0000', B'', 0, '')");
  // Row 3: NULL everywhere.
  pg_exec(f.pg, "INSERT INTO " + t + " (id) VALUES (3)");
  // Row 4: other extremes.
  pg_exec(f.pg, "INSERT INTO " + t + " " + cols + " VALUES (4, 0, 0, 0, 'Infinity', '0.1', '5e-324', true, "
                "repeat('x', 10000), 'v', 'abcde', repeat('n', 63), decode(repeat('ff', 100), 'hex'), '5874897-12-31', "
                "'4714-11-24 00:00:00 BC', '294276-12-31 23:59:59.999999+00', '23:59:59.999999', '00:00:00.5+15:59:59', "
                "'0 seconds', 'ffffffff-ffff-ffff-ffff-ffffffffffff', 'null', '[1.50, 1e2]', "
                "ARRAY[NULL]::int[], ARRAY[NULL, NULL]::text[], 'ok', 2147483647, '0.0.0.0/0', '0.0.0.0/0', "
                "'00:00:00:00:00:00', '92233720368547758.07', B'1111', B'10101010101', 1, NULL)");
  // Row 5: more floats, numerics and times.
  pg_exec(f.pg, "INSERT INTO " + t + " (id, num, f4, f8, ts, tstz, d, tm, iv) VALUES (5, "
                "'-0.0000000000000000000000000000000000000001', '3.4028235e+38', '1.7976931348623157e+308', "
                "'2024-02-29 23:59:59.999999', '2024-01-01 00:00:00.5+05:30', '2000-02-29', '12:34:56.789', "
                "'1 year 2 mons 3 days 04:05:06.78')");
  // Row 6: NaN numeric, float4 denormal and negative zero as float4, 1 BC timestamptz.
  pg_exec(f.pg, "INSERT INTO " + t + " (id, num, f4, f8, tstz, d) VALUES (6, 'NaN', '1e-45', 'NaN', "
                "'0001-12-31 23:59:59+00 BC', '0001-01-01 BC')");
  constexpr size_t kRows = 6;

  // The expected "after" images, from PostgreSQL's own answers where it can give them.
  auto oracle = [&](int id, const std::string& expr) { return q1(f.pg, "SELECT (" + expr + ")::text FROM " + t + " WHERE id = " + std::to_string(id)); };
  auto epoch_us = [&](int id, const std::string& col) {
    return json::parse(oracle(id, "(extract(epoch from " + col + ") * 1000000)::numeric(30,0)"));
  };
  auto days = [&](int id) { return json::parse(oracle(id, "d - '1970-01-01'::date")); };
  auto time_us = [&](int id) { return json::parse(oracle(id, "(extract(epoch from tm) * 1000000)::numeric(20,0)")); };
  auto text_of = [&](int id, const std::string& col) { return json(oracle(id, col)); };
  auto b64 = [&](int id) {
    return json(oracle(id, "translate(encode(by, 'base64'), E'\\n', '')"));
  };

  std::map<int, json> expected;
  expected[1] = {
      {"id", 1}, {"i2", 32767}, {"i4", 2147483647}, {"i8", 9223372036854775807LL},
      {"num", "1234567890123456789012345678901234567890.0123456789"}, {"f4", "NaN"}, {"f8", "Infinity"}, {"b", true},
      {"tx", ""}, {"vc", "emoji 😀 clef 𝄞 \"q\" \\ back"}, {"ch", "😀    "}, {"nm", "n\"a\\me 𝄞"}, {"by", "AP9B"},
      {"d", 2147483647}, {"ts", 9223372036854775807LL}, {"tstz", "infinity"}, {"tm", 86400000000LL},
      {"ttz", "06:30:00Z"}, {"iv", "P-1Y-2M3DT-4H-5M-6.789S"}, {"u", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
      {"j", "{\"a\": [1, 2],   \"b\": \"x\"}"}, {"jb", text_of(1, "jb")}, {"ia", json::parse("[1,null,-3]")},
      {"ta", json::parse(R"(["a,b","{c}",null,"NULL","\"q\"","back\\slash",""])")}, {"en", "happy \"quoted\""},
      {"dom", 42}, {"ip", text_of(1, "ip")}, {"cidr_c", text_of(1, "cidr_c")}, {"mac", text_of(1, "mac")},
      {"mon", text_of(1, "mon::numeric")}, {"bt", "1010"}, {"vb", "1"}, {"o", 4294967295LL},
      {"x", text_of(1, "x")}};
  expected[2] = {
      {"id", 2}, {"i2", -32768}, {"i4", -2147483648LL}, {"i8", json::parse("-9223372036854775808")},
      {"num", "-Infinity"}, {"f4", "-Infinity"}, {"f8", 0.0 /* sign checked on the raw text */}, {"b", false},
      {"tx", "He said \"hi\" \\ and\ttab\nnewline\x01"}, {"vc", ""}, {"ch", "     "}, {"nm", ""}, {"by", ""},
      {"d", days(2)}, {"ts", epoch_us(2, "ts")}, {"tstz", "-infinity"}, {"tm", 0}, {"ttz", "04:00:00Z"},
      {"iv", "P0Y0M0DT0H0M-1S"}, {"u", "00000000-0000-0000-0000-000000000000"}, {"j", "[]"}, {"jb", "\"s\""},
      {"ia", json::array()}, {"ta", json::parse(R"([["a","b"],[null,"c,d"]])")}, {"en", "sad"}, {"dom", 1},
      {"ip", "::1"}, {"cidr_c", "2001:db8::/32"}, {"mac", "ff:ff:ff:ff:ff:ff"}, {"mon", text_of(2, "mon::numeric")},
      {"bt", "0000"}, {"vb", ""}, {"o", 0}, {"x", ""}};
  expected[3] = json::object({{"id", 3}});
  for (const char* c : {"i2", "i4", "i8", "num", "f4", "f8", "b", "tx", "vc", "ch", "nm", "by", "d", "ts", "tstz", "tm",
                        "ttz", "iv", "u", "j", "jb", "ia", "ta", "en", "dom", "ip", "cidr_c", "mac", "mon", "bt", "vb",
                        "o", "x"})
    expected[3][c] = nullptr;
  expected[4] = {
      {"id", 4}, {"i2", 0}, {"i4", 0}, {"i8", 0}, {"num", "Infinity"}, {"f4", 0.1}, {"f8", 5e-324}, {"b", true},
      {"tx", std::string(10000, 'x')}, {"vc", "v"}, {"ch", "abcde"}, {"nm", std::string(63, 'n')}, {"by", b64(4)},
      {"d", days(4)}, {"ts", epoch_us(4, "ts")}, {"tstz", "+294276-12-31T23:59:59.999999Z"},
      {"tm", time_us(4)}, {"ttz", "08:00:01.500000Z"}, {"iv", "P0Y0M0DT0H0M0S"},
      {"u", "ffffffff-ffff-ffff-ffff-ffffffffffff"}, {"j", "null"}, {"jb", text_of(4, "jb")},
      {"ia", json::parse("[null]")}, {"ta", json::parse("[null,null]")}, {"en", "ok"}, {"dom", 2147483647},
      {"ip", "0.0.0.0/0"}, {"cidr_c", "0.0.0.0/0"}, {"mac", "00:00:00:00:00:00"},
      {"mon", "92233720368547758.07"}, {"bt", "1111"}, {"vb", "10101010101"}, {"o", 1}, {"x", nullptr}};
  expected[5] = {{"id", 5}, {"num", "-0.0000000000000000000000000000000000000001"}, {"f4", 3.4028235e+38},
                 {"f8", 1.7976931348623157e+308}, {"ts", epoch_us(5, "ts")}, {"tstz", "2023-12-31T18:30:00.500000Z"},
                 {"d", days(5)}, {"tm", time_us(5)}, {"iv", "P1Y2M3DT4H5M6.78S"}};
  expected[6] = {{"id", 6}, {"num", "NaN"}, {"f4", 1e-45}, {"f8", "NaN"}, {"tstz", "0000-12-31T23:59:59Z"},
                 {"d", days(6)}};
  // Independent checks of the hand-written numbers against PostgreSQL.
  EXPECT_EQ(oracle(1, "(mon::numeric)::text"), "-1234.56");
  EXPECT_EQ(oracle(2, "d - '1970-01-01'::date"), "-735160");
  EXPECT_EQ(oracle(5, "extract(epoch from tstz)::text"), "1704047400.500000");  // 2023-12-31T18:30:00.5Z
  EXPECT_EQ(oracle(1, "(ttz AT TIME ZONE 'UTC')::time"), "06:30:00");
  EXPECT_EQ(oracle(4, "(ttz AT TIME ZONE 'UTC')::time"), "08:00:01.5");
  EXPECT_EQ(oracle(2, "(ttz AT TIME ZONE 'UTC')::time"), "04:00:00");
  EXPECT_EQ(oracle(4, "to_char(tstz AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US')"), "294276-12-31 23:59:59.999999");
  EXPECT_EQ(oracle(5, "iv = '1 year 2 mons 3 days 04:05:06.78'::interval"), "true");
  EXPECT_EQ(oracle(6, "extract(year from tstz)"), "-1");  // 1 BC: astronomical year 0, written 0000

  const auto records = f.read_until(f.topic(t), kRows);
  ASSERT_EQ(records.size(), kRows) << f.daemon.stderr_text();
  std::set<int> seen;
  for (const auto& r : records) {
    ASSERT_TRUE(r.value.has_value());
    const json v = json::parse(*r.value);
    ASSERT_EQ(v["op"], "c");
    const int id = v["after"]["id"].get<int>();
    seen.insert(id);
    EXPECT_EQ(*r.key, "{\"id\":" + std::to_string(id) + "}");
    const json& after = v["after"];
    const json& want = expected.at(id);
    // Every column of the table, in table order, NULL where not written.
    std::vector<std::string> names;
    for (auto it = after.begin(); it != after.end(); ++it) names.push_back(it.key());
    EXPECT_EQ(names.size(), 34u) << "row " << id << ": " << after.dump();
    for (auto it = want.begin(); it != want.end(); ++it) {
      ASSERT_TRUE(after.contains(it.key())) << "row " << id << " lacks " << it.key();
      const json& got = after[it.key()];
      if (it.value().is_number_float() && got.is_number()) {
        EXPECT_EQ(got.get<double>(), it.value().get<double>()) << "row " << id << " column " << it.key();
      } else {
        EXPECT_EQ(got, it.value()) << "row " << id << " column " << it.key() << "\n  raw: " << *r.value;
      }
    }
    for (auto it = after.begin(); it != after.end(); ++it)
      if (!want.contains(it.key())) { EXPECT_TRUE(it.value().is_null()) << "row " << id << " column " << it.key(); }
    if (id == 2) { EXPECT_EQ(raw_number(*r.value, "f8"), "-0") << "negative zero keeps its sign"; }
    if (id == 4) { EXPECT_EQ(raw_number(*r.value, "f4"), "0.1") << "float4 0.1 with PostgreSQL's digits"; }
    if (id == 5) { EXPECT_EQ(raw_number(*r.value, "f4"), "3.4028235e+38"); }
  }
  EXPECT_EQ(seen.size(), kRows);
  EXPECT_EQ(f.daemon.stop(SIGTERM), 0) << f.daemon.stderr_text();
  pg_exec(f.pg, "DROP TABLE " + t + "; DROP TYPE " + mood + "; DROP DOMAIN " + posint);
}

// ---------------------------------------------------------------------------------------------------------------
// 4. A slow or absent Kafka must not keep the source from answering the server.

struct WalSenderTimeout {
  PgTarget admin = real_postgres(true);
  explicit WalSenderTimeout(const std::string& value) {
    pg_exec(admin, "ALTER SYSTEM SET wal_sender_timeout = '" + value + "'");
    pg_exec(admin, "SELECT pg_reload_conf()");
  }
  ~WalSenderTimeout() {
    try {
      pg_exec(admin, "ALTER SYSTEM RESET wal_sender_timeout");
      pg_exec(admin, "SELECT pg_reload_conf()");
    } catch (...) {
    }
  }
};

TEST(PostgresStream, SlowOrDownKafkaDoesNotStarveFeedbackUnderShortWalSenderTimeout) {
  PgFixture f;
  const std::string t = f.table("pgslow");
  pg_exec(f.pg, "CREATE TABLE " + t + " (id int PRIMARY KEY, payload text)");
  DevBroker broker({f.topic(t) + ":2"});
  const std::string sink =
      "sink:\n  type: kafka\n  kafka:\n    bootstrap_servers: " + broker.bootstrap() +
      "\n    delivery_timeout_ms: 120000\n    flush_timeout_ms: 10000\n    properties:\n"
      "      queue.buffering.max.messages: \"50\"\n      reconnect.backoff.max.ms: \"200\"\n";
  f.write_config({t}, {.sink_yaml = sink, .extra_yaml = "queue:\n  max_events: 100\n"});
  WalSenderTimeout timeout("3s");
  ASSERT_TRUE(wait_until([&] { return q1(f.pg, "SHOW wal_sender_timeout") == "3s"; }, 10s));
  ASSERT_TRUE(f.start_and_wait_for_slot()) << f.daemon.stderr_text();
  const std::string pid_before = f.walsender_pid();
  ASSERT_FALSE(pid_before.empty());

  std::atomic<int> next_id{0};
  auto write_rows = [&](int batches) {
    for (int b = 0; b < batches; ++b) {
      const int first = next_id.fetch_add(100);
      pg_exec(f.pg, "INSERT INTO " + t + " SELECT g, repeat('p', 200) FROM generate_series(" + std::to_string(first) +
                        ", " + std::to_string(first + 99) + ") g");
    }
  };
  write_rows(5);
  ASSERT_EQ(f.read_until(broker.bootstrap(), f.topic(t), 500).size(), 500u) << f.daemon.stderr_text();

  // Phase 1: every response 2 s late, for 10 s, while 3000 rows come in.
  broker.command("rtt all 2000");
  write_rows(30);
  std::this_thread::sleep_for(10s);
  // Phase 2: the broker gone for 12 s (four wal_sender_timeouts), while 3000 more rows come in.
  broker.command("down all");
  write_rows(30);
  std::this_thread::sleep_for(12s);
  const std::string pid_during = f.walsender_pid();
  broker.command("up all");
  broker.command("rtt all 0");

  const int total = next_id.load();
  std::vector<ConsumedRecord> records;
  std::set<int> ids;
  wait_until([&] {
    records = consume_all(broker.bootstrap(), f.topic(t));
    ids.clear();
    for (const auto& r : records) ids.insert(json::parse(*r.value)["after"]["id"].get<int>());
    return ids.size() == static_cast<size_t>(total);
  }, 120s);
  const std::string err = f.daemon.stderr_text();
  EXPECT_EQ(ids.size(), static_cast<size_t>(total)) << err;
  EXPECT_EQ(ids.empty() ? -1 : *ids.rbegin(), total - 1);
  EXPECT_EQ(err.find("reconnecting"), std::string::npos) << "the replication connection was dropped:\n" << err;
  EXPECT_EQ(pid_during, pid_before) << "the walsender changed during the outage";
  EXPECT_EQ(f.walsender_pid(), pid_before) << "the walsender changed after the outage";
  std::cout << total << " rows, " << records.size() << " records (the mock broker may keep retried duplicates)\n";
  EXPECT_EQ(f.daemon.stop(SIGTERM), 0) << err;
}

}  // namespace
}  // namespace tidemark::test
