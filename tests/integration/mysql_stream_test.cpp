// The MySQL/MariaDB source end to end, what only the binlog has (the scenarios both databases share, kill -9,
// restarts, large transactions and schema changes, are in change_stream_test.cpp): binlog rotation, purged
// binlogs, a GTID the server lacks, and tables that are not captured. Real
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
