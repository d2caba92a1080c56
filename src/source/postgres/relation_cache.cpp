#include "source/postgres/relation_cache.hpp"

#include <algorithm>

#include "source/postgres/pg_column_kinds.hpp"
#include "source/table_patterns.hpp"

namespace tidemark::pg {

RelationCache::RelationCache(std::string database, std::vector<std::string> table_patterns, CatalogLookup catalog)
    : database_(std::move(database)), patterns_(std::move(table_patterns)), catalog_(std::move(catalog)) {}

std::optional<std::string> RelationCache::on_relation(const RelationMessage& relation) {
  CachedRelation cached{relation, nullptr};
  if (table_selected(patterns_, relation.namespace_name + "." + relation.relation_name)) {
    auto schema = std::make_shared<TableSchema>();
    schema->id = TableId{database_, relation.namespace_name, relation.relation_name};
    const std::optional<RelationCatalog> catalog = catalog_(relation.relation_id);
    if (!catalog) return "cannot read the catalog entry of " + relation.namespace_name + "." + relation.relation_name;
    for (const auto& column : relation.columns) {
      schema->columns.push_back(column.name);
      const bool not_null =
          std::find(catalog->not_null.begin(), catalog->not_null.end(), column.name) != catalog->not_null.end();
      schema->column_info.push_back(pg_column_info(column.type_oid, types_, not_null));
    }
    std::vector<std::string> key_names;
    if (relation.replica_identity == ReplicaIdentity::Full) {
      // Every column is flagged; the record key is the primary key (none: a keyless table, null keys).
      key_names = catalog->primary_key;
    } else {
      for (const auto& column : relation.columns)
        if (column.is_key()) key_names.push_back(column.name);
    }
    for (const auto& name : key_names) {
      const auto it = std::find(schema->columns.begin(), schema->columns.end(), name);
      if (it != schema->columns.end()) schema->key_columns.push_back(static_cast<size_t>(it - schema->columns.begin()));
    }
    schema->complete_old_image = relation.replica_identity == ReplicaIdentity::Full;
    cached.schema = std::move(schema);
  }
  relations_[relation.relation_id] = std::move(cached);
  return std::nullopt;
}

const CachedRelation* RelationCache::find(uint32_t relation_id) const {
  const auto it = relations_.find(relation_id);
  return it == relations_.end() ? nullptr : &it->second;
}

std::optional<Row> RelationCache::to_row(const CachedRelation& cached, const TupleData& tuple, std::string& error) const {
  const auto& columns = cached.relation.columns;
  if (tuple.size() != columns.size()) {
    error = "tuple has " + std::to_string(tuple.size()) + " values, relation " + cached.relation.relation_name + " has " +
            std::to_string(columns.size()) + " columns";
    return std::nullopt;
  }
  Row row;
  row.reserve(tuple.size());
  for (size_t i = 0; i < tuple.size(); ++i) {
    const TupleValue& value = tuple[i];
    switch (value.kind) {
      case TupleValueKind::Null:
        row.emplace_back(Null{});
        break;
      case TupleValueKind::Unchanged:
        row.emplace_back(Unavailable{});
        break;
      case TupleValueKind::Binary:
        row.emplace_back(Bytes{value.data});
        break;
      case TupleValueKind::Text: {
        PgParseResult parsed = parse_pg_text(columns[i].type_oid, columns[i].type_modifier, value.data, types_);
        if (!parsed) {
          error = "column " + columns[i].name + ": " + parsed.error().to_string();
          return std::nullopt;
        }
        row.push_back(std::move(parsed).value());
        break;
      }
    }
  }
  return row;
}

}  // namespace tidemark::pg
