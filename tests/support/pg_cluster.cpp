#include "pg_cluster.hpp"

#include <sys/stat.h>

#include <stdexcept>

namespace tidemark::test {

ThrowawayPostgres::ThrowawayPostgres(const std::vector<std::string>& settings, const std::string& hba)
    : server_("postgres",
              [](const ThrowawayServer& s) {
                return std::vector<std::string>{"TIDEMARK_PG_DIR=" + s.file("postgres"), "TIDEMARK_PG_PORT=" + s.port()};
              },
              "postgres/postgres.log") {
  // As root, the scripts run initdb and postgres as the `postgres` OS user, which must reach the data
  // directory below this one (mkdtemp makes it 0700).
  if (::chmod(directory().c_str(), 0711) != 0) throw std::runtime_error("chmod " + directory() + " failed");
  server_.start();  // from here on a throw stops the cluster: server_ is destroyed with it
  if (settings.empty() && hba.empty()) return;
  for (const auto& setting : settings) pg_exec(target(true), "ALTER SYSTEM SET " + setting);
  if (!hba.empty()) write_file(server_.file("postgres/data/pg_hba.conf"), hba);  // keeps its owner, postgres
  server_.run("restart");
}

PgTarget ThrowawayPostgres::target(bool superuser) const {
  return superuser ? PgTarget{"127.0.0.1", port(), "postgres", "postgres", "tidemark_test"}
                   : PgTarget{"127.0.0.1", port(), "tidemark", "tidemark", "tidemark_test"};
}

}  // namespace tidemark::test
