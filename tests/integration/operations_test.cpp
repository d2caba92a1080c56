// What an operations team watches, written once for both databases (real PostgreSQL 15 and MariaDB 10.11,
// the real tidemark binary, the real Kafka broker, scraped over HTTP as Prometheus and probes would):
// the metrics of a snapshot and a stream against the records actually in the topic, readiness that
// follows the source server going away and coming back, and the live status; heartbeats on an idle
// pipeline, their action query, and (PostgreSQL) a slot on an idle database that still lets WAL go.

#include <gtest/gtest.h>

#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "database.hpp"
#include "pg_fixture.hpp"
#include "process.hpp"
#include "throwaway_server.hpp"

namespace tidemark::test {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

class Operations : public testing::TestWithParam<std::string> {};

struct Answer {
  int status = 0;  // 0: no answer
  std::string body;
};

Answer get(const std::string& port, const std::string& path) {
  httplib::Client client("127.0.0.1", std::stoi(port));
  client.set_connection_timeout(2);
  client.set_read_timeout(5);
  const auto result = client.Get(path);
  if (!result) return {};
  return {result->status, result->body};
}

// The value of every sample of `metric` whose labels contain each of `labels` ("op=\"c\""), summed; -1
// when none is there. Parses the text exposition as Prometheus does: name{labels} value.
double metric(const std::string& text, const std::string& name, const std::vector<std::string>& labels = {}) {
  static const std::regex line(R"(^([a-z_]+)(\{([^}]*)\})? ([-+0-9.eE]+|NaN)$)");
  double sum = -1;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    const std::string l = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    start = end == std::string::npos ? text.size() : end + 1;
    std::smatch m;
    if (l.empty() || l[0] == '#' || !std::regex_match(l, m, line) || m[1] != name) continue;
    bool all = true;
    for (const auto& label : labels) all = all && m[3].str().find(label) != std::string::npos;
    if (!all) continue;
    sum = (sum < 0 ? 0 : sum) + std::stod(m[4]);
  }
  return sum;
}

