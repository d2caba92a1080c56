#include "sink/database/marker_table.hpp"

namespace tidemark::dbsink {

MarkerTable::MarkerTable(Dialect dialect, const std::string& default_space, const std::string& name) : dialect_(dialect) {
  const size_t dot = name.find('.');
  space_ = dot == std::string::npos ? default_space : name.substr(0, dot);
  name_ = dot == std::string::npos ? name : name.substr(dot + 1);
  table_ = qualified_identifier(dialect_, space_, name_);
  label_ = space_ + "." + name_;
}

std::string MarkerTable::create_statement() const {
  if (dialect_ == Dialect::Postgres)
    return "CREATE TABLE IF NOT EXISTS " + table_ +
           " (pipeline text PRIMARY KEY, transactions bigint NOT NULL DEFAULT 0)";
  return "CREATE TABLE IF NOT EXISTS " + table_ +
         " (pipeline VARCHAR(190) NOT NULL PRIMARY KEY, transactions BIGINT NOT NULL DEFAULT 0) ENGINE=InnoDB "
         "DEFAULT CHARSET=utf8mb4";
}

std::optional<TargetError> MarkerTable::ensure(TargetConnection& target, bool create, const std::string& pipeline,
                                               bool& exists) const {
  if (auto failed = ensure_table(target, space_, name_, create_statement(), create, exists)) return failed;
  if (!exists) return std::nullopt;
  const std::string insert = "INSERT INTO " + table_ + " (pipeline) VALUES (" + target.quote(pipeline) + ")";
  return target.execute(dialect_ == Dialect::Postgres ? insert + " ON CONFLICT (pipeline) DO NOTHING"
                                                      : insert + " ON DUPLICATE KEY UPDATE pipeline = pipeline");
}

std::string MarkerTable::mark_statement(TargetConnection& target, const std::string& pipeline) const {
  return "UPDATE " + table_ + " SET transactions = transactions + 1 WHERE pipeline = " + target.quote(pipeline) + ";\n";
}

}  // namespace tidemark::dbsink
