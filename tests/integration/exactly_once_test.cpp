// Exactly-once into Kafka (sink.kafka.exactly_once), for both sources: the real daemon, a real PostgreSQL 15
// / MariaDB 10.11, the real broker, and a reader that is not Tidemark's code (kcat with
// isolation.level=read_committed). While concurrent writers insert, update (a per-row version goes up on
// every update), change keys and delete, and a DBLog snapshot of the table runs, the daemon is killed with
// SIGKILL at random moments and restarted. The committed records must then hold every change exactly once:
// the fold equals the table, no key's version goes back, no change record and no snapshot row repeats.

#include <gtest/gtest.h>

#include <csignal>
#include <random>
#include <set>
#include <thread>
#include <tuple>

#include <nlohmann/json.hpp>

#include "database.hpp"
#include "process.hpp"
#include "snapshot_fold.hpp"

namespace tidemark::test {
namespace {

using namespace std::chrono_literals;

struct KillCase {
  std::string database;
  uint64_t seed;
  int kills;
};

std::string case_name(const testing::TestParamInfo<KillCase>& info) {
  return info.param.database + "_seed" + std::to_string(info.param.seed);
}

// Snapshot rows delivered more than once ((id, version) of op "r" records seen before).
size_t repeated_snapshot_rows(const std::vector<ConsumedRecord>& records) {
  std::set<std::pair<int64_t, int64_t>> seen;
  size_t repeats = 0;
  for (const auto& value : record_values(records)) {
    if (value.value("op", "") != "r") continue;
    const auto& after = value.at("after");
    repeats += !seen.emplace(after.at("id").get<int64_t>(), after.at("version").get<int64_t>()).second;
  }
  return repeats;
}

bool streaming_log(const std::string& log) { return log.find(" streaming: source ") != std::string::npos; }
bool streaming(DaemonRunner& daemon) { return streaming_log(daemon.stderr_text()); }

class ExactlyOnceKill : public testing::TestWithParam<KillCase> {};

TEST_P(ExactlyOnceKill, CommittedRecordsHoldEveryChangeOnceAcrossKillNine) {
  const KillCase param = GetParam();
  auto db = make_database(param.database);
  db->sink_yaml = "sink:\n  type: kafka\n  kafka:\n    bootstrap_servers: " + db->bootstrap() +
                  "\n    exactly_once: true\n    transaction_interval_ms: 50\n";
  // About 100 chunks at most 20 a second: the snapshot spans several of the kills.
  const int64_t rows = 20'000;
  db->create(rows, "snapshot:\n  initial: never\n  chunk_size: 200\n  max_chunks_per_second: 20\n");
  ASSERT_TRUE(db->start()) << db->daemon().stderr_text();

  ConcurrentWriters writers([&] { return db->session(); }, db->table(), 4, param.seed, rows);
  std::this_thread::sleep_for(300ms);
  db->signal("eos-" + db->table(), "execute-snapshot",
             "{\"data-collections\": [\"" + db->qualified() + "\"], \"type\": \"incremental\"}");

  std::mt19937_64 rng(param.seed);
  std::uniform_int_distribution<int> run_ms(150, 1500);
  std::uniform_int_distribution<int> down_ms(0, 400);
  int during_snapshot = 0;
  for (int k = 0; k < param.kills; ++k) {
    // The first half falls while the snapshot runs (mostly), the rest on the log alone.
    if (k == param.kills / 2) {
      ASSERT_TRUE(wait_until([&] { return snapshots_done(db->daemon(), 1); }, 240s)) << db->daemon().stderr_text();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(run_ms(rng)));
    during_snapshot += !snapshots_done(db->daemon(), 1);
    db->daemon().stop(SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(down_ms(rng)));  // the writers go on meanwhile
    db->daemon().start();
    ASSERT_TRUE(wait_until([&] { return streaming(db->daemon()); }, 60s))
        << "the daemon did not come back after kill " << k + 1 << ":\n" << db->daemon().stderr_text();
  }
  ASSERT_TRUE(wait_until([&] { return snapshots_done(db->daemon(), 1); }, 240s)) << db->daemon().stderr_text();
  writers.stop();
  ASSERT_GT(writers.operations(), 500u) << "the writers barely ran: the test would prove little";
  EXPECT_GT(during_snapshot, 0) << "no kill fell during the snapshot";
  EXPECT_LT(during_snapshot, param.kills) << "no kill fell after the snapshot";

  const auto expected = db->contents();
  std::vector<ConsumedRecord> records;
  ASSERT_TRUE(wait_until([&] {
    records = consume_committed_with_kcat(db->bootstrap(), db->topic());
    return fold(records) == expected;
  }, 90s)) << "the committed records never folded to the table";
  const FoldSummary summary = expect_fold(records, expected, /*allow_replays=*/false);
  EXPECT_EQ(summary.replays, 0u) << "a change was committed twice";
  EXPECT_EQ(repeated_snapshot_rows(records), 0u) << "a snapshot row was committed twice";
  size_t untouched = 0;
  for (const auto& [row_id, version] : expected) untouched += row_id <= rows && version == 0;
  EXPECT_GE(summary.reads, untouched);
  std::cout << param.database << ": " << param.kills << " kills (" << during_snapshot << " during the snapshot), "
            << writers.operations() << " writes, " << summary.reads << " snapshot rows, " << summary.changes
            << " changes, all once\n";
  EXPECT_EQ(db->daemon().stop(SIGTERM), 0) << db->daemon().stderr_text();
}

// One source transaction far larger than sink.kafka.transaction_max_bytes is split across Kafka
// transactions; killed in the middle of it, the restarted daemon passes over the changes already committed.
class ExactlyOnceSplit : public testing::TestWithParam<std::string> {};

TEST_P(ExactlyOnceSplit, ALargeTransactionKilledMidwayIsCommittedOnce) {
  auto db = make_database(GetParam());
  db->sink_yaml = "sink:\n  type: kafka\n  kafka:\n    bootstrap_servers: " + db->bootstrap() +
                  "\n    exactly_once: true\n    transaction_max_bytes: 65536\n";
  const std::string table = db->name("big");
  db->create_table(table, "id BIGINT PRIMARY KEY, version BIGINT NOT NULL, payload TEXT");
  db->write_config({table}, "");
  ASSERT_TRUE(db->start()) << db->daemon().stderr_text();
  const int64_t rows = 40'000;
  // A position first: before any, a restart would not begin where this run did, so nothing is split.
  const auto committed = db->exec_and_watch_commit("INSERT INTO " + table + " VALUES (" + std::to_string(rows + 1) + ", 0, 'first')");
  ASSERT_TRUE(wait_until(committed, 30s)) << db->daemon().stderr_text();
  db->exec("INSERT INTO " + table + " SELECT n, 0, 'payload of a row in one large transaction' FROM (" + db->series(rows) +
           ") s");
  // Killed once some of the transaction's parts are committed and before the last.
  ASSERT_TRUE(wait_until([&] { return db->daemon().stderr_text().find("committing its first") != std::string::npos; }, 60s))
      << db->daemon().stderr_text();
  std::this_thread::sleep_for(300ms);
  db->daemon().stop(SIGKILL);
  const size_t before_restart = consume_committed_with_kcat(db->bootstrap(), db->topic_of(table)).size();
  EXPECT_GT(before_restart, 1u) << "nothing was committed before the kill: the split was not exercised";
  EXPECT_LT(before_restart, static_cast<size_t>(rows + 1)) << "the whole transaction was committed before the kill";
  db->daemon().start();

  std::vector<ConsumedRecord> records;
  ASSERT_TRUE(wait_until([&] {
    records = consume_committed_with_kcat(db->bootstrap(), db->topic_of(table));
    return records.size() >= static_cast<size_t>(rows + 1);
  }, 120s)) << records.size() << " records\n" << db->daemon().stderr_text();
  std::this_thread::sleep_for(500ms);
  records = consume_committed_with_kcat(db->bootstrap(), db->topic_of(table));
  std::set<int64_t> ids;
  for (const auto& value : record_values(records)) {
    EXPECT_EQ(value.value("op", ""), "c");
    EXPECT_TRUE(ids.insert(value.at("after").at("id").get<int64_t>()).second)
        << "row " << value["after"]["id"] << " committed twice";
  }
  EXPECT_EQ(records.size(), static_cast<size_t>(rows + 1));
  EXPECT_EQ(ids.size(), static_cast<size_t>(rows + 1));
  EXPECT_NE(db->daemon().stderr_text().find("passed over the "), std::string::npos) << db->daemon().stderr_text();
  std::cout << GetParam() << ": " << before_restart << " of " << rows << " rows committed before the kill\n";
  EXPECT_EQ(db->daemon().stop(SIGTERM), 0) << db->daemon().stderr_text();
}

// A second instance of the same pipeline (ha.enabled) on the same configuration, as on another machine:
// its own state file (a cache) and name.
class Standby {
 public:
  Standby(const DaemonRunner& leader, const std::string& instance) {
    std::string yaml = read_file(leader.config_path());
    replace(yaml, leader.state_path(), dir_.file("state.json"));
    replace(yaml, "instance: a", "instance: " + instance);
    config_ = dir_.file("tidemark.yaml");
    write_file(config_, yaml);
  }
  void start() { process_ = std::make_unique<ChildProcess>(std::vector<std::string>{TIDEMARK_BINARY, "run", "--config", config_},
                                                           dir_.file("stdout.log"), dir_.file("stderr.log")); }
  ChildProcess& process() { return *process_; }
  std::string log() const { return read_file(dir_.file("stderr.log")); }
  const std::string& config() const { return config_; }

