// The change stream end to end, each scenario written once for both databases (real PostgreSQL 15 and
// MariaDB 10.11, the real tidemark binary, the real Kafka broker): inserts, updates, a key change, a delete
// and a transaction over two tables; kill -9 during 100k changes; the server restarted under a writer; one
// transaction of 500k rows with bounded memory; columns added and dropped mid-stream, followed live and
// caught up after the fact. What only one database has (TOAST, REPLICA IDENTITY FULL, TRUNCATE, GTIDs,
// slots, purged binlogs, wal_sender_timeout) is tested in the postgres_* and mysql_* test files.

#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "pg_fixture.hpp"  // distinct_changes, versions_by_key, expect_every_version_in_commit_order
#include "database.hpp"
#include "process.hpp"

namespace tidemark::test {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

class ChangeStream : public testing::TestWithParam<std::string> {};

TEST_P(ChangeStream, InsertUpdateKeyChangeDeleteAndATransactionOverTwoTables) {
  const auto db = make_database(GetParam());
  const bool pg = db->kind() == "postgres";
  const std::string t = db->name("it");
  const std::string other = db->name("other");
  db->create_table(t, "id INT PRIMARY KEY, name VARCHAR(40), amount DECIMAL(12,2)");
  db->create_table(other, "k VARCHAR(10) PRIMARY KEY, v INT");
  db->write_config({t, other}, "snapshot:\n  initial: never\n");
  ASSERT_TRUE(db->start()) << db->daemon().stderr_text();

  db->exec("INSERT INTO " + t + " VALUES (1, 'a', 12345.67)");
  db->exec("UPDATE " + t + " SET name = 'b' WHERE id = 1");
  db->exec("UPDATE " + t + " SET id = 2 WHERE id = 1");  // a key change
  db->exec("DELETE FROM " + t + " WHERE id = 2");
  db->exec("BEGIN; INSERT INTO " + t + " VALUES (5, 'five', -1.5); INSERT INTO " + other + " VALUES ('x', 7); UPDATE " +
           t + " SET amount = 0 WHERE id = 5; COMMIT");

  // c, u, (key change: d + tombstone + c), d + tombstone, then c, u of id 5 = 9 records on t.
  const auto records = db->read_until(db->topic_of(t), 9);
  ASSERT_EQ(records.size(), 9u) << db->daemon().stderr_text();
  auto keys = records_by_key(records);
  ASSERT_EQ(keys.size(), 3u);
  const auto& one = keys["{\"id\":1}"];
  ASSERT_EQ(one.size(), 4u);
  const json c = json::parse(*one[0].value);
  EXPECT_EQ(c["op"], "c");
  EXPECT_TRUE(c["before"].is_null());
  EXPECT_EQ(c["after"]["id"], 1);
  EXPECT_EQ(c["after"]["name"], "a");
  EXPECT_EQ(c["after"]["amount"], "12345.67");
  EXPECT_EQ(c["source"]["connector"], pg ? "postgresql" : "mysql");
  EXPECT_EQ(c["source"]["db"], db->database_name());
  EXPECT_EQ(c["source"]["table"], t);
  const json u = json::parse(*one[1].value);
  EXPECT_EQ(u["op"], "u");
  EXPECT_EQ(u["after"]["name"], "b");
  const json d = json::parse(*one[2].value);
  EXPECT_EQ(d["op"], "d");
  EXPECT_EQ(d["before"]["id"], 1);
  EXPECT_FALSE(one[3].value.has_value()) << "tombstone after the old key's delete";
  const auto& two = keys["{\"id\":2}"];
  ASSERT_EQ(two.size(), 3u);
  EXPECT_EQ(json::parse(*two[0].value)["op"], "c");
  EXPECT_EQ(json::parse(*two[0].value)["after"]["name"], "b");
  EXPECT_EQ(json::parse(*two[1].value)["op"], "d");
  EXPECT_FALSE(two[2].value.has_value());
  const auto& five = keys["{\"id\":5}"];
  ASSERT_EQ(five.size(), 2u);
  const json five_c = json::parse(*five[0].value), five_u = json::parse(*five[1].value);
  EXPECT_EQ(five_c["after"]["amount"], "-1.50");
  EXPECT_EQ(five_u["after"]["amount"], "0.00");

  const auto others = db->read_until(db->topic_of(other), 1);
  ASSERT_EQ(others.size(), 1u);
  const json o = json::parse(*others[0].value);
  EXPECT_EQ(o["after"]["k"], "x");
  EXPECT_EQ(o["after"]["v"], 7);
  // One transaction: the same transaction id on every record of it, in both tables.
  const char* txn = pg ? "txId" : "gtid";
  EXPECT_EQ(five_c["source"][txn], five_u["source"][txn]) << five_c.dump();
  EXPECT_EQ(o["source"][txn], five_c["source"][txn]) << o.dump();
  EXPECT_NE(c["source"][txn], five_c["source"][txn]) << "another transaction";

  EXPECT_EQ(db->daemon().stop(SIGTERM), 0) << db->daemon().stderr_text();
}

// Reads the table's topic until it holds `changes` distinct (id, version) changes (120 s at most); a test
// failure when it does not.
std::vector<ConsumedRecord> read_all_changes(Database& db, const std::string& table, int changes) {
  std::vector<ConsumedRecord> records;
  const bool complete = wait_until([&] {
    records = consume_all(db.bootstrap(), db.topic_of(table));
    return distinct_changes(records).size() == static_cast<size_t>(changes);
  }, 120s);
  EXPECT_TRUE(complete) << distinct_changes(records).size() << " of " << changes << " changes\n"
                        << db.daemon().stderr_text();
  return records;
}

// The committed position in the daemon's state file ("" before the first persist).
std::string committed_token(DaemonRunner& daemon) {
  const auto doc = json::parse(read_file(daemon.state_path()), nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("position") || !doc["position"].is_string()) return "";
  return doc["position"].get<std::string>();
}

// kill -9 while 4 writers make 100k changes: every change reaches Kafka at least once, in commit order per
// key, and the restart resumes from exactly the position the first run had committed.
TEST_P(ChangeStream, KillNineDuring100kChangesLosesNothingAndResumesWhereItCommitted) {
  const auto db = make_database(GetParam());
  const std::string t = db->name("kill");
  db->create_table(t, "id INT PRIMARY KEY, version INT NOT NULL");
  db->write_config({t}, "snapshot:\n  initial: never\n");
  ASSERT_TRUE(db->start()) << db->daemon().stderr_text();
  const std::string start = committed_token(db->daemon());

  // 10000 keys, each inserted then updated 9 times, by 4 writers that own a quarter of the keys each, in
  // transactions of 100 single-row statements (so transactions of different writers interleave in the log).
  constexpr int kKeys = 10000, kVersions = 10, kWriters = 4, kBatch = 100;
  constexpr int kTransactions = kKeys / kBatch * kVersions;
  std::atomic<int> done_transactions{0}, writer_errors{0};
  std::vector<std::thread> writers;
  writers.reserve(kWriters);
  JoinAtExit join_writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      try {
        const auto session = db->session();
        const int first = w * (kKeys / kWriters), last = first + kKeys / kWriters;
        for (int v = 0; v < kVersions; ++v) {
          for (int batch = first; batch < last; batch += kBatch) {
            std::string sql = "BEGIN;";
            for (int k = batch; k < batch + kBatch; ++k)
              sql += v == 0 ? "INSERT INTO " + t + " VALUES (" + std::to_string(k) + ", 0);"
                            : "UPDATE " + t + " SET version = " + std::to_string(v) + " WHERE id = " + std::to_string(k) + ";";
            session->exec(sql + "COMMIT");
            ++done_transactions;
          }
        }
      } catch (const std::exception& e) {
        ++writer_errors;
        ADD_FAILURE() << "writer " << w << ": " << e.what();
      }
    });
    join_writers.threads.push_back(&writers.back());
  }
  // Kill once the daemon has committed part of the stream and the writers are still going.
  const bool some_committed = wait_until([&] {
    const std::string now = committed_token(db->daemon());
    return !now.empty() && now != start && done_transactions.load() >= kTransactions / 5;
  }, 60s);
  const int written_at_kill = done_transactions.load();
  EXPECT_TRUE(some_committed) << db->daemon().stderr_text();
  EXPECT_EQ(db->daemon().stop(SIGKILL), -SIGKILL);
  const std::string at_kill = committed_token(db->daemon());
  std::cout << "killed after " << written_at_kill << " of " << kTransactions << " transactions; committed position "
            << at_kill << "\n";
  EXPECT_LT(written_at_kill, kTransactions) << "the writers finished before the kill: the kill was not mid-stream";
  ASSERT_FALSE(at_kill.empty());
  std::this_thread::sleep_for(500ms);

  db->daemon().start();  // resumes from the committed position while the writers go on
  for (auto& w : writers) w.join();
  ASSERT_EQ(writer_errors.load(), 0);
  const auto records = read_all_changes(*db, t, kKeys * kVersions);
  const std::string err = db->daemon().stderr_text();
  EXPECT_NE(err.find("resuming after " + at_kill), std::string::npos) << "resume from " << at_kill << "\n" << err;
  EXPECT_EQ(err.find("first start"), std::string::npos) << "the restart must resume, not start at the end\n" << err;
  if (db->kind() == "mariadb") {
    // MariaDB resumes by GTID, from exactly the state the first run had committed.
    const size_t g = at_kill.find("gtid=");
    ASSERT_NE(g, std::string::npos) << "a MariaDB position must carry the GTID state: " << at_kill;
    const std::string gtid = at_kill.substr(g + 5, at_kill.find(';', g) - g - 5);
    ASSERT_FALSE(gtid.empty()) << at_kill;
    EXPECT_NE(err.find("from gtid " + gtid + " ("), std::string::npos) << "resume by GTID " << gtid << "\n" << err;
    // Replays restart at a transaction boundary, and each record names the transaction (GTID) it came from.
    for (size_t i = 0; i < records.size(); i += 997) {
      if (!records[i].value) continue;
      const json v = json::parse(*records[i].value);
      unsigned domain = 0, server = 0;
      unsigned long seq = 0;
      const std::string text = v["source"].value("gtid", "");
      EXPECT_EQ(std::sscanf(text.c_str(), "%u-%u-%lu", &domain, &server, &seq), 3) << v.dump();
    }
  }
  EXPECT_EQ(db->daemon().stop(SIGTERM), 0) << err;

  const size_t repeats = expect_every_version_in_commit_order(versions_by_key(records), kKeys, kVersions);
  std::cout << records.size() << " records, " << repeats << " replayed after kill -9\n";
}

