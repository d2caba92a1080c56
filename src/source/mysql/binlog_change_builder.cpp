#include "source/mysql/binlog_change_builder.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include <spdlog/spdlog.h>

#include "source/mysql/mysql_column_kinds.hpp"
#include "source/mysql/json_diff_apply.hpp"
#include "source/table_patterns.hpp"

namespace tidemark::mysql {

namespace {

std::string_view trim_statement(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && (std::isspace(static_cast<unsigned char>(s.back())) || s.back() == ';')) s.remove_suffix(1);
  return s;
}

bool starts_with_word(std::string_view text, std::string_view word) {
  if (text.size() < word.size()) return false;
  for (size_t i = 0; i < word.size(); ++i)
    if (std::toupper(static_cast<unsigned char>(text[i])) != word[i]) return false;
  return text.size() == word.size() || !std::isalnum(static_cast<unsigned char>(text[word.size()]));
}

// An identifier at the start of `text` (`quoted` or bare), consumed.
std::string take_identifier(std::string_view& text) {
  text = trim_statement(text);
  std::string out;
  if (!text.empty() && text.front() == '`') {
    size_t i = 1;
    while (i < text.size()) {
      if (text[i] == '`') {
        if (i + 1 < text.size() && text[i + 1] == '`') {
          out.push_back('`');
          i += 2;
          continue;
        }
        ++i;
        break;
      }
      out.push_back(text[i++]);
    }
    text.remove_prefix(i);
    return out;
  }
  size_t i = 0;
  while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_' || text[i] == '$' ||
                             static_cast<unsigned char>(text[i]) >= 0x80))
    out.push_back(text[i++]);
  text.remove_prefix(i);
  return out;
}

}  // namespace

BinlogChangeBuilder::BinlogChangeBuilder(Options options, TableSchemaLoader* loader, BinlogPosition start)
    : options_(std::move(options)), loader_(loader), position_(std::move(start)) {
  decoder_.set_checksum(options_.initial_checksum);
  file_ = position_.file;
  if (options_.flavor == Flavor::MariaDb) maria_state_ = MariaGtidState::parse(position_.gtid).value_or(MariaGtidState{});
  else mysql_state_ = MysqlGtidSet::parse(position_.gtid).value_or(MysqlGtidSet{});
}

BinlogChangeBuilder::Outcome BinlogChangeBuilder::on_event(std::string_view bytes, const Emit& emit, std::string& error) {
  ++events_read_;
  auto decoded = decoder_.decode_view(bytes);
  if (auto* bad = std::get_if<EventFailure>(&decoded)) {
    if (bad->damaged) {
      // A damaged read (checksum, truncation): reading it again from the server is the remedy.
      error = "binlog " + file_ + ": " + bad->error.to_string();
      return Outcome::Retry;
    }
    error = "binlog " + file_ + " event ending at " + std::to_string(bad->header.next_position) + ": " +
            bad->error.to_string();
    return Outcome::Fatal;
  }
  const EventView& view = std::get<EventView>(decoded);
  return process(view.raw, view.event, emit, error);
}

