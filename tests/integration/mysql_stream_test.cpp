// The MySQL/MariaDB source end to end, the harder cases (kill -9 is in change_stream_test.cpp): a MariaDB restart
// under a writer, a transaction of 1M rows with bounded memory, ALTER TABLE mid-stream (followed live and
// caught up after the fact), binlog rotation, purged binlogs, and tables that are not captured. Real
// MariaDB 10.11 (shared server, row-based binlog with FULL metadata), the real daemon, the real Kafka, and
// the tests' own consumer; everything is checked on what that consumer reads back.
//
// The shared server is used by other test runs at the same time: assertions about GTIDs, files and
// positions compare with "at or after" wherever another client's transaction could come in between.

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "mysql_fixture.hpp"
#include "pg_fixture.hpp"  // versions_by_key, expect_every_version_in_commit_order: generic over after.id/after.version

namespace tidemark::test {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

// The daemon's committed position, from its state file:
// "binlog:flavor=mariadb;gtid=0-1-105;file=mysql-bin.000003;pos=1234".
struct StatePosition {
  bool valid = false;
  std::string token, flavor, gtid, file;
  uint64_t pos = 0;
};

StatePosition state_position(const DaemonRunner& daemon) {
  StatePosition p;
  const auto doc = json::parse(read_file(daemon.state_path()), nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("position") || !doc["position"].is_string()) return p;
  p.token = doc["position"].get<std::string>();
  if (p.token.rfind("binlog:", 0) != 0) return p;
  std::string rest = p.token.substr(7);
  bool have_file = false, have_pos = false;
  while (!rest.empty()) {
    const auto semi = rest.find(';');
    const std::string field = rest.substr(0, semi);
    rest = semi == std::string::npos ? "" : rest.substr(semi + 1);
    const auto eq = field.find('=');
    if (eq == std::string::npos) return p;
    const std::string key = field.substr(0, eq), value = field.substr(eq + 1);
    if (key == "flavor") p.flavor = value;
    else if (key == "gtid") p.gtid = value;
    else if (key == "file") { p.file = value; have_file = true; }
    else if (key == "pos") { p.pos = std::stoull(value); have_pos = true; }
  }
  p.valid = have_file && have_pos;
  return p;
}

struct Gtid {
  uint32_t domain = 0, server = 0;
  uint64_t seq = 0;
};

std::optional<Gtid> parse_gtid(const std::string& text) {
  Gtid g;
  if (std::sscanf(text.c_str(), "%u-%u-%lu", &g.domain, &g.server, &g.seq) != 3) return std::nullopt;
  return g;
}

// The sequence number of `domain` in a MariaDB GTID state ("0-1-105,1-2-7"); nullopt when absent.
std::optional<uint64_t> state_seq(const std::string& state, uint32_t domain) {
  size_t start = 0;
  while (start < state.size()) {
    const auto comma = state.find(',', start);
    const auto g = parse_gtid(state.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (g && g->domain == domain) return g->seq;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return std::nullopt;
}

// True once the daemon's committed GTID state includes `gtid` (the position is at or after its commit).
bool committed_past(const DaemonRunner& daemon, const Gtid& gtid) {
  const auto seq = state_seq(state_position(daemon).gtid, gtid.domain);
  return seq && *seq >= gtid.seq;
}

long vm_kib(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  return -1;
}

int servers_sh(const std::string& args) {
  // TIDEMARK_SKIP_DEPS: the packages are there (the servers run); no apt-get on a restart.
  const std::string cmd =
      "TIDEMARK_SKIP_DEPS=1 " + std::string(TIDEMARK_SOURCE_DIR) + "/scripts/servers.sh " + args + " >/dev/null 2>&1";
  return std::system(cmd.c_str());
}

// ---------------------------------------------------------------------------------------------------------------
// 2. MariaDB restarted under a writer: the daemon reconnects with backoff, nothing is lost, per-key order kept.

TEST(MySqlStream, MariaDbRestartMidStreamLosesNothingAndKeepsOrderPerKey) {
  MySqlFixture f;
  const std::string t = f.table("myrestart");
  f.create_table(t, "id INT PRIMARY KEY, version INT NOT NULL", 3);
  f.write_config({t});
  ASSERT_TRUE(f.start_and_wait_until_streaming()) << f.daemon.stderr_text();

  constexpr int kKeys = 50, kVersions = 60;
  std::atomic<int> progress{0}, failures{0};
  std::thread writer([&] {
    for (int v = 0; v < kVersions; ++v) {
      for (int batch = 0; batch < kKeys; batch += 10) {
        std::string sql = "BEGIN;";
        for (int k = batch; k < batch + 10; ++k)
          sql += "INSERT INTO " + t + " VALUES (" + std::to_string(k) + ", " + std::to_string(v) +
                 ") ON DUPLICATE KEY UPDATE version = VALUES(version);";
        sql += "COMMIT";
        // Idempotent: a batch whose commit we did not hear about may be run again (a repeat, not a loss).
        for (int attempt = 0;; ++attempt) {
          try {
            mysql_exec(f.db, sql);
            break;
          } catch (const std::exception&) {
            ++failures;
            if (attempt > 300) return;
            std::this_thread::sleep_for(200ms);
          }
        }
      }
      progress = v + 1;
      std::this_thread::sleep_for(20ms);
    }
  });
  JoinAtExit join_writer{{&writer}};
  ASSERT_TRUE(wait_until([&] { return progress.load() >= kVersions / 4; }, 60s));
  const auto restart_began = Clock::now();
  const int rc = servers_sh("restart mariadb");
  std::cout << "servers.sh restart mariadb took "
            << std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - restart_began).count() << " ms (exit "
            << rc << ") at writer version " << progress.load() << "\n";
  EXPECT_EQ(rc, 0) << "servers.sh restart mariadb";
  if (rc != 0) servers_sh("start mariadb");
  writer.join();
  EXPECT_EQ(progress.load(), kVersions) << "the writer gave up";
  std::cout << "writer retried " << failures.load() << " times around the restart\n";

  std::vector<ConsumedRecord> records;
  const bool complete = wait_until([&] {
    records = consume_all(f.bootstrap, f.topic(t));
    return distinct_changes(records).size() == static_cast<size_t>(kKeys * kVersions);
  }, 120s);
  const std::string err = f.daemon.stderr_text();
  EXPECT_TRUE(complete) << distinct_changes(records).size() << " of " << kKeys * kVersions << " changes\n" << err;
  EXPECT_TRUE(f.daemon.process().running()) << err;
  EXPECT_NE(err.find("reconnecting in"), std::string::npos) << "the restart went unnoticed?\n" << err;
  // The session after the restart resumed from a GTID state, not from the end of the log.
  const auto second = err.find("mysql: streaming the binlog", err.find("reconnecting in"));
  ASSERT_NE(second, std::string::npos) << "no new replication session after the restart\n" << err;
  const std::string resumed = err.substr(second, err.find('\n', second) - second);
  EXPECT_NE(resumed.find(" from gtid "), std::string::npos) << resumed;
  std::cout << resumed << "\n";
  EXPECT_EQ(state_position(f.daemon).flavor, "mariadb");
  const size_t repeats = expect_every_version_in_commit_order(versions_by_key(records), kKeys, kVersions);
  std::cout << records.size() << " records, " << repeats << " repeated\n";
  EXPECT_EQ(f.daemon.stop(SIGTERM), 0) << f.daemon.stderr_text();
}

// ---------------------------------------------------------------------------------------------------------------
// 3. One transaction of 1M rows: all of them arrive, and the daemon's memory stays bounded.

TEST(MySqlStream, LargeTransactionOf1MRowsArrivesWithBoundedMemory) {
#ifndef __SANITIZE_ADDRESS__
  constexpr int kRows = 1000000;
#else
  // AddressSanitizer makes the daemon several times slower: 200k rows keep the test within its time, and
  // still far exceed every buffer (queue, producer) the daemon has.
  constexpr int kRows = 200000;
#endif
  MySqlFixture f;
  const std::string t = f.table("mybig");
  f.create_table(t, "id INT PRIMARY KEY, payload VARCHAR(160) NOT NULL, at DATETIME(6) NOT NULL", 4);
  f.write_config({t});
  ASSERT_TRUE(f.start_and_wait_until_streaming()) << f.daemon.stderr_text();

  MySqlSession s(f.db);
  const auto began = Clock::now();
  s.exec("INSERT INTO " + t + " SELECT seq, CONCAT(MD5(seq), REPEAT('x', 100)), NOW(6) FROM seq_1_to_" +
         std::to_string(kRows));
  const std::string last_gtid = s.value("SELECT @@last_gtid");
  const auto gtid = parse_gtid(last_gtid);
  ASSERT_TRUE(gtid.has_value()) << last_gtid;
  const auto inserted = Clock::now();
  // Positions advance only at transaction ends: a committed GTID state that includes this transaction means
  // the whole of it is in Kafka.
  long peak_rss = 0;
  const bool committed = wait_until([&] {
    peak_rss = std::max(peak_rss, vm_kib(f.daemon.process().pid(), "VmRSS"));
    return committed_past(f.daemon, *gtid);
  }, 240s);
  const long hwm = vm_kib(f.daemon.process().pid(), "VmHWM");
  const auto ms = [](auto d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); };
  std::cout << kRows << " rows: INSERT took " << ms(inserted - began) << " ms, in Kafka and committed after "
            << ms(Clock::now() - began) << " ms\n";
  std::cout << "peak RSS (VmHWM) of the daemon: " << hwm << " KiB (" << hwm / 1024 << " MiB); highest VmRSS sampled "
            << peak_rss << " KiB\n";
  ASSERT_TRUE(committed) << "committed " << state_position(f.daemon).token << ", waiting for " << last_gtid << "\n"
                         << f.daemon.stderr_text();
  EXPECT_GT(hwm, 0);
#ifndef __SANITIZE_ADDRESS__
  EXPECT_LT(hwm, 100L * 1024) << "peak RSS above 100 MB";
#else
  // AddressSanitizer's quarantine and shadow memory inflate RSS by hundreds of MB: the bound is checked in
  // the normal build only.
#endif
  EXPECT_EQ(f.daemon.stop(SIGTERM), 0) << f.daemon.stderr_text();

  const auto records = consume_all(f.bootstrap, f.topic(t), 120s);
  std::vector<char> present(kRows + 1, 0);
  size_t distinct = 0, other_gtid = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    const std::string& text = *records[i].value;
    // Every 1000th record fully; the others by their id and gtid (the serializer's layout is fixed).
    int id = 0;
    std::string record_gtid;
    if (i % 1000 == 0) {
      const json v = json::parse(text);
      EXPECT_EQ(v["op"], "c");
      id = v["after"]["id"].get<int>();
      EXPECT_EQ(v["after"]["payload"].get<std::string>().size(), 132u);
      record_gtid = v["source"]["gtid"].get<std::string>();
      EXPECT_EQ(v["source"]["connector"], "mysql");
    } else {
      const auto at = text.find("\"after\":{\"id\":");
      ASSERT_NE(at, std::string::npos) << text;
      id = std::atoi(text.c_str() + at + 14);
      const auto g = text.find("\"gtid\":\"");
      ASSERT_NE(g, std::string::npos) << text;
      record_gtid = text.substr(g + 8, text.find('"', g + 8) - g - 8);
    }
    if (id >= 1 && id <= kRows && !present[id]) {
      present[id] = 1;
      ++distinct;
    }
    if (record_gtid != last_gtid) ++other_gtid;
  }
  EXPECT_EQ(distinct, static_cast<size_t>(kRows));
  EXPECT_EQ(records.size(), static_cast<size_t>(kRows)) << "a clean run has no duplicates";
  EXPECT_EQ(other_gtid, 0u) << "every row comes from the one transaction " << last_gtid;
}

