// The database sink end to end: a real MariaDB 10.11 or PostgreSQL 15 source, the real daemon, and the
// other database as the target. The oracle: while an initial DBLog snapshot of the table runs, concurrent
// writers insert, update (a per-row version goes up on every update), change keys and delete in the
// source; once they stop, the target table must equal the source table row for row (id, version and
// payload), also after kill -9 of the daemon mid-snapshot and mid-stream (exactly-once apply: the target's
// position table moves in the same transaction as the rows), and after a restart of the target server
// under load (the sink retries with backoff and finds out whether its COMMIT landed).

#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <atomic>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "database.hpp"
#include "kafka_client.hpp"
#include "mysql_client.hpp"
#include "pg_client.hpp"
#include "process.hpp"
#include "snapshot_fold.hpp"

namespace tidemark::test {
namespace {

using namespace std::chrono_literals;

int64_t table_rows() {
  const char* rows = std::getenv("TIDEMARK_SNAPSHOT_TEST_ROWS");
  return rows && *rows ? std::stoll(rows) / 2 : 50'000;
}

// The sink section that applies the pipeline to `target` ("postgres" or "mariadb"), as the test user.
std::string sink_yaml(const std::string& target) {
  if (target == "postgres") {
    const PgTarget pg = real_postgres();
    return "sink:\n  type: postgres\n  database:\n    host: " + pg.host + "\n    port: " + pg.port + "\n    user: " +
           pg.user + "\n    password: " + pg.password + "\n    database: " + pg.database + "\n    tls:\n      mode: disable\n";
  }
  const MySqlTarget my = real_mysql();
  return "sink:\n  type: mysql\n  database:\n    host: " + my.host + "\n    port: " + my.port + "\n    user: " + my.user +
         "\n    password: " + my.password + "\n    database: " + my.database + "\n    tls:\n      mode: disable\n";
}

// Every row of `table` as "id:version:md5(payload)", in id order: the same text on both databases.
std::vector<std::string> rows_of(Database& db, const std::string& table) {
  if (db.kind() == "postgres")
    return db.column("SELECT id || ':' || version || ':' || md5(payload) FROM " + table + " ORDER BY id");
  return db.column("SELECT CONCAT(id, ':', version, ':', MD5(payload)) FROM " + table + " ORDER BY id");
}

// The pipeline's state as the target's position table holds it; null before the first commit.
nlohmann::json applied_state(Database& target, const std::string& pipeline) {
  std::vector<std::string> rows;
  try {
    rows = target.column("SELECT state FROM tidemark_apply_position WHERE pipeline = '" + pipeline + "'");
  } catch (const std::exception&) {
    return nullptr;  // the daemon has not created the table yet
  }
  if (rows.empty()) return nullptr;
  const auto state = nlohmann::json::parse(rows[0], nullptr, false);
  return state.is_discarded() ? nlohmann::json(nullptr) : state;
}

nlohmann::json applied_snapshot(Database& target, const std::string& pipeline) {
  const nlohmann::json state = applied_state(target, pipeline);
  return state.is_object() && state.contains("snapshot") ? state["snapshot"] : nlohmann::json(nullptr);
}

bool snapshot_applied(Database& target, const std::string& pipeline) {
  const nlohmann::json s = applied_snapshot(target, pipeline);
  return s.is_object() && s.value("tables_done", 0) >= 1 && (!s.contains("current") || s["current"].is_null()) &&
         s.value("queue", nlohmann::json::array()).empty();
}

uint64_t chunks_applied(Database& target, const std::string& pipeline) {
  const nlohmann::json s = applied_snapshot(target, pipeline);
  if (!s.is_object() || !s.contains("current") || !s["current"].is_object()) return 0;
  return s["current"].value("chunks", 0u);
}

// Waits until some chunks are applied, most not, then kills the daemon (-9) and starts it again after a
// second in which the writers go on. False when the snapshot never got that far.
bool kill_mid_snapshot(Database& source, Database& target) {
  if (!wait_until([&] { return chunks_applied(target, source.daemon().name()) >= 10; }, 120s)) return false;
  source.daemon().stop(SIGKILL);
  std::this_thread::sleep_for(1s);
  source.daemon().start();
  return true;
}

// Waits (`within` at most) until the target equals the source; reports the first difference otherwise, with
// `logs` (the source daemon's log by default). The number of rows.
size_t expect_target_equals_source(Database& source, Database& target, const std::string& table,
                                   std::chrono::seconds within = 90s, const std::function<std::string()>& logs = {}) {
  std::vector<std::string> expected;
  std::vector<std::string> actual;
  const bool equal = wait_until([&] {
    expected = rows_of(source, table);
    actual = rows_of(target, table);
    return expected == actual;
  }, within);
  if (equal) return actual.size();
  size_t i = 0;
  while (i < expected.size() && i < actual.size() && expected[i] == actual[i]) ++i;
  ADD_FAILURE() << "the target never caught up with the source: " << expected.size() << " source rows, "
                << actual.size() << " target rows; first difference at row " << i << ": source "
                << (i < expected.size() ? expected[i] : "(none)") << ", target " << (i < actual.size() ? actual[i] : "(none)")
                << "\n" << (logs ? logs() : source.daemon().stderr_text());
  return actual.size();
}

struct ApplyCase {
  std::string source;
  std::string target;
  uint64_t seed;
  bool kill;
};

std::string case_name(const testing::TestParamInfo<ApplyCase>& info) {
  return info.param.source + "_to_" + info.param.target + "_seed" + std::to_string(info.param.seed) +
         (info.param.kill ? "_kill9" : "");
}

class DatabaseApply : public testing::TestWithParam<ApplyCase> {};

TEST_P(DatabaseApply, TargetEqualsTheSourceAfterWritersRanDuringTheSnapshot) {
  const ApplyCase param = GetParam();
  auto source = make_database(param.source);
  auto target = make_database(param.target);
  const int64_t rows = table_rows();
  const std::string table = source->table();
  const std::string pipeline = source->daemon().name();
  target->exec("CREATE TABLE " + table + " (id BIGINT PRIMARY KEY, version BIGINT NOT NULL, payload TEXT)");
  source->sink_yaml = sink_yaml(param.target);
  // Small chunks, so that the snapshot lasts long enough for the writers (and a kill) to meet it.
  source->create(rows, "snapshot:\n  initial: when_needed\n  chunk_size: " + std::to_string(std::max<int64_t>(rows / 200, 10)) +
                           "\n  max_chunks_per_second: 40\n");
  ASSERT_TRUE(source->start()) << source->daemon().stderr_text();
  ConcurrentWriters writers([&] { return source->session(); }, table, 4, param.seed, rows);

  if (param.kill) {
    ASSERT_TRUE(kill_mid_snapshot(*source, *target)) << source->daemon().stderr_text();
  }
  ASSERT_TRUE(wait_until([&] { return snapshot_applied(*target, pipeline); }, 240s)) << source->daemon().stderr_text();
  if (param.kill) {
    const std::string log = source->daemon().stderr_text();
    EXPECT_NE(log.find("continuing " + source->qualified()), std::string::npos)
        << "the restarted daemon did not continue the snapshot from the target's state:\n" << log;
    // Mid-stream: the writers' transactions are being applied.
    std::this_thread::sleep_for(1500ms);
    source->daemon().stop(SIGKILL);
    std::this_thread::sleep_for(1s);
    source->daemon().start();
  }
  std::this_thread::sleep_for(1s);
  writers.stop();
  ASSERT_GT(writers.operations(), 300u) << "the writers barely ran: the test would prove little";

  expect_target_equals_source(*source, *target, table);
  const std::string log = source->daemon().stderr_text();
  EXPECT_NE(log.find("state in the target's tidemark_apply_position: "), std::string::npos) << log;
  if (param.kill) {
    EXPECT_NE(log.find("resuming after"), std::string::npos) << "the restarted daemon did not resume from the target's position:\n" << log;
  }
  std::cout << param.source << " -> " << param.target << " seed " << param.seed << ": " << writers.operations()
            << " writes, " << rows_of(*target, table).size() << " rows in the target\n";
  EXPECT_EQ(source->daemon().stop(SIGTERM), 0) << source->daemon().stderr_text();
  target->exec("DROP TABLE " + table);
}

INSTANTIATE_TEST_SUITE_P(Databases, DatabaseApply,
                         testing::Values(ApplyCase{"mariadb", "postgres", 1, false}, ApplyCase{"mariadb", "postgres", 2, true},
                                         ApplyCase{"postgres", "mariadb", 1, false}, ApplyCase{"postgres", "mariadb", 2, true}),
                         case_name);

// The target server restarts while changes stream: the sink retries with backoff, learns from the position
// table whether the transaction in flight committed, and loses and duplicates nothing.
class DatabaseApplyTargetRestart : public testing::TestWithParam<ApplyCase> {};

TEST_P(DatabaseApplyTargetRestart, TheSinkRetriesAndLosesNothing) {
  const ApplyCase param = GetParam();
  auto source = make_database(param.source);
  auto target = make_database(param.target);
  const std::string table = source->table();
  target->exec("CREATE TABLE " + table + " (id BIGINT PRIMARY KEY, version BIGINT NOT NULL, payload TEXT)");
  source->sink_yaml = sink_yaml(param.target);
  source->create(1000, "snapshot:\n  initial: when_needed\n");
  ASSERT_TRUE(source->start()) << source->daemon().stderr_text();
  ASSERT_TRUE(wait_until([&] { return snapshot_applied(*target, source->daemon().name()); }, 120s))
      << source->daemon().stderr_text();
  ConcurrentWriters writers([&] { return source->session(); }, table, 2, param.seed, 1000);
  std::this_thread::sleep_for(1s);
  ASSERT_EQ(target->restart_server(), 0) << "could not restart the target server";
  std::this_thread::sleep_for(2s);
  writers.stop();
  expect_target_equals_source(*source, *target, table);
  const std::string log = source->daemon().stderr_text();
  EXPECT_NE(log.find("target database connection failed"), std::string::npos) << "the restart went unnoticed:\n" << log;
  EXPECT_TRUE(source->daemon().process().running()) << log;
  EXPECT_EQ(source->daemon().stop(SIGTERM), 0) << source->daemon().stderr_text();
  target->exec("DROP TABLE " + table);
}

INSTANTIATE_TEST_SUITE_P(Databases, DatabaseApplyTargetRestart,
                         testing::Values(ApplyCase{"mariadb", "postgres", 3, false}, ApplyCase{"postgres", "mariadb", 3, false}),
                         case_name);

// The target holds some of the table's rows already, stale (a snapshot of a table replicated before, or one
// the log got to first): the snapshot's rows load into an empty stretch of keys as they are (on PostgreSQL a
// COPY straight into the table) and over the existing rows as upserts; the target ends equal to the source.
class DatabaseApplySnapshotOverRows : public testing::TestWithParam<ApplyCase> {};

TEST_P(DatabaseApplySnapshotOverRows, ExistingTargetRowsAreOverwritten) {
  const ApplyCase param = GetParam();
  auto source = make_database(param.source);
  auto target = make_database(param.target);
  const std::string table = source->table();
  const int64_t rows = 6000;
  target->exec("CREATE TABLE " + table + " (id BIGINT PRIMARY KEY, version BIGINT NOT NULL, payload TEXT)");
  // Every third row of the upper half: the first chunks find no row there, the later ones some.
  const std::string upper = std::to_string(rows / 2 + 1);
  const std::string last = std::to_string(rows);
  target->exec(target->kind() == "postgres"
                   ? "INSERT INTO " + table + " SELECT g, 7, 'stale' FROM generate_series(" + upper + ", " + last + ") g WHERE g % 3 = 0"
                   : "INSERT INTO " + table + " SELECT seq, 7, 'stale' FROM seq_" + upper + "_to_" + last + " WHERE seq % 3 = 0");
  source->sink_yaml = sink_yaml(param.target);
  source->create(rows, "snapshot:\n  initial: when_needed\n  chunk_size: 250\n");
  ASSERT_TRUE(source->start()) << source->daemon().stderr_text();
  ASSERT_TRUE(wait_until([&] {
    return snapshot_applied(*target, source->daemon().name()) || !source->daemon().process().running();
  }, 120s)) << source->daemon().stderr_text();
  ASSERT_TRUE(source->daemon().process().running()) << source->daemon().stderr_text();
  EXPECT_EQ(expect_target_equals_source(*source, *target, table, 30s), static_cast<size_t>(rows));
  EXPECT_EQ(source->daemon().stop(SIGTERM), 0) << source->daemon().stderr_text();
  target->exec("DROP TABLE " + table);
}

INSTANTIATE_TEST_SUITE_P(Databases, DatabaseApplySnapshotOverRows,
                         testing::Values(ApplyCase{"mariadb", "postgres", 4, false}, ApplyCase{"postgres", "mariadb", 4, false}),
                         case_name);

// A mapping into another table shape: renamed columns, a value computed by the target from the source row, a
// constant, and a row filter that rows enter and leave as the writers bump their versions; the target must
// hold exactly the mapped source rows that pass the filter, also after a kill -9 mid-snapshot.
class DatabaseApplyMapping : public testing::TestWithParam<ApplyCase> {};

TEST_P(DatabaseApplyMapping, TargetHoldsTheMappedRowsThatPassTheFilter) {
  const ApplyCase param = GetParam();
  auto source = make_database(param.source);
  auto target = make_database(param.target);
  const int64_t rows = table_rows() / 2;
  const std::string table = source->table();
  const std::string mapped = table + "_m";
  const std::string pipeline = source->daemon().name();
  target->exec("CREATE TABLE " + mapped + " (ident BIGINT PRIMARY KEY, ver BIGINT NOT NULL, payload_len INT, tag TEXT)");
  source->sink_yaml = sink_yaml(param.target) + "    tables:\n      - source: " + source->qualified() +
                      "\n        target: " + mapped + "\n        where: \":version % 3 <> 1\"\n        columns:\n"
                      "          ident: id\n          ver: version\n          payload_len: \"length(:payload)\"\n"
                      "          tag: \"'legacy'\"\n";
  source->create(rows, "snapshot:\n  initial: when_needed\n  chunk_size: " + std::to_string(std::max<int64_t>(rows / 100, 10)) +
                           "\n  max_chunks_per_second: 40\n");
  ASSERT_TRUE(source->start()) << source->daemon().stderr_text();
  ConcurrentWriters writers([&] { return source->session(); }, table, 4, param.seed, rows);
  if (param.kill) {
    ASSERT_TRUE(kill_mid_snapshot(*source, *target)) << source->daemon().stderr_text();
  }
  ASSERT_TRUE(wait_until([&] { return snapshot_applied(*target, pipeline); }, 240s)) << source->daemon().stderr_text();
  std::this_thread::sleep_for(1s);
  writers.stop();
  ASSERT_GT(writers.operations(), 300u) << "the writers barely ran: the test would prove little";

  const bool pg_source = source->kind() == "postgres";
  const std::string expected_sql =
      pg_source ? "SELECT id || ':' || version || ':' || length(payload) || ':legacy' FROM " + table + " WHERE version % 3 <> 1 ORDER BY id"
                : "SELECT CONCAT(id, ':', version, ':', LENGTH(payload), ':legacy') FROM " + table + " WHERE version % 3 <> 1 ORDER BY id";
  const std::string actual_sql =
      target->kind() == "postgres" ? "SELECT ident || ':' || ver || ':' || payload_len || ':' || tag FROM " + mapped + " ORDER BY ident"
                                   : "SELECT CONCAT(ident, ':', ver, ':', payload_len, ':', tag) FROM " + mapped + " ORDER BY ident";
  std::vector<std::string> expected;
  std::vector<std::string> actual;
  const bool equal = wait_until([&] {
    expected = source->column(expected_sql);
    actual = target->column(actual_sql);
    return expected == actual;
  }, 90s);
  EXPECT_TRUE(equal) << expected.size() << " mapped source rows, " << actual.size() << " target rows\n"
                     << source->daemon().stderr_text();
  // Rows left the filter (version 1 after their first update) and entered it again (version 2).
  EXPECT_LT(expected.size(), source->column("SELECT id FROM " + table).size());
  std::cout << param.source << " -> " << param.target << " mapped: " << writers.operations() << " writes, " << actual.size()
            << " target rows\n";
  EXPECT_EQ(source->daemon().stop(SIGTERM), 0) << source->daemon().stderr_text();
  target->exec("DROP TABLE " + mapped);
}

INSTANTIATE_TEST_SUITE_P(Databases, DatabaseApplyMapping,
                         testing::Values(ApplyCase{"mariadb", "postgres", 4, true}, ApplyCase{"postgres", "mariadb", 4, true}),
                         case_name);

// Keys the target generates: people go into a table with an identity / AUTO_INCREMENT key of its own (the
// source id kept as legacy_id), paired through the id map; orders keep their ids and translate their
// customer_id into the target's key. Writers insert, update, change keys and delete people and add and
// change orders while the snapshot runs; a kill -9 mid-snapshot and one mid-stream must leave no row twice
// (a replayed insert would get a second generated key) and every order pointing at its customer.
class DatabaseApplyGeneratedKeys : public testing::TestWithParam<ApplyCase> {};

TEST_P(DatabaseApplyGeneratedKeys, EverySourceRowHasOneTargetRowAndReferencesFollowTheMap) {
  const ApplyCase param = GetParam();
  auto source = make_database(param.source);
  auto target = make_database(param.target);
  const int64_t rows = table_rows() / 4;
  const int64_t stable = 200;  // people rows + 1 .. rows + stable: the writers never touch them; orders point there
  const std::string people = source->name("people");
  const std::string orders = source->name("orders");  // before people alphabetically: the snapshot reorders
  const std::string people_t = people + "_t";
  const std::string orders_t = orders + "_t";
  const std::string pipeline = source->daemon().name();
  const bool pg_target = target->kind() == "postgres";
  target->exec("CREATE TABLE " + people_t + " (cid BIGINT " +
               (pg_target ? "GENERATED BY DEFAULT AS IDENTITY" : "AUTO_INCREMENT") +
               " PRIMARY KEY, legacy_id BIGINT NOT NULL, ver BIGINT NOT NULL, plen INT)");
  target->exec("CREATE TABLE " + orders_t + " (id BIGINT PRIMARY KEY, customer_ref BIGINT, amount INT)");
  source->create_table(people, "id BIGINT PRIMARY KEY, version BIGINT NOT NULL, payload TEXT");
  source->fill(people, rows + stable);
  source->create_table(orders, "id BIGINT PRIMARY KEY, customer_id BIGINT, amount INT");
  source->exec("INSERT INTO " + orders + " (id, customer_id, amount) SELECT n, " + std::to_string(rows) + " + 1 + n % " +
               std::to_string(stable) + ", n FROM (" + source->series(500) + ") s");
  source->sink_yaml = sink_yaml(param.target) + "    tables:\n      - source: " + source->qualified_name(people) +
                      "\n        target: " + people_t + "\n        generated_key: true\n        columns:\n"
                      "          legacy_id: id\n          ver: version\n          plen: \"length(:payload)\"\n"
                      "      - source: " + source->qualified_name(orders) + "\n        target: " + orders_t +
                      "\n        columns:\n          id: id\n          customer_ref: customer_id\n          amount: amount\n"
                      "        references:\n          customer_ref: " + source->qualified_name(people) + "\n";
  source->write_config({people, orders}, "snapshot:\n  initial: when_needed\n  chunk_size: " +
                                             std::to_string(std::max<int64_t>(rows / 50, 10)) + "\n  max_chunks_per_second: 40\n");
  ASSERT_TRUE(source->start()) << source->daemon().stderr_text();
  ConcurrentWriters writers([&] { return source->session(); }, people, 4, param.seed, rows);
  std::atomic<bool> stop_orders{false};
  std::atomic<uint64_t> order_writes{0};
  std::jthread order_writer([&] {
    auto session = source->session();
    for (int64_t i = 0; !stop_orders; ++i) {
      const std::string customer = std::to_string(rows + 1 + (i * 7) % stable);
      if (i % 2 == 0)
        session->exec("INSERT INTO " + orders + " (id, customer_id, amount) VALUES (" + std::to_string(100'000 + i) + ", " +
                      customer + ", " + std::to_string(i) + ")");
      else
        session->exec("UPDATE " + orders + " SET customer_id = " + customer + ", amount = amount + 1 WHERE id = " +
                      std::to_string(1 + i % 500));
      if (i % 10 == 0)
        session->exec("UPDATE " + people + " SET version = version + 1 WHERE id = " + customer);
      ++order_writes;
      std::this_thread::sleep_for(2ms);
    }
  });
  if (param.kill) {
    ASSERT_TRUE(kill_mid_snapshot(*source, *target)) << source->daemon().stderr_text();
  }
  ASSERT_TRUE(wait_until([&] {
    const nlohmann::json s = applied_snapshot(*target, pipeline);
    return s.is_object() && s.value("tables_done", 0) >= 2 && (!s.contains("current") || s["current"].is_null());
  }, 240s)) << source->daemon().stderr_text();
  if (param.kill) {  // and once mid-stream
    source->daemon().stop(SIGKILL);
    std::this_thread::sleep_for(1s);
    source->daemon().start();
  }
  std::this_thread::sleep_for(1s);
  writers.stop();
  stop_orders = true;
  order_writer.join();
  ASSERT_GT(writers.operations(), 300u) << "the writers barely ran: the test would prove little";
  ASSERT_GT(order_writes.load(), 50u);

  const bool pg_source = source->kind() == "postgres";
  const auto text = [](bool pg, const std::vector<std::string>& parts) {
    std::string out = pg ? "" : "CONCAT(";
    for (size_t i = 0; i < parts.size(); ++i) out += (i ? (pg ? " || ':' || " : ", ':', ") : "") + parts[i];
    return out + (pg ? "" : ")");
  };
  const std::string people_expected = "SELECT " + text(pg_source, {"id", "version", "length(payload)"}) + " FROM " + people + " ORDER BY id";
  const std::string people_actual = "SELECT " + text(pg_target, {"legacy_id", "ver", "plen"}) + " FROM " + people_t + " ORDER BY legacy_id";
  const std::string orders_expected = "SELECT " + text(pg_source, {"id", "customer_id", "amount"}) + " FROM " + orders + " ORDER BY id";
  const std::string orders_actual = "SELECT " + text(pg_target, {"o.id", "coalesce(c.legacy_id, -1)", "o.amount"}) + " FROM " +
                                    orders_t + " o LEFT JOIN " + people_t + " c ON c.cid = o.customer_ref ORDER BY o.id";
  std::vector<std::string> expected, actual, expected_orders, actual_orders;
  const bool equal = wait_until([&] {
    expected = source->column(people_expected);
    actual = target->column(people_actual);
    expected_orders = source->column(orders_expected);
    actual_orders = target->column(orders_actual);
    return expected == actual && expected_orders == actual_orders;
  }, 90s);
  EXPECT_EQ(expected.size(), actual.size()) << "people: a replayed insert would show as a second row";
  EXPECT_TRUE(equal) << "people " << (expected == actual ? "equal" : "differ") << ", orders "
                     << (expected_orders == actual_orders ? "equal" : "differ") << "\n" << source->daemon().stderr_text();
  EXPECT_EQ(expected_orders.size(), actual_orders.size()) << "orders";
  // Exactly one id map entry per target row, each naming that row's current source key.
  const std::string cid_text = pg_target ? "c.cid::text" : "CAST(c.cid AS CHAR)";
  const std::string legacy_text = pg_target ? "c.legacy_id::text" : "CAST(c.legacy_id AS CHAR)";
  EXPECT_EQ(target->column("SELECT count(*) FROM tidemark_id_map m JOIN " + people_t + " c ON m.target_key = " + cid_text +
                           " AND m.source_key = " + legacy_text + " WHERE m.pipeline = '" + pipeline + "'"),
            std::vector<std::string>{std::to_string(actual.size())});
  EXPECT_EQ(target->column("SELECT count(*) FROM tidemark_id_map WHERE pipeline = '" + pipeline + "'"),
            std::vector<std::string>{std::to_string(actual.size())});
  std::cout << param.source << " -> " << param.target << " generated keys: " << writers.operations() << " + " << order_writes
            << " writes, " << actual.size() << " people, " << actual_orders.size() << " orders\n";
  EXPECT_EQ(source->daemon().stop(SIGTERM), 0) << source->daemon().stderr_text();
  target->exec("DELETE FROM tidemark_id_map WHERE pipeline = '" + pipeline + "'");
  target->exec("DROP TABLE " + people_t);
  target->exec("DROP TABLE " + orders_t);
}

INSTANTIATE_TEST_SUITE_P(Databases, DatabaseApplyGeneratedKeys,
                         testing::Values(ApplyCase{"mariadb", "postgres", 5, true}, ApplyCase{"postgres", "mariadb", 5, true}),
                         case_name);

// Two-way sync: pipeline A (a's database -> b's) and pipeline B (b's -> a's), each naming the other as its
// peer. Writers change both sides at once (inserts with ids of their own, version bumps, key changes,
// deletes) and fight over a few shared rows, setting different payloads on both sides. Once they stop, both
// tables must be equal (the version column decides, ties going to the pipeline whose name sorts first; or,
// with two_way.winner, b's side always wins), every conflict logged once, and stay quiet: the marker
// counters, one per applied target transaction, stop moving (no echo loop).
struct TwoWayCase {
  std::string a;
  std::string b;
  uint64_t seed;
  // "version": the version column decides (last writer wins); "winner": two_way.winner names b's pipeline,
  // whose side always wins, and the tables have no version in their mappings.
  std::string policy = "version";
  int seconds = 15;  // how long the writers run (TIDEMARK_TWO_WAY_SECONDS overrides it)
};

std::string two_way_name(const testing::TestParamInfo<TwoWayCase>& info) {
  return info.param.a + "_and_" + info.param.b + (info.param.policy == "winner" ? "_b_wins" : "");
}

class DatabaseTwoWay : public testing::TestWithParam<TwoWayCase> {};

TEST_P(DatabaseTwoWay, BothSidesConvergeAndNothingEchoes) {
  const TwoWayCase param = GetParam();
  auto a = make_database(param.a);
  auto b = make_database(param.b);
  const int64_t rows = table_rows() / 10;
  const int64_t shared = 20;  // ids rows + 1 .. rows + shared: both sides set their own payload there
  const std::string ta = a->name("left");
  const std::string tb = b->name("right");
  const std::string shape = "id BIGINT PRIMARY KEY, version BIGINT NOT NULL, payload TEXT";
  a->create_table(ta, shape);
  a->fill(ta, rows + shared);
  b->create_table(tb, shape);
  b->fill(tb, rows + shared);
  const bool by_version = param.policy == "version";
  const auto mapping = [&](Database& from, const std::string& source, const std::string& target) {
    return "    tables:\n      - source: " + from.qualified_name(source) + "\n        target: " + target + "\n" +
           (by_version ? "        version: version\n" : "");
  };
  a->sink_yaml = sink_yaml(param.b) + mapping(*a, ta, tb);
  b->sink_yaml = sink_yaml(param.a) + mapping(*b, tb, ta);
  // b's side always wins: a's pipeline compares old images, which PostgreSQL logs only when told to.
  const std::string winner_yaml = by_version ? "" : "  winner: " + b->daemon().name() + "\n";
  a->write_config({ta}, "snapshot:\n  initial: never\n", "two_way:\n  peer: " + b->daemon().name() + "\n" + winner_yaml);
  if (!by_version && a->kind() == "postgres") {
    const CliResult refused = run_tidemark(a->daemon(), {"check", "--config", a->daemon().config_path()});
    EXPECT_NE(refused.out.find("REPLICA IDENTITY FULL"), std::string::npos) << refused.out << refused.err;
    a->exec("ALTER TABLE " + ta + " REPLICA IDENTITY FULL");
  }
  b->write_config({tb}, "snapshot:\n  initial: never\n", "two_way:\n  peer: " + a->daemon().name() + "\n" + winner_yaml);
  ASSERT_TRUE(a->start()) << a->daemon().stderr_text();
  ASSERT_TRUE(b->start()) << b->daemon().stderr_text();

  const char* seconds_env = std::getenv("TIDEMARK_TWO_WAY_SECONDS");
  const auto run_for = std::chrono::seconds(seconds_env && *seconds_env ? std::stoll(seconds_env) : param.seconds);
  {
    // With two_way.winner, a's pipeline loses: a key it moves while b changes that row stays apart
    // (docs/apply.md), so a's writers move only rows they created.
    ConcurrentWriters writers_a([&] { return a->session(); }, ta, 2, param.seed, rows, 10'000'000,
                                by_version ? KeyChanges::AnyRow : KeyChanges::OwnRowsOnly);
    ConcurrentWriters writers_b([&] { return b->session(); }, tb, 2, param.seed + 1, rows, 20'000'000);
    std::atomic<bool> stop{false};
    const auto fight = [&](Database& db, const std::string& table, const std::string& side) {
      auto session = db.session();
      std::mt19937_64 random(param.seed + side.size());
      for (int i = 0; !stop; ++i) {
        const int64_t id = rows + 1 + static_cast<int64_t>(random() % shared);
        exec_retrying_deadlocks([&](const std::string& sql) { session->exec(sql); },
                                "UPDATE " + table + " SET version = version + 1, payload = '" + side + " " + std::to_string(i) +
                                    "' WHERE id = " + std::to_string(id));
        std::this_thread::sleep_for(std::chrono::milliseconds(2 + random() % 8));
      }
    };
    std::jthread fight_a([&] { fight(*a, ta, "a"); });
    std::jthread fight_b([&] { fight(*b, tb, "b"); });
    std::this_thread::sleep_for(run_for);
    stop = true;
    writers_a.stop();
    writers_b.stop();
    ASSERT_GT(writers_a.operations() + writers_b.operations(), 300u) << "the writers barely ran";
  }

  std::vector<std::string> left, right;
  const auto converged = [&] {
    return wait_until([&] {
      left = rows_of(*a, ta);
      right = rows_of(*b, tb);
      return left == right;
    }, 90s);
  };
  const auto report = [&] {
    size_t i = 0;
    while (i < left.size() && i < right.size() && left[i] == right[i]) ++i;
    return std::to_string(left.size()) + " rows on " + param.a + ", " + std::to_string(right.size()) + " on " + param.b +
           "; first difference at " + std::to_string(i) + ": " + (i < left.size() ? left[i] : "(none)") + " vs " +
           (i < right.size() ? right[i] : "(none)") + "\nA:\n" + a->daemon().stderr_text() + "\nB:\n" + b->daemon().stderr_text();
  };
  ASSERT_TRUE(converged()) << report();

  // A conflict on every row above the initial ones (the shared rows and every row the writers created),
  // for certain: both pipelines stopped (idle, so holding no locks), both sides change the same rows from
  // the same version, then both go on. Equal versions: the pipeline whose name sorts first wins, on both
  // sides.
  ASSERT_EQ(::kill(a->daemon().process().pid(), SIGSTOP), 0);
  ASSERT_EQ(::kill(b->daemon().process().pid(), SIGSTOP), 0);
  const std::string shared_rows = " WHERE id > " + std::to_string(rows);
  // The losing pipeline (its name sorts last) keeps out every one of those changes: a conflict each, logged
  // in its target (the winner's source database) with the key and the tied versions.
  const bool a_wins = by_version && a->daemon().name() < b->daemon().name();
  Database& loser_target = a_wins ? *a : *b;
  const std::string loser = a_wins ? b->daemon().name() : a->daemon().name();
  const std::string conflicts_of_loser = " FROM tidemark_conflict WHERE pipeline = '" + loser + "'";
  const std::string logged_before = loser_target.column("SELECT coalesce(max(id), 0)" + conflicts_of_loser).at(0);
  const std::string forced = a->column("SELECT count(*) FROM " + ta + shared_rows).at(0);
  a->exec("UPDATE " + ta + " SET version = version + 1, payload = 'final a'" + shared_rows);
  b->exec("UPDATE " + tb + " SET version = version + 1, payload = 'final b'" + shared_rows);
  ASSERT_EQ(::kill(a->daemon().process().pid(), SIGCONT), 0);
  ASSERT_EQ(::kill(b->daemon().process().pid(), SIGCONT), 0);
  const bool equal = converged();
  EXPECT_TRUE(equal) << report();
  const std::string winner = a_wins ? "final a" : "final b";
  EXPECT_EQ(a->column("SELECT DISTINCT payload FROM " + ta + shared_rows), std::vector<std::string>{winner});
  EXPECT_EQ(b->column("SELECT DISTINCT payload FROM " + tb + shared_rows), std::vector<std::string>{winner});
  const std::string since = conflicts_of_loser + " AND id > " + logged_before;
  // The loser's kept-out changes may still be on their way when the tables already agree.
  std::vector<std::string> logged;
  wait_until([&] { return (logged = loser_target.column("SELECT count(*)" + since)) == std::vector<std::string>{forced}; }, 60s);
  EXPECT_EQ(logged, std::vector<std::string>{forced});
  EXPECT_EQ(loser_target.column("SELECT count(*)" + since +
                                (by_version ? " AND kept_version = incoming_version" : " AND kept_version IS NULL")),
            std::vector<std::string>{forced}) << "a tie keeps the winner's version";
  const bool pg_loser = loser_target.kind() == "postgres";
  EXPECT_EQ(loser_target.column("SELECT count(DISTINCT target_key)" + since + " AND CAST(target_key AS " +
                                (pg_loser ? "bigint" : "signed") + ") > " + std::to_string(rows)),
            std::vector<std::string>{forced}) << "each forced row once, named by its key";
  EXPECT_NE((a_wins ? b : a)->daemon().stderr_text().find("conflict: "), std::string::npos) << "conflicts are logged";

  // No echo: once both sides agree, neither sink applies anything more.
  const auto markers = [&] {
    return a->column("SELECT transactions FROM tidemark_marker WHERE pipeline = '" + b->daemon().name() + "'").at(0) + "/" +
           b->column("SELECT transactions FROM tidemark_marker WHERE pipeline = '" + a->daemon().name() + "'").at(0);
  };
  std::this_thread::sleep_for(2s);  // a position kept back is committed within a second (DatabaseSink)
  const std::string before = markers();
  std::this_thread::sleep_for(3s);
  EXPECT_EQ(markers(), before) << "the sinks kept applying transactions after the writers stopped: an echo loop";
  EXPECT_NE(before, "0/0");
  std::cout << param.a << " <-> " << param.b << ": " << left.size() << " rows, applied transactions (into a/into b) "
            << before << "\n";
  EXPECT_EQ(a->daemon().stop(SIGTERM), 0) << a->daemon().stderr_text();
  EXPECT_EQ(b->daemon().stop(SIGTERM), 0) << b->daemon().stderr_text();
}

INSTANTIATE_TEST_SUITE_P(Databases, DatabaseTwoWay,
                         testing::Values(TwoWayCase{"mariadb", "postgres", 11, "version", 60}, TwoWayCase{"postgres", "postgres", 12},
                                         TwoWayCase{"mariadb", "mariadb", 13}, TwoWayCase{"mariadb", "postgres", 14, "winner"},
                                         TwoWayCase{"postgres", "mariadb", 15, "winner"}),
                         two_way_name);

// Two-way sync with keys of each side's own, the prototype's scenario: a legacy table (id generated by the
// legacy database) and a modern one (cid generated by the modern database, another column name, a computed
// column), each pipeline writing with generated_key, so each side has its own id map. The legacy side's
// rows are first loaded into the modern one by the initial snapshot; then both sides create rows at once,
// and afterwards each side updates and deletes rows the other side created. Both sides must end equal under
// the mapping, with one id map entry per row on each side, the two maps mirror images of each other, and
// no echo.
class DatabaseTwoWayGeneratedKeys : public testing::TestWithParam<TwoWayCase> {};

TEST_P(DatabaseTwoWayGeneratedKeys, RowsCreatedOnEitherSideAreUpdatedAndDeletedFromEitherSide) {
  const TwoWayCase param = GetParam();
  auto legacy = make_database(param.a);
  auto modern = make_database(param.b);
  const bool pg_legacy = legacy->kind() == "postgres";
  const bool pg_modern = modern->kind() == "postgres";
  const auto identity = [](bool pg) { return pg ? "BIGINT GENERATED BY DEFAULT AS IDENTITY" : "BIGINT AUTO_INCREMENT"; };
  const std::string tl = legacy->name("legacy_customers");
  const std::string tm = modern->name("modern_customers");
  legacy->create_table(tl, "id " + std::string(identity(pg_legacy)) + " PRIMARY KEY, name VARCHAR(100) NOT NULL, version BIGINT NOT NULL");
  modern->create_table(tm, "cid " + std::string(identity(pg_modern)) +
                               " PRIMARY KEY, display_name VARCHAR(100) NOT NULL, rev BIGINT NOT NULL");
  const int64_t initial = 300;
  legacy->exec("INSERT INTO " + tl + " (name, version) SELECT " +
               (pg_legacy ? "'init-' || n" : "CONCAT('init-', n)") + ", 1 FROM (" + legacy->series(initial) + ") s");
  legacy->sink_yaml = sink_yaml(param.b) + "    tables:\n      - source: " + legacy->qualified_name(tl) + "\n        target: " +
                      tm + "\n        generated_key: true\n        version: rev\n        columns:\n"
                      "          display_name: \"upper(:name)\"\n          rev: version\n";
  modern->sink_yaml = sink_yaml(param.a) + "    tables:\n      - source: " + modern->qualified_name(tm) + "\n        target: " +
                      tl + "\n        generated_key: true\n        version: version\n        columns:\n"
                      "          name: \"lower(:display_name)\"\n          version: rev\n";
  legacy->write_config({tl}, "snapshot:\n  initial: when_needed\n  chunk_size: 50\n", "two_way:\n  peer: " + modern->daemon().name() + "\n");
  modern->write_config({tm}, "snapshot:\n  initial: never\n", "two_way:\n  peer: " + legacy->daemon().name() + "\n");
  // The modern side's pipeline reads its log before the snapshot writes its first id map entries there.
  ASSERT_TRUE(modern->start()) << modern->daemon().stderr_text();
  ASSERT_TRUE(legacy->start()) << legacy->daemon().stderr_text();

  // Both sides create rows at once, some in transactions of several rows.
  const int64_t created = 200;
  {
    const auto create = [&](Database& db, const std::string& table, const std::string& columns, const std::string& prefix) {
      auto session = db.session();
      for (int64_t i = 0; i < created; i += 2) {
        exec_retrying_deadlocks([&](const std::string& sql) { session->exec(sql); },
                                "INSERT INTO " + table + " (" + columns + ") VALUES ('" + prefix + std::to_string(i) + "', 1), ('" +
                                    prefix + std::to_string(i + 1) + "', 1)");
        std::this_thread::sleep_for(3ms);
      }
    };
    std::jthread on_legacy([&] { create(*legacy, tl, "name, version", "a-"); });
    std::jthread on_modern([&] { create(*modern, tm, "display_name, rev", "B-"); });
  }
  const std::string legacy_rows = "SELECT " + std::string(pg_legacy ? "name || ':' || version" : "CONCAT(name, ':', version)") +
                                  " FROM " + tl;
  const std::string modern_rows = "SELECT " + std::string(pg_modern ? "lower(display_name) || ':' || rev" :
                                                                      "CONCAT(lower(display_name), ':', rev)") + " FROM " + tm;
  std::vector<std::string> left, right;
  const auto converged = [&](std::chrono::seconds limit) {
    return wait_until([&] {
      left = legacy->column(legacy_rows);
      right = modern->column(modern_rows);
      std::sort(left.begin(), left.end());
      std::sort(right.begin(), right.end());
      return left == right;
    }, limit);
  };
  const auto report = [&] {
    return std::to_string(left.size()) + " legacy rows, " + std::to_string(right.size()) + " modern rows\nlegacy pipeline:\n" +
           legacy->daemon().stderr_text() + "\nmodern pipeline:\n" + modern->daemon().stderr_text();
  };
  ASSERT_TRUE(converged(120s)) << report();
  ASSERT_EQ(left.size(), static_cast<size_t>(initial + 2 * created)) << report();

  // Each side changes the rows the other side created (found through its own key), and some snapshot rows.
  // A sink may still be applying the other side's changes meanwhile, and InnoDB may pick either as a deadlock
  // victim: the sinks retry theirs, the test its own.
  const auto legacy_exec = [&](const std::string& sql) { legacy->exec(sql); };
  const auto modern_exec = [&](const std::string& sql) { modern->exec(sql); };
  exec_retrying_deadlocks(legacy_exec, "UPDATE " + tl + " SET name = " + (pg_legacy ? "name || '-x'" : "CONCAT(name, '-x')") +
               ", version = version + 1 WHERE name LIKE 'b-%'");
  exec_retrying_deadlocks(legacy_exec, "DELETE FROM " + tl + " WHERE name LIKE 'b-%' AND id % 4 = 0");
  exec_retrying_deadlocks(modern_exec, "UPDATE " + tm + " SET display_name = " + (pg_modern ? "display_name || '-Y'" : "CONCAT(display_name, '-Y')") +
               ", rev = rev + 1 WHERE display_name LIKE 'A-%' OR display_name LIKE 'INIT-1%'");
  exec_retrying_deadlocks(modern_exec, "DELETE FROM " + tm + " WHERE display_name LIKE 'A-%' AND cid % 5 = 0");
  ASSERT_TRUE(converged(120s)) << report();
  EXPECT_EQ(legacy->column("SELECT count(*) FROM " + tl + " WHERE name LIKE 'b-%-x'").at(0),
            legacy->column("SELECT count(*) FROM " + tl + " WHERE name LIKE 'b-%'").at(0));
  EXPECT_NE(legacy->column("SELECT count(*) FROM " + tl + " WHERE name LIKE 'a-%-y'").at(0), "0") << report();
  EXPECT_LT(left.size(), static_cast<size_t>(initial + 2 * created)) << "the deletes reached the other side";

  // One id map entry per row on each side, pointing at it, and the two maps mirror each other.
  const auto text = [](bool pg, const std::string& column) { return pg ? column + "::text" : "CAST(" + column + " AS CHAR)"; };
  const std::string n = std::to_string(left.size());
  EXPECT_EQ(modern->column("SELECT count(*) FROM tidemark_id_map m JOIN " + tm + " t ON m.target_key = " + text(pg_modern, "t.cid") +
                           " WHERE m.pipeline = '" + legacy->daemon().name() + "'"), std::vector<std::string>{n});
  // An entry mirrored from the other side goes one hop after its row: the row is gone on both sides once
  // the peer's sink deleted it, the mirror of the entry it deleted once this side's sink has read that.
  const auto entries = [&] {
    return modern->column("SELECT count(*) FROM tidemark_id_map WHERE pipeline = '" + legacy->daemon().name() + "'").at(0) +
           "/" + legacy->column("SELECT count(*) FROM tidemark_id_map WHERE pipeline = '" + modern->daemon().name() + "'").at(0);
  };
  std::string counted;
  wait_until([&] { return (counted = entries()) == n + "/" + n; }, 30s);
  EXPECT_EQ(counted, n + "/" + n) << "id map entries (modern/legacy) for " << n << " rows";
  EXPECT_EQ(legacy->column("SELECT count(*) FROM tidemark_id_map m JOIN " + tl + " t ON m.target_key = " + text(pg_legacy, "t.id") +
                           " WHERE m.pipeline = '" + modern->daemon().name() + "'"), std::vector<std::string>{n});
  const auto pairs = [](Database& db, const std::string& pipeline, bool pg, bool reversed) {
    auto out = db.column("SELECT " + std::string(pg ? "" : "CONCAT(") + (reversed ? "target_key" : "source_key") +
                         (pg ? " || '=' || " : ", '=', ") + (reversed ? "source_key" : "target_key") + (pg ? "" : ")") +
                         " FROM tidemark_id_map WHERE pipeline = '" + pipeline + "'");
    std::sort(out.begin(), out.end());
    return out;
  };
  EXPECT_EQ(pairs(*modern, legacy->daemon().name(), pg_modern, false), pairs(*legacy, modern->daemon().name(), pg_legacy, true))
      << "legacy id = modern cid pairs differ between the two maps";

  // No echo.
  const auto markers = [&] {
    return legacy->column("SELECT transactions FROM tidemark_marker WHERE pipeline = '" + modern->daemon().name() + "'").at(0) +
           "/" + modern->column("SELECT transactions FROM tidemark_marker WHERE pipeline = '" + legacy->daemon().name() + "'").at(0);
  };
  std::this_thread::sleep_for(2s);
  const std::string before = markers();
  std::this_thread::sleep_for(3s);
  EXPECT_EQ(markers(), before) << "the sinks kept applying transactions after the writers stopped: an echo loop";
  std::cout << param.a << " <-> " << param.b << " generated keys: " << left.size() << " rows, applied transactions "
            << before << "\n";
  EXPECT_EQ(legacy->daemon().stop(SIGTERM), 0) << legacy->daemon().stderr_text();
  EXPECT_EQ(modern->daemon().stop(SIGTERM), 0) << modern->daemon().stderr_text();
}

INSTANTIATE_TEST_SUITE_P(Databases, DatabaseTwoWayGeneratedKeys,
                         testing::Values(TwoWayCase{"mariadb", "postgres", 21}, TwoWayCase{"postgres", "mariadb", 22}),
                         two_way_name);

// Kafka as the input: one pipeline publishes a table (snapshot and log, schemas on) to a real broker, a
// second one (source.type kafka) applies the topic to the other database. Writers run during the
// snapshot and the applier is killed (-9) on its way; afterwards the target must equal the source: the
// offsets move in the target's transactions, so nothing is applied twice or skipped.
class DatabaseApplyFromKafka : public testing::TestWithParam<ApplyCase> {};

// The offsets table's rows of the consumer group `group` that moved past their start: "topic/partition at
// offset", ...
std::string applied_offsets(Database& target, const std::string& group) {
  std::string out;
  const std::string at = target.kind() == "postgres" ? "topic || '/' || partition_id || ' at ' || next_offset"
                                                     : "CONCAT(topic, '/', partition_id, ' at ', next_offset)";
  for (const auto& row : target.column("SELECT " + at + " FROM tidemark_apply_offsets WHERE consumer_group = '" + group +
                                       "' AND next_offset > 0 ORDER BY topic, partition_id"))
    out += (out.empty() ? "" : ", ") + row;
  return out;
}

TEST_P(DatabaseApplyFromKafka, TheTopicAppliedToTheTargetEqualsTheSource) {
  const ApplyCase param = GetParam();
  auto source = make_database(param.source);
  auto target = make_database(param.target);
  const int64_t rows = table_rows() / 2;
  const std::string table = source->table();
  source->sink_yaml = "sink:\n  type: kafka\n  kafka:\n    bootstrap_servers: " + source->bootstrap() +
                      "\n    schemas:\n      enable: true\n";
  source->create(rows, "snapshot:\n  initial: when_needed\n  chunk_size: " + std::to_string(std::max<int64_t>(rows / 50, 10)) +
                           "\n  max_chunks_per_second: 40\n");
  target->exec("CREATE TABLE " + table + " (id BIGINT PRIMARY KEY, version BIGINT NOT NULL, payload TEXT)");
  ASSERT_TRUE(source->start()) << source->daemon().stderr_text();
  ConcurrentWriters writers([&] { return source->session(); }, table, 4, param.seed, rows);

  // The killed member keeps its partition until its session times out (librdkafka's 45 s by default);
  // what is checked is what the restarted member does afterwards, so the broker's shortest session.
  DaemonRunner applier(source->bootstrap(), GeneratorSettings{});
  applier.write_config(sink_yaml(param.target), "info",
                       "source:\n  type: kafka\n  kafka:\n    bootstrap_servers: " + source->bootstrap() +
                           "\n    topics: [" + source->topic() + "]\n    properties:\n      session.timeout.ms: \"6000\"\n"
                           "      heartbeat.interval.ms: \"500\"\n");
  applier.start();
  const auto target_rows = [&] { return target->column("SELECT count(*) FROM " + table).at(0); };
  if (param.kill) {
    ASSERT_TRUE(wait_until([&] { return std::stoll(target_rows()) >= rows / 4; }, 120s)) << applier.stderr_text();
    applier.stop(SIGKILL);
    std::this_thread::sleep_for(1s);
    applier.start();
  }
  ASSERT_TRUE(wait_until([&] { return snapshots_done(source->daemon(), 1); }, 240s)) << source->daemon().stderr_text();
  std::this_thread::sleep_for(1s);
  writers.stop();
  ASSERT_GT(writers.operations(), 300u) << "the writers barely ran: the test would prove little";

  const size_t applied_rows = expect_target_equals_source(*source, *target, table, 120s, [&] { return applier.stderr_text(); });
  // The restart went on from the offsets the target holds (in the same transactions as the rows).
  const std::string applied = applied_offsets(*target, applier.name());
  EXPECT_NE(applied.find(source->topic() + "/0 at "), std::string::npos) << applied;
  EXPECT_GT(std::stoll(target->column("SELECT next_offset FROM tidemark_apply_offsets WHERE consumer_group = '" + applier.name() +
                                      "' AND partition_id = 0").at(0)),
            rows);
  std::cout << param.source << " -> kafka -> " << param.target << ": " << writers.operations() << " writes, "
            << applied_rows << " rows, applied up to " << applied << "\n";
  EXPECT_EQ(applier.stop(SIGTERM), 0) << applier.stderr_text();
  EXPECT_EQ(source->daemon().stop(SIGTERM), 0) << source->daemon().stderr_text();
  target->exec("DROP TABLE " + table);
}

INSTANTIATE_TEST_SUITE_P(Databases, DatabaseApplyFromKafka,
                         testing::Values(ApplyCase{"mariadb", "postgres", 6, true}, ApplyCase{"postgres", "mariadb", 6, true}),
                         case_name);

// A row the target refuses (a unique index the source does not have) stops the pipeline with status 2,
// naming the key and where it resumes; nothing of that transaction is applied, no later change either.
// Kafka as the input, partitions added while it runs: the applier picks them up and reads them from their
// beginning. Only inserts of new keys go to the topic after it grows (moving keys between partitions would
// give up their order, as with any Kafka consumer).
TEST(DatabaseApplyFromKafkaTopics, PartitionsAddedWhileItRunsAreRead) {
  auto source = make_database("mariadb");
  auto target = make_database("postgres");
  const std::string table = source->name("grow");
  source->create_table(table, "id BIGINT PRIMARY KEY, payload VARCHAR(50)");
  const std::string topic = source->topic_of(table);
  source->sink_yaml = "sink:\n  type: kafka\n  kafka:\n    bootstrap_servers: " + source->bootstrap() +
                      "\n    properties:\n      topic.metadata.refresh.interval.ms: \"1000\"\n";
  source->write_config({table}, "snapshot:\n  initial: never\n");
  target->exec("CREATE TABLE " + table + " (id BIGINT PRIMARY KEY, payload TEXT)");
  ASSERT_TRUE(source->start()) << source->daemon().stderr_text();
  DaemonRunner applier(source->bootstrap(), GeneratorSettings{});
  applier.write_config(sink_yaml("postgres"), "info",
                       "source:\n  type: kafka\n  kafka:\n    bootstrap_servers: " + source->bootstrap() + "\n    topics: [" +
                           topic + "]\n");
  applier.start();
  const auto insert = [&](int64_t from, int64_t to) {
    for (int64_t id = from; id < to; id += 10) {
      std::string values;
      for (int64_t i = id; i < std::min(id + 10, to); ++i) values += (values.empty() ? "(" : ", (") + std::to_string(i) + ", 'p" + std::to_string(i) + "')";
      source->exec("INSERT INTO " + table + " (id, payload) VALUES " + values);
    }
  };
  const auto count = [&] { return std::stoll(target->column("SELECT count(*) FROM " + table).at(0)); };
  insert(0, 100);
  ASSERT_TRUE(wait_until([&] { return count() == 100; }, 60s)) << applier.stderr_text();
  add_partitions(source->bootstrap(), topic, 3);
  std::this_thread::sleep_for(3s);  // the publisher's metadata refresh sees the new partitions
  insert(100, 400);
  const bool all = wait_until([&] { return count() == 400; }, 60s);
  EXPECT_TRUE(all) << count() << " rows\n" << applier.stderr_text() << "\n" << source->daemon().stderr_text();
  EXPECT_EQ(target->column("SELECT count(*) FROM " + table + " WHERE payload = 'p' || id"), std::vector<std::string>{"400"});
  EXPECT_NE(applier.stderr_text().find(topic + "/1 from its beginning"), std::string::npos) << applier.stderr_text();
  const std::string applied = applied_offsets(*target, applier.name());
  EXPECT_TRUE(applied.find(topic + "/1 at ") != std::string::npos || applied.find(topic + "/2 at ") != std::string::npos)
      << applied;
  EXPECT_EQ(applier.stop(SIGTERM), 0) << applier.stderr_text();
  EXPECT_EQ(source->daemon().stop(SIGTERM), 0) << source->daemon().stderr_text();
  target->exec("DROP TABLE " + table);
}

// Kafka as the input, scaled out: two appliers in one consumer group share a topic of four partitions
// while writers run. The second member joining takes partitions over (the first drains them before it lets
// them go), the first one is killed (-9) and its partitions move to the second, it comes back, and then the
// second one is stopped (SIGSTOP) until its session expires and continued: its records of the partitions it
// lost are fenced by the new owner's claim, never applied twice. Afterwards the target equals the source.
class DatabaseApplyFromKafkaGroup : public testing::TestWithParam<ApplyCase> {};

TEST_P(DatabaseApplyFromKafkaGroup, MembersHandPartitionsOverAndAStalledMemberIsFenced) {
  const ApplyCase param = GetParam();
  auto source = make_database(param.source);
  auto target = make_database(param.target);
  const int64_t rows = table_rows() / 4;
  const std::string table = source->table();
  source->sink_yaml = "sink:\n  type: kafka\n  kafka:\n    bootstrap_servers: " + source->bootstrap() +
                      "\n    schemas:\n      enable: true\n";
  source->create(rows, "snapshot:\n  initial: when_needed\n  chunk_size: " + std::to_string(std::max<int64_t>(rows / 40, 10)) +
                           "\n  max_chunks_per_second: 20\n");
  add_partitions(source->bootstrap(), source->topic(), 4);  // before any record: a key stays in its partition
  target->exec("CREATE TABLE " + table + " (id BIGINT PRIMARY KEY, version BIGINT NOT NULL, payload TEXT)");
  ASSERT_TRUE(source->start()) << source->daemon().stderr_text();
  ConcurrentWriters writers([&] { return source->session(); }, table, 4, param.seed, rows);

  const std::string group = unique_name("applygroup");
  const std::string source_yaml = "source:\n  type: kafka\n  kafka:\n    bootstrap_servers: " + source->bootstrap() +
                                  "\n    topics: [" + source->topic() + "]\n    group_id: " + group +
                                  "\n    properties:\n      session.timeout.ms: \"6000\"\n      heartbeat.interval.ms: \"500\"\n";
  DaemonRunner first(source->bootstrap(), GeneratorSettings{});
  DaemonRunner second(source->bootstrap(), GeneratorSettings{});
  first.write_config(sink_yaml(param.target), "info", source_yaml);
  second.write_config(sink_yaml(param.target), "info", source_yaml);
  // How many processes own the topic's partitions, as the target's offsets table says (owner: member#claim).
  const auto owners = [&] {
    const std::string member = target->kind() == "postgres" ? "split_part(owner, '#', 1)" : "SUBSTRING_INDEX(owner, '#', 1)";
    return std::stoi(target->column("SELECT count(DISTINCT " + member + ") FROM tidemark_apply_offsets WHERE "
                                    "consumer_group = '" + group + "'").at(0));
  };
  const auto logs = [&] { return first.stderr_text() + "\n" + second.stderr_text(); };
  const auto target_rows = [&] { return std::stoll(target->column("SELECT count(*) FROM " + table).at(0)); };
  first.start();
  ASSERT_TRUE(wait_until([&] { return target_rows() >= rows / 4; }, 120s)) << first.stderr_text();
  second.start();
  // Cooperative rebalance: the first member drains and revokes some partitions, the second claims them.
  ASSERT_TRUE(wait_until([&] { return owners() == 2; }, 60s)) << logs();
  // Usually a cooperative revoke; a manual offset commit that meets the rebalance (ILLEGAL_GENERATION)
  // makes librdkafka drop the partitions as lost instead. Either way the first member gave them up.
  const std::string first_log = first.stderr_text();
  EXPECT_TRUE(first_log.find("kafka source: revoked") != std::string::npos ||
              first_log.find("kafka source: lost") != std::string::npos)
      << first_log;
  std::this_thread::sleep_for(2s);
  first.stop(SIGKILL);  // its partitions go to the second member once its session expires
  ASSERT_TRUE(wait_until([&] { return owners() == 1; }, 60s)) << logs();
  first.start();
  ASSERT_TRUE(wait_until([&] { return owners() == 2; }, 60s)) << logs();
  std::this_thread::sleep_for(2s);
  second.process().signal(SIGSTOP);  // stalls past its session: the first member claims its partitions
  const bool took_over = wait_until([&] { return owners() == 1; }, 60s);
  second.process().signal(SIGCONT);
  ASSERT_TRUE(took_over) << logs();
  ASSERT_TRUE(wait_until([&] { return snapshots_done(source->daemon(), 1); }, 240s)) << source->daemon().stderr_text();
  std::this_thread::sleep_for(1s);
  writers.stop();
  ASSERT_GT(writers.operations(), 300u) << "the writers barely ran: the test would prove little";

  // The stalled member learns it lost its partitions, or is fenced when it applies them (and stops, status
  // 2); either way it applies nothing of them twice. Started again if it stopped, it rejoins.
  // It learns at its next poll or its next commit, whichever comes first: wait for either.
  wait_until([&] {
    return second.stderr_text().find("kafka source: lost ") != std::string::npos || !second.process().running();
  }, 60s);
  const std::optional<int> fenced_exit = second.process().wait_for_exit(5s);
  const std::string stalled = second.stderr_text();
  if (fenced_exit) second.start();
  const size_t applied_rows = expect_target_equals_source(*source, *target, table, 120s, logs);
  EXPECT_TRUE(stalled.find("kafka source: lost ") != std::string::npos ||
              (stalled.find("took over a partition") != std::string::npos && fenced_exit == 2))
      << stalled;
  std::cout << "two members: " << writers.operations() << " writes, " << applied_rows << " rows; offsets "
            << applied_offsets(*target, group) << "; the stalled member "
            << (stalled.find("took over a partition") != std::string::npos ? "was fenced" : "let its partitions go") << "\n";
  EXPECT_EQ(first.stop(SIGTERM), 0) << first.stderr_text();
  second.stop(SIGTERM);
  EXPECT_EQ(source->daemon().stop(SIGTERM), 0) << source->daemon().stderr_text();
  target->exec("DROP TABLE " + table);
}

INSTANTIATE_TEST_SUITE_P(Databases, DatabaseApplyFromKafkaGroup,
                         testing::Values(ApplyCase{"mariadb", "postgres", 31, true}, ApplyCase{"postgres", "mariadb", 32, true}),
                         case_name);

class DatabaseApplyRefused : public testing::TestWithParam<ApplyCase> {};

TEST_P(DatabaseApplyRefused, AConstraintViolationStopsThePipelineNamingTheKey) {
  const ApplyCase param = GetParam();
  auto source = make_database(param.source);
  auto target = make_database(param.target);
  const std::string table = source->table();
  source->sink_yaml = sink_yaml(param.target);
  source->create(10, "snapshot:\n  initial: never\n");
  target->exec("CREATE TABLE " + table + " (id BIGINT PRIMARY KEY, version BIGINT NOT NULL, payload VARCHAR(100))");
  target->exec("CREATE UNIQUE INDEX " + table + "_payload ON " + table + " (payload)");
  ASSERT_TRUE(source->start()) << source->daemon().stderr_text();
  source->exec("INSERT INTO " + table + " (id, version, payload) VALUES (101, 0, 'twin-payload')");
  ASSERT_TRUE(wait_until([&] { return target->column("SELECT count(*) FROM " + table).at(0) == "1"; }, 60s))
      << source->daemon().stderr_text();
  source->exec("INSERT INTO " + table + " (id, version, payload) VALUES (102, 0, 'twin-payload')");
  source->exec("INSERT INTO " + table + " (id, version, payload) VALUES (103, 0, 'after-it')");
  EXPECT_EQ(source->daemon().process().wait_for_exit(60s), std::optional<int>(2)) << source->daemon().stderr_text();
  const std::string log = source->daemon().stderr_text();
  EXPECT_NE(log.find("the target refused a transaction"), std::string::npos) << log;
  // PostgreSQL names the key; MySQL's upsert can only be stopped, and the message says why.
  if (target->kind() == "postgres")
    EXPECT_NE(log.find("twin-payload"), std::string::npos) << "the message names the refused key: " << log;
  else
    EXPECT_NE(log.find("unique key other than the primary key"), std::string::npos) << log;
  EXPECT_NE(log.find("resumes after source position"), std::string::npos) << log;
  EXPECT_EQ(target->column("SELECT id FROM " + table + " ORDER BY id"), std::vector<std::string>{"101"});
  target->exec("DROP TABLE " + table);
}

INSTANTIATE_TEST_SUITE_P(Databases, DatabaseApplyRefused,
                         testing::Values(ApplyCase{"mariadb", "postgres", 7, false}, ApplyCase{"postgres", "mariadb", 7, false}),
                         case_name);

}  // namespace
}  // namespace tidemark::test
