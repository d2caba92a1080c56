// The change stream end to end, each scenario written once for both databases (real PostgreSQL 15 and
// MariaDB 10.11, the real tidemark binary, the real Kafka broker): inserts, updates, a key change, a delete
// and a transaction over two tables; kill -9 during 100k changes. What only one database has (TOAST,
// REPLICA IDENTITY FULL, TRUNCATE, GTIDs, full before images, slots, purged binlogs) is tested in the
// postgres_* and mysql_* test files.

#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "pg_fixture.hpp"  // distinct_changes, versions_by_key, expect_every_version_in_commit_order
#include "process.hpp"
#include "snapshot_database.hpp"

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
  std::vector<ConsumedRecord> records;
  const bool complete = wait_until([&] {
    records = consume_all(db->bootstrap(), db->topic_of(t));
    return distinct_changes(records).size() == static_cast<size_t>(kKeys * kVersions);
  }, 120s);
  const std::string err = db->daemon().stderr_text();
  EXPECT_TRUE(complete) << distinct_changes(records).size() << " of " << kKeys * kVersions << " changes\n" << err;
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

std::string param_name(const testing::TestParamInfo<std::string>& info) { return info.param; }

INSTANTIATE_TEST_SUITE_P(BothDatabases, ChangeStream, testing::Values("postgres", "mariadb"), param_name);

}  // namespace
}  // namespace tidemark::test