// ---------------------------------------------------------------------------------------------------------------
// 4. ALTER TABLE mid-stream: each row carries the columns the table had when the row was written, both when
// the daemon follows live and when it reads the old events after the table has changed (catalog ahead of
// the binlog).

TEST(MySqlStream, AddAndDropColumnMidStreamKeepTheColumnsOfTheirTime) {
  MySqlFixture f;
  const std::string t = f.table("myalter");
  f.create_table(t, "id INT PRIMARY KEY, a VARCHAR(10)", 1);  // one partition: delivery order is log order
  f.write_config({t});
  ASSERT_TRUE(f.start_and_wait_until_streaming()) << f.daemon.stderr_text();

  MySqlSession s(f.db);
  // Live: the DDL follows the rows immediately.
  s.exec("INSERT INTO " + t + " VALUES (1, 'one'), (2, 'two')");
  s.exec("ALTER TABLE " + t + " ADD COLUMN b INT DEFAULT 7");
  s.exec("INSERT INTO " + t + " VALUES (3, 'three', 30)");
  s.exec("UPDATE " + t + " SET a = 'uno' WHERE id = 1");  // the stored row predates b: its default
  s.exec("ALTER TABLE " + t + " DROP COLUMN a");
  s.exec("INSERT INTO " + t + " VALUES (4, 40)");
  // A DDL inside BEGIN commits the open transaction implicitly: a change, the ALTER, a change.
  s.exec("BEGIN; INSERT INTO " + t + " VALUES (5, 50); ALTER TABLE " + t + " ADD COLUMN c VARCHAR(10); INSERT INTO " +
         t + " VALUES (6, 60, 'six'); COMMIT");
  s.exec("ALTER TABLE " + t + " DROP COLUMN b; UPDATE " + t + " SET c = 'seven' WHERE id = 6");
  s.exec("DELETE FROM " + t + " WHERE id = 6");
  const std::vector<json> live = {
      json::parse(R"({"op":"c","after":{"id":1,"a":"one"}})"),
      json::parse(R"({"op":"c","after":{"id":2,"a":"two"}})"),
      json::parse(R"({"op":"c","after":{"id":3,"a":"three","b":30}})"),
      json::parse(R"({"op":"u","before":{"id":1,"a":"one","b":7},"after":{"id":1,"a":"uno","b":7}})"),
      json::parse(R"({"op":"c","after":{"id":4,"b":40}})"),
      json::parse(R"({"op":"c","after":{"id":5,"b":50}})"),
      json::parse(R"({"op":"c","after":{"id":6,"b":60,"c":"six"}})"),
      json::parse(R"({"op":"u","before":{"id":6,"c":"six"},"after":{"id":6,"c":"seven"}})"),
      json::parse(R"({"op":"d","before":{"id":6,"c":"seven"}})"),
  };
  const size_t live_records = live.size() + 1;  // + the delete's tombstone
  auto records = f.read_until(f.topic(t), live_records);
  ASSERT_EQ(records.size(), live_records) << f.daemon.stderr_text();

  // Catching up: the daemon is stopped while rows are written, the table altered, rows written again. When
  // it reads the first rows, the catalog already has the new definition; the binlog's own column names
  // (binlog_row_metadata=FULL) describe them.
  ASSERT_EQ(f.daemon.stop(SIGTERM), 0) << f.daemon.stderr_text();
  s.exec("INSERT INTO " + t + " VALUES (10, 'ten'), (11, 'eleven')");
  s.exec("ALTER TABLE " + t + " ADD COLUMN d INT NOT NULL DEFAULT 0, ADD COLUMN e VARCHAR(5) DEFAULT 'e'");
  s.exec("INSERT INTO " + t + " VALUES (12, 'twelve', 12, 'x')");
  s.exec("ALTER TABLE " + t + " DROP COLUMN c");
  s.exec("UPDATE " + t + " SET d = 110 WHERE id = 11");
  f.daemon.start();
  const std::vector<json> caught_up = {
      json::parse(R"({"op":"c","after":{"id":10,"c":"ten"}})"),
      json::parse(R"({"op":"c","after":{"id":11,"c":"eleven"}})"),
      json::parse(R"({"op":"c","after":{"id":12,"c":"twelve","d":12,"e":"x"}})"),
      json::parse(R"({"op":"u","before":{"id":11,"d":0,"e":"e"},"after":{"id":11,"d":110,"e":"e"}})"),
  };
  records = f.read_until(f.topic(t), live_records + caught_up.size());
  const std::string err = f.daemon.stderr_text();
  ASSERT_EQ(records.size(), live_records + caught_up.size()) << err;
  EXPECT_TRUE(f.daemon.process().running()) << err;

  std::vector<json> want = live;
  want.insert(want.end(), caught_up.begin(), caught_up.end());
  size_t r = 0;
  for (size_t i = 0; i < want.size(); ++i, ++r) {
    if (i == live.size()) {
      EXPECT_FALSE(records[r].value.has_value()) << "tombstone after the delete of 6";
      ++r;
    }
    ASSERT_TRUE(records[r].value.has_value()) << r;
    const json v = json::parse(*records[r].value);
    EXPECT_EQ(v["op"], want[i]["op"]) << r;
    // Same columns in the same order, same values.
    for (const char* image : {"before", "after"}) {
      if (want[i].contains(image)) {
        EXPECT_EQ(v[image].dump(), want[i][image].dump()) << "record " << r << " " << image << ": " << *records[r].value;
      } else {
        EXPECT_TRUE(v[image].is_null()) << "record " << r << " " << image << ": " << *records[r].value;
      }
    }
  }
  EXPECT_EQ(f.daemon.stop(SIGTERM), 0) << err;
}

