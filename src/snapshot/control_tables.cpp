#include "snapshot/control_tables.hpp"

namespace tidemark::snapshot {

namespace {

TableId resolve(const Config& config, const std::string& name) {
  const size_t dot = name.find('.');
  const std::string qualifier = dot == std::string::npos ? "" : name.substr(0, dot);
  const std::string table = dot == std::string::npos ? name : name.substr(dot + 1);
  if (config.source.type == "postgres")
    return TableId{config.source.database, qualifier.empty() ? "public" : qualifier, table};
  return TableId{qualifier.empty() ? config.source.database : qualifier, "", table};
}

std::string pattern_of(const TableId& id) { return (id.schema.empty() ? id.database : id.schema) + "." + id.table; }

}  // namespace

bool snapshots_enabled(const Config& config) {
  return config.snapshot.enabled && (config.source.type == "postgres" || config.source.type == "mysql");
}

ControlTables control_tables(const Config& config) {
  return ControlTables{resolve(config, config.snapshot.watermark_table), resolve(config, config.snapshot.signal_table)};
}

std::optional<std::string> control_tables_problem(const Config& config) {
  if (!snapshots_enabled(config) || config.source.type != "mysql" || !config.source.database.empty()) return std::nullopt;
  for (const std::string* name : {&config.snapshot.watermark_table, &config.snapshot.signal_table}) {
    if (name->find('.') == std::string::npos)
      return "snapshot." + std::string(name == &config.snapshot.watermark_table ? "watermark_table" : "signal_table") +
             " '" + *name + "' names no database: set source.database (where the signal and watermark tables live), "
             "or write it as database.table, or set snapshot.enabled: false";
  }
  return std::nullopt;
}

Config with_control_tables(Config config) {
  if (!snapshots_enabled(config)) return config;
  const ControlTables tables = control_tables(config);
  config.source.tables.push_back(pattern_of(tables.watermark));
  config.source.tables.push_back(pattern_of(tables.signal));
  return config;
}

}  // namespace tidemark::snapshot
