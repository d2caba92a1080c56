#pragma once
// What the stream has told us about each relation (Relation messages) and each non-built-in type (Type
// messages), turned into the event model: a TableSchema per relation, rebuilt when a Relation message
// arrives again after ALTER TABLE, so the column set changes exactly from that point of the log.

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "source/postgres/pg_value_parser.hpp"
#include "source/postgres/pgoutput_decoder.hpp"
#include "tidemark/change_event.hpp"

namespace tidemark::pg {

// What the catalog says about a relation beside its Relation message (names, not positions: the two are
// matched by name).
struct RelationCatalog {
  std::vector<std::string> primary_key;  // in key order; empty when the table has none
  std::vector<std::string> not_null;
};

struct CachedRelation {
  RelationMessage relation;
  TableSchemaPtr schema;  // nullptr when the table is not captured (in the publication, not in source.tables)
};

class RelationCache {
 public:
  // `catalog` reads what Relation messages leave out: the primary key (with REPLICA IDENTITY FULL pgoutput
  // flags every column as key, but records are keyed by the primary key) and the NOT NULL columns.
  using CatalogLookup = std::function<std::optional<RelationCatalog>(uint32_t relation_id)>;

  RelationCache(std::string database, std::vector<std::string> table_patterns, CatalogLookup catalog);

  // Returns an error text when the relation cannot be used.
  std::optional<std::string> on_relation(const RelationMessage& relation);
  const CachedRelation* find(uint32_t relation_id) const;

  PgTypeRegistry& types() { return types_; }

  // Converts one tuple; `key_only` marks a 'K' tuple (non-key columns are sent as NULL by pgoutput).
  // Unchanged TOASTed values become Unavailable, never Null.
  std::optional<Row> to_row(const CachedRelation& relation, const TupleData& tuple, std::string& error) const;

 private:
  std::string database_;
  std::vector<std::string> patterns_;
  CatalogLookup catalog_;
  std::unordered_map<uint32_t, CachedRelation> relations_;
  PgTypeRegistry types_;
};

}  // namespace tidemark::pg