// ---------------------------------------------------------------------------------------------------------------
// 5. FLUSH BINARY LOGS mid-stream: nothing lost, later events name the new file; Debezium's source fields.

TEST(MySqlStream, RotationMidStreamLosesNothingAndNamesTheNewFile) {
  MySqlFixture f;
  const std::string t = f.table("myrotate");
  f.create_table(t, "id INT PRIMARY KEY, version INT NOT NULL", 2);
  f.write_config({t});
  ASSERT_TRUE(f.start_and_wait_until_streaming()) << f.daemon.stderr_text();
  const std::string server_id = mysql_value(f.root, "SELECT @@server_id");

  constexpr int kBefore = 300, kAfter = 300;
  MySqlSession s(f.db);
  std::map<int, std::string> gtid_of;  // id -> the GTID of the transaction that wrote it
  std::atomic<bool> rotated{false};
  std::string old_file, new_file;
  // The rotation happens from another connection while this one writes: the daemon is mid-stream.
  std::thread rotator([&] {
    try {
      MySqlSession admin(f.root);
      std::this_thread::sleep_for(100ms);  // some rows first
      old_file = admin.rows("SHOW MASTER STATUS").at(0).at(0).value_or("");
      admin.exec("FLUSH BINARY LOGS");
      new_file = admin.rows("SHOW MASTER STATUS").at(0).at(0).value_or("");
      rotated = true;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "rotation: " << e.what();
    }
  });
  JoinAtExit join_rotator{{&rotator}};
  for (int id = 0; id < kBefore; ++id) {
    s.exec("INSERT INTO " + t + " VALUES (" + std::to_string(id) + ", 0)");
    gtid_of[id] = s.value("SELECT @@last_gtid");
  }
  rotator.join();
  ASSERT_TRUE(rotated.load());
  ASSERT_LT(old_file, new_file);
  for (int id = kBefore; id < kBefore + kAfter; id += 3) {  // multi-row statements: row 0, 1, 2 of one event
    s.exec("INSERT INTO " + t + " VALUES (" + std::to_string(id) + ", 0), (" + std::to_string(id + 1) + ", 0), (" +
           std::to_string(id + 2) + ", 0)");
    const std::string g = s.value("SELECT @@last_gtid");
    for (int k = id; k < id + 3; ++k) gtid_of[k] = g;
  }
  const std::string written_file = s.rows("SHOW MASTER STATUS").at(0).at(0).value_or("");

  const auto records = f.read_until(f.topic(t), kBefore + kAfter);
  const std::string err = f.daemon.stderr_text();
  ASSERT_EQ(records.size(), static_cast<size_t>(kBefore + kAfter)) << "nothing lost, nothing twice\n" << err;
  std::set<int> ids;
  std::map<std::pair<std::string, uint64_t>, std::set<uint32_t>> rows_of_event;  // (file, pos) -> source.row values
  for (const auto& r : records) {
    const json v = json::parse(*r.value);
    const json& src = v["source"];
    const int id = v["after"]["id"].get<int>();
    ids.insert(id);
    // Debezium's MySQL source block.
    EXPECT_EQ(src["connector"], "mysql");
    EXPECT_EQ(src["name"], f.daemon.name());
    EXPECT_EQ(src["db"], f.db.database);
    EXPECT_EQ(src["table"], t);
    EXPECT_FALSE(src.contains("schema")) << src.dump();
    EXPECT_EQ(src["server_id"].dump(), server_id);
    EXPECT_EQ(src["gtid"], gtid_of[id]) << "id " << id;
    EXPECT_EQ(src["snapshot"], "false");
    EXPECT_GT(src["ts_ms"].get<int64_t>(), 1700000000000LL);
    ASSERT_TRUE(src["file"].is_string()) << src.dump();
    ASSERT_TRUE(src["pos"].is_number_unsigned()) << src.dump();
    ASSERT_TRUE(src["row"].is_number_unsigned()) << src.dump();
    const std::string file = src["file"].get<std::string>();
    const uint64_t pos = src["pos"].get<uint64_t>();
    EXPECT_GT(pos, 4u) << "past the file's magic and format description";
    rows_of_event[{file, pos}].insert(src["row"].get<uint32_t>());
    if (id >= kBefore) {
      // Written after the rotation: in the new file (or a later one, if another client rotated too).
      EXPECT_GE(file, new_file) << "id " << id << ": " << src.dump();
      EXPECT_LE(file, written_file) << src.dump();
    } else {
      EXPECT_GE(file, old_file) << src.dump();
    }
  }
  EXPECT_EQ(ids.size(), static_cast<size_t>(kBefore + kAfter));
  EXPECT_EQ(*ids.rbegin(), kBefore + kAfter - 1);
  size_t in_old_file = 0;
  for (const auto& [at, rows] : rows_of_event) in_old_file += at.first == old_file ? rows.size() : 0;
  std::cout << in_old_file << " rows in " << old_file << ", " << kBefore + kAfter - in_old_file << " in " << new_file
            << (written_file != new_file ? " and later files" : "") << "\n";
  // Rows of one statement share file and pos and are numbered 0.. within the event.
  size_t three_row_events = 0;
  for (const auto& [at, rows] : rows_of_event) {
    EXPECT_EQ(*rows.begin(), 0u) << at.first << ":" << at.second;
    EXPECT_EQ(*rows.rbegin(), rows.size() - 1) << at.first << ":" << at.second;
    if (rows.size() == 3) ++three_row_events;
  }
  EXPECT_EQ(three_row_events, static_cast<size_t>(kAfter / 3));
  // source.file/pos name the rows event itself: the server lists an event starting exactly there.
  MySqlSession admin(f.root);
  size_t checked = 0;
  for (auto it = rows_of_event.begin(); it != rows_of_event.end(); std::advance(it, std::min<size_t>(37, std::distance(it, rows_of_event.end())))) {
    const auto& [file, pos] = it->first;
    const auto listed = admin.rows("SHOW BINLOG EVENTS IN '" + file + "' FROM " + std::to_string(pos) + " LIMIT 1");
    ASSERT_EQ(listed.size(), 1u) << file << ":" << pos;
    EXPECT_EQ(listed[0].at(1).value_or(""), std::to_string(pos));
    EXPECT_EQ(listed[0].at(2).value_or("").rfind("Write_rows", 0), 0u) << file << ":" << pos << " is a "
                                                                      << listed[0].at(2).value_or("");
    ++checked;
  }
  EXPECT_GE(checked, 10u);
  // The committed position follows into the new file.
  EXPECT_TRUE(wait_until([&] { return state_position(f.daemon).file >= new_file; }, 10s)) << state_position(f.daemon).token;
  EXPECT_TRUE(wait_until([&] { return committed_past(f.daemon, *parse_gtid(gtid_of[kBefore + kAfter - 1])); }, 10s))
      << state_position(f.daemon).token;
  EXPECT_EQ(f.daemon.stop(SIGTERM), 0) << err;
}

