#include "sink/database/conflict_log.hpp"

namespace tidemark::dbsink {

ConflictLog::ConflictLog(const DatabaseSinkConfig& config, const std::string& pipeline)
    : where_(config, config.conflict_table), pipeline_(string_literal(where_.dialect, pipeline)) {}

std::string ConflictLog::create_statement() const {
  if (where_.dialect == Dialect::Postgres)
    return "CREATE TABLE IF NOT EXISTS " + where_.quoted +
           " (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, pipeline text NOT NULL, target_table text NOT NULL, "
           "target_key text, kept_version text, incoming_version text, logged_at timestamptz NOT NULL DEFAULT now())";
  return "CREATE TABLE IF NOT EXISTS " + where_.quoted +
         " (id BIGINT AUTO_INCREMENT PRIMARY KEY, pipeline VARCHAR(190) NOT NULL, target_table VARCHAR(400) NOT NULL, "
         "target_key TEXT, kept_version TEXT, incoming_version TEXT, "
         "logged_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4";
}

std::optional<TargetError> ConflictLog::ensure(TargetConnection& target, bool create, bool& exists) const {
  return where_.ensure(target, create_statement(), create, exists);
}

std::string ConflictLog::log_statements(const std::string& target, const std::string& label, const std::string& match,
                                        const std::string& key_text, const std::string& applies,
                                        const std::string& kept, const std::string& incoming) const {
  const std::string head = "INSERT INTO " + where_.quoted +
                           " (pipeline, target_table, target_key, kept_version, incoming_version) SELECT " + pipeline_ +
                           ", " + string_literal(where_.dialect, label) + ", ";
  if (where_.dialect == Dialect::Postgres)
    return head + "s.k, CAST(s.v AS text), CAST(" + incoming + " AS text) FROM (SELECT " + key_text + " AS k, " + kept +
           " AS v, (" + applies + ") AS a FROM " + target + " WHERE " + match + " FOR UPDATE) s WHERE s.a IS NOT TRUE;\n";
  // The row is locked for update first: INSERT ... SELECT alone would take a shared lock that the UPDATE
  // after it then has to upgrade, a deadlock with any other writer doing the same.
  return "SET @tidemark_locked = (SELECT 1 FROM " + target + " WHERE " + match + " FOR UPDATE);\n" + head + key_text +
         ", " + kept + ", " + incoming + " FROM " + target + " WHERE " + match + " AND (" + applies + ") IS NOT TRUE;\n";
}

std::string ConflictLog::select_after(int64_t after_id, int limit) const {
  return "SELECT id, target_table, target_key, kept_version, incoming_version FROM " + where_.quoted + " WHERE pipeline = " +
         pipeline_ + " AND id > " + std::to_string(after_id) + " ORDER BY id LIMIT " + std::to_string(limit);
}

std::string ConflictLog::select_last_id() const {
  return "SELECT max(id) FROM " + where_.quoted + " WHERE pipeline = " + pipeline_;
}

std::optional<LoggedConflict> ConflictLog::parse(const TargetRow& row) {
  if (row.size() < 5 || !row[0]) return std::nullopt;
  LoggedConflict out;
  try {
    out.id = std::stoll(*row[0]);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  out.table = row[1].value_or("");
  out.key = row[2].value_or("NULL");
  out.kept = row[3].value_or("NULL");
  out.incoming = row[4].value_or("NULL");
  return out;
}

}  // namespace tidemark::dbsink
