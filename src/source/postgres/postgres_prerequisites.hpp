#pragma once
// Everything a PostgreSQL source needs before it streams, each missing piece reported with its fix:
// the connection, wal_level=logical, a role with REPLICATION, the captured tables, SELECT on them, the
// publication containing them, and a slot that is ours if it exists.

#include <string>
#include <vector>

#include "config/config.hpp"
#include "db/pg_connection.hpp"

namespace tidemark::pg {

struct CapturedTable {
  std::string schema;
  std::string table;
};

struct PrerequisiteReport {
  std::vector<std::string> problems;   // empty when the source can stream
  std::vector<std::string> warnings;   // recommendations (tidemark check prints them)
  std::vector<CapturedTable> tables;   // the tables source.tables selects
  bool slot_exists = false;
};

// Runs every check on an open normal connection. With source.postgres.create_publication the
// publication is created or extended instead of reported, when `apply_fixes` (the daemon at start);
// `tidemark check` passes false and changes nothing.
PrerequisiteReport check_prerequisites(Connection& conn, const Config& config, bool apply_fixes);

}  // namespace tidemark::pg
