#pragma once
// One MariaDB pipeline of an integration test: the real daemon with a mysql source, tables and topics
// whose names no other run used, and the tests' own consumer.

#include <chrono>
#include <string>
#include <vector>

#include "daemon_runner.hpp"
#include "kafka_client.hpp"
#include "mysql_client.hpp"

namespace tidemark::test {

struct MySqlConfigOptions {
  std::string sink_yaml{};   // empty: the real Kafka broker
  std::string extra_yaml{};  // appended at top level
  std::string server_id{};   // empty: one derived from the fixture
  // The snapshot section: tests that do not test snapshots take none on first start.
  std::string snapshot_yaml{"snapshot:\n  initial: never\n"};
};

struct MySqlFixture {
  // `kafka` is the broker the daemon and the consumer use.
  explicit MySqlFixture(std::string kafka = real_kafka_bootstrap());
  ~MySqlFixture();  // kills a daemon still running, drops the fixture's tables
  MySqlFixture(const MySqlFixture&) = delete;
  MySqlFixture& operator=(const MySqlFixture&) = delete;

  MySqlTarget db = real_mysql();      // what the daemon connects as
  MySqlTarget root = real_mysql(true);
  std::string bootstrap;
  DaemonRunner daemon{bootstrap, GeneratorSettings{}};
  std::string suffix;  // unique to this fixture: the tail of table() names
  std::vector<std::string> created;  // tables to drop at the end

  std::string table(const std::string& base) const { return base + "_" + suffix; }
  std::string topic(const std::string& table_name) const { return daemon.name() + "." + db.database + "." + table_name; }

  // Creates a table (`columns` is the part inside the parentheses) and its topic.
  void create_table(const std::string& name, const std::string& columns, int partitions = 1);

  // A mysql source capturing <database>.<each of tables>.
  void write_config(const std::vector<std::string>& tables, const MySqlConfigOptions& options = {});

  // Starts `tidemark run` and waits until the state file holds a position (the daemon found the end of
  // the binlog and persisted it), so changes made afterwards are captured. False on timeout.
  [[nodiscard]] bool start_and_wait_until_streaming();

  std::vector<ConsumedRecord> read_until(const std::string& topic_name, size_t count,
                                         std::chrono::milliseconds timeout = std::chrono::seconds(60));
};

}  // namespace tidemark::test
