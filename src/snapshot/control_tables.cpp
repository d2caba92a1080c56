#include "snapshot/control_tables.hpp"

#include "config/source_kinds.hpp"

namespace tidemark::snapshot {

namespace {

// Where tables are named database.table (MySQL), source.database is optional. Without it, unqualified
// control tables live in the database of the first source.tables entry, when that names one database (no '*').
std::string default_database(const Config& config) {
  if (!config.source.database.empty() || config.source.tables.empty()) return config.source.database;
  const std::string& first = config.source.tables.front();
  const size_t dot = first.find('.');
  if (dot == std::string::npos || first.substr(0, dot).find('*') != std::string::npos) return "";
  return first.substr(0, dot);
}

TableId resolve(const Config& config, const std::string& name) {
  const size_t dot = name.find('.');
  const std::string qualifier = dot == std::string::npos ? "" : name.substr(0, dot);
  const std::string table = dot == std::string::npos ? name : name.substr(dot + 1);
  const SourceDescriptor& kind = describe_source(config.source);
  if (kind.qualifier == TableQualifier::Schema)
    return TableId{config.source.database, qualifier.empty() ? std::string(kind.default_schema) : qualifier, table};
  return TableId{qualifier.empty() ? default_database(config) : qualifier, "", table};
}

std::string pattern_of(const TableId& id) { return (id.schema.empty() ? id.database : id.schema) + "." + id.table; }

}  // namespace

bool snapshots_enabled(const Config& config) {
  return config.snapshot.enabled && describe_source(config.source).is_database;
}

ControlTables control_tables(const Config& config) {
  return ControlTables{resolve(config, config.snapshot.watermark_table), resolve(config, config.snapshot.signal_table)};
}

std::optional<std::string> control_tables_problem(const Config& config) {
  if (!snapshots_enabled(config) || describe_source(config.source).qualifier != TableQualifier::Database ||
      !default_database(config).empty())
    return std::nullopt;
  for (const std::string* name : {&config.snapshot.watermark_table, &config.snapshot.signal_table}) {
    if (name->find('.') == std::string::npos)
      return "snapshot." + std::string(name == &config.snapshot.watermark_table ? "watermark_table" : "signal_table") +
             " '" + *name + "' names no database and the first source.tables entry names no single one: set "
             "source.database (where the signal and watermark tables live), or write it as database.table, or set "
             "snapshot.enabled: false";
  }
  return std::nullopt;
}

Config with_control_tables(Config config) {
  if (!snapshots_enabled(config)) return config;
  // The readers resolve unqualified names against source.database: give them the one chosen here.
  if (describe_source(config.source).qualifier == TableQualifier::Database) config.source.database = default_database(config);
  const ControlTables tables = control_tables(config);
  config.source.tables.push_back(pattern_of(tables.watermark));
  config.source.tables.push_back(pattern_of(tables.signal));
  return config;
}

}  // namespace tidemark::snapshot
