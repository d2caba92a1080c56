#pragma once
// How the rows of one source table (one schema version) are written to its target table: which source
// columns go to which target columns, the target's key, and the statement heads, built once per schema.
// The statements themselves are built by StatementBatch.

#include <optional>
#include <string>
#include <vector>

#include "sink/database/target_connection.hpp"
#include "tidemark/change_event.hpp"

namespace tidemark::dbsink {

struct TablePlan {
  TableSchemaPtr source;  // holds the schema, so its address (the cache key) is never reused
  std::string target;     // qualified and quoted
  std::string label;      // schema.table, for messages
  std::vector<size_t> columns;      // the source columns written, in order
  std::vector<std::string> names;   // their target columns, quoted
  std::vector<std::string> types;   // their target types (sql_values.hpp)
  std::vector<size_t> key;          // the source columns of the target's primary key, in key order
  std::vector<std::string> key_types;
  std::string insert_head;  // INSERT INTO t (a, b) VALUES
  std::string upsert_tail;  // ON CONFLICT (k) DO UPDATE SET ... / ON DUPLICATE KEY UPDATE ...
  std::string key_list;     // (k1, k2) or k
};

// The plan of `source` into `target_table` (described by the target). A problem (no such table, a source
// column the target lacks, no primary key, a key column the source lacks) is returned as a sentence that
// names the fix.
struct PlanResult {
  std::optional<TablePlan> plan;
  std::string error;
};
PlanResult plan_table(Dialect dialect, const TableSchemaPtr& source, const std::string& target_schema,
                      const std::string& target_table, const TargetTable& described);

}  // namespace tidemark::dbsink
