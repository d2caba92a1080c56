#include "config/two_way_tables.hpp"

#include <string_view>

namespace tidemark {

std::string marker_table_in_source(const Config& config) {
  const std::string& name = config.two_way.marker_table;
  if (name.find('.') != std::string::npos) return name;
  return (config.source.type == "postgres" ? std::string("public") : config.source.database) + "." + name;
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
