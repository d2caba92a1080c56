#include "sink/database/table_plan.hpp"

#include <algorithm>
#include <cctype>

#include "sink/database/sql_values.hpp"

namespace tidemark::dbsink {

namespace {

bool same_name_ignoring_case(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// The target column a source column goes to: the same name, else the only one that differs in case only
// (MySQL's names are case-insensitive, PostgreSQL folds unquoted names to lower case).
const TargetColumn* find_column(const TargetTable& table, const std::string& name) {
  for (const auto& c : table.columns)
    if (c.name == name) return &c;
  const TargetColumn* found = nullptr;
  for (const auto& c : table.columns) {
    if (!same_name_ignoring_case(c.name, name)) continue;
    if (found) return nullptr;
    found = &c;
  }
  return found;
}

}  // namespace

PlanResult plan_table(Dialect dialect, const TableSchemaPtr& source, const std::string& target_schema,
                      const std::string& target_table, const TargetTable& described) {
  PlanResult out;
  const std::string label = target_schema + "." + target_table;
  const std::string from = "source table " + source->id.to_string() + " -> target table " + label;
  if (described.columns.empty()) {
    out.error = from + ": the target table does not exist; create it (sink.database does not create tables)";
    return out;
  }
  if (described.primary_key.empty()) {
    out.error = from + ": the target table has no primary key, which the sink needs to apply updates and deletes "
                "and to make replays idempotent; add one";
    return out;
  }
  TablePlan plan;
  plan.source = source;
  plan.label = label;
  append_identifier(plan.target, dialect, target_schema);
  plan.target += '.';
  append_identifier(plan.target, dialect, target_table);
  std::vector<std::string> target_names;  // unquoted, parallel to plan.columns
  for (size_t i = 0; i < source->columns.size(); ++i) {
    const TargetColumn* column = find_column(described, source->columns[i]);
    if (!column) {
      out.error = from + ": the target table has no column " + source->columns[i] + "; add it to the target table";
      return out;
    }
    if (column->generated) continue;  // computed by the target from the other columns
    plan.columns.push_back(i);
    std::string quoted;
    append_identifier(quoted, dialect, column->name);
    plan.names.push_back(std::move(quoted));
    plan.types.push_back(column->type);
    target_names.push_back(column->name);
  }
  for (const auto& key_column : described.primary_key) {
    const auto it = std::find(target_names.begin(), target_names.end(), key_column);
    if (it == target_names.end()) {
      out.error = from + ": the target's primary key column " + key_column + " has no source column; the target's "
                  "primary key must be made of columns the source writes";
      return out;
    }
    const auto at = static_cast<size_t>(it - target_names.begin());
    plan.key.push_back(plan.columns[at]);
    plan.key_types.push_back(plan.types[at]);
  }
  plan.insert_head = "INSERT INTO " + plan.target + " (";
  for (size_t i = 0; i < plan.names.size(); ++i) plan.insert_head += (i ? ", " : "") + plan.names[i];
  plan.insert_head += ") VALUES ";
  std::vector<std::string> key_names;
  for (const size_t k : plan.key)
    for (size_t i = 0; i < plan.columns.size(); ++i)
      if (plan.columns[i] == k) key_names.push_back(plan.names[i]);
  if (key_names.size() == 1) {
    plan.key_list = key_names[0];
  } else {
    plan.key_list = "(";
    for (size_t i = 0; i < key_names.size(); ++i) plan.key_list += (i ? ", " : "") + key_names[i];
    plan.key_list += ")";
  }
  std::vector<std::string> set;
  for (size_t i = 0; i < plan.names.size(); ++i) {
    if (std::find(plan.key.begin(), plan.key.end(), plan.columns[i]) != plan.key.end()) continue;
    set.push_back(dialect == Dialect::Postgres ? plan.names[i] + " = EXCLUDED." + plan.names[i]
                                               : plan.names[i] + " = VALUES(" + plan.names[i] + ")");
  }
  if (dialect == Dialect::Postgres) {
    std::string conflict = "(";
    for (size_t i = 0; i < key_names.size(); ++i) conflict += (i ? ", " : "") + key_names[i];
    conflict += ")";
    plan.upsert_tail = " ON CONFLICT " + conflict + (set.empty() ? " DO NOTHING" : " DO UPDATE SET ");
  } else {
    // A table of key columns only: updating the key to itself makes the duplicate a no-op.
    if (set.empty()) set.push_back(key_names[0] + " = " + key_names[0]);
    plan.upsert_tail = " ON DUPLICATE KEY UPDATE ";
  }
  for (size_t i = 0; i < set.size(); ++i) plan.upsert_tail += (i ? ", " : "") + set[i];
  out.plan = std::move(plan);
  return out;
}

}  // namespace tidemark::dbsink
