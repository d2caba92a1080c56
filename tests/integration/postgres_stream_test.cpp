// The PostgreSQL source end to end, the harder cases: every column type through to Kafka, schema changes
// mid-stream, a PostgreSQL restart, a slow or absent Kafka against a short wal_sender_timeout, and one
// transaction of 300k rows. Everything is checked on what the tests' own consumer reads back.

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

uint64_t parse_lsn_text(const std::string& text) {
  const auto slash = text.find('/');
  if (slash == std::string::npos) return 0;
  return (std::stoull(text.substr(0, slash), nullptr, 16) << 32) | std::stoull(text.substr(slash + 1), nullptr, 16);
}

// "pg:0/16B3748" from the state file as an integer LSN; 0 when there is none.
uint64_t state_lsn(const DaemonRunner& daemon) {
  const auto doc = json::parse(read_file(daemon.state_path()), nullptr, false);
  if (doc.is_discarded() || !doc.contains("position") || !doc["position"].is_string()) return 0;
  return parse_lsn_text(doc["position"].get<std::string>().substr(3));
}

long vm_kib(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  return -1;
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
// 2. ALTER TABLE mid-stream: each row carries the columns of the table when it was written.

TEST(PostgresStream, AddAndDropColumnMidStreamFollowTheRelationMessages) {
  PgFixture f;
  const std::string t = f.table("pgalter");
  pg_exec(f.pg, "CREATE TABLE " + t + " (id int PRIMARY KEY, a text)");
  create_topic(f.bootstrap, f.topic(t), 1);  // one partition: delivery order is log order
  f.write_config({t});
  ASSERT_TRUE(f.start_and_wait_for_slot()) << f.daemon.stderr_text();

  pg_exec(f.pg, "INSERT INTO " + t + " VALUES (1, 'one'), (2, 'two')");
  pg_exec(f.pg, "ALTER TABLE " + t + " ADD COLUMN b int DEFAULT 7");
  pg_exec(f.pg, "INSERT INTO " + t + " VALUES (3, 'three', 30)");
  pg_exec(f.pg, "UPDATE " + t + " SET a = 'uno' WHERE id = 1");  // the stored row predates b: its default
  pg_exec(f.pg, "ALTER TABLE " + t + " DROP COLUMN a");
  pg_exec(f.pg, "INSERT INTO " + t + " VALUES (4, 40)");
  // Inside one transaction: a change, the ALTER, a change.
  pg_exec(f.pg, "BEGIN; INSERT INTO " + t + " VALUES (5, 50); ALTER TABLE " + t + " ADD COLUMN c text; "
                "INSERT INTO " + t + " VALUES (6, 60, 'six'); COMMIT;");
  pg_exec(f.pg, "ALTER TABLE " + t + " DROP COLUMN b; UPDATE " + t + " SET c = 'seven' WHERE id = 6");
  pg_exec(f.pg, "DELETE FROM " + t + " WHERE id = 6");

  const std::vector<json> want = {
      json::parse(R"({"op":"c","after":{"id":1,"a":"one"}})"),
      json::parse(R"({"op":"c","after":{"id":2,"a":"two"}})"),
      json::parse(R"({"op":"c","after":{"id":3,"a":"three","b":30}})"),
      json::parse(R"({"op":"u","after":{"id":1,"a":"uno","b":7}})"),
      json::parse(R"({"op":"c","after":{"id":4,"b":40}})"),
      json::parse(R"({"op":"c","after":{"id":5,"b":50}})"),
      json::parse(R"({"op":"c","after":{"id":6,"b":60,"c":"six"}})"),
      json::parse(R"({"op":"u","after":{"id":6,"c":"seven"}})"),
      json::parse(R"({"op":"d","before":{"id":6,"c":null}})"),
  };
  const auto records = f.read_until(f.topic(t), want.size() + 1);  // + the delete's tombstone
  ASSERT_EQ(records.size(), want.size() + 1) << f.daemon.stderr_text();
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_TRUE(records[i].value.has_value()) << i;
    const json v = json::parse(*records[i].value);
    EXPECT_EQ(v["op"], want[i]["op"]) << i;
    const char* image = want[i]["op"] == "d" ? "before" : "after";
    // Same columns in the same order, same values.
    EXPECT_EQ(v[image].dump(), want[i][image].dump()) << "record " << i << ": " << *records[i].value;
  }
  EXPECT_FALSE(records.back().value.has_value());
  EXPECT_EQ(f.daemon.stop(SIGTERM), 0) << f.daemon.stderr_text();
}

