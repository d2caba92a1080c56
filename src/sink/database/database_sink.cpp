#include "sink/database/database_sink.hpp"

#include <thread>

#include <spdlog/spdlog.h>

#include "sink/database/sql_values.hpp"

namespace tidemark::dbsink {

namespace {

// A part of a large target transaction is sent once the statements gathered reach this.
constexpr size_t kSendBytes = 1 << 20;
// One multi-row statement stays below this (MySQL's max_allowed_packet is 16 MiB by default).
constexpr size_t kRunBytes = 256 << 10;
constexpr int kMaxConflictRetries = 50;

bool has_unavailable(const TablePlan& plan, const Row& row) {
  for (const size_t c : plan.columns)
    if (c < row.size() && std::holds_alternative<Unavailable>(row[c].v)) return true;
  return false;
}

bool is_key(const TablePlan& plan, size_t column) {
  return std::find(plan.key.begin(), plan.key.end(), column) != plan.key.end();
}

const char* op_name(Op op) {
  switch (op) {
    case Op::Create: return "insert";
    case Op::Update: return "update";
    case Op::Delete: return "delete";
    case Op::Read: return "snapshot read";
    case Op::Truncate: return "truncate";
  }
  return "change";
}

}  // namespace

DatabaseSink::DatabaseSink(const Config& config, PositionTracker& tracker, std::unique_ptr<TargetConnection> target,
                           nlohmann::json extensions)
    : config_(config),
      settings_(config.sink.database),
      tracker_(tracker),
      target_(std::move(target)),
      positions_(config.sink.database, config.name),
      extensions_(std::move(extensions)) {}

std::optional<std::string> DatabaseSink::fatal_error() const {
  const std::lock_guard lock(fatal_mutex_);
  return fatal_;
}

void DatabaseSink::fail(const std::string& message) {
  const std::lock_guard lock(fatal_mutex_);
  if (!fatal_) fatal_ = message;
}

bool DatabaseSink::publish(const StreamItem& item) {
  if (fatal_error()) return false;
  const SourcePosition* position = nullptr;
  int64_t commit_ts = 0;
  if (const auto* event = std::get_if<ChangeEvent>(&item)) {
    if (!apply_event(*event)) return false;
    if (changes_++ == 0) first_change_ = Clock::now();
    if (event->resume_position) position = &*event->resume_position;
    commit_ts = event->source.commit_ts_ms;
  } else {
    position = &std::get<Checkpoint>(item).position;
  }
  pending_.push_back(tracker_.begin(position ? std::optional<SourcePosition>(*position) : std::nullopt, commit_ts));
  at_boundary_ = position != nullptr;
  if (position) last_position_ = *position;
  if (at_boundary_ && changes_ >= static_cast<size_t>(settings_.batch_max_events)) return commit();
  if (script_.size() >= kSendBytes) {
    std::string part = std::move(script_);
    script_.clear();
    return send(std::move(part), false);
  }
  return true;
}

bool DatabaseSink::end_of_batch() {
  if (fatal_error()) return false;
  if (at_boundary_ && !pending_.empty()) return commit();
  return true;
}

bool DatabaseSink::flush(std::chrono::milliseconds) {
  if (fatal_error()) return false;
  if (at_boundary_ && !pending_.empty() && !commit()) return false;
  if (open_ || !script_.empty() || run_ != Run::None) {
    // The stream stopped inside a source transaction: nothing of it is committed; a restart applies it whole.
    spdlog::info("stopping inside a source transaction: its changes are rolled back and applied again on restart");
    rollback_quietly();
  }
  return true;
}

const TablePlan* DatabaseSink::plan_for(const TableSchemaPtr& table) {
  if (table.get() == last_schema_) return last_plan_;
  auto it = plans_.find(table.get());
  if (it == plans_.end()) {
    const bool postgres = target_->dialect() == Dialect::Postgres;
    const std::string& schema = postgres ? settings_.schema : settings_.database;
    std::optional<TargetTable> described;
    for (int attempt = 0; !described; ++attempt) {
      TargetError error;
      described = target_->describe(schema, table->id.table, &error);
      if (described) break;
      if (error.kind == TargetErrorKind::Fatal || attempt > 0) {
        fail("cannot read the target table " + schema + "." + table->id.table + ": " + error.message);
        return nullptr;
      }
      if (!recover(error, false)) return nullptr;  // reconnects (and re-opens the transaction in progress)
    }
    PlanResult planned = plan_table(target_->dialect(), table, schema, table->id.table, *described);
    if (!planned.plan) {
      fail(planned.error);
      return nullptr;
    }
    it = plans_.emplace(table.get(), std::move(*planned.plan)).first;
  }
  last_schema_ = table.get();
  last_plan_ = &it->second;
  return last_plan_;
}

bool DatabaseSink::apply_event(const ChangeEvent& event) {
  const TablePlan* plan = plan_for(event.table);
  if (!plan) return false;
  if (metrics_) metrics_->count_change(metrics_->change_counters(event.table->id), event.op);
  const auto missing = [&](const char* image) {
    fail("a " + std::string(op_name(event.op)) + " of " + event.table->id.to_string() + " came without its " + image +
         " image, which the database sink needs");
    return false;
  };
  switch (event.op) {
    case Op::Create:
    case Op::Read:
      if (!event.after) return missing("new");
      return add_upsert(*plan, event, *event.after);
    case Op::Update: {
      if (!event.after) return missing("new");
      bool key_moved = false;
      if (event.before)
        for (const size_t k : plan->key)
          if (k < event.before->size() && !std::holds_alternative<Unavailable>((*event.before)[k].v) &&
              !((*event.before)[k] == (*event.after)[k]))
            key_moved = true;
      // A key change moves the row: the old key's row goes, the new one comes.
      if (key_moved) return add_delete(*plan, event, *event.before) && add_upsert(*plan, event, *event.after);
      // Columns the log left out (unchanged TOASTed values, a MINIMAL binlog image) keep their target value.
      if (has_unavailable(*plan, *event.after)) return add_update(*plan, event, *event.after);
      return add_upsert(*plan, event, *event.after);
    }
    case Op::Delete: {
      const Row* image = event.before ? &*event.before : nullptr;
      if (!image) return missing("old");
      return add_delete(*plan, event, *image);
    }
    case Op::Truncate:
      close_run();
      if (settings_.truncate == "apply")
        script_ += (target_->dialect() == Dialect::Postgres ? "TRUNCATE " : "DELETE FROM ") + plan->target + ";\n";
      return true;
  }
  return true;
}

bool DatabaseSink::append_value(std::string& out, const TablePlan& plan, size_t written, const ChangeEvent& event,
                                const Row& row) {
  const size_t column = plan.columns[written];
  const TableSchema& table = *event.table;
  const ColumnInfo* info = column < table.column_info.size() ? &table.column_info[column] : nullptr;
  const Value& value = column < row.size() ? row[column] : Value(Null{});
  if (auto error = append_sql_literal(out, target_->dialect(), value, info, plan.types[written])) {
    fail("cannot apply a " + std::string(op_name(event.op)) + " of " + table.id.to_string() + " to " + plan.label +
         ": column " + table.columns[column] + ": " + *error);
    return false;
  }
  return true;
}

bool DatabaseSink::append_key(std::string& out, const TablePlan& plan, const ChangeEvent& event, const Row& row) {
  if (plan.key.size() > 1) out += '(';
  for (size_t k = 0; k < plan.key.size(); ++k) {
    if (k) out += ", ";
    const size_t column = plan.key[k];
    if (column >= row.size() || std::holds_alternative<Unavailable>(row[column].v)) {
      fail("a " + std::string(op_name(event.op)) + " of " + event.table->id.to_string() + " does not carry the key column " +
           event.table->columns[column] + " of " + plan.label + " in its image; log the key (REPLICA IDENTITY, binlog_row_image)");
      return false;
    }
    const auto written = static_cast<size_t>(std::find(plan.columns.begin(), plan.columns.end(), column) - plan.columns.begin());
    if (!append_value(out, plan, written, event, row)) return false;
  }
  if (plan.key.size() > 1) out += ')';
  return true;
}

void DatabaseSink::start_run(const TablePlan& plan, Run kind) {
  close_run();
  run_plan_ = &plan;
  run_ = kind;
  run_keys_.clear();
  run_sql_ = kind == Run::Upsert ? plan.insert_head : "DELETE FROM " + plan.target + " WHERE " + plan.key_list + " IN (";
}

void DatabaseSink::close_run() {
  if (run_ == Run::None) return;
  script_ += run_sql_;
  script_ += run_ == Run::Upsert ? run_plan_->upsert_tail : std::string(")");
  script_ += ";\n";
  run_ = Run::None;
  run_plan_ = nullptr;
  run_sql_.clear();
}

bool DatabaseSink::add_upsert(const TablePlan& plan, const ChangeEvent& event, const Row& row) {
  if (has_unavailable(plan, row)) {
    fail("a " + std::string(op_name(event.op)) + " of " + event.table->id.to_string() +
         " lacks column values that the log did not carry; the database sink needs full new images");
    return false;
  }
  key_.clear();
  if (!append_key(key_, plan, event, row)) return false;
  // One statement may not change a row twice (PostgreSQL refuses it): a repeated key starts a new one.
  if (run_plan_ != &plan || run_ != Run::Upsert || run_keys_.count(key_) || run_sql_.size() >= kRunBytes)
    start_run(plan, Run::Upsert);
  else
    run_sql_ += ", ";
  run_keys_.insert(key_);
  run_sql_ += '(';
  for (size_t w = 0; w < plan.columns.size(); ++w) {
    if (w) run_sql_ += ", ";
    if (!append_value(run_sql_, plan, w, event, row)) return false;
  }
  run_sql_ += ')';
  return true;
}

bool DatabaseSink::add_delete(const TablePlan& plan, const ChangeEvent& event, const Row& row) {
  key_.clear();
  if (!append_key(key_, plan, event, row)) return false;
  if (run_plan_ != &plan || run_ != Run::Delete || run_sql_.size() >= kRunBytes)
    start_run(plan, Run::Delete);
  else
    run_sql_ += ", ";
  run_sql_ += key_;
  return true;
}

bool DatabaseSink::add_update(const TablePlan& plan, const ChangeEvent& event, const Row& row) {
  close_run();
  std::string sql = "UPDATE " + plan.target + " SET ";
  bool any = false;
  for (size_t w = 0; w < plan.columns.size(); ++w) {
    const size_t column = plan.columns[w];
    if (is_key(plan, column) || column >= row.size() || std::holds_alternative<Unavailable>(row[column].v)) continue;
    sql += (any ? ", " : "") + plan.names[w] + " = ";
    if (!append_value(sql, plan, w, event, row)) return false;
    any = true;
  }
  if (!any) return true;  // only unchanged columns
  sql += " WHERE ";
  for (size_t k = 0; k < plan.key.size(); ++k) {
    const auto w = static_cast<size_t>(std::find(plan.columns.begin(), plan.columns.end(), plan.key[k]) - plan.columns.begin());
    sql += (k ? " AND " : "") + plan.names[w] + " = ";
    if (!append_value(sql, plan, w, event, row)) return false;
  }
  script_ += sql + ";\n";
  return true;
}

bool DatabaseSink::commit() {
  close_run();
  if (!last_position_) return true;  // nothing resumable yet (cannot happen at a boundary)
  if (last_position_->snapshot_state) {
    auto state = nlohmann::json::parse(*last_position_->snapshot_state, nullptr, false);
    if (!state.is_discarded()) extensions_["snapshot"] = std::move(state);
  }
  positions_.append_write(script_, *target_, config_.source.type, *last_position_, extensions_);
  script_ += "COMMIT";
  std::string part = std::move(script_);
  script_.clear();
  if (!send(std::move(part), true)) return false;
  const double latency = std::chrono::duration<double>(Clock::now() - first_change_).count();
  for (const Ticket t : pending_) {
    tracker_.acknowledge(t);
    if (metrics_) metrics_->count_record_acknowledged(latency);
  }
  pending_.clear();
  changes_ = 0;
  return true;
}

bool DatabaseSink::send(std::string part, bool final) {
  const char* begin = target_->dialect() == Dialect::Postgres ? "BEGIN;\n" : "START TRANSACTION;\n";
  std::optional<TargetError> error = target_->execute(open_ ? part : begin + part);
  sent_.push_back(std::move(part));
  if (!error) {
    open_ = !final;
    if (final) sent_.clear();
    return true;
  }
  return recover(std::move(*error), final);
}

bool DatabaseSink::recover(TargetError error, bool final) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(settings_.retry_max_ms);
  auto delay = std::chrono::milliseconds(500);
  int conflicts = 0;
  const std::string begin = target_->dialect() == Dialect::Postgres ? "BEGIN;\n" : "START TRANSACTION;\n";
  for (;;) {
    if (aborted_) {
      fail("stopped while the target was failing: " + error.message);
      return false;
    }
    switch (error.kind) {
      case TargetErrorKind::Fatal:
        rollback_quietly();
        fail("the target refused a transaction: " + error.message);
        return false;
      case TargetErrorKind::Conflict:
        target_->execute("ROLLBACK");  // what was sent stays kept for the replay below
        open_ = false;
        if (++conflicts > kMaxConflictRetries) {
          fail("the target kept failing with conflicts (" + error.message + "); other writers hold the same rows");
          return false;
        }
        spdlog::info("target transaction conflicted ({}); applying it again", error.message);
        break;
      case TargetErrorKind::Connection: {
        if (Clock::now() >= deadline) {
          retrying_ = false;
          fail("the target database stayed unreachable for sink.database.retry_max_ms (" +
               std::to_string(settings_.retry_max_ms) + " ms): " + error.message);
          return false;
        }
        retrying_ = true;
        spdlog::warn("target database connection failed ({}); retrying in {} ms", error.message, delay.count());
        for (auto waited = std::chrono::milliseconds(0); waited < delay && !aborted_; waited += std::chrono::milliseconds(100))
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
        delay = std::min(delay * 2, std::chrono::milliseconds(30000));
        if (auto failed = target_->connect()) {
          error = std::move(*failed);
          continue;
        }
        open_ = false;
        if (final && last_position_) {
          // The COMMIT may have landed before the connection went: the position table knows.
          TargetError read_error;
          const auto stored = positions_.read(*target_, &read_error);
          if (!stored) {
            error = read_error;
            continue;
          }
          if (stored->position && *stored->position == *last_position_) {
            spdlog::info("the target committed the transaction before the connection was lost");
            sent_.clear();
            retrying_ = false;
            return true;
          }
        }
        break;
      }
    }
    std::string all = begin;
    for (const auto& part : sent_) all += part;
    if (auto failed = target_->execute(all)) {
      error = std::move(*failed);
      continue;
    }
    spdlog::info("target database: transaction applied again after {}", error.message);
    open_ = !final;
    if (final) sent_.clear();
    retrying_ = false;
    return true;
  }
}

void DatabaseSink::rollback_quietly() {
  if (open_ || !sent_.empty()) target_->execute("ROLLBACK");
  open_ = false;
  sent_.clear();
  script_.clear();
  run_ = Run::None;
  run_plan_ = nullptr;
  run_sql_.clear();
}

}  // namespace tidemark::dbsink
