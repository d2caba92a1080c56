// DBLog snapshots end to end, for both sources: the real daemon, a real PostgreSQL 15 / MariaDB 10.11, the
// real Kafka broker and the tests' own consumer. The oracle is the fold property: while a snapshot of a
// 100k-row table runs, concurrent writers insert, update (a per-row version column goes up on every
// update), change keys and delete; folding the topic by key must give the table's final contents, and no
// key's version may go backwards in delivery order.

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "process.hpp"
#include "database.hpp"
#include "snapshot_fold.hpp"

namespace tidemark::test {
namespace {

using namespace std::chrono_literals;

// 100k rows; scripts/test.sh asks for fewer under the sanitizers (TIDEMARK_SNAPSHOT_TEST_ROWS), which run
// several times slower on the same two cores.
int64_t table_rows() {
  const char* rows = std::getenv("TIDEMARK_SNAPSHOT_TEST_ROWS");
  return rows && *rows ? std::stoll(rows) : 100'000;
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
  // Unpaced: the worker reads ahead, up to 4 windows in flight, each opened on the previous one's high
  // watermark. Paced (25 chunks/s): about one window at a time, each with its own low watermark.
  bool read_ahead;
};

std::string case_name(const testing::TestParamInfo<FoldCase>& info) {
  return info.param.database + "_seed" + std::to_string(info.param.seed) + (info.param.kill ? "_kill9" : "");
}

class SnapshotFold : public testing::TestWithParam<FoldCase> {};

TEST_P(SnapshotFold, TopicFoldsToTheTableWhileWritersRun) {
  const FoldCase param = GetParam();
  auto db = make_database(param.database);
  const int64_t rows = table_rows();
  // Paced: about 100 chunks at most 25 a second, so the snapshot lasts seconds, with writers all along.
  // Read ahead: 250 smaller chunks as fast as the windows allow; 1000 when the daemon is to be killed midway.
  // Their size adapts to Kafka's acknowledgements, up to four times as large: windows of several sizes in flight.
  const int64_t chunks = param.kill ? 1000 : 250;
  const int64_t chunk = std::max<int64_t>(rows / chunks, 10);
  const std::string pacing = param.read_ahead ? "  chunk_size: " + std::to_string(chunk) + "\n  max_chunk_size: " +
                                                    std::to_string(4 * chunk) +
                                                    "\n  chunks_in_flight: 4\n  max_backlog_events: 1000000\n"
                                              : "  chunk_size: " + std::to_string(std::max<int64_t>(rows / 100, 10)) +
                                                    "\n  max_chunks_per_second: 25\n";
  db->create(rows, "snapshot:\n  initial: never\n" + pacing);
  ASSERT_TRUE(db->start()) << db->daemon().stderr_text();

  ConcurrentWriters writers([&] { return db->session(); }, db->table(), 4, param.seed, rows);
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
  // Initial rows the writers never touched (id <= rows, version 0) have no log record: only the snapshot
  // can have delivered them, and the fold above found them all.
  size_t untouched = 0;
  for (const auto& [row_id, version] : db->contents()) untouched += row_id <= rows && version == 0;
  EXPECT_GT(untouched, static_cast<size_t>(rows / 20)) << "the writers touched nearly every row: the snapshot proved little";
  EXPECT_GE(summary.reads, untouched);
  EXPECT_GT(summary.changes, 500u);
  if (param.kill) {
    EXPECT_NE(db->daemon().stderr_text().find("continuing " + db->qualified()), std::string::npos)
        << "the restarted daemon did not continue the snapshot:\n" << db->daemon().stderr_text();
    // Continued from its last chunk, not from the start: far fewer than two full passes.
    EXPECT_LT(summary.reads, static_cast<size_t>(rows * 3 / 2));
  } else {
    EXPECT_EQ(summary.replays, 0u);
  }
  if (param.read_ahead) {
    // The worker's account of the (last) run that read the table's last chunk.
    const std::string log = db->daemon().stderr_text();
    static const std::regex read_line(R"(every chunk read \((\d+) windows, (\d+) of them opened on the previous high )"
                                      R"(watermark, up to (\d+) in flight, chunks of up to (\d+) rows\))");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(log, m, read_line)) << log;
    EXPECT_GT(std::stoul(m[2]), 0u) << "no window was chained onto its predecessor's high watermark: " << m[0];
    // Unpaced, only the first window (and one after a redo) writes its own low watermark: waiting for the
    // backlog to drain does not break the chain.
    EXPECT_GE(std::stoul(m[2]) * 2, std::stoul(m[1])) << "most windows wrote their own low watermark: " << m[0];
    EXPECT_GT(std::stoul(m[3]), 1u) << "never more than one window in flight: " << m[0];
    EXPECT_GE(std::stoll(m[4]), chunk) << m[0];
    EXPECT_LE(std::stoll(m[4]), 4 * chunk) << "a chunk larger than snapshot.max_chunk_size: " << m[0];
    std::cout << m[0] << "\n";
  }
  std::cout << param.database << " seed " << param.seed << ": " << writers.operations() << " writes, "
            << summary.reads << " snapshot rows, " << summary.changes << " changes, " << summary.replays
            << " replays\n";
  EXPECT_EQ(db->daemon().stop(SIGTERM), 0) << db->daemon().stderr_text();
}

INSTANTIATE_TEST_SUITE_P(Databases, SnapshotFold,
                         testing::Values(FoldCase{"postgres", 1, false, true}, FoldCase{"postgres", 2, false, false},
                                         FoldCase{"postgres", 3, true, true}, FoldCase{"mariadb", 1, false, true},
                                         FoldCase{"mariadb", 2, false, false}, FoldCase{"mariadb", 3, true, true}),
                         case_name);

}  // namespace
}  // namespace tidemark::test
