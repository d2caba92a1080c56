#pragma once
// The database sink: applies the stream to a PostgreSQL or MySQL/MariaDB target, each source transaction
// inside one target transaction, in source commit order. Consecutive source transactions share a target
// transaction up to sink.database.batch_max_events changes; one is never split. Rows go as multi-row
// statements (an upsert per run of creates, snapshot reads and updates of one table; a DELETE ... IN per
// run of deletes), the whole target transaction in as few round trips as its size allows. PostgreSQL
// snapshot rows of a plain plan go by COPY into a temporary table and one upsert from it (plan_copy).
//
// Invariants:
// - The last statement of every target transaction writes the position (and snapshot state) of the last
//   source transaction it holds to the position table (apply_position.hpp); tickets are acknowledged only
//   after its COMMIT returned, so the tracker's committed position is always one the target holds.
// - Nothing is committed in the middle of a source transaction: a stop in the middle rolls the open target
//   transaction back and a restart applies that source transaction again from its beginning.
// - A lost connection is retried with backoff for sink.database.retry_max_ms; afterwards the position
//   table says whether the COMMIT in flight landed, and the transaction is applied again only if it did
//   not. A deadlock is retried at once. Any other error stops the daemon (status 2), naming the table.
// - A position that comes without changes is committed on its own at most once a second; until then it
//   is not given to the tracker, so nothing counts it as applied.
// - A change that a version column keeps out is logged in the conflict table (conflict_log.hpp) in the same
//   target transaction; after its COMMIT the new log rows are read back, counted and logged with their key.
// - With two_way.peer, the first statement of every target transaction updates this pipeline's row of the
//   marker table (marker_table.hpp), so the pipeline reading the target drops it; the peer's id map
//   entries that reach it (echo_filter.hpp) are recorded the other way round in this pipeline's id map.

#include <atomic>
#include <mutex>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.hpp"
#include "core/position_tracker.hpp"
#include "sink/change_sink.hpp"
#include "sink/database/apply_position.hpp"
#include "sink/database/conflict_log.hpp"
#include "sink/database/id_map.hpp"
#include "sink/database/kafka_offsets.hpp"
#include "sink/database/marker_table.hpp"
#include "sink/database/table_plan.hpp"
#include "sink/database/target_connection.hpp"

namespace tidemark::dbsink {

class DatabaseSink final : public ChangeSink {
 public:
  // `target` is connected; `extensions` is what the position table held besides the position.
  DatabaseSink(const Config& config, PositionTracker& tracker, std::unique_ptr<TargetConnection> target,
               nlohmann::json extensions);

  bool publish(const StreamItem& item) override;
  bool publish_heartbeat(int64_t) override { return true; }  // the position table's updated_at shows liveness
  bool end_of_batch(bool source_ahead) override;
  bool awaiting_acknowledgements() const override { return !pending_.empty(); }
  void poll(std::chrono::milliseconds) override {}
  bool flush(std::chrono::milliseconds timeout) override;
  bool waiting_for_room() const override { return retrying_; }
  void abort() override { aborted_ = true; }
  std::optional<std::string> fatal_error() const override;
  void attach_metrics(PipelineMetrics& metrics) override { metrics_ = &metrics; }

 private:
  using Clock = std::chrono::steady_clock;
  enum class Run { None, Upsert, Delete, Copy };
  // A part of a target transaction sent in one go: statements, or statements ending in a COPY and its rows.
  struct Part {
    std::string sql;
    std::string copy_rows;
    bool copy = false;
    // A COPY straight into the target table, from sql[direct_at] on, under the savepoint before it. If some
    // of its rows exist (a duplicate key), it is rolled back and they load by `temp_open` then `temp_apply`
    // (TablePlan::copy_open, copy_apply), which become the part's own.
    size_t direct_at = std::string::npos;
    std::string temp_table;
    std::string temp_open;
    std::string temp_apply;
    std::string after;  // the fallback's upsert, once its rows are in
  };
  enum class CopyRow { Rendered, NotCopyable, Failed };

