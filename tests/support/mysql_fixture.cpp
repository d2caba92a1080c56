#include "mysql_fixture.hpp"

#include <gtest/gtest.h>
#include <signal.h>

#include <thread>

#include "process.hpp"

namespace tidemark::test {

using namespace std::chrono_literals;

MySqlFixture::MySqlFixture(std::string kafka) : bootstrap(std::move(kafka)) {
  suffix = daemon.name().substr(3);  // after "it-"
  for (char& c : suffix)
    if (c == '-') c = '_';
}

MySqlFixture::~MySqlFixture() {
  if (daemon.started() && daemon.process().running()) daemon.stop(SIGKILL);
  try {
    for (const auto& t : created) mysql_exec(root, "DROP TABLE IF EXISTS `" + db.database + "`.`" + t + "`");
  } catch (...) {
  }
}

void MySqlFixture::create_table(const std::string& name, const std::string& columns, int partitions) {
  mysql_exec(root, "CREATE TABLE `" + db.database + "`.`" + name + "` (" + columns + ")");
  created.push_back(name);
  create_topic(bootstrap, topic(name), partitions);
}

void MySqlFixture::write_config(const std::vector<std::string>& tables, const MySqlConfigOptions& options) {
  std::string server_id = options.server_id;
  if (server_id.empty()) server_id = std::to_string(10000 + (std::hash<std::string>{}(suffix) % 100000));
  std::string yaml = "source:\n  type: mysql\n  host: " + db.host + "\n  port: " + db.port + "\n  user: " + db.user +
                     "\n  password: " + db.password + "\n  database: " + db.database + "\n  tables:\n";
  for (const auto& t : tables) yaml += "    - " + db.database + "." + t + "\n";
  yaml += "  mysql:\n    server_id: " + server_id + "\n";
  daemon.write_config(options.sink_yaml, "info", yaml + options.snapshot_yaml + options.extra_yaml);
}

bool MySqlFixture::start_and_wait_until_streaming() {
  daemon.start();
  // This run's log line (stderr starts empty with each run): a state file left by an earlier run already
  // holds a binlog position, and a database sink keeps its state in the target.
  const bool ok = wait_until([&] { return daemon.stderr_text().find("mysql: streaming the binlog") != std::string::npos; }, 30s);
  std::this_thread::sleep_for(300ms);
  return ok;
}

std::vector<ConsumedRecord> MySqlFixture::read_until(const std::string& topic_name, size_t count,
                                                     std::chrono::milliseconds timeout) {
  std::vector<ConsumedRecord> records;
  wait_until([&] {
    if (partition_count(bootstrap, topic_name) <= 0) return false;  // not created yet
    records = consume_all(bootstrap, topic_name);
    return records.size() >= count;
  }, timeout);
  return records;
}

}  // namespace tidemark::test