TEST_P(Operations, MetricsCountWhatTheTopicHoldsAndReadinessFollowsTheSourceServer) {
  const auto db = make_database(GetParam());
  const std::string port = std::to_string(free_local_port());
  const std::string t = db->name("ops");
  db->create_table(t, "id INT PRIMARY KEY, version INT NOT NULL, payload VARCHAR(40)");
  db->fill(t, 5);
  db->write_config({t}, "snapshot:\n  initial: when_needed\n", "http:\n  listen: 127.0.0.1:" + port + "\n");
  ASSERT_TRUE(db->start()) << db->daemon().stderr_text();
  // Changes inside a chunk's window would replace its snapshot reads: let the snapshot finish first.
  ASSERT_TRUE(wait_until([&] { return snapshots_done(db->daemon(), 1); }, 60s)) << db->daemon().stderr_text();

  db->exec("INSERT INTO " + t + " VALUES (6, 0, 'c'), (7, 0, 'c'), (8, 0, 'c')");
  db->exec("UPDATE " + t + " SET version = 1 WHERE id IN (1, 2)");
  db->exec("DELETE FROM " + t + " WHERE id = 3");
  // 5 snapshot reads, 3 creates, 2 updates, 1 delete and its tombstone.
  const auto records = db->read_until(db->topic_of(t), 12);
  ASSERT_EQ(records.size(), 12u) << db->daemon().stderr_text();
  std::map<std::string, int> ops;  // what the topic holds, by op
  for (const auto& v : record_values(records)) ops[v["op"].get<std::string>()] += 1;
  ASSERT_EQ(ops, (std::map<std::string, int>{{"r", 5}, {"c", 3}, {"u", 2}, {"d", 1}}));

  // The scrape agrees with the topic once every record is acknowledged (the gauges are sampled every 100 ms).
  std::string text;
  const std::string table_label = "." + t + "\"";
  ASSERT_TRUE(wait_until([&] {
    text = get(port, "/metrics").body;
    return metric(text, "tidemark_records_acknowledged_total") == static_cast<double>(records.size()) &&
           metric(text, "tidemark_records_in_flight") == 0 && metric(text, "tidemark_snapshot_tables_done") == 1;
  }, 30s)) << text;
  for (const auto& [op, count] : ops)
    EXPECT_EQ(metric(text, "tidemark_changes_total", {table_label, "op=\"" + op + "\""}), count) << op << "\n" << text;
  EXPECT_EQ(metric(text, "tidemark_changes_total", {table_label, "op=\"t\""}), 0);
  EXPECT_EQ(metric(text, "tidemark_records_sent_total"), static_cast<double>(records.size()));
  EXPECT_GE(metric(text, "tidemark_snapshot_chunks_total", {table_label}), 1);
  EXPECT_EQ(metric(text, "tidemark_snapshot_tables_remaining"), 0);
  EXPECT_EQ(metric(text, "tidemark_snapshot_running"), 0);
  EXPECT_EQ(metric(text, "tidemark_source_connected"), 1);
  EXPECT_EQ(metric(text, "tidemark_delivery_latency_seconds_count"), static_cast<double>(records.size()));
  EXPECT_GE(metric(text, "tidemark_commit_to_ack_seconds_count"), 3) << "one per acknowledged transaction";
  EXPECT_NE(text.find("pipeline=\"" + db->daemon().name() + "\""), std::string::npos);
  // The log position probe asks the server every 5 s: the slot's retained WAL / the binlog bytes after the position.
  double behind = -1;
  EXPECT_TRUE(wait_until([&] {
    behind = metric(get(port, "/metrics").body, "tidemark_source_log_bytes_behind");
    return behind >= 0;
  }, 20s)) << behind;
  EXPECT_LT(behind, 64.0 * 1024 * 1024);

  EXPECT_EQ(get(port, "/healthz").status, 200);
  Answer ready = get(port, "/readyz");
  EXPECT_EQ(ready.status, 200) << ready.body;
  const json status = json::parse(get(port, "/status").body);
  EXPECT_EQ(status["pipeline"], db->daemon().name());
  EXPECT_EQ(status["source"]["connected"], true);
  EXPECT_EQ(status["snapshots"]["tables_done"], 1);
  const CliResult live = run_tidemark(db->daemon(), {"status", "--live", "--config", db->daemon().config_path()});
  EXPECT_EQ(live.status, 0) << live.err;
  EXPECT_EQ(json::parse(live.out)["position"], status["position"]);

  // The source server goes away: not ready, naming why; alive all the same (restarting would not help).
  ASSERT_EQ(db->server("stop"), 0);
  const bool went_unready = wait_until([&] {
    ready = get(port, "/readyz");
    return ready.status == 503;
  }, 60s);
  const int started = db->server("start");
  ASSERT_TRUE(went_unready) << ready.body << db->daemon().stderr_text();
  ASSERT_EQ(started, 0);
  EXPECT_NE(ready.body.find("the source is not connected"), std::string::npos) << ready.body;
  EXPECT_EQ(get(port, "/healthz").status, 200);

  // Back: ready again, the reconnect counted, and the stream goes on.
  ASSERT_TRUE(wait_until([&] { return get(port, "/readyz").status == 200; }, 90s)) << db->daemon().stderr_text();
  // /readyz reads the source at once; the gauges are sampled every 100 ms.
  EXPECT_TRUE(wait_until([&] {
    text = get(port, "/metrics").body;
    return metric(text, "tidemark_source_connected") == 1;
  }, 5s)) << text;
  EXPECT_GE(metric(text, "tidemark_source_reconnects_total"), 1) << text;
  db->exec("INSERT INTO " + t + " VALUES (9, 0, 'after')");
  EXPECT_GE(db->read_until(db->topic_of(t), 13).size(), 13u) << db->daemon().stderr_text();
  EXPECT_TRUE(wait_until([&] {
    return metric(get(port, "/metrics").body, "tidemark_changes_total", {table_label, "op=\"c\""}) == 4;
  }, 30s));
}

TEST_P(Operations, HeartbeatsArriveOnAnIdlePipelineAndRunTheActionQuery) {
  const auto db = make_database(GetParam());
  const std::string idle = db->name("idle");
  const std::string beat = db->name("beat");
  db->create_table(idle, "id INT PRIMARY KEY, version INT NOT NULL, payload VARCHAR(40)");
  db->create_table(beat, "id INT PRIMARY KEY, n INT NOT NULL");
  db->exec("INSERT INTO " + beat + " VALUES (1, 0)");
  const std::string heartbeat_topic = "__debezium-heartbeat." + db->daemon().name();
  create_topic(db->bootstrap(), heartbeat_topic, 1);
  db->write_config({idle, beat}, "snapshot:\n  initial: never\n",
                   "heartbeat:\n  interval_ms: 300\n  action_query: UPDATE " + beat + " SET n = n + 1 WHERE id = 1\n");
  const auto began = std::chrono::system_clock::now();
  ASSERT_TRUE(db->start()) << db->daemon().stderr_text();

  const auto beats = db->read_until(heartbeat_topic, 5);
  ASSERT_GE(beats.size(), 5u) << db->daemon().stderr_text();
  int64_t previous = std::chrono::duration_cast<std::chrono::milliseconds>(began.time_since_epoch()).count() - 1000;
  for (const auto& r : beats) {
    ASSERT_TRUE(r.key && r.value);
    EXPECT_EQ(json::parse(*r.key), (json{{"serverName", db->daemon().name()}}));
    const json v = json::parse(*r.value);
    ASSERT_TRUE(v.contains("ts_ms")) << *r.value;
    EXPECT_GT(v["ts_ms"].get<int64_t>(), previous) << "heartbeats go forward in time";
    previous = v["ts_ms"].get<int64_t>();
  }
  // The action query ran on the source at the heartbeats: its updates are in the log.
  const auto updates = db->read_until(db->topic_of(beat), 3);
  ASSERT_GE(updates.size(), 3u) << db->daemon().stderr_text();
  for (const auto& v : record_values(updates)) EXPECT_EQ(v["op"], "u");
  EXPECT_GE(std::stoi(db->column("SELECT n FROM " + beat + " WHERE id = 1").at(0)), 3);
  EXPECT_TRUE(db->read_until(db->topic_of(idle), 0).empty());
}