 private:
  static void replace(std::string& text, const std::string& from, const std::string& to) {
    const size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  }
  TempDir dir_;
  std::string config_;
  std::unique_ptr<ChildProcess> process_;
};

bool leads(const std::string& log) { return log.find(" holds the lease of pipeline ") != std::string::npos; }

// Two instances started together: one leads, one waits. The leader is killed: the standby takes over. The new
// leader is then paused (SIGSTOP) until the first instance, restarted as a standby, has taken over; resumed,
// the paused one must write nothing that counts and stop. Writers run all along; the committed records
// hold every change once.
class ExactlyOnceTakeover : public testing::TestWithParam<std::string> {};

TEST_P(ExactlyOnceTakeover, StandbyTakesOverAndAPausedLeaderIsFenced) {
  auto db = make_database(GetParam());
  db->sink_yaml = "sink:\n  type: kafka\n  kafka:\n    bootstrap_servers: " + db->bootstrap() +
                  "\n    exactly_once: true\n    transaction_interval_ms: 50\n";
  const int64_t rows = 2'000;
  db->create(rows, "snapshot:\n  initial: never\n");
  db->write_config({db->table()}, "snapshot:\n  initial: never\n",
                   "ha:\n  enabled: true\n  lease_timeout_ms: 3000\n  instance: a\n");
  Standby b(db->daemon(), "b");
  ASSERT_TRUE(db->start()) << db->daemon().stderr_text();
  b.start();
  ASSERT_TRUE(wait_until([&] { return b.log().find("is a standby for pipeline") != std::string::npos; }, 30s)) << b.log();
  // PostgreSQL names the leader by its ha.instance; MySQL by its connection.
  EXPECT_NE(b.log().find(GetParam() == "postgres" ? "; a leads" : "; connection "), std::string::npos)
      << "the standby does not name the leader:\n" << b.log();
  const CliResult status = run_tidemark(db->daemon(), {"status", "--config", b.config()});
  if (GetParam() == "postgres") EXPECT_NE(status.out.find("leader: a"), std::string::npos) << status.out << status.err;
  else EXPECT_NE(status.out.find("leader: connection "), std::string::npos) << status.out << status.err;

  ConcurrentWriters writers([&] { return db->session(); }, db->table(), 4, 21, rows);
  std::this_thread::sleep_for(1500ms);
  const auto killed = std::chrono::steady_clock::now();
  db->daemon().stop(SIGKILL);
  ASSERT_TRUE(wait_until([&] { return leads(b.log()) && streaming_log(b.log()); }, 30s)) << b.log();
  const auto took_over = std::chrono::steady_clock::now() - killed;
  EXPECT_LT(took_over, 10s) << "takeover after the leader's death";

  db->daemon().start();  // a again, now the standby
  ASSERT_TRUE(wait_until([&] { return db->daemon().stderr_text().find("is a standby for pipeline") != std::string::npos; }, 30s))
      << db->daemon().stderr_text();
  std::this_thread::sleep_for(1000ms);
  b.process().signal(SIGSTOP);
  const auto paused = std::chrono::steady_clock::now();
  ASSERT_TRUE(wait_until([&] { return leads(db->daemon().stderr_text()) && streaming(db->daemon()); }, 60s))
      << db->daemon().stderr_text();
  const auto took_over_paused = std::chrono::steady_clock::now() - paused;
  std::this_thread::sleep_for(1000ms);
  b.process().signal(SIGCONT);
  const auto b_exit = b.process().wait_for_exit(30s);
  ASSERT_TRUE(b_exit.has_value()) << "the resumed old leader kept running:\n" << b.log();
  EXPECT_NE(*b_exit, 0) << b.log();
  const std::string b_log = b.log();
  EXPECT_TRUE(b_log.find("lost the lease") != std::string::npos || b_log.find("fenced") != std::string::npos) << b_log;

  std::this_thread::sleep_for(1000ms);
  writers.stop();
  // Rows the writers never touched have no record (no snapshot here).
  std::map<int64_t, int64_t> expected;
  for (const auto& [id, version] : db->contents())
    if (id > rows || version > 0) expected.emplace(id, version);
  std::vector<ConsumedRecord> records;
  EXPECT_TRUE(wait_until([&] {
    records = consume_committed_with_kcat(db->bootstrap(), db->topic());
    return fold(records) == expected;
  }, 90s)) << "the committed records never folded to the table\n" << db->daemon().stderr_text();
  const FoldSummary summary = expect_fold(records, expected, /*allow_replays=*/false);
  EXPECT_EQ(summary.replays, 0u) << "a change was committed twice";
  std::cout << GetParam() << ": takeover after kill -9 in "
            << std::chrono::duration_cast<std::chrono::milliseconds>(took_over).count() << " ms, after SIGSTOP in "
            << std::chrono::duration_cast<std::chrono::milliseconds>(took_over_paused).count() << " ms (lease timeout 3000 ms); "
            << writers.operations() << " writes, " << summary.changes << " changes, all once\n";
  EXPECT_EQ(db->daemon().stop(SIGTERM), 0) << db->daemon().stderr_text();
}

// A transaction the brokers keep refusing (a record larger than the topic's max.message.bytes) is aborted
// and sent again as librdkafka asks, a few times, then the daemon stops with status 2 and names the record's
// problem; nothing of it is committed.
TEST(ExactlyOnce, ATransactionThatKeepsFailingIsAbortedRetriedAndThenFatal) {
  DaemonRunner daemon(real_kafka_bootstrap(), GeneratorSettings{.tables = 1, .keys = 10, .total_events = 50,
                                                                .transaction_size = 5, .row_bytes = 3000});
  daemon.write_config("sink:\n  type: kafka\n  kafka:\n    bootstrap_servers: " + real_kafka_bootstrap() +
                      "\n    exactly_once: true\n    topic_creation:\n      enabled: true\n      config:\n"
                      "        max.message.bytes: \"2000\"\n");
  daemon.start();
  const auto status = daemon.stop(0, 60s);  // signal 0: only waits for the exit
  ASSERT_TRUE(status.has_value()) << daemon.stderr_text();
  EXPECT_EQ(*status, 2) << daemon.stderr_text();
  const std::string log = daemon.stderr_text();
  EXPECT_NE(log.find("aborting the transaction and sending its"), std::string::npos) << log;
  EXPECT_NE(log.find("aborted and sent again 5 times"), std::string::npos) << log;
  EXPECT_NE(log.find("larger than Kafka accepts"), std::string::npos) << log;
  EXPECT_TRUE(consume_committed_with_kcat(real_kafka_bootstrap(), daemon.name() + ".generator.t0").empty());
}

INSTANTIATE_TEST_SUITE_P(Databases, ExactlyOnceTakeover, testing::Values("postgres", "mariadb"));

INSTANTIATE_TEST_SUITE_P(Databases, ExactlyOnceSplit, testing::Values("postgres", "mariadb"));

INSTANTIATE_TEST_SUITE_P(Databases, ExactlyOnceKill,
                         testing::Values(KillCase{"postgres", 11, 12}, KillCase{"mariadb", 12, 12}), case_name);

}  // namespace
}  // namespace tidemark::test
