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

struct CachedRelation {
  RelationMessage relation;
  TableSchemaPtr schema;  // nullptr when the table is not captured (in the publication, not in source.tables)
};

class RelationCache {
 public:
  // `primary_key` returns the primary-key column names of a relation (by OID) from the catalog: with
  // REPLICA IDENTITY FULL pgoutput flags every column as key, but records are keyed by the primary key.
  using PrimaryKeyLookup = std::function<std::optional<std::vector<std::string>>(uint32_t relation_id)>;

  RelationCache(std::string database, std::vector<std::string> table_patterns, PrimaryKeyLookup primary_key);

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
  PrimaryKeyLookup primary_key_;
  std::unordered_map<uint32_t, CachedRelation> relations_;
  PgTypeRegistry types_;
};

}  // namespace tidemark::pg
