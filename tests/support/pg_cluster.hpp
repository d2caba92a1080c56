#pragma once
// A second, throwaway PostgreSQL cluster for tests that need server settings the shared one must not have
// (wal_level = replica...). It is made by the project's own scripts/servers.sh (initdb as the `postgres`
// OS user, roles tidemark/postgres, database tidemark_test: see scripts/lib/postgres.sh), with its own run
// directory under /tmp and a free port, so the shared servers of .run/ are never touched.

#include <string>
#include <vector>

#include "pg_client.hpp"
#include "process.hpp"

namespace tidemark::test {

class ThrowawayPostgres {
 public:
  // Starts the cluster; each of `settings` ("wal_level = replica") is applied with ALTER SYSTEM and the
  // cluster restarted. A non-empty `hba` replaces pg_hba.conf before that restart (keep initdb's
  // "local all all trust" line: the scripts use it). Throws (with the script's output) when it cannot; a
  // half-started cluster is stopped.
  explicit ThrowawayPostgres(const std::vector<std::string>& settings = {}, const std::string& hba = "");
  // Stops the cluster (pg_ctl -m fast) and deletes its directory.
  ~ThrowawayPostgres();
  ThrowawayPostgres(const ThrowawayPostgres&) = delete;
  ThrowawayPostgres& operator=(const ThrowawayPostgres&) = delete;

  // tidemark / tidemark (LOGIN REPLICATION, owner of tidemark_test), or postgres / postgres.
  PgTarget target(bool superuser = false) const;
  const std::string& port() const { return port_; }
  const std::string& directory() const { return dir_.path(); }

 private:
  // Runs scripts/servers.sh <command> postgres against this cluster; throws with its output on failure.
  void servers_sh(const std::string& command);
  void stop() noexcept;

  TempDir dir_;
  std::string port_;
  bool started_ = false;
};

// A TCP port on 127.0.0.1 that nothing listens on right now.
int free_local_port();

}  // namespace tidemark::test
