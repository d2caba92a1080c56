#include "database.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "mysql_fixture.hpp"
#include "pg_fixture.hpp"
#include "process.hpp"

namespace tidemark::test {

namespace {

using namespace std::chrono_literals;

// The position token of the daemon's state file ("" before the first persist).
std::string state_token(const DaemonRunner& daemon) {
  const auto doc = nlohmann::json::parse(read_file(daemon.state_path()), nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("position") || !doc["position"].is_string()) return "";
  return doc["position"].get<std::string>();
}

// "0/16B3748" as a number; 0 when it is not an LSN.
uint64_t parse_lsn(const std::string& text) {
  unsigned long high = 0, low = 0;
  if (std::sscanf(text.c_str(), "%lx/%lx", &high, &low) != 2) return 0;
  return (static_cast<uint64_t>(high) << 32) | low;
}

// The sequence number of `domain` in the gtid= field of a binlog position token
// ("binlog:flavor=mariadb;gtid=0-1-105,1-2-7;file=...;pos=..."); -1 when absent.
int64_t committed_seq(const std::string& token, unsigned domain) {
  const auto at = token.find("gtid=");
  if (at == std::string::npos) return -1;
  const std::string state = token.substr(at + 5, token.find(';', at) - at - 5);
  size_t start = 0;
  while (start < state.size()) {
    const auto comma = state.find(',', start);
    unsigned d = 0, server = 0;
    unsigned long seq = 0;
    if (std::sscanf(state.c_str() + start, "%u-%u-%lu", &d, &server, &seq) == 3 && d == domain)
      return static_cast<int64_t>(seq);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return -1;
}

class Postgres final : public Database {
 public:
  explicit Postgres(const std::string& kafka) : f_(real_postgres(), real_postgres(true), kafka) {}
  std::string kind() const override { return "postgres"; }
  DaemonRunner& daemon() override { return f_.daemon; }
  std::string bootstrap() const override { return f_.bootstrap; }
  std::string table() const override { return f_.table("snap"); }
  void create(int64_t rows, const std::string& snapshot_yaml) override {
    pg_exec(f_.pg, "CREATE TABLE " + table() + " (id bigint PRIMARY KEY, version bigint NOT NULL, payload text)");
    pg_exec(f_.pg, "INSERT INTO " + table() + " SELECT g, 0, repeat('p', 180) FROM generate_series(1, " +
                       std::to_string(rows) + ") g");
    create_topic(f_.bootstrap, topic(), 1);  // one partition: delivery order is log order
    f_.write_config({table()}, PgConfigOptions{.sink_yaml = sink_yaml, .snapshot_yaml = snapshot_yaml});
  }
  std::map<int64_t, int64_t> contents() override {
    std::map<int64_t, int64_t> out;
    for (const auto& line : pg_query(f_.pg, "SELECT id || ':' || version FROM " + table())) {
      const size_t colon = line.find(':');
      out[std::stoll(line.substr(0, colon))] = std::stoll(line.substr(colon + 1));
    }
    return out;
  }
  std::unique_ptr<SqlSession> session() override { return open_pg_session(); }

  std::string name(const std::string& base) const override { return f_.table(base); }
  std::string qualified_name(const std::string& t) const override { return "public." + t; }
  std::string topic_of(const std::string& t) const override { return f_.topic(t); }
  std::string text_key_type() const override { return "text"; }
  void create_table(const std::string& t, const std::string& columns) override {
    pg_exec(f_.pg, "CREATE TABLE " + t + " (" + columns + ")");
    if (create_topics) create_topic(f_.bootstrap, topic_of(t), 1);
  }
  void fill(const std::string& t, int64_t rows) override {
    pg_exec(f_.pg, "INSERT INTO " + t + " SELECT g, 0, repeat('p', 20) FROM generate_series(1, " + std::to_string(rows) + ") g");
  }
  void write_config(const std::vector<std::string>& tables, const std::string& snapshot_yaml,
                    const std::string& extra_yaml) override {
    f_.write_config(tables, PgConfigOptions{.sink_yaml = sink_yaml, .extra_yaml = extra_yaml, .snapshot_yaml = snapshot_yaml});
  }
  bool start() override { return f_.start_and_wait_for_slot(); }
  void exec(const std::string& sql) override { pg_exec(f_.pg, sql); }
  std::vector<std::string> column(const std::string& sql) override { return pg_query(f_.pg, sql); }
  std::vector<ConsumedRecord> read_until(const std::string& topic, size_t count) override {
    return f_.read_until(topic, count);
  }
  std::string database_name() const override { return f_.pg.database; }
  std::function<bool()> exec_and_watch_commit(const std::string& sql) override {
    // The commit ends after the insert position read before it: a committed position past that point
    // is at or after this transaction's commit.
    const uint64_t before = parse_lsn(pg_query(f_.pg, "SELECT pg_current_wal_insert_lsn()::text").at(0));
    pg_exec(f_.pg, sql);
    return [this, before] {
      const std::string token = state_token(f_.daemon);
      return token.rfind("pg:", 0) == 0 && parse_lsn(token.substr(3)) > before;
    };
  }
  std::string series(int64_t rows) const override {
    return "SELECT g AS n FROM generate_series(1, " + std::to_string(rows) + ") g";
  }

  PgFixture& fixture() { return f_; }

 private:
  PgFixture f_;
};

class MariaDb final : public Database {
 public:
  explicit MariaDb(const std::string& kafka) : f_(kafka) {}
  std::string kind() const override { return "mariadb"; }
  DaemonRunner& daemon() override { return f_.daemon; }
  std::string bootstrap() const override { return f_.bootstrap; }
  std::string table() const override { return f_.table("snap"); }
  void create(int64_t rows, const std::string& snapshot_yaml) override {
    f_.create_table(table(), "id BIGINT PRIMARY KEY, version BIGINT NOT NULL, payload TEXT");
    mysql_exec(f_.db, "INSERT INTO " + table() + " SELECT seq, 0, REPEAT('p', 180) FROM seq_1_to_" + std::to_string(rows));
    f_.write_config({table()}, MySqlConfigOptions{.sink_yaml = sink_yaml, .snapshot_yaml = snapshot_yaml});
  }
  std::map<int64_t, int64_t> contents() override {
    MySqlSession s(f_.db);
    std::map<int64_t, int64_t> out;
    for (const auto& row : s.rows("SELECT id, version FROM " + table())) out[std::stoll(*row[0])] = std::stoll(*row[1]);
    return out;
  }
  std::unique_ptr<SqlSession> session() override { return open_mysql_session(); }

  std::string name(const std::string& base) const override { return f_.table(base); }
  std::string qualified_name(const std::string& t) const override { return f_.db.database + "." + t; }
  std::string topic_of(const std::string& t) const override { return f_.topic(t); }
  std::string text_key_type() const override { return "VARCHAR(64)"; }
  void create_table(const std::string& t, const std::string& columns) override {
    if (create_topics) return f_.create_table(t, columns);
    mysql_exec(f_.root, "CREATE TABLE `" + f_.db.database + "`.`" + t + "` (" + columns + ")");
    f_.created.push_back(t);
  }
  void fill(const std::string& t, int64_t rows) override {
    mysql_exec(f_.db, "INSERT INTO " + t + " SELECT seq, 0, REPEAT('p', 20) FROM seq_1_to_" + std::to_string(rows));
  }
  void write_config(const std::vector<std::string>& tables, const std::string& snapshot_yaml,
                    const std::string& extra_yaml) override {
    f_.write_config(tables, MySqlConfigOptions{.sink_yaml = sink_yaml, .extra_yaml = extra_yaml, .snapshot_yaml = snapshot_yaml});
  }
  bool start() override { return f_.start_and_wait_until_streaming(); }
  void exec(const std::string& sql) override { mysql_exec(f_.db, sql); }
  std::vector<std::string> column(const std::string& sql) override {
    MySqlSession s(f_.db);
    std::vector<std::string> out;
    for (const auto& row : s.rows(sql)) out.push_back(row.at(0).value_or("NULL"));
    return out;
  }
  std::vector<ConsumedRecord> read_until(const std::string& topic, size_t count) override {
    return f_.read_until(topic, count);
  }
  std::string database_name() const override { return f_.db.database; }
  std::function<bool()> exec_and_watch_commit(const std::string& sql) override {
    MySqlSession s(f_.db);
    s.exec(sql);
    const std::string gtid = s.value("SELECT @@last_gtid");
    unsigned domain = 0, server = 0;
    unsigned long seq = 0;
    if (std::sscanf(gtid.c_str(), "%u-%u-%lu", &domain, &server, &seq) != 3)
      throw std::runtime_error("no GTID for the transaction: '" + gtid + "'");
    return [this, domain, seq] { return committed_seq(state_token(f_.daemon), domain) >= static_cast<int64_t>(seq); };
  }
  std::string series(int64_t rows) const override { return "SELECT seq AS n FROM seq_1_to_" + std::to_string(rows); }

 private:
  MySqlFixture f_;
};

std::string text_of(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

}  // namespace

int Database::restart_server() {
  // TIDEMARK_SKIP_DEPS: the packages are there (the servers run); no apt-get on a restart.
  const std::string script = "TIDEMARK_SKIP_DEPS=1 " + std::string(TIDEMARK_SOURCE_DIR) + "/scripts/servers.sh ";
  const int rc = std::system((script + "restart " + kind() + " >/dev/null 2>&1").c_str());
  if (rc != 0) std::system((script + "start " + kind() + " >/dev/null 2>&1").c_str());
  return rc;
}

int Database::server(const std::string& command) {
  const std::string script = "TIDEMARK_SKIP_DEPS=1 " + std::string(TIDEMARK_SOURCE_DIR) + "/scripts/servers.sh ";
  return std::system((script + command + " " + kind() + " >/dev/null 2>&1").c_str());
}

std::unique_ptr<Database> make_database(const std::string& kind, const std::string& kafka) {
  if (kind == "postgres") return std::make_unique<Postgres>(kafka);
  return std::make_unique<MariaDb>(kafka);
}

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

std::vector<nlohmann::json> record_values(const std::vector<ConsumedRecord>& records) {
  std::vector<nlohmann::json> out;
  for (const auto& r : records)
    if (r.value) out.push_back(nlohmann::json::parse(*r.value));
  return out;
}

void exec_retrying_deadlocks(const std::function<void(const std::string&)>& exec, const std::string& sql) {
  for (int attempt = 1;; ++attempt) {
    try {
      exec(sql);
      return;
    } catch (const std::exception& e) {
      const std::string what = e.what();
      const bool deadlock = what.find("Deadlock found") != std::string::npos || what.find("deadlock detected") != std::string::npos;
      if (!deadlock || attempt == 10) throw;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20 * attempt));
  }
}

std::vector<std::string> snapshot_rows(const std::vector<ConsumedRecord>& records, const std::string& field) {
  std::vector<std::string> out;
  for (const auto& v : record_values(records)) {
    if (v.value("op", "") != "r") continue;
    EXPECT_EQ(v["source"].value("snapshot", ""), "incremental") << v.dump();
    out.push_back(text_of(v["after"][field]));
  }
  return out;
}

CliResult run_tidemark(DaemonRunner& daemon, const std::vector<std::string>& args) {
  static int runs = 0;
  const std::string base = daemon.dir().file("cli-" + std::to_string(++runs));
  std::vector<std::string> argv{TIDEMARK_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  CliResult result;
  {
    ChildProcess child(argv, base + ".out", base + ".err");
    result.status = child.wait_for_exit(30s).value_or(-1000);
  }
  result.out = read_file(base + ".out");
  result.err = read_file(base + ".err");
  return result;
}

}  // namespace tidemark::test
