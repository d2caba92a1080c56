#include "sink/database/marker_table.hpp"

namespace tidemark::dbsink {

namespace {

OwnTable marker_table(Dialect dialect, const std::string& default_space, const std::string& name) {
  const size_t dot = name.find('.');
  if (dot == std::string::npos) return OwnTable(dialect, default_space, name);
  return OwnTable(dialect, name.substr(0, dot), name.substr(dot + 1));
}

}  // namespace

MarkerTable::MarkerTable(Dialect dialect, const std::string& default_space, const std::string& name)
    : where_(marker_table(dialect, default_space, name)) {}

std::string MarkerTable::create_statement() const {
  if (where_.dialect == Dialect::Postgres)
    return "CREATE TABLE IF NOT EXISTS " + where_.quoted +
           " (pipeline text PRIMARY KEY, transactions bigint NOT NULL DEFAULT 0)";
  return "CREATE TABLE IF NOT EXISTS " + where_.quoted +
         " (pipeline VARCHAR(190) NOT NULL PRIMARY KEY, transactions BIGINT NOT NULL DEFAULT 0) ENGINE=InnoDB "
         "DEFAULT CHARSET=utf8mb4";
}

std::optional<TargetError> MarkerTable::ensure(TargetConnection& target, bool create, const std::string& pipeline,
                                               bool& exists) const {
  if (auto failed = where_.ensure(target, create_statement(), create, exists)) return failed;
  if (!exists) return std::nullopt;
  const std::string insert = "INSERT INTO " + where_.quoted + " (pipeline) VALUES (" + target.quote(pipeline) + ")";
  return target.execute(where_.dialect == Dialect::Postgres ? insert + " ON CONFLICT (pipeline) DO NOTHING"
                                                      : insert + " ON DUPLICATE KEY UPDATE pipeline = pipeline");
}

std::string MarkerTable::mark_statement(TargetConnection& target, const std::string& pipeline) const {
  return "UPDATE " + where_.quoted + " SET transactions = transactions + 1 WHERE pipeline = " + target.quote(pipeline) + ";\n";
}

}  // namespace tidemark::dbsink
