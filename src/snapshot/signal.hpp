#pragma once
// Signal rows: what a user inserts into the signal table to control snapshots. Both Tidemark's own data
// shape and Debezium's are accepted, so existing tooling works:
//   execute-snapshot  {"tables": ["public.a", {"table": "public.b", "where": "x > 5", "after": ["10"],
//                      "upto": ["20"]}], "where": "applies to every table", "chunk_size": 500}
//                     {"data-collections": ["public.a"], "type": "incremental",
//                      "additional-conditions": [{"data-collection": "public.a", "filter": "x > 5"}]}
//   stop-snapshot     {} (everything) or {"tables": [...]} / {"data-collections": [...]} (those tables)
//   pause-snapshot, resume-snapshot   no data, or {"pipeline": ...}
// Any data may name the pipeline that should act ({"pipeline": "shop", ...}); the others ignore the row.

#include <string>
#include <vector>

#include "snapshot/snapshot_state.hpp"

namespace tidemark::snapshot {

// Signal rows are written by users the operator chose (docs/security.md) but are still bounded, so a hostile or
// broken row is refused with a clear message instead of filling logs and the state file or crashing the parser.
inline constexpr size_t kMaxSignalIdBytes = 256;
inline constexpr size_t kMaxSignalDataBytes = 64 * 1024;
inline constexpr size_t kMaxSignalNesting = 32;
inline constexpr size_t kMaxTableNameBytes = 512;
inline constexpr int64_t kMaxSignalChunkSize = 1'000'000;  // as snapshot.chunk_size
inline constexpr size_t kMaxQueuedTables = 10'000;
inline constexpr size_t kMaxQueuedConditionBytes = 1 << 20;

enum class SignalKind { ExecuteSnapshot, StopSnapshot, PauseSnapshot, ResumeSnapshot };

const char* signal_kind_name(SignalKind kind);

struct Signal {
  std::string id;
  SignalKind kind = SignalKind::ExecuteSnapshot;
  std::vector<TableRequest> tables;  // execute: what to read; stop: what to drop (empty: everything)
  std::string pipeline;  // data "pipeline": only that pipeline acts on it ("" = every pipeline reading the table)
};

// Parses one signal row. The error says what is wrong with which field, quoting the row's text only as an
// excerpt; the daemon logs it and goes on.
Fallible<Signal> parse_signal(const std::string& id, const std::string& type, const std::string& data);

// The data of an execute-snapshot signal for one table (what `tidemark snapshot` writes).
std::string execute_snapshot_data(const TableRequest& request);

}  // namespace tidemark::snapshot