BinlogChangeBuilder::Outcome BinlogChangeBuilder::process(const RawEvent& raw, const BinlogEvent& event, const Emit& emit,
                                                          std::string& error) {
  if (std::holds_alternative<FormatDescriptionEvent>(event)) return Outcome::Continue;  // the decoder adopted it
  if (const auto* rotate = std::get_if<RotateEvent>(&event)) {
    file_ = rotate->next_file;
    if (!in_transaction_) {
      // Every transaction before it is complete: the new file's start is as good a resume point.
      position_.file = file_;
      position_.position = rotate->position;
    }
    return Outcome::Continue;
  }
  if (const auto* gtid = std::get_if<MariaGtidEvent>(&event)) {
    maria_gtid_ = MariaGtid{gtid->domain_id, raw.header.server_id, gtid->sequence};
    gtid_text_ = std::to_string(gtid->domain_id) + "-" + std::to_string(raw.header.server_id) + "-" +
                 std::to_string(gtid->sequence);
    in_transaction_ = true;
    standalone_ = gtid->standalone();
    return Outcome::Continue;
  }
  if (const auto* gtid = std::get_if<MysqlGtidEvent>(&event)) {
    if (!gtid->anonymous) {
      gtid_text_ = format_mysql_gtid(gtid->sid, gtid->gno);
      mysql_gtid_.emplace(gtid_text_.substr(0, gtid_text_.find(':')), gtid->gno);
    } else {
      gtid_text_.clear();
    }
    in_transaction_ = true;
    standalone_ = true;  // until a BEGIN says otherwise: a DDL follows the GTID directly
    return Outcome::Continue;
  }
  if (const auto* query = std::get_if<QueryEvent>(&event)) return on_query(raw, *query, emit, error);
  if (std::holds_alternative<XidEvent>(event)) return finish_transaction(raw, emit);
  if (const auto* map = std::get_if<TableMapEvent>(&event)) {
    TableMapEvent copy = *map;
    return on_table_map(raw, copy, error);
  }
  if (const auto* rows = std::get_if<RowsEvent>(&event)) return on_rows(raw, *rows, emit, error);
  if (const auto* payload = std::get_if<TransactionPayloadEvent>(&event)) {
    // MySQL 8 compressed transaction: the inner events carry no checksum and no positions of their own;
    // the payload event's position is the transaction's.
    outer_header_ = raw.header;
    for (const std::string& inner : payload->events) {
      auto decoded = decoder_.decode_inner_view(inner);
      if (auto* bad = std::get_if<EventFailure>(&decoded)) {
        error = "binlog " + file_ + " transaction payload: " + bad->error.to_string();
        outer_header_.reset();
        return Outcome::Fatal;
      }
      const EventView& view = std::get<EventView>(decoded);
      const Outcome outcome = process(view.raw, view.event, emit, error);
      if (outcome != Outcome::Continue) {
        outer_header_.reset();
        return outcome;
      }
    }
    outer_header_.reset();
    return Outcome::Continue;
  }
  return Outcome::Continue;  // heartbeats, GTID lists, annotations, checkpoints, ...
}

BinlogChangeBuilder::Outcome BinlogChangeBuilder::on_query(const RawEvent& raw, const QueryEvent& event, const Emit& emit,
                                                           std::string& error) {
  (void)error;
  const std::string_view sql = trim_statement(event.query);
  if (starts_with_word(sql, "BEGIN") || starts_with_word(sql, "XA START")) {
    in_transaction_ = true;
    standalone_ = false;
    return Outcome::Continue;
  }
  if (starts_with_word(sql, "COMMIT") || starts_with_word(sql, "ROLLBACK") || starts_with_word(sql, "XA COMMIT") ||
      starts_with_word(sql, "XA ROLLBACK"))
    return finish_transaction(raw, emit);
  if (starts_with_word(sql, "SAVEPOINT") || starts_with_word(sql, "XA END") || starts_with_word(sql, "XA PREPARE"))
    return Outcome::Continue;
  // A DDL (or another statement logged as text): table definitions may have changed, so TABLE_MAPs are
  // rebuilt, and the catalog is read again, from here on.
  tables_.clear();
  std::string_view rest = sql;
  if (starts_with_word(rest, "TRUNCATE")) {
    rest.remove_prefix(8);
    rest = trim_statement(rest);
    if (starts_with_word(rest, "TABLE")) rest.remove_prefix(5);
    std::string first = take_identifier(rest);
    std::string database = event.database, table = first;
    if (!rest.empty() && rest.front() == '.') {
      rest.remove_prefix(1);
      database = first;
      table = take_identifier(rest);
    }
    const Outcome outcome = on_truncate(database, table, raw, emit);
    if (outcome != Outcome::Continue) return outcome;
  }
  if (standalone_ || !in_transaction_) return finish_transaction(raw, emit);
  return Outcome::Continue;
}

