#include "config/two_way_tables.hpp"

#include <string_view>

namespace tidemark {

std::string marker_table_in_source(const Config& config) {
  const std::string& name = config.two_way.marker_table;
  if (name.find('.') != std::string::npos) return name;
  if (config.source.type == "postgres") return "public." + name;
  // MySQL: source.database, else the database of the first captured table (entries are database.table).
  std::string database = config.source.database;
  if (database.empty() && !config.source.tables.empty()) database = config.source.tables.front().substr(0, config.source.tables.front().find('.'));
  return database + "." + name;
}

std::string id_map_table_in_source(const Config& config) {
  const std::string marker = marker_table_in_source(config);
  return marker.substr(0, marker.find('.')) + "." + config.sink.database.id_map_table;
}

bool is_table(const TableId& id, const std::string& qualified) {
  const size_t dot = qualified.find('.');
  if (dot == std::string::npos) return false;
  const std::string_view view(qualified);
  return view.substr(dot + 1) == id.table && view.substr(0, dot) == (id.schema.empty() ? id.database : id.schema);
}

}  // namespace tidemark
