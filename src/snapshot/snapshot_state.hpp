#pragma once
// What a restart needs to continue the snapshots: the queue of requested tables, the table in progress
// with its last emitted key, the paused flag and the signals already acted on. It travels with the log
// positions (SourcePosition::snapshot_state) and is persisted in the state file's `extensions.snapshot`,
// so it is stored only as far as Kafka acknowledged, atomically with the position it belongs to.

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "snapshot/snapshot_reader.hpp"

namespace tidemark::snapshot {

// One table to snapshot, as requested (signal, CLI or the initial snapshot).
struct TableRequest {
  std::string table;               // as the user named it ("schema.table", "db.table" or "table")
  std::string where;               // extra condition in the source's SQL ("" = every row)
  std::optional<KeyText> after;    // key range: emit keys > after ...
  std::optional<KeyText> upto;     // ... and <= upto (inclusive)
  int64_t chunk_size = 0;          // 0 = snapshot.chunk_size
  std::string signal_id;           // the signal that asked for it ("" for the initial snapshot)
  bool operator==(const TableRequest&) const = default;
};

// The table being read.
struct TableProgress {
  TableRequest request;
  std::optional<KeyText> last_key;  // the last key emitted (nullopt: none yet, start at request.after)
  std::optional<KeyText> max_key;   // the largest key when the table's snapshot started (or request.upto)
  std::optional<KeyText> first_key; // the first key emitted, for the time-left estimate
  uint64_t rows = 0;                // rows emitted
  uint64_t chunks = 0;              // chunks completed
  int64_t started_ms = 0;           // wall clock when the table's snapshot started
  bool operator==(const TableProgress&) const = default;
};

struct SnapshotState {
  std::deque<TableRequest> queue;
  std::optional<TableProgress> current;
  bool paused = false;
  std::deque<std::string> processed_signals;  // the most recent signal ids acted on, oldest first
  uint64_t tables_done = 0;
  uint64_t rows_done = 0;                     // rows emitted by finished tables
  std::string last_error;                     // the last request that was refused, and why
  bool operator==(const SnapshotState&) const = default;

  bool idle() const { return !current && queue.empty(); }
  bool signal_processed(const std::string& id) const;
  void remember_signal(const std::string& id);  // keeps the last kRememberedSignals
};

inline constexpr size_t kRememberedSignals = 1000;

// Appends each table not already queued or in progress (the initial snapshot).
void queue_tables(SnapshotState& state, const std::vector<TableId>& tables);

nlohmann::json to_json(const SnapshotState& state);
// Reads what to_json wrote; the error names the field.
Fallible<SnapshotState> snapshot_state_from_json(const nlohmann::json& json);

}  // namespace tidemark::snapshot