// ---------------------------------------------------------------------------------------------------------------
// 3. PostgreSQL restarted under a writer: reconnect with backoff, nothing lost, per-key order kept.

TEST(PostgresStream, PostgresRestartMidStreamLosesNothingAndKeepsOrderPerKey) {
  PgFixture f;
  const std::string t = f.table("pgrestart");
  const std::string side = f.table("pgrestart_side");  // another application's table, not captured
  pg_exec(f.pg, "CREATE TABLE " + t + " (id int PRIMARY KEY, version int NOT NULL)");
  pg_exec(f.pg, "CREATE TABLE " + side + " (id serial PRIMARY KEY, note text)");
  create_topic(f.bootstrap, f.topic(t), 3);
  f.write_config({t});
  ASSERT_TRUE(f.start_and_wait_for_slot()) << f.daemon.stderr_text();

  constexpr int kKeys = 50, kVersions = 60;
  std::atomic<int> progress{0}, failures{0};
  std::atomic<bool> hold{false}, paused{false};
  std::thread writer([&] {
    for (int v = 0; v < kVersions; ++v) {
      for (int batch = 0; batch < kKeys; batch += 10) {
        while (hold) {
          paused = true;
          std::this_thread::sleep_for(5ms);
        }
        paused = false;
        std::string sql = "BEGIN;";
        for (int k = batch; k < batch + 10; ++k)
          sql += "INSERT INTO " + t + " VALUES (" + std::to_string(k) + ", " + std::to_string(v) +
                 ") ON CONFLICT (id) DO UPDATE SET version = excluded.version;";
        sql += "COMMIT;";
        // Idempotent: a batch whose commit we did not hear about may be run again.
        for (int attempt = 0;; ++attempt) {
          try {
            pg_exec(f.pg, sql);
            break;
          } catch (const std::exception&) {
            ++failures;
            if (attempt > 900) return;
            std::this_thread::sleep_for(200ms);
          }
        }
      }
      progress = v + 1;
      std::this_thread::sleep_for(20ms);
    }
  });
  ASSERT_TRUE(wait_until([&] { return progress.load() >= kVersions / 4; }, 60s));
  const std::string pid_before = f.walsender_pid();
  // The last change before the shutdown is to a table the daemon does not capture (as on any server with
  // other applications): the writer holds still for that moment and goes on as soon as the shutdown began.
  hold = true;
  ASSERT_TRUE(wait_until([&] { return paused.load(); }, 10s));
  pg_exec(f.pg, "INSERT INTO " + side + " (note) VALUES ('not captured')");
  std::this_thread::sleep_for(1500ms);  // the daemon has seen and persisted everything captured before it
  // The restart runs beside the test, so that a shutdown that hangs can be seen (and ended) from here.
  std::atomic<bool> restarted{false};
  std::atomic<int> restart_rc{-1};
  const auto restart_began = std::chrono::steady_clock::now();
  std::thread restarter([&] {
    restart_rc = std::system((std::string(TIDEMARK_SOURCE_DIR) + "/scripts/servers.sh restart postgres >/dev/null 2>&1").c_str());
    restarted = true;
  });
  // A fast shutdown waits for every walsender to have its client confirm the end of WAL (the shutdown
  // checkpoint included). A client that never confirms it holds PostgreSQL in "shutting down" for good.
  wait_until([&] {
    try {
      pg_query(f.pg, "SELECT 1");
      return restarted.load();
    } catch (const std::exception&) {
      return true;  // shutting down, or down
    }
  }, 30s);
  hold = false;
  bool daemon_killed = false;
  if (!wait_until([&] { return restarted.load(); }, 30s)) {
    ADD_FAILURE() << "PostgreSQL's fast shutdown did not finish in 30 s while the daemon was connected: its walsender "
                     "waits for the daemon to confirm (flush) the end of WAL, which the daemon never does outside "
                     "its own transactions. Killing the daemon to let the server stop.\n"
                  << f.daemon.stderr_text();
    f.daemon.stop(SIGKILL);
    daemon_killed = true;
  }
  restarter.join();
  std::cout << "servers.sh restart postgres took "
            << std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - restart_began).count()
            << " s (exit " << restart_rc.load() << ")\n";
  EXPECT_EQ(restart_rc.load(), 0) << "servers.sh restart postgres";
  if (restart_rc.load() != 0) std::system((std::string(TIDEMARK_SOURCE_DIR) + "/scripts/servers.sh start postgres >/dev/null 2>&1").c_str());
  if (daemon_killed) f.daemon.start();  // resumes from its state file: the rest of the checks still apply
  writer.join();
  EXPECT_EQ(progress.load(), kVersions) << "the writer gave up";
  std::cout << "writer retried " << failures.load() << " times around the restart\n";

  // Wait until every key's last record is the last version.
  std::vector<ConsumedRecord> records;
  const bool complete = wait_until([&] {
    records = consume_all(f.bootstrap, f.topic(t));
    std::map<int, int> last;
    for (const auto& r : records) {
      const json v = json::parse(*r.value);
      last[v["after"]["id"].get<int>()] = v["after"]["version"].get<int>();
    }
    if (last.size() != kKeys) return false;
    return std::all_of(last.begin(), last.end(), [](const auto& kv) { return kv.second == kVersions - 1; });
  }, 120s);
  const std::string err = f.daemon.stderr_text();
  EXPECT_TRUE(complete) << err;
  EXPECT_TRUE(f.daemon.process().running()) << err;
  if (!daemon_killed) {
    EXPECT_NE(err.find("reconnecting in"), std::string::npos) << "the restart went unnoticed?\n" << err;
  }
  EXPECT_NE(f.walsender_pid(), pid_before) << "a new replication connection after the restart";

  // A retried batch may have committed twice (same version twice): that is a duplicate, not a loss.
  const size_t duplicates = expect_every_version_in_commit_order(versions_by_key(records), kKeys, kVersions);
  std::cout << records.size() << " records, " << duplicates << " repeated\n";
  EXPECT_EQ(f.daemon.stop(SIGTERM), 0) << f.daemon.stderr_text();
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

