#include "sink/database/id_map.hpp"

namespace tidemark::dbsink {

IdMapTable::IdMapTable(const DatabaseSinkConfig& config, const std::string& pipeline)
    : where_(config, config.id_map_table), pipeline_(string_literal(where_.dialect, pipeline)) {}

IdMapTable::IdMapTable(Dialect dialect, const std::string& space, const std::string& name, const std::string& pipeline)
    : where_(dialect, space, name), pipeline_(string_literal(where_.dialect, pipeline)) {}

std::string IdMapTable::create_statement() const {
  if (where_.dialect == Dialect::Postgres)
    return "CREATE TABLE IF NOT EXISTS " + where_.quoted +
           " (pipeline text NOT NULL, source_table text NOT NULL, source_key text NOT NULL, target_key text NOT NULL, "
           "PRIMARY KEY (pipeline, source_table, source_key));\nALTER TABLE " + where_.quoted + " REPLICA IDENTITY FULL";
  // utf8mb4 key columns within InnoDB's 3072-byte index limit.
  return "CREATE TABLE IF NOT EXISTS " + where_.quoted +
         " (pipeline VARCHAR(100) NOT NULL, source_table VARCHAR(200) NOT NULL, source_key VARCHAR(400) NOT NULL, "
         "target_key VARCHAR(400) NOT NULL, PRIMARY KEY (pipeline, source_table, source_key)) ENGINE=InnoDB "
         "DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin";
}

std::optional<TargetError> IdMapTable::ensure(TargetConnection& target, bool create, bool& exists) const {
  return where_.ensure(target, create_statement(), create, exists);
}

std::string IdMapTable::match(const std::string& source_table, const std::string& source_key) const {
  return "pipeline = " + pipeline_ + " AND source_table = " + source_table + " AND source_key = " + source_key;
}

std::string IdMapTable::lookup(const std::string& source_table, const std::string& source_key,
                               const std::string& type) const {
  const std::string select = "(SELECT target_key FROM " + where_.quoted + " WHERE " + match(source_table, source_key) + ")";
  // MySQL converts the text to the column's type on its own (strictly, in the sink's session).
  return where_.dialect == Dialect::Postgres ? "CAST(" + select + " AS " + type + ")" : select;
}

std::string IdMapTable::insert_head() const {
  return "INSERT INTO " + where_.quoted + " (pipeline, source_table, source_key, target_key) ";
}

std::string IdMapTable::mirror_statement(const std::string& source_table, const std::string& peer_target_key,
                                         const std::string& peer_source_key) const {
  const std::string insert = "INSERT INTO " + where_.quoted + (where_.dialect == Dialect::Postgres ? " AS e" : "") +
                             " (pipeline, source_table, source_key, target_key) VALUES (" + pipeline_ + ", " + source_table +
                             ", " + peer_target_key + ", " + peer_source_key + ")";
  if (where_.dialect == Dialect::Postgres)
    return insert + " ON CONFLICT (pipeline, source_table, source_key) DO UPDATE SET target_key = EXCLUDED.target_key "
                    "WHERE e.target_key IS DISTINCT FROM EXCLUDED.target_key;\n";
  // MySQL writes no row event for an update that changes nothing.
  return insert + " ON DUPLICATE KEY UPDATE target_key = VALUES(target_key);\n";
}

std::string IdMapTable::unmirror_statement(const std::string& source_table,
                                           const std::optional<std::string>& peer_target_key,
                                           const std::string& peer_source_key) const {
  const std::string head = "DELETE FROM " + where_.quoted + " WHERE pipeline = " + pipeline_ + " AND source_table = " + source_table;
  if (peer_target_key) return head + " AND source_key = " + *peer_target_key + ";\n";
  return head + " AND target_key = " + peer_source_key + ";\n";
}

}  // namespace tidemark::dbsink
