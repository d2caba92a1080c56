#pragma once
// The id map in the target (sink.database.id_map_table): for mappings with generated_key, one row per
// source row pairing its source key with the key the target generated for it. The sink writes it in the
// same statement sequence, and so the same transaction, as the row itself, so a replay after a crash finds
// the row it inserted instead of inserting a second one; updates, deletes and references to the source row
// find the target row through it.
//
// Keys are kept as text: a source key is its columns' values as text, joined by U+001F when there are
// several; a target key is the generated column's value as text.

#include <optional>
#include <string>

#include "config/config.hpp"
#include "sink/database/target_connection.hpp"

namespace tidemark::dbsink {

class IdMapTable {
 public:
  IdMapTable(const DatabaseSinkConfig& config, const std::string& pipeline);
  // The map `space`.`name` in a database of `dialect` (two-way sync: the peer's, in this pipeline's source).
  IdMapTable(Dialect dialect, const std::string& space, const std::string& name, const std::string& pipeline);

  const std::string& label() const { return where_.label; }
  const std::string& table() const { return where_.quoted; }  // quoted and qualified
  std::string create_statement() const;
  // Creates the table when `create`, else only looks; `exists` says whether it is there afterwards. A
  // PostgreSQL map logs whole old rows (REPLICA IDENTITY FULL), so that the peer of a two-way pair learns
  // from a deleted entry which of its own entries goes too.
  std::optional<TargetError> ensure(TargetConnection& target, bool create, bool& exists) const;

  // The condition matching the entry of `source_table` (a quoted literal) and `source_key` (an SQL
  // expression of text).
  std::string match(const std::string& source_table, const std::string& source_key) const;
  // An expression: that entry's target key as `type` (the target column's type), NULL when there is none.
  std::string lookup(const std::string& source_table, const std::string& source_key, const std::string& type) const;
  // The values (pipeline, source_table, source_key, ...) start of an INSERT into the map.
  std::string insert_head() const;
  // Two-way sync: the peer recorded that the row `peer_source_key` of its source table (this pipeline's
  // target table of `source_table`'s mapping) is its row `peer_target_key`; this pipeline records the
  // same pair the other way round, writing nothing when it has it already (so nothing echoes back).
  // Arguments are SQL literals.
  std::string mirror_statement(const std::string& source_table, const std::string& peer_target_key,
                               const std::string& peer_source_key) const;
  // The peer dropped its entry: this pipeline's entry of the row `peer_target_key` (or, when only the
  // peer's source key is known, the entry pointing at `peer_source_key`) goes too.
  std::string unmirror_statement(const std::string& source_table, const std::optional<std::string>& peer_target_key,
                                 const std::string& peer_source_key) const;
  const std::string& pipeline_literal() const { return pipeline_; }

 private:
  OwnTable where_;
  std::string pipeline_;  // quoted literal
};

}  // namespace tidemark::dbsink
