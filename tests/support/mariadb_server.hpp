#pragma once
// A second, throwaway MariaDB server for tests that need server settings the shared one must not have
// (binary logging off, binlog_format=MIXED...). It is made by the project's own scripts/servers.sh (same
// accounts and database as the shared server: tidemark/tidemark, root/root, tidemark_test; see
// scripts/lib/mariadb.sh), with its own run directory under /tmp and a free port, so the shared servers of
// .run/ are never touched. Dynamic settings are better changed with SET GLOBAL than with a second server.

#include <string>
#include <vector>

#include "mysql_client.hpp"
#include "process.hpp"

namespace tidemark::test {

class ThrowawayMariaDb {
 public:
  // Starts the server with `extra_args` appended to the script's mariadbd options (they override them:
  // "--skip-log-bin"). Throws (with the script's output and the server log) when it cannot; a half-started
  // server is stopped.
  explicit ThrowawayMariaDb(const std::vector<std::string>& extra_args = {});
  // Stops the server (mariadb-admin shutdown) and deletes its directory.
  ~ThrowawayMariaDb();
  ThrowawayMariaDb(const ThrowawayMariaDb&) = delete;
  ThrowawayMariaDb& operator=(const ThrowawayMariaDb&) = delete;

  // tidemark / tidemark (replication privileges, owner of tidemark_test), or root / root; both over TCP.
  MySqlTarget target(bool root = false) const;
  const std::string& port() const { return port_; }
  const std::string& directory() const { return dir_.path(); }

 private:
  // Runs scripts/servers.sh <command> mariadb against this server; throws with its output on failure.
  void servers_sh(const std::string& command);
  void stop() noexcept;

  TempDir dir_;
  std::string port_;
  std::string extra_args_;
  bool started_ = false;
};

}  // namespace tidemark::test