// ---------------------------------------------------------------------------------------------------------------
// 5. One transaction of 300k rows: all of them arrive, and memory stays bounded.

TEST(PostgresStream, LargeTransactionOf300kRowsArrivesWithBoundedMemory) {
  PgFixture f;
  const std::string t = f.table("pgbig");
  pg_exec(f.pg, "CREATE TABLE " + t + " (id int PRIMARY KEY, payload text, at timestamptz)");
  create_topic(f.bootstrap, f.topic(t), 4);
  f.write_config({t});
  ASSERT_TRUE(f.start_and_wait_for_slot()) << f.daemon.stderr_text();

  constexpr int kRows = 300000;
  const uint64_t before = parse_lsn_text(q1(f.pg, "SELECT pg_current_wal_insert_lsn()::text"));
  pg_exec(f.pg, "INSERT INTO " + t + " SELECT g, md5(g::text) || repeat('x', 100), now() FROM generate_series(1, " +
                    std::to_string(kRows) + ") g");
  // Nothing else changes this table: a committed position past `before` means the whole transaction is in Kafka.
  long peak_rss = 0;
  const bool committed = wait_until([&] {
    peak_rss = std::max(peak_rss, vm_kib(f.daemon.process().pid(), "VmRSS"));
    return state_lsn(f.daemon) > before;
  }, 240s);
  const long hwm = vm_kib(f.daemon.process().pid(), "VmHWM");
  std::cout << "peak RSS (VmHWM) of the daemon: " << hwm << " KiB (" << hwm / 1024 << " MiB); highest VmRSS sampled "
            << peak_rss << " KiB\n";
  ASSERT_TRUE(committed) << f.daemon.stderr_text();
  EXPECT_GT(hwm, 0);
#ifndef __SANITIZE_ADDRESS__
  EXPECT_LT(hwm, 150L * 1024) << "peak RSS above 150 MB";
#else
  // AddressSanitizer's quarantine and shadow memory inflate RSS by hundreds of MB: the bound is checked in
  // the normal build only.
#endif
  EXPECT_EQ(f.daemon.stop(SIGTERM), 0) << f.daemon.stderr_text();

  const auto records = consume_all(f.bootstrap, f.topic(t), 120s);
  std::vector<char> present(kRows + 1, 0);
  size_t distinct = 0;
  uint32_t txid = 0;
  bool one_tx = true;
  for (const auto& r : records) {
    const json v = json::parse(*r.value);
    const int id = v["after"]["id"].get<int>();
    if (id >= 1 && id <= kRows && !present[id]) {
      present[id] = 1;
      ++distinct;
    }
    const auto tx = v["source"]["txId"].get<uint32_t>();
    if (txid == 0) txid = tx;
    one_tx = one_tx && tx == txid;
  }
  EXPECT_EQ(distinct, static_cast<size_t>(kRows));
  EXPECT_EQ(records.size(), static_cast<size_t>(kRows)) << "a clean run has no duplicates";
  EXPECT_TRUE(one_tx);
}

}  // namespace
}  // namespace tidemark::test
