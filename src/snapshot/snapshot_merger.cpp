#include "snapshot/snapshot_merger.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "core/text_excerpt.hpp"
#include "snapshot/key_codec.hpp"
#include "snapshot/signal.hpp"

namespace tidemark::snapshot {

SnapshotMerger::SnapshotMerger(std::string pipeline, ControlTables tables, SnapshotCoordinator& coordinator)
    : pipeline_(std::move(pipeline)), tables_(std::move(tables)), coordinator_(coordinator) {}

void SnapshotMerger::stamp(std::optional<SourcePosition>& position) {
  if (!position) return;
  position->snapshot_state = coordinator_.stamp();
  last_position_ = *position;
}

bool SnapshotMerger::flush_state(const Emit& emit) {
  if (!last_position_) return true;
  auto current = coordinator_.stamp();
  if (current == last_position_->snapshot_state) return true;
  last_position_->snapshot_state = std::move(current);
  return emit(StreamItem(Checkpoint{*last_position_}));
}

bool SnapshotMerger::forward_position(const std::optional<SourcePosition>& position, const Emit& emit) {
  if (!position) return true;
  Checkpoint checkpoint{*position};
  checkpoint.position.snapshot_state = coordinator_.stamp();
  last_position_ = checkpoint.position;
  return emit(StreamItem(std::move(checkpoint)));
}

bool SnapshotMerger::process(StreamItem& item, const Emit& emit) {
  if (auto* checkpoint = std::get_if<Checkpoint>(&item)) {
    checkpoint->position.snapshot_state = coordinator_.stamp();
    last_position_ = checkpoint->position;
    return emit(item);
  }
  ChangeEvent& event = std::get<ChangeEvent>(item);
  const TableId& table = event.table->id;
  if (table == tables_.watermark) {
    if (!on_watermark(event, emit)) return false;
    return forward_position(event.resume_position, emit);
  }
  if (table == tables_.signal) {
    if (event.op == Op::Create) on_signal(event);
    return forward_position(event.resume_position, emit);
  }
  record_keys(event);
  stamp(event.resume_position);
  return emit(item);
}

const std::vector<size_t>& SnapshotMerger::columns_of(const TableSchemaPtr& schema, const std::vector<std::string>& names) {
  auto it = column_cache_.find(schema.get());
  if (it == column_cache_.end() || it->second.first != schema) {
    if (column_cache_.size() > 64) column_cache_.clear();  // old schemas of altered tables
    std::vector<size_t> indexes;
    for (const auto& name : names) {
      const auto at = std::find(schema->columns.begin(), schema->columns.end(), name);
      if (at == schema->columns.end()) {
        indexes.clear();
        break;
      }
      indexes.push_back(static_cast<size_t>(at - schema->columns.begin()));
    }
    it = column_cache_.insert_or_assign(schema.get(), std::make_pair(schema, std::move(indexes))).first;
  }
  return it->second.second;
}

void SnapshotMerger::record_keys(const ChangeEvent& event) {
  // Into every open window whose low watermark has passed: windows in flight overlap in the log.
  coordinator_.with_windows([&](Window& w) {
    if (!w.low_seen || w.poisoned || !(event.table->id == w.table)) return false;
    const std::vector<size_t>& key = columns_of(event.table, w.key_names);
    if (key.empty()) {  // the table's columns changed so that the chunk key is gone: redo the chunk
      w.poisoned = true;
      return false;
    }
    // An old image may hold only the log's key columns (PostgreSQL's replica identity; the rest read as
    // NULL), so it identifies the row by the chunk key only when complete or when the key is part of it.
    const bool before_complete =
        event.table->complete_old_image ||
        std::all_of(key.begin(), key.end(), [&](size_t c) {
          return std::find(event.table->key_columns.begin(), event.table->key_columns.end(), c) !=
                 event.table->key_columns.end();
        });
    auto add = [&](const Row& row) {
      key_buffer_.clear();
      if (!encode_key(row, key, key_buffer_)) {
        w.poisoned = true;
        return;
      }
      w.touched.insert(key_buffer_);
    };
    switch (event.op) {
      case Op::Create:
      case Op::Read:
        if (event.after) add(*event.after);
        break;
      case Op::Update:
        if (event.after) add(*event.after);
        // Without an old image PostgreSQL's key did not change; that says the chunk key did not change
        // only when the chunk key is part of the log's key.
        if (!before_complete) {
          w.poisoned = true;
        } else if (event.before) {
          add(*event.before);
        }
        break;
      case Op::Delete:
        if (event.before && before_complete) {
          add(*event.before);
        } else {
          w.poisoned = true;
        }
        break;
      case Op::Truncate:
        w.poisoned = true;  // every row of the chunk may be gone
        break;
    }
    return false;
  });
}

std::optional<std::string> SnapshotMerger::text_column(const ChangeEvent& event, const char* name) {
  if (!event.after) return std::nullopt;
  const auto& columns = event.table->columns;
  const auto at = std::find(columns.begin(), columns.end(), name);
  if (at == columns.end()) return std::nullopt;
  const Value& v = (*event.after)[static_cast<size_t>(at - columns.begin())];
  if (const auto* s = std::get_if<std::string>(&v.v)) return *s;
  if (const auto* b = std::get_if<Bytes>(&v.v)) return b->data;
  if (const auto* j = std::get_if<Json>(&v.v)) return j->text;
  return std::nullopt;
}

bool SnapshotMerger::on_watermark(const ChangeEvent& event, const Emit& emit) {
  if (event.op != Op::Update && event.op != Op::Create) return true;
  if (text_column(event, "pipeline") != pipeline_) return true;  // another pipeline's row
  const std::optional<std::string> mark = text_column(event, "mark");
  if (!mark) return true;
  ++watermarks_seen_;
  coordinator_.note_watermark_seen();

  bool at_high = false;
  bool redo = false;
  TableSchemaPtr schema;
  std::vector<Row> rows;
  KeyText last_key;
  bool finished = false;
  size_t dropped = 0;
  uint64_t window_id = 0;
  bool oldest = true;
  coordinator_.with_windows([&](Window& w) {
    if (*mark == w.low) {
      w.low_seen = true;
      return true;
    }
    if (*mark != w.high) {
      oldest = false;
      return false;
    }
    at_high = true;
    window_id = w.id;
    // The rows are attached before the high watermark is written, so they are here unless that invariant
    // broke; then, like after a poisoned window, the chunk is read again. High watermarks come in the
    // order the windows opened: one overtaking an older window's breaks that order, so both are redone.
    redo = !oldest || w.poisoned || !w.low_seen || !w.rows_ready;
    if (redo) return true;
    schema = w.schema;
    last_key = w.last_key;
    finished = w.table_finished;
    // Both sides are encoded in the chunk key's order (the schema's key_columns follow the log's Kafka key).
    const std::vector<size_t> key = columns_of(schema, w.key_names);
    rows.reserve(w.rows.size());
    for (auto& row : w.rows) {
      key_buffer_.clear();
      if (encode_key(row, key, key_buffer_) && w.touched.count(key_buffer_)) {
        ++dropped;
        continue;
      }
      rows.push_back(std::move(row));
    }
    return true;
  });
  if (!at_high) return true;
  if (redo) {
    spdlog::info("snapshot: a change in the window could not be matched by key; reading the chunk again");
    coordinator_.close_all();  // the later windows' chunks start after this one's: read again from here
    return true;
  }
  // A chained window's low watermark is this high watermark (one commit serves both): it opens here, before
  // any later log event is recorded.
  coordinator_.with_windows([&](Window& w) {
    if (*mark != w.low) return false;
    w.low_seen = true;
    return true;
  });
  const size_t emitted = rows.size();
  StreamItem item{ChangeEvent{}};
  ChangeEvent& read = std::get<ChangeEvent>(item);
  read.table = schema;
  read.op = Op::Read;
  read.snapshot = SnapshotMarker::Incremental;
  read.source = event.source;
  for (size_t i = 0; i < rows.size(); ++i) {
    read.after = std::move(rows[i]);
    read.source.row = static_cast<uint32_t>(i);
    const bool sent = emit(item);
    rows[i] = std::move(*read.after);  // back to the worker's thread to be freed
    if (!sent) return false;
  }
  coordinator_.hand_back(std::move(rows));
  coordinator_.update([&](SnapshotState& s) {
    if (!s.current) return;
    TableProgress& c = *s.current;
    c.rows += emitted;
    c.chunks += 1;
    if (!last_key.empty()) {
      if (!c.first_key) c.first_key = last_key;
      c.last_key = last_key;
    }
    if (finished) {
      spdlog::info("snapshot of {} done: {} rows in {} chunks", c.request.table, c.rows, c.chunks);
      s.tables_done += 1;
      s.rows_done += c.rows;
      s.current.reset();
    }
  });
  spdlog::debug("snapshot chunk: {} rows emitted, {} dropped as changed in the window", emitted, dropped);
  if (metrics_ && schema) metrics_->count_snapshot_chunk(schema->id.to_string(), emitted, dropped);
  coordinator_.close_emitted(window_id);
  return true;
}

void SnapshotMerger::on_signal(const ChangeEvent& event) {
  const std::string id = text_column(event, "id").value_or("");
  const std::string type = text_column(event, "type").value_or("");
  const std::string data = text_column(event, "data").value_or("");
  if (coordinator_.state().signal_processed(id)) return;  // replayed after a restart
  Fallible<Signal> parsed = parse_signal(id, type, data);
  if (!parsed.ok()) {
    spdlog::error("{}", parsed.error);
    coordinator_.update([&](SnapshotState& s) {
      s.last_error = parsed.error;
      s.remember_signal(id);
    });
    return;
  }
  Signal& signal = *parsed.value;
  if (!signal.pipeline.empty() && signal.pipeline != pipeline_) return;  // meant for another pipeline
  // The tables only: conditions are the users' text and may be long (they are in the debug line).
  std::string tables;
  for (const auto& t : signal.tables) tables += (tables.empty() ? " " : ", ") + t.table + (t.where.empty() ? "" : " (where ...)");
  spdlog::info("signal {}: {}{}", id, signal_kind_name(signal.kind), excerpt(tables, 500));
  spdlog::debug("signal {} data: {}", id, excerpt(data, 1000));
  bool dropped_current = false;
  bool dropped_front = false;  // the next table, whose key query may be running
  coordinator_.update([&](SnapshotState& s) {
    s.remember_signal(id);
    switch (signal.kind) {
      case SignalKind::ExecuteSnapshot: {
        // The queue travels in every persisted state: bounded, so signals cannot grow the state file without end.
        size_t condition_bytes = 0;
        for (const auto& r : s.queue) condition_bytes += r.where.size();
        for (const auto& t : signal.tables) condition_bytes += t.where.size();
        if (s.queue.size() + signal.tables.size() > kMaxQueuedTables || condition_bytes > kMaxQueuedConditionBytes) {
          s.last_error = "signal " + id + " refused: the snapshot queue would hold more than " +
                         std::to_string(kMaxQueuedTables) + " tables or " + std::to_string(kMaxQueuedConditionBytes) +
                         " bytes of conditions; wait for queued snapshots to finish or stop them";
          spdlog::error("{}", s.last_error);
          break;
        }
        for (auto& t : signal.tables) s.queue.push_back(std::move(t));
        break;
      }
      case SignalKind::StopSnapshot:
        if (signal.tables.empty()) {
          dropped_front = !s.current && !s.queue.empty();
          s.queue.clear();
          dropped_current = s.current.has_value();
          s.current.reset();
        } else {
          for (const auto& t : signal.tables) {
            if (!s.current && !s.queue.empty() && s.queue.front().table == t.table) dropped_front = true;
            std::erase_if(s.queue, [&](const TableRequest& r) { return r.table == t.table; });
            if (s.current && s.current->request.table == t.table) {
              s.current.reset();
              dropped_current = true;
            }
          }
        }
        break;
      case SignalKind::PauseSnapshot:
        s.paused = true;
        break;
      case SignalKind::ResumeSnapshot:
        s.paused = false;
        break;
    }
  });
  // The chunks in flight belong to a table no longer wanted: their rows are never emitted, and the query (or
  // the key query of a table about to start) is cancelled rather than waited for.
  if (dropped_current) coordinator_.close_all();
  if (dropped_current || dropped_front) coordinator_.cancel_query();
}

}  // namespace tidemark::snapshot
