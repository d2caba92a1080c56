// DBLog snapshots end to end, for both sources: the real daemon, a real PostgreSQL 15 / MariaDB 10.11, the
// real Kafka broker and the tests' own consumer. The oracle is the fold property: while a snapshot of a
// 100k-row table runs, concurrent writers insert, update (a per-row version column goes up on every
// update), change keys and delete; folding the topic by key must give the table's final contents, and no
// key's version may go backwards in delivery order.

#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "mysql_fixture.hpp"
#include "pg_fixture.hpp"
#include "process.hpp"
#include "snapshot_fold.hpp"

namespace tidemark::test {
namespace {

using namespace std::chrono_literals;

constexpr int64_t kRows = 100'000;

// What differs between the two databases; the scenarios below are written once.
class Database {
 public:
  virtual ~Database() = default;
  virtual DaemonRunner& daemon() = 0;
  virtual std::string table() const = 0;          // unqualified name of the test table
  virtual std::string qualified() const = 0;      // as a snapshot request names it
  virtual std::string topic() const = 0;
  virtual std::string bootstrap() const = 0;
  // Creates the table (id, version, payload) with ids 1..rows, its topic, and the daemon's config.
  virtual void create(int64_t rows, const std::string& snapshot_yaml) = 0;
  virtual bool start() = 0;  // starts the daemon and waits until it streams
  virtual void exec(const std::string& sql) = 0;
  virtual std::map<int64_t, int64_t> contents() = 0;
  virtual std::unique_ptr<SqlSession> session() = 0;
  void signal(const std::string& id, const std::string& type, const std::string& data) {
    exec("INSERT INTO tidemark_signal (id, type, data) VALUES ('" + id + "', '" + type + "', '" + data + "')");
  }
};

class Postgres final : public Database {
 public:
  DaemonRunner& daemon() override { return f_.daemon; }
  std::string table() const override { return f_.table("snap"); }
  std::string qualified() const override { return "public." + table(); }
  std::string topic() const override { return f_.topic(table()); }
  std::string bootstrap() const override { return f_.bootstrap; }
  void create(int64_t rows, const std::string& snapshot_yaml) override {
    pg_exec(f_.pg, "CREATE TABLE " + table() + " (id bigint PRIMARY KEY, version bigint NOT NULL, payload text)");
    pg_exec(f_.pg, "INSERT INTO " + table() + " SELECT g, 0, repeat('p', 180) FROM generate_series(1, " +
                       std::to_string(rows) + ") g");
    create_topic(f_.bootstrap, topic(), 1);  // one partition: delivery order is log order
    f_.write_config({table()}, PgConfigOptions{.snapshot_yaml = snapshot_yaml});
  }
  bool start() override { return f_.start_and_wait_for_slot(); }
  void exec(const std::string& sql) override { pg_exec(f_.pg, sql); }
  std::map<int64_t, int64_t> contents() override {
    std::map<int64_t, int64_t> out;
    for (const auto& line : pg_query(f_.pg, "SELECT id || ':' || version FROM " + table())) {
      const size_t colon = line.find(':');
      out[std::stoll(line.substr(0, colon))] = std::stoll(line.substr(colon + 1));
    }
    return out;
  }
  std::unique_ptr<SqlSession> session() override { return open_pg_session(); }

 private:
  PgFixture f_;
};

class MariaDb final : public Database {
 public:
  DaemonRunner& daemon() override { return f_.daemon; }
  std::string table() const override { return f_.table("snap"); }
  std::string qualified() const override { return f_.db.database + "." + table(); }
  std::string topic() const override { return f_.topic(table()); }
  std::string bootstrap() const override { return f_.bootstrap; }
  void create(int64_t rows, const std::string& snapshot_yaml) override {
    f_.create_table(table(), "id BIGINT PRIMARY KEY, version BIGINT NOT NULL, payload TEXT");
    mysql_exec(f_.db, "INSERT INTO " + table() + " SELECT seq, 0, REPEAT('p', 180) FROM seq_1_to_" + std::to_string(rows));
    f_.write_config({table()}, MySqlConfigOptions{.snapshot_yaml = snapshot_yaml});
  }
  bool start() override { return f_.start_and_wait_until_streaming(); }
  void exec(const std::string& sql) override { mysql_exec(f_.db, sql); }
  std::map<int64_t, int64_t> contents() override {
    MySqlSession s(f_.db);
    std::map<int64_t, int64_t> out;
    for (const auto& row : s.rows("SELECT id, version FROM " + table())) out[std::stoll(*row[0])] = std::stoll(*row[1]);
    return out;
  }
  std::unique_ptr<SqlSession> session() override { return open_mysql_session(); }