  bool apply_event(const ChangeEvent& event);
  // Two-way sync: an entry of the peer's id map (the source's id_map_table_in_source), mirrored into this
  // pipeline's for the mapping whose target table the entry's source table is.
  bool mirror_peer_entry(const ChangeEvent& event);
  const TablePlan* plan_for(const TableSchemaPtr& table);
  // Statements of one change; false (and fatal) when a value cannot be written.
  bool add_upsert(const TablePlan& plan, const ChangeEvent& event, const Row& row);
  bool add_delete(const TablePlan& plan, const ChangeEvent& event, const Row& row);
  // An UPDATE of the columns `row` carries, of the target row whose key `key_row` holds (the key too when
  // `set_key`).
  bool add_update(const TablePlan& plan, const ChangeEvent& event, const Row& row, const Row& key_row, bool set_key);
  // A change of a table whose target generates its key (TablePlan::generated_key): one row at a time,
  // through the id map. `key_row` holds the key the target knows the row by; `row` is the new image (null
  // for a delete); `key_moved`: the new image's key differs; `partial`: it lacks some values.
  bool add_mapped(const TablePlan& plan, const ChangeEvent& event, const Row& key_row, const Row* row, bool key_moved,
                  bool partial);
  // The source key of `row` as an SQL text expression (id_map.hpp).
  bool append_source_key(std::string& out, const TablePlan& plan, const ChangeEvent& event, const Row& row);
  // "target key column = <its value>" for the row `key_row` names: its copied key, or the id map's entry.
  bool append_target_match(std::string& out, const TablePlan& plan, const ChangeEvent& event, const Row& key_row);
  // A written copied value: the source value, or for a reference the referenced row's target key.
  bool append_copied(std::string& out, const TargetValue& value, const ChangeEvent& event, const Row& row,
                     const TablePlan& plan);
  // The key's literals "(a, b)" / "a" into `out`.
  bool append_key(std::string& out, const TablePlan& plan, const ChangeEvent& event, const Row& row);
  // A snapshot row as a line of COPY text for the plan's temporary table (TablePlan::copy_table).
  CopyRow append_copy_row(std::string& out, const TablePlan& plan, const ChangeEvent& event, const Row& row);
  // One row of an upsert: the written values, or the derived table's source values.
  bool append_row(std::string& out, const TablePlan& plan, const ChangeEvent& event, const Row& row);
  // A source column's value as a literal for a column of `type`.
  bool append_value(std::string& out, size_t column, const LiteralType& type, const ChangeEvent& event, const Row& row,
                    const TablePlan& plan);
  // An expression with the source values in it as literals.
  bool append_template(std::string& out, const SqlTemplate& sql, const ChangeEvent& event, const Row& row,
                       const TablePlan& plan);
  // two_way.winner, this pipeline losing: "col IS NOT DISTINCT FROM <old value> AND ..." over the copied
  // columns that `after` changes (a delete, `after` null: all of them), so the change applies only where
  // the target row still holds the source row's old values; empty when nothing is compared. False (and
  // fatal) when the old image lacks a value it needs.
  bool append_unchanged(std::string& out, const TablePlan& plan, const ChangeEvent& event, const Row* after);
  // A delete that applies only where the target still holds the old values (TablePlan::keep_changed).
  bool add_kept_delete(const TablePlan& plan, const ChangeEvent& event, const Row& row);
  // The target row's key as an SQL text expression over the target table's columns (for the conflict log).
  std::string target_key_text(const TablePlan& plan) const;
  // Counts and logs the conflicts the last commit logged.
  void report_conflicts();
  void start_run(const TablePlan& plan, Run kind);
  void close_run();

  bool commit();
  // Gives the position kept back (idle_position_) its ticket, to go with the next commit.
  void take_idle_position();
  // Sends `chunk` (a part of the open transaction, or its end when `final`), retrying as the header says.
  bool send(std::string chunk, bool final);
  // Runs a part, opening the target transaction first when `begin`.
  std::optional<TargetError> run_part(Part& part, bool begin);
  // The COPY of `part`, `script` being its statements (and whatever must run before them).
  std::optional<TargetError> run_copy(const std::string& script, Part& part);
  // Runs the open transaction's parts again, from its BEGIN.
  std::optional<TargetError> replay();
  bool recover(TargetError error, bool final);
  void fail(const std::string& message);
  void rollback_quietly();

  const Config& config_;
  const DatabaseSinkConfig& settings_;
  PositionTracker& tracker_;
  std::unique_ptr<TargetConnection> target_;
  ApplyPositionTable positions_;
  // source.type kafka: the position goes to the offsets table instead, a row per partition, fenced by owner.
  std::optional<KafkaOffsetsTable> offsets_;
  PartitionPosition written_offsets_;  // as the offsets table holds them after this sink's last commit
  PartitionPosition writing_offsets_;  // the rows the transaction being committed moves
  IdMapTable id_map_;
  ConflictLog conflicts_;
  std::string peer_id_map_;  // two_way: the peer's id map in the source ("space.table"); empty: one way
  int64_t last_conflict_id_ = 0;  // the newest conflict log row counted
  bool may_conflict_ = false;     // the open target transaction logs conflicts
  std::string begin_;  // opens a target transaction: BEGIN, and with two_way.peer the marker's update
  nlohmann::json extensions_;
  const LiteralType key_text_;  // a source key as text (the id map's source_key)
  PipelineMetrics* metrics_ = nullptr;

  std::unordered_map<TableId, TablePlan, TableIdHash> plans_;
  const TablePlan* last_plan_ = nullptr;
  const TableSchema* last_schema_ = nullptr;

  // The target transaction being gathered.
  std::string script_;                 // statements not sent yet
  std::vector<Part> unsent_;           // closed COPY runs, to be sent before script_
  size_t unsent_bytes_ = 0;
  std::vector<Part> sent_;             // the parts of the open transaction already run (for a replay)
  // Temporary tables whose rows last went the long way (a duplicate key): the next runs of theirs skip the
  // direct COPY, so a snapshot of rows that are already there does not pay for two loads of each run.
  std::unordered_map<std::string, int> direct_skips_;
  size_t copy_tables_ = 0;             // temporary tables named so far (each plan its own)
  bool open_ = false;                  // BEGIN has been sent
  std::vector<Ticket> pending_;        // the tickets it covers
  std::optional<SourcePosition> last_position_;  // of its last complete source transaction
  bool at_boundary_ = true;            // the last item ended a source transaction
  size_t changes_ = 0;
  Clock::time_point first_change_{};
  Clock::time_point last_commit_{};
  // A position without changes, not yet handed to the tracker (kIdlePositionInterval in the .cpp).
  std::optional<SourcePosition> idle_position_;

  // The current run of rows that share one statement.
  const TablePlan* run_plan_ = nullptr;
  Run run_ = Run::None;
  std::string run_rows_;
  // Hashes of the run's keys: a collision only starts a new statement early (no string kept per row).
  std::unordered_set<size_t> run_keys_;
  std::string key_;  // scratch
  std::string copy_row_;  // scratch
  std::string literal_;   // scratch

  std::atomic<bool> aborted_{false};
  std::atomic<bool> retrying_{false};
  mutable std::mutex fatal_mutex_;
  std::optional<std::string> fatal_;
};

}  // namespace tidemark::dbsink
