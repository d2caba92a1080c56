#include "sink/publisher.hpp"

#include "sink/connect_schema.hpp"
#include "sink/json_writer.hpp"

#include <algorithm>
#include <chrono>

namespace tidemark {

namespace {
int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}
}  // namespace

bool key_changed(const TableSchema& table, const Row& before, const Row& after) {
  for (const size_t i : table.key_columns) {
    if (i >= before.size() || i >= after.size()) return false;
    // An old image without the key value (not logged) cannot show a change.
    if (std::holds_alternative<Unavailable>(before[i].v)) return false;
    if (!(before[i] == after[i])) return true;
  }
  return false;
}

Publisher::Publisher(PublisherOptions options, MessageSink& sink, PositionTracker& tracker, PipelineMetrics* metrics)
    : options_(std::move(options)),
      sink_(sink),
      tracker_(tracker),
      metrics_(metrics),
      serializer_(EnvelopeOptions{options_.server_name}),
      namer_(options_.topic_prefix, options_.topic_template) {
  if (options_.connect_schemas) {
    const auto head = [](const std::string& schema) { return "{\"schema\":" + schema + ",\"payload\":"; };
    heartbeat_heads_[0] = head(connect_heartbeat_key_schema());
    heartbeat_heads_[1] = head(connect_heartbeat_value_schema());
    transaction_heads_[0] = head(connect_transaction_key_schema());
    transaction_heads_[1] = head(connect_transaction_value_schema());
  }
}

const Publisher::SchemaHeads& Publisher::schema_heads(const TableSchemaPtr& table) {
  SchemaHeads& heads = schema_heads_[table.get()];
  if (!heads.table) {
    const std::string name = namer_.topic_for(table->id);
    const std::string value = options_.flat ? connect_flat_schema(*table, options_.flat_fields, name)
                                            : connect_envelope_schema(*table, connector_, name);
    heads.table = table;
    heads.key = "{\"schema\":" + connect_key_schema(*table, name) + ",\"payload\":";
    heads.value = "{\"schema\":" + value + ",\"payload\":";
  }
  return heads;
}

void Publisher::start_record(const std::string* key_head, const std::string* value_head) {
  key_.clear();
  value_.clear();
  if (!options_.connect_schemas) return;
  key_.append(*key_head);
  value_.append(*value_head);
}

void Publisher::close_record(bool has_key, bool has_value) {
  if (!options_.connect_schemas) return;
  if (has_key) key_.push_back('}');
  if (has_value) value_.push_back('}');
}

std::optional<TopicIndex> Publisher::topic_for(const TableId& table) {
  if (const auto it = topics_.find(table); it != topics_.end()) return it->second;
  const std::optional<TopicIndex> index = sink_.resolve_topic(namer_.topic_for(table));
  if (index) topics_.emplace(table, *index);
  return index;
}

bool Publisher::publish(const StreamItem& item) {
  if (const auto* event = std::get_if<ChangeEvent>(&item)) return publish_event(*event);
  // A transaction whose last change was consumed (a watermark or signal row) ends at its checkpoint.
  if (transaction_) return end_transaction(std::get<Checkpoint>(item).position);
  // A checkpoint has no record: it is acknowledged at once and commits when everything before it is.
  sink_.pass(tracker_.begin(std::get<Checkpoint>(item).position));
  return true;
}

bool Publisher::send(TopicIndex topic, bool has_key, bool has_value, std::optional<SourcePosition> resume_after,
                     int64_t source_commit_ts_ms) {
  if (muted_) return true;
  const Ticket ticket = tracker_.begin(std::move(resume_after), source_commit_ts_ms);
  const bool ok = sink_.send(topic, has_key ? std::optional<std::string_view>(key_) : std::nullopt,
                             has_value ? std::optional<std::string_view>(value_) : std::nullopt, ticket);
  if (ok) {
    ++records_sent_;
    if (metrics_) metrics_->count_record_sent();
  }
  return ok;
}

namespace {

// Debezium's transaction ids: "txId:LSN" for PostgreSQL (the commit's LSN), the GTID for MySQL/MariaDB (the
// binlog coordinates of the transaction's first event without GTIDs), the sequence for the generator.
std::string transaction_id(const SourceInfo& s) {
  switch (s.connector) {
    case ConnectorKind::Postgres:
      return std::to_string(s.txid.value_or(0)) + ":" + std::to_string(s.commit_lsn.value_or(s.lsn.value_or(0)));
    case ConnectorKind::MySql:
      return s.gtid.empty() ? s.file + ":" + std::to_string(s.pos) : s.gtid;
    case ConnectorKind::Generator:
      return std::to_string(s.sequence.value_or(0));
  }
  return "";
}

// Debezium's data_collection: schema.table for PostgreSQL, database.table otherwise.
std::string data_collection(const TableId& t) { return (t.schema.empty() ? t.database : t.schema) + "." + t.table; }

}  // namespace