long vm_kib(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  return -1;
}

// The server restarted under a writer: the daemon reconnects with backoff and resumes where it was, nothing
// is lost, per-key order is kept. The last change before the shutdown is to a table the daemon does not
// capture (as on any server with other applications): PostgreSQL's fast shutdown waits for the daemon to
// confirm the end of WAL, which a daemon that confirms only its own transactions would never do.
TEST_P(ChangeStream, ServerRestartUnderAWriterLosesNothingAndKeepsOrderPerKey) {
  const auto db = make_database(GetParam());
  const std::string t = db->name("restart");
  const std::string side = db->name("restart_side");
  db->create_table(t, "id INT PRIMARY KEY, version INT NOT NULL");
  db->create_table(side, "id INT PRIMARY KEY, note VARCHAR(20)");
  db->write_config({t}, "snapshot:\n  initial: never\n");
  ASSERT_TRUE(db->start()) << db->daemon().stderr_text();

  constexpr int kKeys = 50, kVersions = 60;
  std::string first = "INSERT INTO " + t + " VALUES ";
  for (int k = 0; k < kKeys; ++k) first += (k ? ", (" : "(") + std::to_string(k) + ", 0)";
  db->exec(first);
  std::atomic<int> progress{1}, failures{0};
  std::atomic<bool> hold{false}, holding{false};
  std::thread writer([&] {
    for (int v = 1; v < kVersions; ++v) {
      for (int batch = 0; batch < kKeys; batch += 10) {
        while (hold) {
          holding = true;
          std::this_thread::sleep_for(5ms);
        }
        holding = false;
        std::string sql = "BEGIN;";
        for (int k = batch; k < batch + 10; ++k)
          sql += "UPDATE " + t + " SET version = " + std::to_string(v) + " WHERE id = " + std::to_string(k) + ";";
        // Idempotent: a batch whose commit we did not hear about may run again (a repeat, not a loss).
        for (int attempt = 0;; ++attempt) {
          try {
            db->session()->exec(sql + "COMMIT");
            break;
          } catch (const std::exception&) {
            ++failures;
            if (attempt > 600) return;
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
  hold = true;
  ASSERT_TRUE(wait_until([&] { return holding.load(); }, 10s));
  db->exec("INSERT INTO " + side + " VALUES (1, 'not captured')");
  std::this_thread::sleep_for(1500ms);  // the daemon has seen and persisted everything captured before it

  // The restart runs beside the test, so that a shutdown that hangs is seen (and ended) from here.
  std::atomic<bool> restarted{false};
  std::atomic<int> restart_rc{-1};
  const auto restart_began = std::chrono::steady_clock::now();
  std::thread restarter([&] {
    restart_rc = db->restart_server();
    restarted = true;
  });
  std::this_thread::sleep_for(200ms);
  hold = false;  // the writer retries until the server is back
  bool daemon_killed = false;
  if (!wait_until([&] { return restarted.load(); }, 60s)) {
    ADD_FAILURE() << "the server did not restart in 60 s while the daemon was connected (a walsender waiting for "
                     "the daemon to confirm the end of WAL?); killing the daemon to let the server stop.\n"
                  << db->daemon().stderr_text();
    db->daemon().stop(SIGKILL);
    daemon_killed = true;
  }
  restarter.join();
  std::cout << "servers.sh restart " << db->kind() << " took "
            << std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - restart_began).count()
            << " ms (exit " << restart_rc.load() << ") at writer version " << progress.load() << "\n";
  EXPECT_EQ(restart_rc.load(), 0) << "servers.sh restart " << db->kind();
  if (daemon_killed) db->daemon().start();  // resumes from its state file: the other checks still apply
  writer.join();
  EXPECT_EQ(progress.load(), kVersions) << "the writer gave up";
  std::cout << "writer retried " << failures.load() << " times around the restart\n";

  const auto records = read_all_changes(*db, t, kKeys * kVersions);
  const std::string err = db->daemon().stderr_text();
  EXPECT_TRUE(db->daemon().process().running()) << err;
  if (!daemon_killed) {
    const auto reconnecting = err.find("reconnecting in");
    ASSERT_NE(reconnecting, std::string::npos) << "the restart went unnoticed?\n" << err;
    // A new replication session after the restart, resumed from the position reached, not the log's end.
    const auto resumed_at = err.find(db->kind() == "postgres" ? "postgres: streaming slot" : "mysql: streaming the binlog",
                                     reconnecting);
    ASSERT_NE(resumed_at, std::string::npos) << "no new replication session after the restart\n" << err;
    const std::string resumed = err.substr(resumed_at, err.find('\n', resumed_at) - resumed_at);
    std::cout << resumed << "\n";
    if (db->kind() == "mariadb") {
      EXPECT_NE(resumed.find(" from gtid "), std::string::npos) << resumed;
    }
  }
  const size_t repeats = expect_every_version_in_commit_order(versions_by_key(records), kKeys, kVersions);
  std::cout << records.size() << " records, " << repeats << " repeated\n";
  EXPECT_EQ(db->daemon().stop(SIGTERM), 0) << db->daemon().stderr_text();
}

// The text of a field's value in a record's raw JSON (a string without its quotes, a number as written);
// the serializer's layout is fixed, so the 500k records need not all be parsed.
std::string raw_field(const std::string& text, const std::string& name) {
  const std::string needle = "\"" + name + "\":";
  const auto at = text.find(needle);
  if (at == std::string::npos) return "<missing " + name + ">";
  size_t start = at + needle.size();
  if (text[start] == '"') return text.substr(start + 1, text.find('"', start + 1) - start - 1);
  return text.substr(start, text.find_first_of(",}", start) - start);
}

// One transaction of 500k rows: every row arrives, once, from that one transaction, the position covers it
// only when all of it is in Kafka, and the daemon's memory stays bounded (the rows far exceed every buffer
// it has: queue, producer).
TEST_P(ChangeStream, ATransactionOf500kRowsArrivesWholeWithBoundedMemory) {
#ifndef __SANITIZE_ADDRESS__
  constexpr int kRows = 500000;
#else
  constexpr int kRows = 100000;  // AddressSanitizer makes the daemon several times slower
#endif
  const auto db = make_database(GetParam());
  const bool pg = db->kind() == "postgres";
  const std::string t = db->name("big");
  db->create_table(t, "id INT PRIMARY KEY, payload VARCHAR(160) NOT NULL, at TIMESTAMP NOT NULL");
  db->write_config({t}, "snapshot:\n  initial: never\n");
  ASSERT_TRUE(db->start()) << db->daemon().stderr_text();

  const auto began = std::chrono::steady_clock::now();
  const auto committed_it = db->exec_and_watch_commit("INSERT INTO " + t +
                                                      " SELECT n, CONCAT('p', n, REPEAT('x', 120)), CURRENT_TIMESTAMP FROM (" +
                                                      db->series(kRows) + ") s");
  const auto inserted = std::chrono::steady_clock::now();
  long peak_rss = 0;
  const bool committed = wait_until([&] {
    peak_rss = std::max(peak_rss, vm_kib(db->daemon().process().pid(), "VmRSS"));
    return committed_it();
  }, 240s);
  const long hwm = vm_kib(db->daemon().process().pid(), "VmHWM");
  const auto ms = [](auto d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); };
  std::cout << kRows << " rows: INSERT took " << ms(inserted - began) << " ms, in Kafka and committed after "
            << ms(std::chrono::steady_clock::now() - began) << " ms; peak RSS (VmHWM) " << hwm / 1024
            << " MiB, highest VmRSS sampled " << peak_rss / 1024 << " MiB\n";
  ASSERT_TRUE(committed) << db->daemon().stderr_text();
  EXPECT_GT(hwm, 0);
#ifndef __SANITIZE_ADDRESS__
  EXPECT_LT(hwm, 100L * 1024) << "peak RSS above 100 MB";
#else
  // AddressSanitizer's quarantine and shadow memory inflate RSS by hundreds of MB: the bound is checked in
  // the normal build only.
#endif
  EXPECT_EQ(db->daemon().stop(SIGTERM), 0) << db->daemon().stderr_text();

  const auto records = consume_all(db->bootstrap(), db->topic_of(t), 120s);
  const char* txn = pg ? "txId" : "gtid";
  std::vector<char> present(kRows + 1, 0);
  size_t distinct = 0, other_transaction = 0;
  std::string first_txn;
  for (size_t i = 0; i < records.size(); ++i) {
    ASSERT_TRUE(records[i].value.has_value()) << i;
    const std::string& text = *records[i].value;
    const int id = std::atoi(raw_field(text, "id").c_str());
    if (i % 1000 == 0) {
      const json v = json::parse(text);
      EXPECT_EQ(v["op"], "c");
      EXPECT_EQ(v["after"]["id"], id);
      EXPECT_EQ(v["after"]["payload"], "p" + std::to_string(id) + std::string(120, 'x'));
    }
    if (id >= 1 && id <= kRows && !present[id]) {
      present[id] = 1;
      ++distinct;
    }
    const std::string record_txn = raw_field(text, txn);
    if (first_txn.empty()) first_txn = record_txn;
    if (record_txn != first_txn) ++other_transaction;
  }
  EXPECT_EQ(distinct, static_cast<size_t>(kRows));
  EXPECT_EQ(records.size(), static_cast<size_t>(kRows)) << "a clean run has no duplicates";
  EXPECT_EQ(other_transaction, 0u) << "every row comes from the one transaction " << first_txn;
}

// A record as the scenario expects it. `before` is the whole old row, as MariaDB's binlog (row image FULL)
// has it; PostgreSQL's default replica identity sends no old row for an update and only the key for a
// delete (the other columns null).
struct Expected {
  std::string op;
  json before, after;

  json before_on(bool pg) const {
    if (!pg || op == "c") return before;
    if (op == "u") return nullptr;
    json key_only = before;
    for (auto& [column, value] : key_only.items())
      if (column != "id") value = nullptr;
    return key_only;
  }
};

void expect_records(const std::vector<ConsumedRecord>& records, size_t from, const std::vector<Expected>& want, bool pg) {
  size_t r = from;
  for (const auto& w : want) {
    ASSERT_LT(r, records.size());
    ASSERT_TRUE(records[r].value.has_value()) << "record " << r << " is a tombstone";
    const json v = json::parse(*records[r].value);
    EXPECT_EQ(v["op"], w.op) << r;
    // Same columns in the same order, same values.
    EXPECT_EQ(v["before"].dump(), w.before_on(pg).dump()) << "record " << r << ": " << *records[r].value;
    EXPECT_EQ(v["after"].dump(), w.after.dump()) << "record " << r << ": " << *records[r].value;
    ++r;
    if (w.op == "d") {
      ASSERT_LT(r, records.size());
      EXPECT_FALSE(records[r].value.has_value()) << "tombstone after the delete, record " << r;
      ++r;
    }
  }
}

// ALTER TABLE mid-stream: each row carries the columns the table had when the row was written, both when
// the daemon follows live and when it reads old changes after the table has changed again (the catalog
// ahead of the log: MariaDB's binlog carries its own column names, PostgreSQL its relation messages).
TEST_P(ChangeStream, AddAndDropColumnMidStreamKeepTheColumnsOfTheirTime) {
  const auto db = make_database(GetParam());
  const bool pg = db->kind() == "postgres";
  const std::string t = db->name("alter");
  db->create_table(t, "id INT PRIMARY KEY, a VARCHAR(10)");  // one partition: delivery order is log order
  db->write_config({t}, "snapshot:\n  initial: never\n");
  ASSERT_TRUE(db->start()) << db->daemon().stderr_text();

  const auto j = [](const char* text) { return json::parse(text); };
  db->exec("INSERT INTO " + t + " VALUES (1, 'one'), (2, 'two')");
  db->exec("ALTER TABLE " + t + " ADD COLUMN b INT DEFAULT 7");
  db->exec("INSERT INTO " + t + " VALUES (3, 'three', 30)");
  db->exec("UPDATE " + t + " SET a = 'uno' WHERE id = 1");  // the stored row predates b: its default
  db->exec("ALTER TABLE " + t + " DROP COLUMN a");
  db->exec("INSERT INTO " + t + " VALUES (4, 40)");
  // A change, the ALTER, a change in one BEGIN ... COMMIT (MariaDB commits at the DDL, PostgreSQL at the end).
  db->exec("BEGIN; INSERT INTO " + t + " VALUES (5, 50); ALTER TABLE " + t + " ADD COLUMN c VARCHAR(10); INSERT INTO " +
           t + " VALUES (6, 60, 'six'); COMMIT");
  db->exec("ALTER TABLE " + t + " DROP COLUMN b; UPDATE " + t + " SET c = 'seven' WHERE id = 6");
  db->exec("DELETE FROM " + t + " WHERE id = 6");
  const std::vector<Expected> live = {
      {"c", nullptr, j(R"({"id":1,"a":"one"})")},
      {"c", nullptr, j(R"({"id":2,"a":"two"})")},
      {"c", nullptr, j(R"({"id":3,"a":"three","b":30})")},
      {"u", j(R"({"id":1,"a":"one","b":7})"), j(R"({"id":1,"a":"uno","b":7})")},
      {"c", nullptr, j(R"({"id":4,"b":40})")},
      {"c", nullptr, j(R"({"id":5,"b":50})")},
      {"c", nullptr, j(R"({"id":6,"b":60,"c":"six"})")},
      {"u", j(R"({"id":6,"c":"six"})"), j(R"({"id":6,"c":"seven"})")},
      {"d", j(R"({"id":6,"c":"seven"})"), nullptr},
  };
  const size_t live_records = live.size() + 1;  // + the delete's tombstone
  auto records = db->read_until(db->topic_of(t), live_records);
  ASSERT_EQ(records.size(), live_records) << db->daemon().stderr_text();
  expect_records(records, 0, live, pg);

  // Catching up: the daemon is stopped while rows are written, the table altered, rows written again.
  ASSERT_EQ(db->daemon().stop(SIGTERM), 0) << db->daemon().stderr_text();
  db->exec("INSERT INTO " + t + " VALUES (10, 'ten'), (11, 'eleven')");
  db->exec("ALTER TABLE " + t + " ADD COLUMN d INT NOT NULL DEFAULT 0, ADD COLUMN e VARCHAR(5) DEFAULT 'e'");
  db->exec("INSERT INTO " + t + " VALUES (12, 'twelve', 12, 'x')");
  db->exec("ALTER TABLE " + t + " DROP COLUMN c");
  db->exec("UPDATE " + t + " SET d = 110 WHERE id = 11");
  db->daemon().start();
  const std::vector<Expected> caught_up = {
      {"c", nullptr, j(R"({"id":10,"c":"ten"})")},
      {"c", nullptr, j(R"({"id":11,"c":"eleven"})")},
      {"c", nullptr, j(R"({"id":12,"c":"twelve","d":12,"e":"x"})")},
      {"u", j(R"({"id":11,"d":0,"e":"e"})"), j(R"({"id":11,"d":110,"e":"e"})")},
  };
  records = db->read_until(db->topic_of(t), live_records + caught_up.size());
  const std::string err = db->daemon().stderr_text();
  ASSERT_EQ(records.size(), live_records + caught_up.size()) << err;
  EXPECT_TRUE(db->daemon().process().running()) << err;
  expect_records(records, live_records, caught_up, pg);
  EXPECT_EQ(db->daemon().stop(SIGTERM), 0) << err;
}



TEST_P(ChangeStream, FlatRecordsAreTheRowsColumnsWithTheAddedFields) {
  const auto db = make_database(GetParam());
  const std::string t = db->name("flat");
  db->create_table(t, "id INT PRIMARY KEY, name VARCHAR(20)");
  if (db->kind() == "postgres") db->exec("ALTER TABLE " + t + " REPLICA IDENTITY FULL");  // whole old rows, as MariaDB
  db->write_config({t}, "snapshot:\n  initial: never\n");
  write_file(db->daemon().config_path(),
             std::regex_replace(read_file(db->daemon().config_path()), std::regex("bootstrap_servers: (.*)\n"),
                                "bootstrap_servers: $1\n    record_shape: flat\n    flat:\n      add_fields: [op, table, db]\n"
                                "      delete_handling: rewrite\n"));
  ASSERT_TRUE(db->start()) << db->daemon().stderr_text();
  db->exec("INSERT INTO " + t + " VALUES (1, 'a')");
  db->exec("UPDATE " + t + " SET name = 'b' WHERE id = 1");
  db->exec("DELETE FROM " + t + " WHERE id = 1");
  const auto records = db->read_until(db->topic_of(t), 4);
  ASSERT_EQ(records.size(), 4u) << db->daemon().stderr_text();
  const json base = {{"__table", t}, {"__db", db->database_name()}};
  auto expect = [&](json v) {
    v.update(base);
    return v;
  };
  EXPECT_EQ(json::parse(*records[0].value), expect({{"id", 1}, {"name", "a"}, {"__op", "c"}, {"__deleted", "false"}}));
  EXPECT_EQ(json::parse(*records[1].value), expect({{"id", 1}, {"name", "b"}, {"__op", "u"}, {"__deleted", "false"}}));
  EXPECT_EQ(json::parse(*records[2].value), expect({{"id", 1}, {"name", "b"}, {"__op", "d"}, {"__deleted", "true"}}));
  EXPECT_FALSE(records[3].value.has_value()) << "the delete's tombstone";
  for (const auto& r : records) EXPECT_EQ(json::parse(*r.key), (json{{"id", 1}}));
}

TEST_P(ChangeStream, TransactionMetadataNumbersEveryChangeAndFramesEachTransaction) {
  const auto db = make_database(GetParam());
  const bool pg = db->kind() == "postgres";
  const std::string a = db->name("txa");
  const std::string b = db->name("txb");
  db->create_table(a, "id INT PRIMARY KEY, v INT");
  db->create_table(b, "id INT PRIMARY KEY, v INT");
  const std::string transactions = db->daemon().name() + ".transaction";
  create_topic(db->bootstrap(), transactions, 1);
  db->write_config({a, b}, "snapshot:\n  initial: never\n");
  write_file(db->daemon().config_path(), std::regex_replace(read_file(db->daemon().config_path()), std::regex("bootstrap_servers: (.*)\n"),
                                                            "bootstrap_servers: $1\n    provide_transaction_metadata: true\n"));
  ASSERT_TRUE(db->start()) << db->daemon().stderr_text();
  db->exec("BEGIN; INSERT INTO " + a + " VALUES (1, 0); INSERT INTO " + b + " VALUES (1, 0); INSERT INTO " + a +
           " VALUES (2, 0); COMMIT");
  db->exec("UPDATE " + b + " SET v = 1 WHERE id = 1");

  const auto frames = db->read_until(transactions, 4);
  ASSERT_EQ(frames.size(), 4u) << db->daemon().stderr_text();
  std::vector<json> f;
  for (const auto& r : frames) f.push_back(json::parse(*r.value));
  EXPECT_EQ(f[0]["status"], "BEGIN");
  EXPECT_TRUE(f[0]["event_count"].is_null());
  EXPECT_EQ(f[1]["status"], "END");
  EXPECT_EQ(f[1]["id"], f[0]["id"]);
  EXPECT_EQ(json::parse(*frames[1].key), (json{{"id", f[0]["id"]}}));
  EXPECT_EQ(f[1]["event_count"], 3);
  const std::string prefix = pg ? "public." : db->database_name() + ".";
  EXPECT_EQ(f[1]["data_collections"],
            (json{{{"data_collection", prefix + a}, {"event_count", 2}}, {{"data_collection", prefix + b}, {"event_count", 1}}}));
  EXPECT_EQ(f[2]["status"], "BEGIN");
  EXPECT_NE(f[2]["id"], f[0]["id"]);
  EXPECT_EQ(f[3]["event_count"], 1);
  if (!pg) {
    const std::string id = f[0]["id"].get<std::string>();
    EXPECT_EQ(std::count(id.begin(), id.end(), '-'), 2) << "a MariaDB GTID (domain-server-sequence): " << id;
  }

  const auto on_a = record_values(db->read_until(db->topic_of(a), 2));
  const auto on_b = record_values(db->read_until(db->topic_of(b), 2));
  ASSERT_EQ(on_a.size(), 2u);
  ASSERT_EQ(on_b.size(), 2u);
  EXPECT_EQ(on_a[0]["transaction"], (json{{"id", f[0]["id"]}, {"total_order", 1}, {"data_collection_order", 1}}));
  EXPECT_EQ(on_b[0]["transaction"], (json{{"id", f[0]["id"]}, {"total_order", 2}, {"data_collection_order", 1}}));
  EXPECT_EQ(on_a[1]["transaction"], (json{{"id", f[0]["id"]}, {"total_order", 3}, {"data_collection_order", 2}}));
  EXPECT_EQ(on_b[1]["transaction"], (json{{"id", f[2]["id"]}, {"total_order", 1}, {"data_collection_order", 1}}));
  if (pg) {
    EXPECT_NE(f[0]["id"].get<std::string>().find(':'), std::string::npos) << "txId:LSN";
  }
}

std::string param_name(const testing::TestParamInfo<std::string>& info) { return info.param; }

INSTANTIATE_TEST_SUITE_P(BothDatabases, ChangeStream, testing::Values("postgres", "mariadb"), param_name);

}  // namespace
}  // namespace tidemark::test
