#pragma once
// The two tables a snapshotting pipeline owns in the source database: the watermark table (one row per
// pipeline, updated around each chunk) and the signal table (rows inserted by users). Their changes are
// captured like any table's, consumed by the merge stage and never published.

#include <optional>
#include <string>

#include "config/config.hpp"
#include "tidemark/change_event.hpp"

namespace tidemark::snapshot {

struct ControlTables {
  TableId watermark;
  TableId signal;
};

// True when this configuration takes snapshots (snapshot.enabled and a database source).
bool snapshots_enabled(const Config& config);

// Resolves snapshot.watermark_table / signal_table: an unqualified name lives in the database's default
// schema (PostgreSQL: public) or, where tables are named database.table, in source.database.
ControlTables control_tables(const Config& config);

// Why the control tables cannot be named (an unqualified name where no source.database is known), if so.
std::optional<std::string> control_tables_problem(const Config& config);

// `config` with the control tables added to source.tables, so that the source captures their changes and
// the PostgreSQL publication must contain them.
Config with_control_tables(Config config);

}  // namespace tidemark::snapshot
