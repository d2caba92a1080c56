#pragma once
// Two-way sync: where the peer pipeline's sink tables live in this pipeline's source database, which is
// the peer's target. Both pipelines of a pair use the same table names (two_way.marker_table,
// sink.database.id_map_table); the peer's id map sits beside its marker table.

#include <string>

#include "config/config.hpp"
#include "tidemark/change_event.hpp"

namespace tidemark {

// two_way.marker_table in the source: "schema.table" (an unqualified name in public) or "database.table"
// (in source.database, else in the database of the first entry of source.tables).
std::string marker_table_in_source(const Config& config);
// The peer's id map (sink.database.id_map_table) in the source, in the marker table's schema or database.
std::string id_map_table_in_source(const Config& config);

// Whether `id` is the table `qualified` ("schema.table" or "database.table") names; compared in place.
bool is_table(const TableId& id, const std::string& qualified);

}  // namespace tidemark