// Streams one insert into a new table `t`, stops cleanly and returns where the state file says it stopped
// (invalid, with the failure reported, when any step fails).
StatePosition stream_one_change_and_stop(MySqlFixture& f, const std::string& t) {
  f.create_table(t, "id INT PRIMARY KEY", 1);
  f.write_config({t});
  if (!f.start_and_wait_until_streaming()) {
    ADD_FAILURE() << f.daemon.stderr_text();
    return {};
  }
  mysql_exec(f.db, "INSERT INTO " + t + " VALUES (1)");
  if (f.read_until(f.topic(t), 1).size() != 1u || f.daemon.stop(SIGTERM) != 0) {
    ADD_FAILURE() << "the insert was not delivered, or the daemon did not stop cleanly\n" << f.daemon.stderr_text();
    return {};
  }
  return state_position(f.daemon);
}

// ---------------------------------------------------------------------------------------------------------------
// 6. The binlog the daemon needs was purged while it was stopped: a quick fatal exit naming the recovery.

TEST(MySqlStream, PurgedBinlogIsAFatalErrorNamingTheRecovery) {
  MySqlFixture f;
  const std::string t = f.table("mypurge");
  const StatePosition stopped_at = stream_one_change_and_stop(f, t);
  ASSERT_TRUE(stopped_at.valid) << stopped_at.token;

  // Changes the daemon never saw, then every binlog up to the newest one purged (on the shared server: the
  // other tests start at the end of the log and do not need the old files). A file another client's dump
  // thread is reading cannot be purged yet: retry until the daemon's file is gone.
  mysql_exec(f.db, "INSERT INTO " + t + " VALUES (2)");
  mysql_exec(f.db, "INSERT INTO " + t + " VALUES (3)");
  MySqlSession admin(f.root);
  admin.exec("FLUSH BINARY LOGS");
  std::string first_left;
  const bool purged = wait_until([&] {
    const std::string newest = admin.rows("SHOW MASTER STATUS").at(0).at(0).value_or("");
    try {
      admin.exec("PURGE BINARY LOGS TO '" + newest + "'");
    } catch (const std::exception& e) {
      std::cout << e.what() << "\n";
    }
    first_left = admin.rows("SHOW BINARY LOGS").at(0).at(0).value_or("");
    return first_left > stopped_at.file;
  }, 20s);
  ASSERT_TRUE(purged) << "the daemon's file " << stopped_at.file << " is still there (first binlog " << first_left << ")";

  const auto began = Clock::now();
  f.daemon.start();
  const auto status = f.daemon.process().wait_for_exit(30s);
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - began);
  const std::string err = f.daemon.stderr_text();
  const auto fatal = err.find(" error ");
  std::cout << "the daemon exited " << took.count() << " ms after it started:\n"
            << (fatal == std::string::npos ? err : err.substr(fatal, err.find('\n', fatal) - fatal)) << "\n";
  ASSERT_TRUE(status.has_value()) << "a purged binlog must stop the daemon, not retry forever\n" << err;
  EXPECT_EQ(*status, 2) << err;
  EXPECT_LT(took, 15s) << "no retry loop with backoff before giving up";
  EXPECT_NE(err.find("no longer has the binlog"), std::string::npos) << err;
  EXPECT_NE(err.find(stopped_at.gtid), std::string::npos) << "names the position it needed\n" << err;
  EXPECT_NE(err.find("deleting the state file"), std::string::npos) << err;
  EXPECT_NE(err.find("re-snapshotting"), std::string::npos) << err;
  EXPECT_EQ(err.find("reconnecting in"), std::string::npos) << err;
  EXPECT_EQ(state_position(f.daemon).token, stopped_at.token) << "the state file is left for the operator to decide";
}

