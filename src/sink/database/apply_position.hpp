#pragma once
// The position table in the target (sink.database.position_table): one row per pipeline with the source
// position and the snapshot state as of the last applied transaction. The sink writes it as the last
// statement of every target transaction, so the target's rows and the position it holds never disagree:
// a restart resumes exactly where the target stands (exactly-once apply).

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "config/config.hpp"
#include "sink/database/target_connection.hpp"
#include "tidemark/change_event.hpp"

namespace tidemark::dbsink {

struct AppliedPosition {
  std::string source_type;
  std::optional<SourcePosition> position;
  nlohmann::json extensions = nlohmann::json::object();  // "snapshot": the snapshot state (snapshot_state.hpp)
};

class ApplyPositionTable {
 public:
  ApplyPositionTable(const DatabaseSinkConfig& config, std::string pipeline);

  // The qualified name, for messages ("public.tidemark_apply_position").
  const std::string& label() const { return where_.label; }
  // The statement that creates it.
  std::string create_statement(const TargetConnection& target) const;
  // Creates the table when `create`, else only looks; true in `exists` when it is there afterwards.
  std::optional<TargetError> ensure(TargetConnection& target, bool create, bool& exists) const;
  // This pipeline's row; nullopt position on a first start (no row).
  std::optional<AppliedPosition> read(TargetConnection& target, TargetError* error) const;
  // Appends the statement that stores `position` and `extensions` for this pipeline (ends with ";\n").
  void append_write(std::string& script, TargetConnection& target, const std::string& source_type,
                    const SourcePosition& position, const nlohmann::json& extensions) const;

 private:
  OwnTable where_;
  std::string pipeline_;
};

}  // namespace tidemark::dbsink