void Publisher::write_frame_start(const char* status, const OpenTransaction& t) {
  start_record(&transaction_heads_[0], &transaction_heads_[1]);
  JsonWriter key(key_);
  key.raw("{\"id\":");
  key.string(t.id);
  key.raw('}');
  JsonWriter value(value_);
  value.raw("{\"status\":\"");
  value.raw(status);
  value.raw("\",\"id\":");
  value.string(t.id);
  value.raw(",\"ts_ms\":");
  value.integer(t.ts_ms);
}

bool Publisher::begin_transaction(const ChangeEvent& event) {
  transaction_.emplace();
  transaction_->id = transaction_id(event.source);
  transaction_->ts_ms = event.source.commit_ts_ms;
  if (!transaction_topic_) {
    transaction_topic_ = sink_.resolve_topic(options_.transaction_topic);
    if (!transaction_topic_) return false;
  }
  write_frame_start("BEGIN", *transaction_);
  value_.append(",\"event_count\":null,\"data_collections\":null}");
  close_record(true, true);
  return send(*transaction_topic_, true, true, std::nullopt, 0);
}

const TransactionBlock* Publisher::next_in_transaction(const TableId& table) {
  OpenTransaction& t = *transaction_;
  const std::string name = data_collection(table);
  auto it = std::find_if(t.collections.begin(), t.collections.end(), [&](const auto& c) { return c.first == name; });
  if (it == t.collections.end()) it = t.collections.insert(t.collections.end(), {name, 0});
  t.block = TransactionBlock{t.id, ++t.events, ++it->second};
  return &t.block;
}

bool Publisher::end_transaction(std::optional<SourcePosition> position) {
  const OpenTransaction t = std::move(*transaction_);
  transaction_.reset();
  write_frame_start("END", t);
  JsonWriter value(value_);
  value.raw(",\"event_count\":");
  value.unsigned_integer(t.events);
  value.raw(",\"data_collections\":[");
  for (size_t i = 0; i < t.collections.size(); ++i) {
    value.raw(i ? ",{\"data_collection\":" : "{\"data_collection\":");
    value.string(t.collections[i].first);
    value.raw(",\"event_count\":");
    value.unsigned_integer(t.collections[i].second);
    value.raw('}');
  }
  value.raw("]}");
  close_record(true, true);
  return send(*transaction_topic_, true, true, std::move(position), t.ts_ms);
}

bool Publisher::publish_flat(const ChangeEvent& event, TopicIndex topic, std::optional<SourcePosition> resume,
                             int64_t now, const SchemaHeads* heads) {
  const TableSchema& table = *event.table;
  // What the event becomes: a key change is the old key's delete and the new key's create.
  struct Part {
    Op op;
    const Row* row;
  };
  std::vector<Part> parts;
  if (event.op == Op::Update && event.before && event.after && key_changed(table, *event.before, *event.after)) {
    parts = {{Op::Delete, &*event.before}, {Op::Create, &*event.after}};
  } else if (event.op == Op::Delete) {
    if (event.before) parts = {{Op::Delete, &*event.before}};
  } else if (event.op != Op::Truncate && event.after) {
    parts = {{event.op, &*event.after}};
  }
  // The records, in order: (part, tombstone?).
  std::vector<std::pair<size_t, bool>> records;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].op != Op::Delete) {
      records.emplace_back(i, false);
    } else if (options_.flat_deletes == FlatDeletes::Tombstone) {
      records.emplace_back(i, true);
    } else if (options_.flat_deletes == FlatDeletes::Rewrite) {
      records.emplace_back(i, false);
      if (options_.tombstones_on_delete) records.emplace_back(i, true);
    }
  }
  if (records.empty()) {  // nothing to send (a dropped delete, a truncate): the position still moves
    if (resume && !muted_) sink_.pass(tracker_.begin(std::move(resume), event.source.commit_ts_ms));
    return true;
  }
  for (size_t r = 0; r < records.size(); ++r) {
    const Part& part = parts[records[r].first];
    const bool tombstone = records[r].second;
    start_record(heads ? &heads->key : nullptr, heads ? &heads->value : nullptr);
    const bool has_key = serializer_.write_key(table, *part.row, key_);
    if (tombstone && !has_key) continue;  // a tombstone without a key deletes nothing
    if (!tombstone) serializer_.write_flat_value(event, part.op, *part.row, options_.flat_fields, value_, now);
    close_record(has_key, !tombstone);
    const bool last = r + 1 == records.size();
    if (!send(topic, has_key, !tombstone, last ? std::move(resume) : std::nullopt, event.source.commit_ts_ms))
      return false;
    if (last) return true;
  }
  // The last record was a tombstone without a key (skipped): the position goes by without a record.
  if (resume && !muted_) sink_.pass(tracker_.begin(std::move(resume), event.source.commit_ts_ms));
  return true;
}