// A GTID the server does not have (here: a sequence number beyond its binlog, as after RESET MASTER or a
// state file restored from another server) is the same dead end as a purged file: a clear fatal error at
// once, not a retry loop at warning level (MariaDB: "... which is not in the master's binlog").
TEST(MySqlStream, AGtidTheServerDoesNotHaveIsFatalAndNamesTheRecovery) {
  MySqlFixture f;
  const std::string t = f.table("mygtid");
  const StatePosition stopped_at = stream_one_change_and_stop(f, t);
  ASSERT_TRUE(stopped_at.valid && !stopped_at.gtid.empty()) << stopped_at.token;

  std::string state = read_file(f.daemon.state_path());
  const std::string foreign = "gtid=0-1-99999999";
  state.replace(state.find("gtid=" + stopped_at.gtid), 5 + stopped_at.gtid.size(), foreign);
  write_file(f.daemon.state_path(), state);

  const auto began = Clock::now();
  f.daemon.start();
  const auto status = f.daemon.process().wait_for_exit(30s);
  const std::string err = f.daemon.stderr_text();
  ASSERT_TRUE(status.has_value()) << "a GTID the server does not have must stop the daemon, not retry forever\n" << err;
  EXPECT_EQ(*status, 2) << err;
  EXPECT_LT(Clock::now() - began, 15s) << "no retry loop with backoff before giving up";
  EXPECT_NE(err.find("no longer has the binlog"), std::string::npos) << err;
  EXPECT_NE(err.find("0-1-99999999"), std::string::npos) << "names the position it needed\n" << err;
  EXPECT_EQ(err.find("reconnecting in"), std::string::npos) << err;
}