TEST(OperationsPostgres, HeartbeatsKeepTheSlotOfAnIdleDatabaseFromHoldingWal) {
  PgFixture f;
  const std::string other = "tm_other_" + f.suffix;  // another database on the same server, busy
  const std::string idle = f.table("idle");
  const std::string beat = f.table("beat");
  pg_exec(f.pg, "CREATE TABLE " + idle + " (id int PRIMARY KEY, v text)");
  pg_exec(f.pg, "CREATE TABLE " + beat + " (id int PRIMARY KEY, n int NOT NULL)");
  pg_exec(f.pg, "INSERT INTO " + beat + " VALUES (1, 0)");
  create_topic(f.bootstrap, f.topic(idle), 1);
  create_topic(f.bootstrap, f.topic(beat), 1);
  create_topic(f.bootstrap, "__debezium-heartbeat." + f.daemon.name(), 1);
  f.write_config({idle, beat}, PgConfigOptions{.extra_yaml = "heartbeat:\n  interval_ms: 500\n  action_query: UPDATE " +
                                                             beat + " SET n = n + 1 WHERE id = 1\n"});
  ASSERT_TRUE(f.start_and_wait_for_slot()) << f.daemon.stderr_text();
  pg_exec(f.admin, "CREATE DATABASE " + other);
  PgTarget busy = f.admin;
  busy.database = other;
  const auto retained = [&] {
    return std::stoll(pg_query(f.admin, "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::bigint FROM "
                                        "pg_replication_slots WHERE slot_name = '" + f.slot + "'").at(0));
  };
  try {
    // About 40 MB of WAL in the other database; none of it is for this pipeline.
    pg_exec(busy, "CREATE TABLE filler (id int, pad text)");
    for (int i = 0; i < 4; ++i)
      pg_exec(busy, "INSERT INTO filler SELECT g, repeat('x', 500) FROM generate_series(1, 20000) g");
    const long long after_writes = retained();
    long long last = 0;
    const bool bounded = wait_until([&] {
      last = retained();
      return last < 1024 * 1024;
    }, 30s);
    EXPECT_TRUE(bounded) << "the slot still holds " << last << " bytes of WAL (" << after_writes
                         << " right after the writes)\n" << f.daemon.stderr_text();
  } catch (...) {
    pg_exec(f.admin, "DROP DATABASE IF EXISTS " + other);
    throw;
  }
  pg_exec(f.admin, "DROP DATABASE IF EXISTS " + other);
}

TEST(OperationsConfig, APortInUseIsAStartupErrorNamingTheSetting) {
  const std::string port = std::to_string(free_local_port());
  // Another program listening on the port (a plain socket, as most servers open them).
  const int squatter = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(std::stoi(port)));
  ASSERT_EQ(::bind(squatter, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(squatter, 1), 0);
  DaemonRunner daemon(real_kafka_bootstrap(), GeneratorSettings{.total_events = 10});
  daemon.write_config("sink:\n  type: stdout\n", "info", "");
  write_file(daemon.config_path(), read_file(daemon.config_path()) + "http:\n  listen: 127.0.0.1:" + port + "\n");
  daemon.start();
  const auto status = daemon.process().wait_for_exit(30s);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(*status, 1);
  EXPECT_NE(daemon.stderr_text().find("cannot listen on 127.0.0.1:" + port + " (http.listen)"), std::string::npos)
      << daemon.stderr_text();
  ::close(squatter);
}

std::string param_name(const testing::TestParamInfo<std::string>& info) { return info.param; }
INSTANTIATE_TEST_SUITE_P(BothDatabases, Operations, testing::Values("postgres", "mariadb"), param_name);

}  // namespace
}  // namespace tidemark::test