bool Publisher::publish_heartbeat(int64_t now_ms) {
  if (!heartbeat_topic_) {
    heartbeat_topic_ = sink_.resolve_topic(options_.heartbeat_topic);
    if (!heartbeat_topic_) return false;
  }
  start_record(&heartbeat_heads_[0], &heartbeat_heads_[1]);
  JsonWriter key(key_);
  key.raw("{\"serverName\":");
  key.string(options_.topic_prefix);
  key.raw('}');
  JsonWriter value(value_);
  value.raw("{\"ts_ms\":");
  value.integer(now_ms);
  value.raw('}');
  close_record(true, true);
  return send(*heartbeat_topic_, true, true, std::nullopt, 0);
}

bool Publisher::publish_event(const ChangeEvent& event) {
  const TableSchema& table = *event.table;
  // Consecutive events of one table share its schema object: skip the hash of its name then.
  std::optional<TopicIndex> topic;
  if (event.table == last_table_) {
    topic = last_topic_;
  } else {
    topic = topic_for(table.id);
    if (!topic) return false;
    last_table_ = event.table;  // holds the schema, so its address cannot be reused by another
    last_topic_ = *topic;
    connector_ = event.source.connector;
    last_heads_ = options_.connect_schemas ? &schema_heads(event.table) : nullptr;
    last_counters_ = metrics_ ? &metrics_->change_counters(table.id) : nullptr;
  }
  const SchemaHeads* heads = last_heads_;
  const std::string* key_head = heads ? &heads->key : nullptr;
  const std::string* value_head = heads ? &heads->value : nullptr;
  const int64_t now = now_ms();
  const bool tombstones = options_.tombstones_on_delete;
  const int64_t commit_ts = event.source.commit_ts_ms;
  if (last_counters_) metrics_->count_change(*last_counters_, event.op);
  // Snapshot reads belong to no source transaction. With transaction metadata, the transaction's position
  // rides on its END record, after the last change.
  const bool in_transaction = options_.transaction_metadata && event.op != Op::Read;
  if (in_transaction && !transaction_ && !begin_transaction(event)) return false;
  const std::optional<SourcePosition> resume = in_transaction ? std::nullopt : event.resume_position;
  const auto block = [&]() -> const TransactionBlock* { return in_transaction ? next_in_transaction(table.id) : nullptr; };
  const auto finish = [&](bool sent) {
    if (!sent) return false;
    return in_transaction && event.resume_position ? end_transaction(event.resume_position) : true;
  };

  if (options_.flat) {
    if (in_transaction) block();  // counted for the END record; flat records carry no transaction block
    return finish(publish_flat(event, *topic, resume, now, heads));
  }

  if (event.op == Op::Update && event.before && event.after && key_changed(table, *event.before, *event.after)) {
    // The old key's history ends with a delete (and tombstone); the new key's begins with a create.
    start_record(key_head, value_head);
    const bool has_key = serializer_.write_key(table, *event.before, key_);
    serializer_.write_value(event, Op::Delete, &*event.before, nullptr, value_, now, block());
    close_record(has_key, true);
    if (!send(*topic, has_key, true, std::nullopt, 0)) return false;
    if (tombstones && has_key && !send(*topic, true, false, std::nullopt, 0)) return false;
    start_record(key_head, value_head);
    serializer_.write_key(table, *event.after, key_);
    serializer_.write_value(event, Op::Create, nullptr, &*event.after, value_, now, block());
    close_record(has_key, true);
    return finish(send(*topic, has_key, true, resume, commit_ts));
  }

  start_record(key_head, value_head);
  const Row* key_image = event.key_image();
  const bool has_key = key_image != nullptr && serializer_.write_key(table, *key_image, key_);
  serializer_.write_value(event, value_, now, block());
  close_record(has_key, true);
  const bool tombstone = event.op == Op::Delete && tombstones && has_key;
  if (!send(*topic, has_key, true, tombstone ? std::nullopt : resume, commit_ts)) return false;
  if (tombstone) return finish(send(*topic, true, false, resume, commit_ts));
  return finish(true);
}

}  // namespace tidemark
