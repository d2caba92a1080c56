#include "sink/database/id_map.hpp"

namespace tidemark::dbsink {

IdMapTable::IdMapTable(const DatabaseSinkConfig& config, const std::string& pipeline)
    : dialect_(config.type == "postgres" ? Dialect::Postgres : Dialect::MySql),
      pipeline_(string_literal(dialect_, pipeline)),
      schema_(dialect_ == Dialect::Postgres ? config.schema : config.database),
      name_(config.id_map_table) {
  table_ = qualified_identifier(dialect_, schema_, name_);
  label_ = schema_ + "." + name_;
}

std::string IdMapTable::create_statement() const {
  if (dialect_ == Dialect::Postgres)
    return "CREATE TABLE IF NOT EXISTS " + table_ +
           " (pipeline text NOT NULL, source_table text NOT NULL, source_key text NOT NULL, target_key text NOT NULL, "
           "PRIMARY KEY (pipeline, source_table, source_key))";
  // utf8mb4 key columns within InnoDB's 3072-byte index limit.
  return "CREATE TABLE IF NOT EXISTS " + table_ +
         " (pipeline VARCHAR(100) NOT NULL, source_table VARCHAR(200) NOT NULL, source_key VARCHAR(400) NOT NULL, "
         "target_key VARCHAR(400) NOT NULL, PRIMARY KEY (pipeline, source_table, source_key)) ENGINE=InnoDB "
         "DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin";
}

std::optional<TargetError> IdMapTable::ensure(TargetConnection& target, bool create, bool& exists) const {
  return ensure_table(target, schema_, name_, create_statement(), create, exists);
}

std::string IdMapTable::match(const std::string& source_table, const std::string& source_key) const {
  return "pipeline = " + pipeline_ + " AND source_table = " + source_table + " AND source_key = " + source_key;
}

std::string IdMapTable::lookup(const std::string& source_table, const std::string& source_key,
                               const std::string& type) const {
  const std::string select = "(SELECT target_key FROM " + table_ + " WHERE " + match(source_table, source_key) + ")";
  // MySQL converts the text to the column's type on its own (strictly, in the sink's session).
  return dialect_ == Dialect::Postgres ? "CAST(" + select + " AS " + type + ")" : select;
}

std::string IdMapTable::insert_head() const {
  return "INSERT INTO " + table_ + " (pipeline, source_table, source_key, target_key) ";
}

}  // namespace tidemark::dbsink
