#pragma once
// The tests' own PostgreSQL access (libpq), to write the changes Tidemark must capture.

#include <string>
#include <vector>

namespace tidemark::test {

struct PgTarget {
  std::string host, port, user, password, database;
};

// The throwaway server scripts/test.sh starts (TIDEMARK_PG_*); fails the test when unset.
PgTarget real_postgres(bool superuser = false);

// Runs statements (each its own transaction unless they say BEGIN/COMMIT); throws on error.
void pg_exec(const PgTarget& target, const std::string& sql);
// Runs a query and returns the first column of every row.
std::vector<std::string> pg_query(const PgTarget& target, const std::string& sql);

}  // namespace tidemark::test
