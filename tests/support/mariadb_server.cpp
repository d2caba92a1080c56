#include "mariadb_server.hpp"

#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "pg_cluster.hpp"  // free_local_port()

namespace tidemark::test {

ThrowawayMariaDb::ThrowawayMariaDb(const std::vector<std::string>& extra_args)
    : port_(std::to_string(free_local_port())) {
  for (const auto& arg : extra_args) extra_args_ += (extra_args_.empty() ? "" : " ") + arg;
  try {
    started_ = true;  // from here on a failure may leave a mariadbd behind: stop() handles "not running"
    servers_sh("start");
  } catch (...) {
    stop();
    throw;
  }
}

ThrowawayMariaDb::~ThrowawayMariaDb() { stop(); }

MySqlTarget ThrowawayMariaDb::target(bool root) const {
  return root ? MySqlTarget{"127.0.0.1", port_, "root", "root", "tidemark_test"}
              : MySqlTarget{"127.0.0.1", port_, "tidemark", "tidemark", "tidemark_test"};
}

void ThrowawayMariaDb::servers_sh(const std::string& command) {
  const std::string out = dir_.file("servers-" + command + ".log");
  ChildProcess script({"/bin/bash", std::string(TIDEMARK_SOURCE_DIR) + "/scripts/servers.sh", command, "mariadb"}, out,
                      out + ".err", false,
                      {"TIDEMARK_RUN_DIR=" + dir_.file("run"), "TIDEMARK_MYSQL_PORT=" + port_, "TIDEMARK_SKIP_DEPS=1",
                       "TIDEMARK_MARIADB_EXTRA_ARGS=" + extra_args_});
  const auto status = script.wait_for_exit(std::chrono::seconds(120));
  if (status != 0)
    throw std::runtime_error("scripts/servers.sh " + command + " mariadb (port " + port_ + ", dir " + dir_.path() +
                             ", extra options '" + extra_args_ + "') " +
                             (status ? "exited " + std::to_string(*status) : std::string("timed out")) + ":\n" +
                             read_file(out) + read_file(out + ".err") + read_file(dir_.file("run/mariadb/mariadbd.log")));
}

void ThrowawayMariaDb::stop() noexcept {
  if (!started_) return;
  started_ = false;
  try {
    servers_sh("stop");
  } catch (const std::exception& e) {
    // The directory goes anyway (TempDir); a mariadbd left running would show in the next start's port check.
    std::fprintf(stderr, "ThrowawayMariaDb: %s\n", e.what());
  }
}

}  // namespace tidemark::test