BinlogChangeBuilder::Outcome BinlogChangeBuilder::on_truncate(const std::string& database, const std::string& table,
                                                              const RawEvent& raw, const Emit& emit) {
  if (table.empty() || !captured(database, table)) return Outcome::Continue;
  TableMap map;
  map.database = database;
  map.table = table;
  std::string problem;
  if (loader_) {
    if (auto catalog = loader_->load(database, table, problem)) {
      for (const auto& column : catalog->columns) {
        ColumnDef c;
        c.name = column.name;
        map.columns.push_back(std::move(c));
      }
      map.has_column_names = true;
      for (const auto& name : catalog->primary_key) {
        for (size_t i = 0; i < map.columns.size(); ++i)
          if (map.columns[i].name == name) map.primary_key.push_back(i);
      }
    }
  }
  if (map.columns.empty()) {
    spdlog::warn("mysql: TRUNCATE of {}.{} not published: its columns are unknown ({})", database, table,
                 problem.empty() ? "no catalog connection" : problem);
    return Outcome::Continue;
  }
  ChangeEvent e;
  e.table = build_schema(map);
  e.op = Op::Truncate;
  e.source.connector = ConnectorKind::MySql;
  e.source.commit_ts_ms = static_cast<int64_t>(raw.header.timestamp) * 1000;
  e.source.gtid = gtid_text_;
  e.source.file = file_;
  e.source.pos = raw.header.next_position >= raw.header.event_size ? raw.header.next_position - raw.header.event_size : 0;
  e.source.server_id = raw.header.server_id;
  return hand_over(std::move(e), emit);
}

BinlogChangeBuilder::Outcome BinlogChangeBuilder::on_table_map(const RawEvent& raw, TableMapEvent& event, std::string& error) {
  const auto found = tables_.find(event.table.table_id);
  if (found != tables_.end() && found->second.raw_body == raw.body) return Outcome::Continue;
  CachedTable cached;
  cached.raw_body = std::string(raw.body);
  cached.map = std::move(event.table);
  TableMap& map = cached.map;
  if (captured(map.database, map.table)) {
    if (loader_) {
      std::string problem;
      if (auto catalog = loader_->load(map.database, map.table, problem)) {
        if (auto mismatch = apply_catalog(map, *catalog)) {
          error = *mismatch;
          return Outcome::Fatal;
        }
      } else if (!map.has_column_names) {
        error = "binlog has no column names for " + map.database + "." + map.table +
                " (binlog_row_metadata is not FULL) and the catalog cannot say: " + problem;
        return Outcome::Fatal;
      }
    }
    for (size_t i = 0; i < map.columns.size(); ++i)
      if (map.columns[i].name.empty()) map.columns[i].name = "@" + std::to_string(i + 1);  // file mode, no metadata
    cached.schema = build_schema(map);
  }
  tables_[map.table_id] = std::move(cached);
  return Outcome::Continue;
}

