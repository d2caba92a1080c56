#pragma once
// The merge stage of DBLog: sits in the publisher thread in front of the publisher, where log order is
// fixed. Log events pass through unchanged; between a chunk's low and high watermark it records the keys
// of the snapshotted table's events; at the high watermark it emits the chunk rows whose keys were not
// touched, as `op: r`, before any later log event. Watermark and signal rows are consumed here, and every
// resume position leaving it carries the snapshot state, so both are persisted together.

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/pipeline_metrics.hpp"
#include "snapshot/control_tables.hpp"
#include "snapshot/snapshot_coordinator.hpp"

namespace tidemark::snapshot {

class SnapshotMerger {
 public:
  // Hands an item on to the publisher; false when the sink failed.
  using Emit = std::function<bool(const StreamItem&)>;

  SnapshotMerger(std::string pipeline, ControlTables tables, SnapshotCoordinator& coordinator);

  // Processes one item in log order. `item` may be modified (its position is stamped). False when an emit
  // failed.
  bool process(StreamItem& item, const Emit& emit);

  uint64_t watermarks_seen() const { return watermarks_seen_; }

  // Where emitted chunks are counted (may stay unset).
  void set_metrics(PipelineMetrics* metrics) { metrics_ = metrics; }

  // Persists state changes made outside the log (a refused request, a pause by SIGHUP, a table started):
  // when the state changed since the last position went by, that position goes by again with the new state.
  // Called by the publisher loop between batches, so a quiet database does not hold them back.
  bool flush_state(const Emit& emit);

 private:
  bool on_watermark(const ChangeEvent& event, const Emit& emit);
  void on_signal(const ChangeEvent& event);
  void record_keys(const ChangeEvent& event);
  // Emits a position without an event (the consumed watermark or signal row's), stamped.
  bool forward_position(const std::optional<SourcePosition>& position, const Emit& emit);
  void stamp(std::optional<SourcePosition>& position);
  // Indexes of `names` in the columns of `schema` (cached per schema); empty when one is missing.
  const std::vector<size_t>& columns_of(const TableSchemaPtr& schema, const std::vector<std::string>& names);
  std::optional<std::string> text_column(const ChangeEvent& event, const char* name);

  std::string pipeline_;
  PipelineMetrics* metrics_ = nullptr;
  ControlTables tables_;
  SnapshotCoordinator& coordinator_;
  std::unordered_map<const TableSchema*, std::pair<TableSchemaPtr, std::vector<size_t>>> column_cache_;
  std::string key_buffer_;
  uint64_t watermarks_seen_ = 0;
  std::optional<SourcePosition> last_position_;  // the last position that left the merge stage, and its stamp
};

}  // namespace tidemark::snapshot
