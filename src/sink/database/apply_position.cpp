#include "sink/database/apply_position.hpp"

namespace tidemark::dbsink {

ApplyPositionTable::ApplyPositionTable(const DatabaseSinkConfig& config, std::string pipeline)
    : where_(config, config.position_table), pipeline_(std::move(pipeline)) {}

std::string ApplyPositionTable::create_statement(const TargetConnection& target) const {
  if (target.dialect() == Dialect::Postgres)
    return "CREATE TABLE IF NOT EXISTS " + where_.quoted +
           " (pipeline text PRIMARY KEY, source_type text NOT NULL, position text NOT NULL, state text NOT NULL, "
           "updated_at timestamptz NOT NULL DEFAULT now())";
  return "CREATE TABLE IF NOT EXISTS " + where_.quoted +
         " (pipeline VARCHAR(190) NOT NULL PRIMARY KEY, source_type VARCHAR(32) NOT NULL, position LONGTEXT NOT NULL, "
         "state LONGTEXT NOT NULL, updated_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)) ENGINE=InnoDB "
         "DEFAULT CHARSET=utf8mb4";
}

std::optional<TargetError> ApplyPositionTable::ensure(TargetConnection& target, bool create, bool& exists) const {
  return where_.ensure(target, create_statement(target), create, exists);
}

std::optional<AppliedPosition> ApplyPositionTable::read(TargetConnection& target, TargetError* error) const {
  const auto rows = target.query("SELECT source_type, position, state FROM " + where_.quoted + " WHERE pipeline = " +
                                     target.quote(pipeline_),
                                 error);
  if (!rows) return std::nullopt;
  AppliedPosition out;
  if (rows->empty()) return out;
  const TargetRow& row = rows->front();
  out.source_type = row[0].value_or("");
  out.position = SourcePosition(row[1].value_or(""));
  auto state = nlohmann::json::parse(row[2].value_or("{}"), nullptr, false);
  if (state.is_object()) out.extensions = std::move(state);
  return out;
}

void ApplyPositionTable::append_write(std::string& script, TargetConnection& target, const std::string& source_type,
                                      const SourcePosition& position, const nlohmann::json& extensions) const {
  script += "INSERT INTO " + where_.quoted + " (pipeline, source_type, position, state) VALUES (" + target.quote(pipeline_) +
            ", " + target.quote(source_type) + ", " + target.quote(position.token) + ", " +
            target.quote(extensions.dump()) + ")";
  if (where_.dialect == Dialect::Postgres)
    script += " ON CONFLICT (pipeline) DO UPDATE SET source_type = EXCLUDED.source_type, position = EXCLUDED.position, "
              "state = EXCLUDED.state, updated_at = now();\n";
  else
    script += " ON DUPLICATE KEY UPDATE source_type = VALUES(source_type), position = VALUES(position), "
              "state = VALUES(state), updated_at = CURRENT_TIMESTAMP(6);\n";
}

}  // namespace tidemark::dbsink
