#pragma once
// A second, throwaway MariaDB server for tests that need server settings the shared one must not have
// (binary logging off, binlog_format=MIXED...): accounts tidemark/tidemark and root/root, database
// tidemark_test (scripts/lib/mariadb.sh). Dynamic settings are better changed with SET GLOBAL than with a
// second server.

#include <string>
#include <vector>

#include "mysql_client.hpp"
#include "throwaway_server.hpp"

namespace tidemark::test {

class ThrowawayMariaDb {
 public:
  // Starts the server with `extra_args` appended to the script's mariadbd options (they override them:
  // "--skip-log-bin"). Throws (with the script's output and the server log) when it cannot.
  explicit ThrowawayMariaDb(const std::vector<std::string>& extra_args = {});

  // tidemark / tidemark (replication privileges, owner of tidemark_test), or root / root; both over TCP.
  MySqlTarget target(bool root = false) const;
  const std::string& port() const { return server_.port(); }
  const std::string& directory() const { return server_.directory(); }

 private:
  ThrowawayServer server_;
};

}  // namespace tidemark::test
