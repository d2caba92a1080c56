#pragma once
// A second, throwaway PostgreSQL cluster for tests that need server settings the shared one must not have
// (wal_level = replica...): initdb as the `postgres` OS user, roles tidemark/postgres, database
// tidemark_test (scripts/lib/postgres.sh).

#include <string>
#include <vector>

#include "pg_client.hpp"
#include "throwaway_server.hpp"

namespace tidemark::test {

class ThrowawayPostgres {
 public:
  // Starts the cluster; each of `settings` ("wal_level = replica") is applied with ALTER SYSTEM and the
  // cluster restarted. A non-empty `hba` replaces pg_hba.conf before that restart (keep initdb's
  // "local all all trust" line: the scripts use it). Throws (with the script's output) when it cannot; a
  // half-started cluster is stopped.
  explicit ThrowawayPostgres(const std::vector<std::string>& settings = {}, const std::string& hba = "");

  // tidemark / tidemark (LOGIN REPLICATION, owner of tidemark_test), or postgres / postgres.
  PgTarget target(bool superuser = false) const;
  const std::string& port() const { return server_.port(); }
  const std::string& directory() const { return server_.directory(); }

 private:
  ThrowawayServer server_;
};

}  // namespace tidemark::test
