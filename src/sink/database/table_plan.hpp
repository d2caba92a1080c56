#pragma once
// How the rows of one source table (one schema version) are written to its target table: which target
// columns are written, each copied from a source column or computed by the target from an SQL expression
// over the source row, the row filter, and the target's key; built once per schema, checked against the
// target's catalog. The statements themselves are built by the DatabaseSink.

#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "sink/database/sql_values.hpp"
#include "sink/database/target_connection.hpp"
#include "tidemark/change_event.hpp"

namespace tidemark::dbsink {

// SQL text with source values in it: text[0] value(refs[0]) text[1] ... value(refs[n-1]) text[n]. Written
// `:column` in the configuration.
struct SqlTemplate {
  std::vector<std::string> text;
  std::vector<size_t> refs;  // source column indexes
  bool empty() const { return text.empty(); }
};

// Splits `sql` at its `:column` references (not inside '...' strings, not the `::` cast); the names must be
// columns of `source`. Checked to be one expression of the allowed kind (db/row_filter.hpp): an error
// sentence otherwise.
struct TemplateResult {
  SqlTemplate sql;
  std::string error;
};
TemplateResult parse_template(const std::string& sql, const TableSchema& source, Dialect dialect);

// One written target column.
struct TargetValue {
  std::string name;                 // quoted
  std::string type;                 // the target's type (sql_values.hpp)
  std::optional<size_t> source;     // copied from this source column
  SqlTemplate expression;           // or computed from this
  std::string reference;            // the copied value is a key of this mapped source table: written translated
                                    // through the id map ("schema.table"); empty: as it is
  LiteralType literal;              // `type`, as the value's literal is rendered for it
};

struct TablePlan {
  TableSchemaPtr source;  // holds the schema, so its address (the cache key) is never reused
  std::string target;     // qualified and quoted
  std::string label;      // schema.table, for messages
  std::vector<TargetValue> values;
  std::vector<size_t> key;              // the source columns copied into the target's primary key, in key order
  std::vector<size_t> key_values;       // their indexes in `values`
  SqlTemplate filter;                   // the mapping's where; empty: every row
  // With expressions or a filter, rows pass through a derived table `v` of the source values they need:
  bool derived = false;
  std::vector<size_t> carried;            // the source columns in `v`, in order
  std::vector<std::string> carried_names;  // quoted
  std::vector<std::string> carried_types;  // the type each is written (and on PostgreSQL cast) as
  std::vector<std::string> carried_references;  // a copied reference's mapped table (TargetValue::reference)
  std::string filter_sql;                  // the filter over v's columns
  // An upsert is insert_head, rows (see DatabaseSink::append_row) joined by row_separator, insert_tail.
  std::string insert_head;  // INSERT INTO t (a, b) VALUES   /   INSERT INTO t (a, b) SELECT <values> FROM (VALUES
  std::string insert_tail;  // [) AS v(..) WHERE <filter>] ON CONFLICT (k) DO UPDATE SET ... / ON DUPLICATE KEY ...
  std::string upsert_tail;  // ON CONFLICT ... / ON DUPLICATE KEY UPDATE ... alone
  std::string row_separator = ", ";
  // With a filter: the same rows delete the target rows whose new image the filter refuses (left the filter).
  std::string leave_head;
  std::string leave_tail;
  std::string key_list;     // (k1, k2) or k
  // generated_key: the target's key column is filled in by the target; `key` holds the source key columns,
  // `key_values` is empty, and rows are written one by one through the id map (DatabaseSink::add_mapped).
  bool generated_key = false;
  std::string generated_name;  // quoted
  std::string generated_type;
  std::string map_name;        // the source table in the id map ("schema.table")
  bool references = false;     // some value is translated through the id map
  // Last writer wins (TableMapping::version): the index in `values` of the version column; an equal
  // version overwrites when `apply_ties`.
  std::optional<size_t> version;
  bool apply_ties = true;
  // Two-way sync, the peer's side winning conflicts (two_way.winner): inserts keep an existing row (the
  // upsert does nothing on a duplicate key), and updates and deletes apply only where the target row still
  // holds the source row's old values (DatabaseSink).
  bool keep_changed = false;
  // PostgreSQL snapshot rows of a plain plan (no computed, filtered, generated or translated values) load
  // by COPY (plan_copy): straight into the target table, since they are mostly new; where some exist, into
  // a temporary table and one INSERT ... SELECT with the upsert's tail.
  std::string copy_table;   // the temporary table; empty: no COPY
  std::string copy_direct;  // COPY t (a, b) FROM STDIN
  std::string copy_open;    // creates the temporary table when missing, empties it, then COPY ... FROM STDIN
  std::string copy_apply;   // INSERT INTO t (a, b) SELECT a, b FROM <temporary table> ON CONFLICT ...
};

struct PlanResult {
  std::optional<TablePlan> plan;
  std::string error;
};

// The plan of `source` into `target_table`, as `mapping` says (null: column by column, same names). Every
// problem (no such table or column on either side, no primary key, a key that is not copied, an expression
// that is not allowed) is reported in `error`, one per line, each naming the fix.
// `apply_ties`: with a version column, whether an equal version overwrites (two_way: one side of the pair);
// `keep_changed`: TablePlan::keep_changed.
PlanResult plan_table(Dialect dialect, const TableSchemaPtr& source, const TableMapping* mapping,
                      const std::string& target_schema, const std::string& target_table, const TargetTable& described,
                      bool apply_ties = true, bool keep_changed = false);

// Fills the COPY fields of a PostgreSQL `plan` that writes each value as it is copied from the source, with
// `temp_table` as the temporary table's name; other plans keep them empty.
void plan_copy(TablePlan& plan, Dialect dialect, const std::string& temp_table);

// Where `mapping` (may be null) sends `source`: the target schema (postgres) or database (mysql) and table.
std::pair<std::string, std::string> target_of(const TableId& source, const TableMapping* mapping,
                                              const std::string& default_schema);
// The mapping of `source` in `mappings`, matched by "schema.table" (postgres) / "database.table" (mysql).
const TableMapping* find_mapping(const std::vector<TableMapping>& mappings, const TableId& source);

// The name of `source` in the id map and in mappings: "schema.table" (postgres) / "database.table" (mysql).
std::string mapped_name(const TableId& source);

// Orders `tables` (stably) so that a table comes after the tables its mapping references: the initial
// snapshot loads parents, and so their id map entries, before the children that are translated through them.
void order_referenced_first(std::vector<TableId>& tables, const std::vector<TableMapping>& mappings);

// A type for source values in `v` that no target column gives one: the column kind's natural type.
std::string natural_type(Dialect dialect, const ColumnInfo* info);

}  // namespace tidemark::dbsink