 private:
  MySqlFixture f_;
};

std::unique_ptr<Database> make_database(const std::string& kind) {
  if (kind == "postgres") return std::make_unique<Postgres>();
  return std::make_unique<MariaDb>();
}

// The snapshot part of the daemon's state file (null before the first persist).
nlohmann::json snapshot_state(DaemonRunner& daemon) {
  const std::string text = read_file(daemon.state_path());
  if (text.empty()) return nullptr;
  const auto state = nlohmann::json::parse(text, nullptr, false);
  if (state.is_discarded() || !state.contains("extensions") || !state["extensions"].contains("snapshot")) return nullptr;
  return state["extensions"]["snapshot"];
}

bool snapshots_done(DaemonRunner& daemon, uint64_t tables) {
  const auto s = snapshot_state(daemon);
  return s.is_object() && s.value("tables_done", uint64_t{0}) >= tables && !s.contains("current") && s["queue"].empty();
}

uint64_t chunks_done(DaemonRunner& daemon) {
  const auto s = snapshot_state(daemon);
  if (!s.is_object() || !s.contains("current")) return 0;
  return s["current"].value("chunks", uint64_t{0});
}

// Waits until the topic folds to the table's contents (the daemon has caught up), then checks everything.
FoldSummary check_topic(Database& db, bool allow_replays) {
  const auto expected = db.contents();
  std::vector<ConsumedRecord> records;
  wait_until([&] {
    records = consume_all(db.bootstrap(), db.topic());
    return fold(records) == expected;
  }, 90s);
  return expect_fold(records, expected, allow_replays);
}

struct FoldCase {
  std::string database;
  uint64_t seed;
  bool kill;
};

std::string case_name(const testing::TestParamInfo<FoldCase>& info) {
  return info.param.database + "_seed" + std::to_string(info.param.seed) + (info.param.kill ? "_kill9" : "");
}

class SnapshotFold : public testing::TestWithParam<FoldCase> {};

TEST_P(SnapshotFold, TopicFoldsToTheTableWhileWritersRun) {
  const FoldCase param = GetParam();
  auto db = make_database(param.database);
  db->create(kRows, "snapshot:\n  initial: never\n  chunk_size: 1000\n  max_chunks_per_second: 25\n");
  ASSERT_TRUE(db->start()) << db->daemon().stderr_text();

  ConcurrentWriters writers([&] { return db->session(); }, db->table(), 4, param.seed, kRows);
  std::this_thread::sleep_for(300ms);
  const std::string id = "fold-" + db->table();
  db->signal(id, "execute-snapshot", "{\"data-collections\": [\"" + db->qualified() + "\"], \"type\": \"incremental\"}");

  if (param.kill) {
    ASSERT_TRUE(wait_until([&] { return chunks_done(db->daemon()) >= 15; }, 120s)) << db->daemon().stderr_text();
    db->daemon().stop(SIGKILL);
    std::this_thread::sleep_for(1s);  // the writers go on while the daemon is down
    db->daemon().start();
  }
  ASSERT_TRUE(wait_until([&] { return snapshots_done(db->daemon(), 1); }, 240s)) << db->daemon().stderr_text();
  writers.stop();
  ASSERT_GT(writers.operations(), 500u) << "the writers barely ran: the test would prove little";

  const FoldSummary summary = check_topic(*db, param.kill);
  // Every initial row the writers did not touch can only have come from the snapshot.
  EXPECT_GT(summary.reads, static_cast<size_t>(kRows / 2));
  EXPECT_GT(summary.changes, 500u);
  if (param.kill) {
    EXPECT_NE(db->daemon().stderr_text().find("continuing " + db->qualified()), std::string::npos)
        << "the restarted daemon did not continue the snapshot:\n" << db->daemon().stderr_text();
    // Continued from its last chunk, not from the start: far fewer than two full passes.
    EXPECT_LT(summary.reads, static_cast<size_t>(kRows * 3 / 2));
  } else {
    EXPECT_EQ(summary.replays, 0u);
  }
  std::cout << param.database << " seed " << param.seed << ": " << writers.operations() << " writes, "
            << summary.reads << " snapshot rows, " << summary.changes << " changes, " << summary.replays
            << " replays\n";
  EXPECT_EQ(db->daemon().stop(SIGTERM), 0) << db->daemon().stderr_text();
}

INSTANTIATE_TEST_SUITE_P(Databases, SnapshotFold,
                         testing::Values(FoldCase{"postgres", 1, false}, FoldCase{"postgres", 2, false},
                                         FoldCase{"postgres", 3, true}, FoldCase{"mariadb", 1, false},
                                         FoldCase{"mariadb", 2, false}, FoldCase{"mariadb", 3, true}),
                         case_name);

}  // namespace
}  // namespace tidemark::test