BinlogChangeBuilder::Outcome BinlogChangeBuilder::on_rows(const RawEvent& raw, const RowsEvent& event, const Emit& emit,
                                                          std::string& error) {
  const auto found = tables_.find(event.table_id);
  if (found == tables_.end()) {
    error = "binlog " + file_ + ": rows event for table id " + std::to_string(event.table_id) + " without a TABLE_MAP";
    return Outcome::Fatal;
  }
  const CachedTable& table = found->second;
  if (!table.schema) return Outcome::Continue;
  rows_.clear();
  if (auto bad = decode_rows(event, table.map, rows_)) {
    error = "binlog " + file_ + " event ending at " + std::to_string(raw.header.next_position) + ", table " +
            table.map.database + "." + table.map.table + ": " + bad->to_string();
    return Outcome::Fatal;
  }
  const Op op = event.kind == RowsKind::Write ? Op::Create : event.kind == RowsKind::Delete ? Op::Delete : Op::Update;
  const uint64_t pos = raw.header.next_position >= raw.header.event_size ? raw.header.next_position - raw.header.event_size : 0;
  for (size_t i = 0; i < rows_.size(); ++i) {
    // PARTIAL_UPDATE_ROWS (MySQL 8, binlog_row_value_options=PARTIAL_JSON): rebuild the after document of
    // each JSON column logged as a diff from the before image; without a full before document (a MINIMAL
    // image, NULL) or when the diff does not apply, the after value stays Unavailable.
    for (const PartialJson& partial : rows_[i].partial_json) {
      auto& before = rows_[i].before;
      auto& after = rows_[i].after;
      if (!after || partial.column >= after->size()) continue;
      std::string why;
      const Json* doc = before && partial.column < before->size() ? std::get_if<Json>(&(*before)[partial.column].v) : nullptr;
      if (doc) {
        std::string text;
        if (apply_json_diffs(doc->text, partial.diffs, text, why)) {
          (*after)[partial.column] = Value(Json{std::move(text)});
          continue;
        }
      } else {
        why = "the before image does not hold the document";
      }
      // Once per table, not per row.
      const std::string name = table.map.database + "." + table.map.table;
      if (partial_json_warned_.insert(name).second) {
        const size_t c = partial.column;
        spdlog::warn("binlog {} event ending at {}, table {}: JSON column {} was logged as a diff "
                     "(binlog_row_value_options=PARTIAL_JSON) that cannot be applied: {}; its after value is "
                     "unavailable (not logged again for this table)",
                     file_, raw.header.next_position, name, c < table.map.columns.size() ? table.map.columns[c].name : std::to_string(c), why);
      }
    }
    ChangeEvent e;
    e.table = table.schema;
    e.op = op;
    e.before = std::move(rows_[i].before);
    e.after = std::move(rows_[i].after);
    e.source.connector = ConnectorKind::MySql;
    e.source.commit_ts_ms = static_cast<int64_t>(raw.header.timestamp) * 1000;
    e.source.gtid = gtid_text_;
    e.source.file = file_;
    e.source.pos = pos;
    e.source.server_id = raw.header.server_id;
    e.source.row = static_cast<uint32_t>(i);
    ++rows_emitted_;
    if (const Outcome outcome = hand_over(std::move(e), emit); outcome != Outcome::Continue) return outcome;
  }
  return Outcome::Continue;
}

BinlogChangeBuilder::Outcome BinlogChangeBuilder::hand_over(ChangeEvent event, const Emit& emit) {
  if (held_ && !emit(std::move(*held_))) {
    held_.reset();
    return Outcome::Stopped;
  }
  held_ = std::move(event);
  return Outcome::Continue;
}

BinlogChangeBuilder::Outcome BinlogChangeBuilder::finish_transaction(const RawEvent& raw, const Emit& emit) {
  if (maria_gtid_ && maria_state_) maria_state_->update(maria_gtid_->domain_id, maria_gtid_->server_id, maria_gtid_->sequence);
  if (mysql_gtid_ && mysql_state_) mysql_state_->add(mysql_gtid_->first, mysql_gtid_->second);
  const EventHeader& header = outer_header_ ? *outer_header_ : raw.header;
  position_.file = file_;
  if (header.next_position != 0) position_.position = header.next_position;
  position_.gtid = maria_state_ ? maria_state_->to_string() : mysql_state_ ? mysql_state_->to_string() : std::string();
  in_transaction_ = false;
  standalone_ = false;
  maria_gtid_.reset();
  mysql_gtid_.reset();
  const SourcePosition resume = position_.to_source_position();
  bool ok;
  if (held_) {
    held_->resume_position = resume;
    ok = emit(std::move(*held_));
    held_.reset();
  } else {
    ok = emit(Checkpoint{resume});
  }
  return ok ? Outcome::Continue : Outcome::Stopped;
}

TableSchemaPtr BinlogChangeBuilder::build_schema(const TableMap& map) const {
  auto schema = std::make_shared<TableSchema>();
  schema->id = TableId{map.database, "", map.table};
  schema->columns.reserve(map.columns.size());
  schema->column_info.reserve(map.columns.size());
  for (const auto& column : map.columns) {
    schema->columns.push_back(column.name);
    schema->column_info.push_back(column_info(column));
  }
  schema->key_columns = map.primary_key;
  schema->complete_old_image = true;  // binlog_row_image=FULL is a prerequisite
  return schema;
}

bool BinlogChangeBuilder::captured(const std::string& database, const std::string& table) const {
  return table_selected(options_.table_patterns, database + "." + table);
}

}  // namespace tidemark::mysql
