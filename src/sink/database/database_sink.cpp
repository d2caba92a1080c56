#include "sink/database/database_sink.hpp"

#include <algorithm>
#include <map>
#include <thread>

#include <spdlog/spdlog.h>

#include "config/two_way_tables.hpp"
#include "sink/database/sql_values.hpp"

namespace tidemark::dbsink {

namespace {

// A part of a large target transaction is sent once the statements gathered reach this.
constexpr size_t kSendBytes = 1 << 20;
// One multi-row statement stays below this (MySQL's max_allowed_packet is 16 MiB by default).
constexpr size_t kRunBytes = 256 << 10;
// COPY's rows are streamed, not one statement: a run takes a whole target transaction's snapshot rows.
constexpr size_t kCopyRunBytes = 16 << 20;
constexpr int kMaxConflictRetries = 50;
// A direct COPY runs under it (DatabaseSink::Part).
constexpr std::string_view kCopySavepoint = "tidemark_copy";
// After a direct COPY met rows that were already there, this many of its table's runs go the long way.
constexpr int kDirectSkipsAfterDuplicate = 16;
// A position with no change to apply (the source's other transactions, heartbeats) is committed on its own
// at most this often: otherwise every unrelated source transaction would become a target transaction, and
// two pipelines answering each other's would never stop.
constexpr std::chrono::milliseconds kIdlePositionInterval{1000};

bool unavailable(const Row& row, size_t column) {
  return column >= row.size() || std::holds_alternative<Unavailable>(row[column].v);
}

// Some source value a full write of the row needs is missing from the image.
bool has_unavailable(const TablePlan& plan, const Row& row) {
  for (const auto& v : plan.values) {
    if (v.source && unavailable(row, *v.source)) return true;
    for (const size_t r : v.expression.refs)
      if (unavailable(row, r)) return true;
  }
  for (const size_t r : plan.filter.refs)
    if (unavailable(row, r)) return true;
  return false;
}

// "an insert", "a delete" ... for messages.
const char* op_name(Op op) {
  switch (op) {
    case Op::Create: return "an insert";
    case Op::Update: return "an update";
    case Op::Delete: return "a delete";
    case Op::Read: return "a snapshot read";
    case Op::Truncate: return "a truncate";
  }
  return "a change";
}

}  // namespace

DatabaseSink::DatabaseSink(const Config& config, PositionTracker& tracker, std::unique_ptr<TargetConnection> target,
                           nlohmann::json extensions)
    : config_(config),
      settings_(config.sink.database),
      tracker_(tracker),
      target_(std::move(target)),
      positions_(config.sink.database, config.name),
      id_map_(config.sink.database, config.name),
      conflicts_(config.sink.database, config.name),
      extensions_(std::move(extensions)),
      key_text_(target_->dialect(), target_->dialect() == Dialect::Postgres ? "text" : "longtext") {
  const bool pg = target_->dialect() == Dialect::Postgres;
  begin_ = pg ? "BEGIN;\n" : "START TRANSACTION;\n";
  if (config.source.type == "kafka") offsets_.emplace(settings_, kafka_group_id(config));
  if (config.two_way.enabled())
    begin_ += MarkerTable(target_->dialect(), pg ? settings_.schema : settings_.database, config.two_way.marker_table)
                  .mark_statement(*target_, config.name);
  if (config.two_way.enabled()) peer_id_map_ = id_map_table_in_source(config);
  const auto& mappings = settings_.tables;
  if (config.two_way.loses() ||
      std::any_of(mappings.begin(), mappings.end(), [](const TableMapping& m) { return !m.version.empty(); })) {
    // Conflicts logged before this start were counted by an earlier run.
    TargetError error;
    if (const auto rows = target_->query(conflicts_.select_last_id(), &error); rows && !rows->empty() && !rows->front().empty())
      last_conflict_id_ = rows->front()[0] ? std::stoll(*rows->front()[0]) : 0;
  }
}

std::optional<std::string> DatabaseSink::fatal_error() const {
  const std::lock_guard lock(fatal_mutex_);
  return fatal_;
}

void DatabaseSink::fail(const std::string& message) {
  const std::lock_guard lock(fatal_mutex_);
  if (!fatal_) fatal_ = message;
}

void DatabaseSink::take_idle_position() {
  if (!idle_position_) return;
  if (pending_.empty()) first_change_ = Clock::now();
  pending_.push_back(tracker_.begin(*idle_position_, 0));
  last_position_ = std::move(*idle_position_);
  idle_position_.reset();
  at_boundary_ = true;
}

bool DatabaseSink::publish(const StreamItem& item) {
  if (fatal_error()) return false;
  if (const auto* checkpoint = std::get_if<Checkpoint>(&item); checkpoint && pending_.empty() && at_boundary_) {
    idle_position_ = checkpoint->position;  // the latest one stands for those before it
    return true;
  }
  take_idle_position();  // its ticket comes before this item's
  const SourcePosition* position = nullptr;
  int64_t commit_ts = 0;
  if (const auto* event = std::get_if<ChangeEvent>(&item)) {
    if (!apply_event(*event)) return false;
    ++changes_;
    if (event->resume_position) position = &*event->resume_position;
    commit_ts = event->source.commit_ts_ms;
  } else {
    position = &std::get<Checkpoint>(item).position;
  }
  if (pending_.empty()) first_change_ = Clock::now();
  pending_.push_back(tracker_.begin(position ? std::optional<SourcePosition>(*position) : std::nullopt, commit_ts));
  at_boundary_ = position != nullptr;
  if (position) last_position_ = *position;
  if (at_boundary_ && changes_ >= static_cast<size_t>(settings_.batch_max_events)) return commit();
  if (script_.size() + unsent_bytes_ >= kSendBytes) {
    std::string part = std::move(script_);
    script_.clear();
    return send(std::move(part), false);
  }
  return true;
}

bool DatabaseSink::end_of_batch(bool) {
  if (fatal_error()) return false;
  if (idle_position_ && Clock::now() - last_commit_ >= kIdlePositionInterval) take_idle_position();
  if (at_boundary_ && !pending_.empty()) return commit();
  return true;
}

bool DatabaseSink::flush(std::chrono::milliseconds) {
  if (fatal_error()) return false;
  if (at_boundary_) take_idle_position();
  if (at_boundary_ && !pending_.empty() && !commit()) return false;
  if (open_ || !script_.empty() || !unsent_.empty() || run_ != Run::None) {
    // The stream stopped inside a source transaction: nothing of it is committed; a restart applies it whole.
    spdlog::info("stopping inside a source transaction: its changes are rolled back and applied again on restart");
    rollback_quietly();
  }
  return true;
}

const TablePlan* DatabaseSink::plan_for(const TableSchemaPtr& table) {
  if (table.get() == last_schema_) return last_plan_;
  auto it = plans_.find(table->id);
  // A new schema object with the same columns (the chunk worker describes tables anew) keeps the plan.
  const auto same = [&](const TableSchema& planned) {
    return planned.columns == table->columns && planned.key_columns == table->key_columns &&
           planned.column_info == table->column_info;
  };
  if (it != plans_.end() && !same(*it->second.source)) {
    plans_.erase(it);
    it = plans_.end();
  }
  if (it == plans_.end()) {
    const bool postgres = target_->dialect() == Dialect::Postgres;
    const TableMapping* mapping = find_mapping(settings_.tables, table->id);
    const auto [schema, name] = target_of(table->id, mapping, postgres ? settings_.schema : settings_.database);
    std::optional<TargetTable> described;
    for (int attempt = 0; !described; ++attempt) {
      TargetError error;
      described = target_->describe(schema, name, &error);
      if (described) break;
      if (error.kind == TargetErrorKind::Fatal || attempt > 0) {
        fail("cannot read the target table " + schema + "." + name + ": " + error.message);
        return nullptr;
      }
      if (!recover(error, false)) return nullptr;  // reconnects (and re-opens the transaction in progress)
    }
    // Two-way sync breaks version ties the same way on both sides: the pipeline whose name sorts first wins.
    const bool apply_ties = !config_.two_way.enabled() || config_.name < config_.two_way.peer;
    PlanResult planned =
        plan_table(target_->dialect(), table, mapping, schema, name, *described, apply_ties, config_.two_way.loses());
    if (!planned.plan) {
      fail(planned.error);
      return nullptr;
    }
    plan_copy(*planned.plan, target_->dialect(), "tidemark_copy_" + std::to_string(++copy_tables_));
    it = plans_.emplace(table->id, std::move(*planned.plan)).first;
  }
  last_schema_ = table.get();
  last_plan_ = &it->second;
  return last_plan_;
}

bool DatabaseSink::mirror_peer_entry(const ChangeEvent& event) {
  const auto& columns = event.table->columns;
  const Row* image = event.op == Op::Delete ? (event.before ? &*event.before : nullptr) : (event.after ? &*event.after : nullptr);
  if (!image) return true;
  // A column's text; nullopt when the image lacks it.
  const auto text = [&](const char* name) -> std::optional<std::string> {
    const auto at = std::find(columns.begin(), columns.end(), name);
    const auto c = static_cast<size_t>(at - columns.begin());
    if (at == columns.end() || c >= image->size()) return std::nullopt;
    const Value& v = (*image)[c];
    if (const auto* s = std::get_if<std::string>(&v.v)) return *s;
    if (const auto* i = std::get_if<int64_t>(&v.v)) return std::to_string(*i);
    return std::nullopt;
  };
  const auto pipeline = text("pipeline");
  const auto source_table = text("source_table");
  const auto source_key = text("source_key");
  if (!pipeline || *pipeline != config_.two_way.peer || !source_table || !source_key) return true;
  // The mapping that writes into the table the peer reads from: its target is the entry's source table.
  const bool pg = target_->dialect() == Dialect::Postgres;
  const TableMapping* mirrored = nullptr;
  for (const auto& m : settings_.tables) {
    if (!m.generated_key) continue;
    const size_t dot = m.source.find('.');
    const auto [space, name] = target_of(TableId{"", "", m.source.substr(dot + 1)}, &m, pg ? settings_.schema : settings_.database);
    if (space + "." + name == *source_table) mirrored = &m;
  }
  if (!mirrored) return true;
  close_run();
  const std::string table = target_->quote(mirrored->source);
  const auto target_key = text("target_key");
  if (event.op == Op::Delete) {
    const std::optional<std::string> peer_target = target_key ? std::optional(target_->quote(*target_key)) : std::nullopt;
    script_ += id_map_.unmirror_statement(table, peer_target, target_->quote(*source_key));
  } else if (target_key) {
    script_ += id_map_.mirror_statement(table, target_->quote(*target_key), target_->quote(*source_key));
  }
  return true;
}

bool DatabaseSink::apply_event(const ChangeEvent& event) {
  if (!peer_id_map_.empty() && is_table(event.table->id, peer_id_map_)) return mirror_peer_entry(event);
  const TablePlan* plan = plan_for(event.table);
  if (!plan) return false;
  if (metrics_) metrics_->count_change(metrics_->change_counters(event.table->id), event.op);
  const auto missing = [&](const char* image) {
    fail(std::string(op_name(event.op)) + " of " + event.table->id.to_string() + " came without its " + image +
         " image, which the database sink needs");
    return false;
  };
  switch (event.op) {
    case Op::Create:
    case Op::Read:
      if (!event.after) return missing("new");
      if (plan->generated_key) return add_mapped(*plan, event, *event.after, &*event.after, false, false);
      return add_upsert(*plan, event, *event.after);
    case Op::Update: {
      if (!event.after) return missing("new");
      const Row& after = *event.after;
      // The row as the target knows it: the old image's key (the new image may lack an unchanged key, as
      // MySQL's MINIMAL images do), else the new one's.
      const Row* old_key = &after;
      bool key_moved = false;
      if (event.before) {
        bool old_key_complete = true;
        for (const size_t k : plan->key) {
          if (unavailable(*event.before, k)) old_key_complete = false;
          else if (!unavailable(after, k) && !((*event.before)[k] == after[k])) key_moved = true;
        }
        if (old_key_complete) old_key = &*event.before;
      }
      const bool partial = has_unavailable(*plan, after);
      if (plan->generated_key) return add_mapped(*plan, event, *old_key, &after, key_moved, partial);
      // The peer's side wins: an UPDATE guarded by the old values (which also moves the key).
      if (plan->keep_changed) return add_update(*plan, event, after, *old_key, key_moved);
      // Columns the log left out (unchanged TOASTed values, a MINIMAL binlog image) keep their target value:
      // an UPDATE of the rest, which also moves the key when it changed.
      if (partial) return add_update(*plan, event, after, *old_key, key_moved);
      // Last writer wins: an update changes the row only where the target's is older, and never brings
      // back a row deleted there.
      if (plan->version && !key_moved) return add_update(*plan, event, after, *old_key, false);
      // A key change moves the row: the old key's row goes, the new one comes.
      if (key_moved) return add_delete(*plan, event, *old_key) && add_upsert(*plan, event, after);
      return add_upsert(*plan, event, after);
    }
    case Op::Delete: {
      const Row* image = event.before ? &*event.before : nullptr;
      if (!image) return missing("old");
      if (plan->generated_key) return add_mapped(*plan, event, *image, nullptr, false, false);
      if (plan->keep_changed) return add_kept_delete(*plan, event, *image);
      return add_delete(*plan, event, *image);
    }
    case Op::Truncate:
      close_run();
      if (settings_.truncate != "apply") return true;
      script_ += (target_->dialect() == Dialect::Postgres ? "TRUNCATE " : "DELETE FROM ") + plan->target + ";\n";
      if (plan->generated_key)
        script_ += "DELETE FROM " + id_map_.table() + " WHERE pipeline = " + id_map_.pipeline_literal() +
                   " AND source_table = " + target_->quote(plan->map_name) + ";\n";
      return true;
  }
  return true;
}

bool DatabaseSink::append_value(std::string& out, size_t column, const LiteralType& type, const ChangeEvent& event,
                                const Row& row, const TablePlan& plan) {
  const TableSchema& table = *event.table;
  const ColumnInfo* info = column < table.column_info.size() ? &table.column_info[column] : nullptr;
  const Value& value = column < row.size() ? row[column] : Value(Null{});
  if (auto error = append_sql_literal(out, value, info, type)) {
    fail("cannot apply a " + std::string(op_name(event.op)) + " of " + table.id.to_string() + " to " + plan.label +
         ": column " + table.columns[column] + ": " + *error);
    return false;
  }
  return true;
}

bool DatabaseSink::append_template(std::string& out, const SqlTemplate& sql, const ChangeEvent& event, const Row& row,
                                   const TablePlan& plan) {
  for (size_t t = 0; t < sql.text.size(); ++t) {
    out += sql.text[t];
    if (t >= sql.refs.size()) continue;
    const size_t column = sql.refs[t];
    const ColumnInfo* info = column < event.table->column_info.size() ? &event.table->column_info[column] : nullptr;
    const std::string type = natural_type(target_->dialect(), info);
    // PostgreSQL reads a quoted literal as whatever the operator next to it wants: typed, it means the value.
    const bool pg = target_->dialect() == Dialect::Postgres;
    if (pg) out += "CAST(";
    if (!append_value(out, column, LiteralType(target_->dialect(), type), event, row, plan)) return false;
    if (pg) out += " AS " + type + ")";
  }
  return true;
}

bool DatabaseSink::append_copied(std::string& out, const TargetValue& value, const ChangeEvent& event, const Row& row,
                                 const TablePlan& plan) {
  const size_t column = *value.source;
  if (value.reference.empty() || (column < row.size() && std::holds_alternative<Null>(row[column].v)))
    return append_value(out, column, value.literal, event, row, plan);
  std::string key;
  if (!append_value(key, column, key_text_, event, row, plan)) return false;
  out += id_map_.lookup(target_->quote(value.reference), key, value.type);
  return true;
}

bool DatabaseSink::append_source_key(std::string& out, const TablePlan& plan, const ChangeEvent& event, const Row& row) {
  const bool pg = target_->dialect() == Dialect::Postgres;
  if (plan.key.size() > 1) out += pg ? "concat_ws(chr(31), " : "concat_ws(char(31 using utf8mb4), ";
  for (size_t k = 0; k < plan.key.size(); ++k) {
    if (k) out += ", ";
    const size_t column = plan.key[k];
    if (unavailable(row, column)) {
      fail(std::string(op_name(event.op)) + " of " + event.table->id.to_string() + " does not carry the key column " +
           event.table->columns[column] + " in its image; log the key (REPLICA IDENTITY, binlog_row_image)");
      return false;
    }
    if (!append_value(out, column, key_text_, event, row, plan)) return false;
  }
  if (plan.key.size() > 1) out += ')';
  return true;
}

bool DatabaseSink::append_target_match(std::string& out, const TablePlan& plan, const ChangeEvent& event,
                                       const Row& key_row) {
  if (plan.generated_key) {
    std::string key;
    if (!append_source_key(key, plan, event, key_row)) return false;
    out += plan.generated_name + " = " + id_map_.lookup(target_->quote(plan.map_name), key, plan.generated_type);
    return true;
  }
  for (size_t k = 0; k < plan.key.size(); ++k) {
    const TargetValue& key = plan.values[plan.key_values[k]];
    out += (k ? " AND " : "") + key.name + " = ";
    if (unavailable(key_row, plan.key[k])) {
      fail(std::string(op_name(event.op)) + " of " + event.table->id.to_string() + " carries no value of the key column " +
           event.table->columns[plan.key[k]] + "; log the key (REPLICA IDENTITY, binlog_row_image)");
      return false;
    }
    if (!append_copied(out, key, event, key_row, plan)) return false;
  }
  return true;
}

bool DatabaseSink::add_mapped(const TablePlan& plan, const ChangeEvent& event, const Row& key_row, const Row* row,
                              bool key_moved, bool partial) {
  close_run();
  const bool pg = target_->dialect() == Dialect::Postgres;
  const std::string table = target_->quote(plan.map_name);
  const std::string& map = id_map_.table();
  std::string old_key;
  if (!append_source_key(old_key, plan, event, key_row)) return false;
  if (!row && plan.keep_changed) {  // a delete where the target row still holds the old values; the entry goes with the row
    std::string unchanged;
    if (!append_unchanged(unchanged, plan, event, nullptr)) return false;
    std::string match = plan.generated_name + " = " + id_map_.lookup(table, old_key, plan.generated_type);
    if (!unchanged.empty()) {
      script_ += conflicts_.log_statements(plan.target, plan.label, match, target_key_text(plan), unchanged, "NULL", "NULL");
      may_conflict_ = true;
      match += " AND " + unchanged;
    }
    const std::string entry_key = pg ? "CAST(" + map + ".target_key AS " + plan.generated_type + ")" : map + ".target_key";
    script_ += "DELETE FROM " + plan.target + " WHERE " + match + ";\nDELETE FROM " + map + " WHERE " +
               id_map_.match(table, old_key) + " AND NOT EXISTS (SELECT 1 FROM " + plan.target + " WHERE " +
               plan.generated_name + " = " + entry_key + ");\n";
    return true;
  }
  if (!row) {  // a delete: the target row and its entry
    if (pg) {
      script_ += "WITH m AS (DELETE FROM " + map + " WHERE " + id_map_.match(table, old_key) +
                 " RETURNING target_key) DELETE FROM " + plan.target + " WHERE " + plan.generated_name +
                 " = (SELECT CAST(target_key AS " + plan.generated_type + ") FROM m);\n";
    } else {
      script_ += "SET @tidemark_key = (SELECT target_key FROM " + map + " WHERE " + id_map_.match(table, old_key) +
                 ");\nDELETE FROM " + plan.target + " WHERE " + plan.generated_name + " = @tidemark_key;\nDELETE FROM " +
                 map + " WHERE " + id_map_.match(table, old_key) + ";\n";
    }
    return true;
  }
  if (partial) {
    // The new image may lack an unchanged key (a MINIMAL binlog image); a moved key is in it.
    if (key_moved) {
      std::string key;
      if (!append_source_key(key, plan, event, *row)) return false;
      script_ += "UPDATE " + map + " SET source_key = " + key + " WHERE " + id_map_.match(table, old_key) + ";\n";
    }
    return add_update(plan, event, *row, key_moved ? *row : key_row, false);
  }
  std::string key;
  if (!append_source_key(key, plan, event, *row)) return false;
  // A key change: the entry follows the row, so the target row keeps its generated key.
  if (key_moved)
    script_ += "UPDATE " + map + " SET source_key = " + key + " WHERE " + id_map_.match(table, old_key) + ";\n";
  if (has_unavailable(plan, *row)) return add_upsert(plan, event, *row);  // fails, naming what is missing
  std::string set;
  std::string values;
  std::string guard;  // last writer wins: the target row changes only where its version is older
  for (size_t w = 0; w < plan.values.size(); ++w) {
    const TargetValue& v = plan.values[w];
    std::string value;
    if (!(v.source ? append_copied(value, v, event, *row, plan) : append_template(value, v.expression, event, *row, plan)))
      return false;
    if (pg && v.source) value = "CAST(" + value + " AS " + v.type + ")";
    set += (w ? ", " : "") + v.name + " = " + value;
    values += (w ? ", " : "") + value;
    if (plan.version && w == *plan.version) {
      const std::string applies = v.name + (plan.apply_ties ? " <= " : " < ") + value;
      const std::string match = plan.generated_name + " = " + id_map_.lookup(table, key, plan.generated_type);
      script_ += conflicts_.log_statements(plan.target, plan.label, match, target_key_text(plan), applies, v.name, value);
      may_conflict_ = true;
      guard = " AND " + applies;
    }
  }
  if (plan.keep_changed && event.op == Op::Update) {  // an insert finding its entry is this pipeline's own row
    std::string unchanged;
    if (!append_unchanged(unchanged, plan, event, row)) return false;
    if (!unchanged.empty()) {
      const std::string match = plan.generated_name + " = " + id_map_.lookup(table, key, plan.generated_type);
      script_ += conflicts_.log_statements(plan.target, plan.label, match, target_key_text(plan), unchanged, "NULL", "NULL");
      may_conflict_ = true;
      guard += " AND " + unchanged;
    }
  }
  if (pg) {
    // One statement: an existing entry updates its row, else the row is inserted and its new key recorded.
    script_ += "WITH m AS (SELECT target_key FROM " + map + " WHERE " + id_map_.match(table, key) + "), u AS (UPDATE " +
               plan.target + " SET " + set + " WHERE " + plan.generated_name + " = (SELECT CAST(target_key AS " +
               plan.generated_type + ") FROM m)" + guard + " RETURNING 1), i AS (" + plan.insert_head + "SELECT " + values +
               " WHERE NOT EXISTS (SELECT 1 FROM m) RETURNING " + plan.generated_name + ") " + id_map_.insert_head() +
               "SELECT " + id_map_.pipeline_literal() + ", " + table + ", " + key + ", CAST(i." + plan.generated_name +
               " AS text) FROM i;\n";
  } else {
    script_ += "SET @tidemark_key = (SELECT target_key FROM " + map + " WHERE " + id_map_.match(table, key) + ");\nUPDATE " +
               plan.target + " SET " + set + " WHERE " + plan.generated_name + " = @tidemark_key" + guard + ";\n" + plan.insert_head +
               "SELECT " + values + " FROM DUAL WHERE @tidemark_key IS NULL;\n" + id_map_.insert_head() + "SELECT " +
               id_map_.pipeline_literal() + ", " + table + ", " + key + ", LAST_INSERT_ID() FROM DUAL WHERE @tidemark_key IS NULL;\n";
  }
  return true;
}

bool DatabaseSink::append_key(std::string& out, const TablePlan& plan, const ChangeEvent& event, const Row& row) {
  if (plan.key.size() > 1) out += '(';
  for (size_t k = 0; k < plan.key.size(); ++k) {
    if (k) out += ", ";
    const size_t column = plan.key[k];
    if (unavailable(row, column)) {
      fail(std::string(op_name(event.op)) + " of " + event.table->id.to_string() + " does not carry the key column " +
           event.table->columns[column] + " of " + plan.label + " in its image; log the key (REPLICA IDENTITY, binlog_row_image)");
      return false;
    }
    if (!append_copied(out, plan.values[plan.key_values[k]], event, row, plan)) return false;
  }
  if (plan.key.size() > 1) out += ')';
  return true;
}

bool DatabaseSink::append_row(std::string& out, const TablePlan& plan, const ChangeEvent& event, const Row& row) {
  if (!plan.derived) {
    out += '(';
    for (size_t w = 0; w < plan.values.size(); ++w) {
      if (w) out += ", ";
      if (!append_copied(out, plan.values[w], event, row, plan)) return false;
    }
    out += ')';
    return true;
  }
  // A row of the derived table v: typed on PostgreSQL (VALUES would make text of quoted literals), named on MySQL.
  const bool pg = target_->dialect() == Dialect::Postgres;
  out += pg ? "(" : "SELECT ";
  for (size_t c = 0; c < plan.carried.size(); ++c) {
    if (c) out += ", ";
    const TargetValue carried{"", plan.carried_types[c], plan.carried[c], {}, plan.carried_references[c],
                              LiteralType(target_->dialect(), plan.carried_types[c])};
    if (!append_copied(out, carried, event, row, plan)) return false;
    out += pg ? "::" + plan.carried_types[c] : " AS " + plan.carried_names[c];
  }
  if (pg) out += ')';
  return true;
}

void DatabaseSink::start_run(const TablePlan& plan, Run kind) {
  close_run();
  run_plan_ = &plan;
  run_ = kind;
  run_keys_.clear();
  run_rows_.clear();
}

void DatabaseSink::close_run() {
  if (run_ == Run::None) return;
  const TablePlan& plan = *run_plan_;
  if (run_ == Run::Copy) {
    // The statements gathered so far go first, then the COPY.
    Part part;
    part.sql = std::move(script_);
    part.copy_rows = std::move(run_rows_);
    part.copy = true;
    script_.clear();
    if (int& skips = direct_skips_[plan.copy_table]; skips > 0) {
      --skips;
      part.sql += plan.copy_open;
      script_ = plan.copy_apply + ";\n";
    } else {
      part.sql += "SAVEPOINT " + std::string(kCopySavepoint) + ";\n";
      part.direct_at = part.sql.size();
      part.sql += plan.copy_direct;
      part.temp_table = plan.copy_table;
      part.temp_open = plan.copy_open;
      part.temp_apply = plan.copy_apply;
      script_ = "RELEASE SAVEPOINT " + std::string(kCopySavepoint) + ";\n";
    }
    unsent_bytes_ += part.sql.size() + part.copy_rows.size();
    unsent_.push_back(std::move(part));
  } else if (run_ == Run::Upsert) {
    if (!plan.leave_head.empty()) script_ += plan.leave_head + run_rows_ + plan.leave_tail + ";\n";
    script_ += plan.insert_head + run_rows_ + plan.insert_tail + ";\n";
  } else {
    script_ += "DELETE FROM " + plan.target + " WHERE " + plan.key_list + " IN (" + run_rows_ + ");\n";
  }
  run_ = Run::None;
  run_plan_ = nullptr;
  run_rows_.clear();
}

bool DatabaseSink::add_upsert(const TablePlan& plan, const ChangeEvent& event, const Row& row) {
  if (has_unavailable(plan, row)) {
    fail(std::string(op_name(event.op)) + " of " + event.table->id.to_string() +
         " lacks column values that the log did not carry; the database sink needs them (REPLICA IDENTITY FULL, "
         "binlog_row_image=FULL)");
    return false;
  }
  key_.clear();
  if (!append_key(key_, plan, event, row)) return false;
  if (event.op == Op::Read && !plan.copy_table.empty()) {
    copy_row_.clear();
    const CopyRow rendered = append_copy_row(copy_row_, plan, event, row);
    if (rendered == CopyRow::Failed) return false;
    if (rendered == CopyRow::Rendered) {
      // As below: one INSERT ... SELECT may not change a row twice.
      const size_t key = std::hash<std::string>{}(key_);
      if (run_plan_ != &plan || run_ != Run::Copy || run_keys_.count(key) || run_rows_.size() >= kCopyRunBytes)
        start_run(plan, Run::Copy);
      run_keys_.insert(key);
      run_rows_ += copy_row_;
      return true;
    }
  }
  // One statement may not change a row twice (PostgreSQL refuses it): a repeated key starts a new one.
  const size_t key = std::hash<std::string>{}(key_);
  if (run_plan_ != &plan || run_ != Run::Upsert || run_keys_.count(key) || run_rows_.size() >= kRunBytes)
    start_run(plan, Run::Upsert);
  else
    run_rows_ += plan.row_separator;
  run_keys_.insert(key);
  return append_row(run_rows_, plan, event, row);
}

DatabaseSink::CopyRow DatabaseSink::append_copy_row(std::string& out, const TablePlan& plan, const ChangeEvent& event,
                                                    const Row& row) {
  for (size_t w = 0; w < plan.values.size(); ++w) {
    const TargetValue& v = plan.values[w];
    literal_.clear();
    if (!append_value(literal_, *v.source, v.literal, event, row, plan)) return CopyRow::Failed;
    if (w) out += '\t';
    if (!append_copy_field(out, literal_, v.literal)) return CopyRow::NotCopyable;
  }
  out += '\n';
  return CopyRow::Rendered;
}

bool DatabaseSink::add_delete(const TablePlan& plan, const ChangeEvent& event, const Row& row) {
  key_.clear();
  if (!append_key(key_, plan, event, row)) return false;
  if (run_plan_ != &plan || run_ != Run::Delete || run_rows_.size() >= kRunBytes)
    start_run(plan, Run::Delete);
  else
    run_rows_ += ", ";
  run_rows_ += key_;
  return true;
}

bool DatabaseSink::add_update(const TablePlan& plan, const ChangeEvent& event, const Row& row, const Row& key_row,
                              bool set_key) {
  close_run();
  for (const size_t r : plan.filter.refs)
    if (unavailable(row, r)) {
      fail("an update of " + event.table->id.to_string() + " lacks the column " + event.table->columns[r] +
           " that the where of its mapping reads; log full images (REPLICA IDENTITY FULL, binlog_row_image=FULL)");
      return false;
    }
  std::string where;
  if (!append_target_match(where, plan, event, key_row)) return false;
  std::string filter;
  if (!plan.filter.empty() && !append_template(filter, plan.filter, event, row, plan)) return false;
  std::string sql = "UPDATE " + plan.target + " SET ";
  bool any = false;
  for (size_t w = 0; w < plan.values.size(); ++w) {
    const TargetValue& v = plan.values[w];
    if (!set_key && std::find(plan.key_values.begin(), plan.key_values.end(), w) != plan.key_values.end()) continue;
    // Only what the image carries: a computed column whose inputs are missing keeps its value.
    if (v.source ? unavailable(row, *v.source)
                 : std::any_of(v.expression.refs.begin(), v.expression.refs.end(), [&](size_t r) { return unavailable(row, r); }))
      continue;
    sql += (any ? ", " : "") + v.name + " = ";
    if (!(v.source ? append_copied(sql, v, event, row, plan) : append_template(sql, v.expression, event, row, plan)))
      return false;
    any = true;
  }
  if (!filter.empty()) {
    // Leaving the filter deletes the row; otherwise the update applies (its key moved or not).
    script_ += "DELETE FROM " + plan.target + " WHERE " + where + " AND NOT coalesce((" + filter + "), false);\n";
  }
  if (plan.keep_changed && any) {
    std::string unchanged;
    if (!append_unchanged(unchanged, plan, event, &row)) return false;
    if (!unchanged.empty()) {
      script_ += conflicts_.log_statements(plan.target, plan.label, where, target_key_text(plan), unchanged, "NULL", "NULL");
      may_conflict_ = true;
      where += " AND " + unchanged;
    }
  }
  if (plan.version && any) {
    const TargetValue& v = plan.values[*plan.version];
    const bool carried = v.source ? !unavailable(row, *v.source)
                                  : std::none_of(v.expression.refs.begin(), v.expression.refs.end(),
                                                 [&](size_t r) { return unavailable(row, r); });
    if (carried) {
      std::string incoming;
      if (!(v.source ? append_copied(incoming, v, event, row, plan) : append_template(incoming, v.expression, event, row, plan)))
        return false;
      const std::string applies = v.name + (plan.apply_ties ? " <= " : " < ") + incoming;
      script_ += conflicts_.log_statements(plan.target, plan.label, where, target_key_text(plan), applies, v.name, incoming);
      may_conflict_ = true;
      where += " AND " + applies;
    }
  }
  if (any) script_ += sql + " WHERE " + where + ";\n";
  return true;
}

bool DatabaseSink::commit() {
  close_run();
  if (!last_position_) return true;  // nothing resumable yet (cannot happen at a boundary)
  if (last_position_->snapshot_state) {
    auto state = nlohmann::json::parse(*last_position_->snapshot_state, nullptr, false);
    if (!state.is_discarded()) extensions_["snapshot"] = std::move(state);
  }
  if (offsets_) {
    const auto position = parse_partition_position(last_position_->token);
    if (!position) {
      fail("the position '" + last_position_->token + "' is not a Kafka position");
      return false;
    }
    writing_offsets_.clear();
    for (const auto& [partition, offset] : *position)
      if (const auto written = written_offsets_.find(partition); written == written_offsets_.end() || !(written->second == offset))
        writing_offsets_[partition] = offset;
    offsets_->append_write(script_, writing_offsets_);
  } else {
    positions_.append_write(script_, *target_, config_.source.type, *last_position_, extensions_);
  }
  script_ += "COMMIT";
  std::string part = std::move(script_);
  script_.clear();
  if (!send(std::move(part), true)) return false;
  for (auto& [partition, offset] : writing_offsets_) written_offsets_[partition] = std::move(offset);
  writing_offsets_.clear();
  const double latency = std::chrono::duration<double>(Clock::now() - first_change_).count();
  for (const Ticket t : pending_) {
    tracker_.acknowledge(t);
    if (metrics_) metrics_->count_record_acknowledged(latency);
  }
  pending_.clear();
  changes_ = 0;
  last_commit_ = Clock::now();
  if (may_conflict_) report_conflicts();
  may_conflict_ = false;
  return true;
}

bool DatabaseSink::append_unchanged(std::string& out, const TablePlan& plan, const ChangeEvent& event, const Row* after) {
  const bool pg = target_->dialect() == Dialect::Postgres;
  const Row* before = event.before ? &*event.before : nullptr;
  for (size_t w = 0; w < plan.values.size(); ++w) {
    const TargetValue& v = plan.values[w];
    // Computed columns are not compared (an expression of the old values need not give back what the target
    // holds); the key already selects the row.
    if (!v.source || std::find(plan.key_values.begin(), plan.key_values.end(), w) != plan.key_values.end()) continue;
    const size_t c = *v.source;
    if (after && unavailable(*after, c)) continue;  // the new image leaves it as it was
    if (!before || unavailable(*before, c)) {
      fail(std::string(op_name(event.op)) + " of " + event.table->id.to_string() + " comes without the old value of " +
           event.table->columns[c] + ", which two_way.winner needs to tell whether the other side changed the row: log "
           "old images (PostgreSQL: ALTER TABLE ... REPLICA IDENTITY FULL; MySQL: binlog_row_image=FULL)");
      return false;
    }
    if (after && (*before)[c] == (*after)[c]) continue;
    std::string old_value;
    if (!append_copied(old_value, v, event, *before, plan)) return false;
    out += (out.empty() ? "" : " AND ") + v.name + (pg ? " IS NOT DISTINCT FROM CAST(" + old_value + " AS " + v.type + ")"
                                                       : " <=> " + old_value);
  }
  return true;
}

bool DatabaseSink::add_kept_delete(const TablePlan& plan, const ChangeEvent& event, const Row& row) {
  close_run();
  std::string where;
  if (!append_target_match(where, plan, event, row)) return false;
  std::string unchanged;
  if (!append_unchanged(unchanged, plan, event, nullptr)) return false;
  if (!unchanged.empty()) {
    script_ += conflicts_.log_statements(plan.target, plan.label, where, target_key_text(plan), unchanged, "NULL", "NULL");
    may_conflict_ = true;
    where += " AND " + unchanged;
  }
  script_ += "DELETE FROM " + plan.target + " WHERE " + where + ";\n";
  return true;
}

std::string DatabaseSink::target_key_text(const TablePlan& plan) const {
  const bool pg = target_->dialect() == Dialect::Postgres;
  std::vector<std::string> columns;
  if (plan.generated_key) columns.push_back(plan.generated_name);
  for (const size_t k : plan.key_values) columns.push_back(plan.values[k].name);
  if (columns.size() == 1) return pg ? "CAST(" + columns[0] + " AS text)" : "CAST(" + columns[0] + " AS CHAR)";
  std::string out = pg ? "concat_ws(chr(31)" : "concat_ws(char(31 using utf8mb4)";
  for (const auto& c : columns) out += ", " + c;
  return out + ")";
}

void DatabaseSink::report_conflicts() {
  // Read after the COMMIT: only conflicts whose outcome the target holds are counted. A failed read is
  // caught up after the next commit that logs conflicts.
  constexpr int kShown = 10;
  constexpr int kPage = 1000;
  int shown = 0;
  std::map<std::string, uint64_t> per_table;
  for (;;) {
    TargetError error;
    const auto rows = target_->query(conflicts_.select_after(last_conflict_id_, kPage), &error);
    if (!rows) {
      spdlog::warn("cannot read the conflict log {}: {}", conflicts_.label(), error.message);
      break;
    }
    for (const auto& row : *rows) {
      const auto conflict = ConflictLog::parse(row);
      if (!conflict) continue;
      last_conflict_id_ = std::max(last_conflict_id_, conflict->id);
      ++per_table[conflict->table];
      if (shown++ < kShown)
        spdlog::warn("conflict: {} key {} kept version {}, incoming {} not applied ({})", conflict->table, conflict->key,
                     conflict->kept, conflict->incoming,
                     config_.two_way.loses() ? config_.two_way.winner + " wins" : std::string("last writer wins"));
    }
    if (rows->size() < static_cast<size_t>(kPage)) break;
  }
  if (shown > kShown) spdlog::warn("conflict: {} more in this transaction (see {})", shown - kShown, conflicts_.label());
  if (metrics_)
    for (const auto& [table, n] : per_table) metrics_->count_conflicts(table, n);
}

bool DatabaseSink::send(std::string part, bool final) {
  std::vector<Part> parts = std::move(unsent_);
  unsent_.clear();
  unsent_bytes_ = 0;
  parts.emplace_back().sql = std::move(part);
  for (size_t i = 0; i < parts.size(); ++i) {
    std::optional<TargetError> error = run_part(parts[i], !open_);
    if (error) {
      for (size_t j = i; j < parts.size(); ++j) sent_.push_back(std::move(parts[j]));
      return recover(std::move(*error), final);
    }
    open_ = true;
    sent_.push_back(std::move(parts[i]));
  }
  open_ = !final;
  if (final) sent_.clear();
  return true;
}

std::optional<TargetError> DatabaseSink::run_part(Part& part, bool begin) {
  std::string opened;
  if (begin) opened = begin_ + part.sql;
  const std::string& sql = begin ? opened : part.sql;
  if (part.copy) return run_copy(sql, part);
  if (sql.empty()) return std::nullopt;
  return target_->execute(sql);
}

std::optional<TargetError> DatabaseSink::run_copy(const std::string& script, Part& part) {
  std::optional<TargetError> failed = target_->copy_in(script, part.copy_rows);
  // Some of the rows are there already (the log inserted them, or this is a replay): back to before the
  // COPY, and all of them through the temporary table and the upsert. A replay of the part goes that way too.
  // (A duplicate in the statements before the savepoint leaves none to roll back to: that error stands.)
  if (failed && failed->duplicate_key && part.direct_at != std::string::npos &&
      !target_->execute("ROLLBACK TO SAVEPOINT " + std::string(kCopySavepoint))) {
    spdlog::debug("snapshot rows for {} were partly there already; loading them by upsert", part.temp_table);
    direct_skips_[part.temp_table] = kDirectSkipsAfterDuplicate;
    part.sql.replace(part.direct_at, std::string::npos, part.temp_open);
    part.after = std::move(part.temp_apply);
    part.direct_at = std::string::npos;
    failed = target_->copy_in(part.temp_open, part.copy_rows);
  }
  if (!failed && !part.after.empty()) failed = target_->execute(part.after);
  return failed;
}

std::optional<TargetError> DatabaseSink::replay() {
  // Statements before a COPY go in its round trip.
  std::string sql = begin_;
  for (Part& part : sent_) {
    sql += part.sql;
    if (!part.copy) continue;
    if (auto failed = run_copy(sql, part)) return failed;
    sql.clear();
  }
  if (sql.empty()) return std::nullopt;
  return target_->execute(sql);
}

bool DatabaseSink::recover(TargetError error, bool final) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(settings_.retry_max_ms);
  auto delay = std::chrono::milliseconds(500);
  int conflicts = 0;
  for (;;) {
    if (aborted_) {
      fail("stopped while the target was failing: " + error.message);
      return false;
    }
    switch (error.kind) {
      case TargetErrorKind::Fatal:
        rollback_quietly();
        if (offsets_ && error.message.find(KafkaOffsetsTable::kFenced) != std::string::npos) {
          fail("another member of the consumer group took over a partition this one was applying (" + error.message +
               "); nothing of the transaction was applied, and the new owner applies those records from the offsets in " +
               offsets_->label() + ". Stopping: a restart joins the group again");
          return false;
        }
        // Nothing of it is applied: a restart after the fix applies it again from here.
        if (target_->dialect() == Dialect::MySql && error.message.find("cannot be null") != std::string::npos)
          error.message += " (an upsert also fails this way when its row matches another row of the table by a unique key "
                           "other than the primary key: the sink does not merge two rows)";
        fail("the target refused a transaction: " + error.message + "; nothing of it was applied, and the pipeline " +
             "resumes after source position " + tracker_.committed().position.value_or(SourcePosition("(its start)")).token +
             " once the target accepts it");
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
          if (offsets_) {
            const auto rows = offsets_->read(*target_, &read_error);
            if (!rows) {
              error = read_error;
              continue;
            }
            if (std::all_of(writing_offsets_.begin(), writing_offsets_.end(), [&](const auto& written) {
                  const auto row = rows->find(written.first);
                  return row != rows->end() && row->second == written.second;
                })) {
              spdlog::info("the target committed the transaction before the connection was lost");
              sent_.clear();
              retrying_ = false;
              return true;
            }
            break;
          }
          const auto stored = positions_.read(*target_, &read_error);
          if (!stored) {
            error = read_error;
            continue;
          }
          if (stored->position && *stored->position == *last_position_ && stored->extensions == extensions_) {
            spdlog::info("the target committed the transaction before the connection was lost");
            sent_.clear();
            retrying_ = false;
            return true;
          }
        }
        break;
      }
    }
    if (auto failed = replay()) {
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
  unsent_.clear();
  unsent_bytes_ = 0;
  script_.clear();
  may_conflict_ = false;
  run_ = Run::None;
  run_plan_ = nullptr;
  run_rows_.clear();
}

}  // namespace tidemark::dbsink