// ---------------------------------------------------------------------------------------------------------------
// 7. Tables that are not captured: their rows are not published, and their transactions still move the
// committed position.

TEST(MySqlStream, UncapturedTablesAreSkippedAndStillAdvanceThePosition) {
  MySqlFixture f;
  const std::string t = f.table("mycap");
  const std::string u = f.table("myuncap");
  f.create_table(t, "id INT PRIMARY KEY, note VARCHAR(20)", 1);
  f.create_table(u, "id INT PRIMARY KEY, note VARCHAR(20)", 1);  // its topic exists, so emptiness can be read
  f.write_config({t});
  ASSERT_TRUE(f.start_and_wait_until_streaming()) << f.daemon.stderr_text();

  MySqlSession s(f.db);
  // One transaction with both tables, uncaptured rows first, between and last.
  s.exec("BEGIN; INSERT INTO " + u + " VALUES (1, 'u1'); INSERT INTO " + t + " VALUES (1, 't1'); UPDATE " + u +
         " SET note = 'u1b' WHERE id = 1; INSERT INTO " + t + " VALUES (2, 't2'); INSERT INTO " + u +
         " VALUES (2, 'u2'); COMMIT");
  const std::string mixed_gtid = s.value("SELECT @@last_gtid");
  // Only the uncaptured table, several transactions.
  const StatePosition before = [&] {
    wait_until([&] { return committed_past(f.daemon, *parse_gtid(mixed_gtid)); }, 30s);
    return state_position(f.daemon);
  }();
  ASSERT_TRUE(committed_past(f.daemon, *parse_gtid(mixed_gtid))) << before.token << " vs " << mixed_gtid;
  for (int i = 3; i < 8; ++i) s.exec("INSERT INTO " + u + " VALUES (" + std::to_string(i) + ", 'only u')");
  s.exec("UPDATE " + u + " SET note = 'again'");
  const std::string only_u_gtid = s.value("SELECT @@last_gtid");
  const bool advanced = wait_until([&] { return committed_past(f.daemon, *parse_gtid(only_u_gtid)); }, 30s);
  const StatePosition after = state_position(f.daemon);
  EXPECT_TRUE(advanced) << "committed " << after.token << ", last uncaptured transaction " << only_u_gtid << "\n"
                        << f.daemon.stderr_text();
  EXPECT_NE(after.token, before.token);
  EXPECT_TRUE(after.file > before.file || (after.file == before.file && after.pos > before.pos))
      << before.token << " -> " << after.token;
  // Captured again afterwards.
  s.exec("BEGIN; UPDATE " + u + " SET note = 'last'; UPDATE " + t + " SET note = 't1b' WHERE id = 1; COMMIT");

  const auto records = f.read_until(f.topic(t), 3);
  const std::string err = f.daemon.stderr_text();
  ASSERT_EQ(records.size(), 3u) << err;
  const std::vector<std::string> want = {R"({"id":1,"note":"t1"})", R"({"id":2,"note":"t2"})", R"({"id":1,"note":"t1b"})"};
  for (size_t i = 0; i < want.size(); ++i) {
    const json v = json::parse(*records[i].value);
    EXPECT_EQ(v["after"].dump(), want[i]) << i;
    EXPECT_EQ(v["source"]["table"], t);
    if (i < 2) {
      EXPECT_EQ(v["source"]["gtid"], mixed_gtid);
      EXPECT_EQ(v["source"]["row"], 0) << "one row per statement";
    }
  }
  std::this_thread::sleep_for(500ms);
  EXPECT_EQ(consume_all(f.bootstrap, f.topic(t)).size(), 3u) << "nothing more on the captured table's topic";
  EXPECT_TRUE(consume_all(f.bootstrap, f.topic(u)).empty()) << "nothing published for the uncaptured table";
  EXPECT_EQ(f.daemon.stop(SIGTERM), 0) << err;
}

}  // namespace
}  // namespace tidemark::test
