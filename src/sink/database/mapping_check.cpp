#include "sink/database/mapping_check.hpp"

#include <memory>

#include "sink/database/table_plan.hpp"

namespace tidemark::dbsink {

std::vector<std::string> check_mappings(const Config& config, TargetConnection& source, TargetConnection& target) {
  std::vector<std::string> problems;
  const bool source_pg = source.dialect() == Dialect::Postgres;
  const std::string default_schema = target.dialect() == Dialect::Postgres ? config.sink.database.schema
                                                                           : config.sink.database.database;
  for (const TableMapping& mapping : config.sink.database.tables) {
    const std::string at = "sink.database.tables (line " + std::to_string(mapping.line) + "): ";
    const size_t dot = mapping.source.find('.');
    if (dot == std::string::npos) {
      problems.push_back(at + "source " + mapping.source + ": name the table as " +
                         (source_pg ? "schema.table" : "database.table"));
      continue;
    }
    const std::string space = mapping.source.substr(0, dot);
    const std::string name = mapping.source.substr(dot + 1);
    TargetError error;
    const auto described = source.describe(space, name, &error);
    if (!described) {
      problems.push_back(at + "cannot read the source table " + mapping.source + ": " + error.message);
      continue;
    }
    if (described->columns.empty()) {
      problems.push_back(at + "source " + mapping.source + ": no such table in the source database");
      continue;
    }
    auto schema = std::make_shared<TableSchema>();
    schema->id = source_pg ? TableId{config.source.database, space, name} : TableId{space, "", name};
    for (const auto& c : described->columns) schema->columns.push_back(c.name);
    for (const auto& k : described->primary_key)
      for (size_t i = 0; i < schema->columns.size(); ++i)
        if (schema->columns[i] == k) schema->key_columns.push_back(i);
    const auto [target_schema, target_table] = target_of(schema->id, &mapping, default_schema);
    const auto target_described = target.describe(target_schema, target_table, &error);
    if (!target_described) {
      problems.push_back(at + "cannot read the target table " + target_schema + "." + target_table + ": " + error.message);
      continue;
    }
    const PlanResult planned = plan_table(target.dialect(), schema, &mapping, target_schema, target_table, *target_described);
    if (planned.plan) continue;
    size_t from = 0;
    for (size_t end; (end = planned.error.find('\n', from)) != std::string::npos; from = end + 1)
      problems.push_back(at + planned.error.substr(from, end - from));
    problems.push_back(at + planned.error.substr(from));
  }
  return problems;
}

}  // namespace tidemark::dbsink
