#pragma once
// The conflict log in the target (sink.database.conflict_table): one row per change that a mapping's
// version column kept out because the target's row was as new or newer (last writer wins). The sink
// writes it in the same transaction as the change it did not apply, so the log holds exactly the
// conflicts whose outcome is committed; after each commit the sink reads the new rows back to count them
// (tidemark_conflicts_total) and to log them with their key.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "sink/database/target_connection.hpp"

namespace tidemark::dbsink {

struct LoggedConflict {
  int64_t id = 0;
  std::string table;  // the target table, schema.table
  std::string key;    // the target row's key as text (columns joined by U+001F)
  std::string kept;   // the target's version, which stayed
  std::string incoming;
};

class ConflictLog {
 public:
  ConflictLog(const DatabaseSinkConfig& config, const std::string& pipeline);

  const std::string& label() const { return where_.label; }
  std::string create_statement() const;
  // Creates the table when `create`, else only looks; `exists` says whether it is there afterwards.
  std::optional<TargetError> ensure(TargetConnection& target, bool create, bool& exists) const;

  // The statements that log a conflict of a guarded change: run before the guarded UPDATE or DELETE, they
  // lock the target row that `match` selects in `target` (so the change sees the row they read) and log it
  // when `applies` (the change's guard, over the target's columns) is not true. `key_text` is an SQL text
  // expression of the row's key, `kept` of the target's version (or NULL), `incoming` the change's.
  std::string log_statements(const std::string& target, const std::string& label, const std::string& match,
                             const std::string& key_text, const std::string& applies, const std::string& kept,
                             const std::string& incoming) const;

  // The conflicts this pipeline logged after `after_id`, oldest first, at most `limit`.
  std::string select_after(int64_t after_id, int limit) const;
  std::string select_last_id() const;
  static std::optional<LoggedConflict> parse(const TargetRow& row);

 private:
  OwnTable where_;
  std::string pipeline_;  // quoted literal
};

}  // namespace tidemark::dbsink
