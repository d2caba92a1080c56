#pragma once
// The tests' view of one database pipeline (PostgreSQL or MariaDB): what differs between the two sources,
// so that each scenario that applies to both (snapshots, the change stream) is written once and runs on
// both. Wraps PgFixture/MySqlFixture (the real daemon, the real shared server, the real Kafka broker).

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "daemon_runner.hpp"
#include "kafka_client.hpp"
#include "snapshot_fold.hpp"

namespace tidemark::test {

class Database {
 public:
  virtual ~Database() = default;
  virtual std::string kind() const = 0;  // "postgres" or "mariadb"
  virtual DaemonRunner& daemon() = 0;
  virtual std::string bootstrap() const = 0;

  // ---- the fold tests' table "snap" ----
  virtual std::string table() const = 0;  // unqualified name of the test table
  std::string qualified() const { return qualified_name(table()); }  // as a snapshot request names it
  std::string topic() const { return topic_of(table()); }
  // Creates the table (id, version, payload) with ids 1..rows, its topic, and the daemon's config.
  virtual void create(int64_t rows, const std::string& snapshot_yaml) = 0;
  virtual std::map<int64_t, int64_t> contents() = 0;  // id -> version of table()
  virtual std::unique_ptr<SqlSession> session() = 0;

  // ---- any table ----
  virtual std::string name(const std::string& base) const = 0;  // a table name unique to this fixture
  virtual std::string qualified_name(const std::string& table) const = 0;  // "public.t" / "db.t"
  virtual std::string topic_of(const std::string& table) const = 0;
  virtual std::string text_key_type() const = 0;  // a text type that can be (part of) a primary key
  // Creates a table (`columns`: inside the parentheses) and its one-partition topic (no topic when
  // create_topics is false: the daemon's first record meets a topic the brokers do not have).
  virtual void create_table(const std::string& table, const std::string& columns) = 0;
  // Inserts (id, 0, 'p...') for ids 1..rows into a table (id, version, payload).
  virtual void fill(const std::string& table, int64_t rows) = 0;
  // The daemon's config capturing `tables` (unqualified), with the given snapshot section and extra YAML.
  virtual void write_config(const std::vector<std::string>& tables, const std::string& snapshot_yaml,
                            const std::string& extra_yaml = "") = 0;
  virtual bool start() = 0;  // starts the daemon and waits until it streams
  virtual void exec(const std::string& sql) = 0;
  // The first column of every row ("NULL" for NULL).
  virtual std::vector<std::string> column(const std::string& sql) = 0;
  // Reads the topic until it holds at least `count` records (60 s at most) and returns what it holds.
  virtual std::vector<ConsumedRecord> read_until(const std::string& topic, size_t count) = 0;
  virtual std::string database_name() const = 0;  // the database the pipeline connects to
  // Runs `sql` (one transaction) and returns a check that holds once the daemon's committed position covers
  // that transaction: every row of it is in Kafka.
  virtual std::function<bool()> exec_and_watch_commit(const std::string& sql) = 0;
  // SQL of a one-column (`n`) row source of 1..rows, for INSERT ... SELECT.
  virtual std::string series(int64_t rows) const = 0;
  // Restarts the shared server (scripts/servers.sh restart <kind>) and returns the script's exit status;
  // on failure the server is started again.
  int restart_server();
  // Runs scripts/servers.sh <command> <kind> ("stop", "start") on the shared server; its exit status.
  int server(const std::string& command);

  bool create_topics = true;
  // The daemon's sink section as write_config writes it; empty: Kafka at bootstrap() with the defaults.
  std::string sink_yaml;

  // The signal table signal() writes to (a test may give its pipeline its own: snapshot.signal_table).
  std::string signal_table = "tidemark_signal";

  // Inserts a signal row (single quotes in `data` are escaped).
  void signal(const std::string& id, const std::string& type, const std::string& data) {
    std::string escaped;
    for (const char c : data) escaped += c == '\'' ? std::string("''") : std::string(1, c);
    exec("INSERT INTO " + signal_table + " (id, type, data) VALUES ('" + id + "', '" + type + "', '" + escaped + "')");
  }
};

// "postgres" or "mariadb", publishing to the broker at `kafka`.
std::unique_ptr<Database> make_database(const std::string& kind, const std::string& kafka = real_kafka_bootstrap());

// Runs one autocommit statement, again when the server chose it as a deadlock victim (MariaDB 1213,
// PostgreSQL 40P01): a test writer racing the daemon's applied transactions is an ordinary client, and
// clients retry deadlocks. Other errors throw at once.
void exec_retrying_deadlocks(const std::function<void(const std::string&)>& exec, const std::string& sql);

// The snapshot part of the daemon's state file (null before the first persist).
nlohmann::json snapshot_state(DaemonRunner& daemon);
// The state says at least `tables` tables are done and nothing is running or queued.
bool snapshots_done(DaemonRunner& daemon, uint64_t tables);
// Chunks completed of the table in progress (0 when none).
uint64_t chunks_done(DaemonRunner& daemon);

// The parsed values of a topic's records (tombstones left out).
std::vector<nlohmann::json> record_values(const std::vector<ConsumedRecord>& records);
// after.<field> (as text: numbers printed, strings as they are) of every op "r" record, in delivery order;
// a record without source.snapshot "incremental" is reported as a test failure.
std::vector<std::string> snapshot_rows(const std::vector<ConsumedRecord>& records, const std::string& field = "id");

// Runs `tidemark <args...>` (the real binary) to its end (30 s at most).
struct CliResult {
  int status = -1000;  // exit status; -signal when killed; -1000 when it did not end
  std::string out;
  std::string err;
};
CliResult run_tidemark(DaemonRunner& daemon, const std::vector<std::string>& args);

}  // namespace tidemark::test
