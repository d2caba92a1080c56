#include "sink/publisher.hpp"

#include "sink/json_writer.hpp"

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
      namer_(options_.topic_prefix, options_.topic_template) {}

std::optional<TopicIndex> Publisher::topic_for(const TableId& table) {
  if (const auto it = topics_.find(table); it != topics_.end()) return it->second;
  const std::optional<TopicIndex> index = sink_.resolve_topic(namer_.topic_for(table));
  if (index) topics_.emplace(table, *index);
  return index;
}

bool Publisher::publish(const StreamItem& item) {
  if (const auto* event = std::get_if<ChangeEvent>(&item)) return publish_event(*event);
  // A checkpoint has no record: it is acknowledged at once and commits when everything before it is.
  tracker_.acknowledge(tracker_.begin(std::get<Checkpoint>(item).position));
  return true;
}

bool Publisher::send(TopicIndex topic, bool has_key, bool has_value, std::optional<SourcePosition> resume_after,
                     int64_t source_commit_ts_ms) {
  const Ticket ticket = tracker_.begin(std::move(resume_after), source_commit_ts_ms);
  const bool ok = sink_.send(topic, has_key ? std::optional<std::string_view>(key_) : std::nullopt,
                             has_value ? std::optional<std::string_view>(value_) : std::nullopt, ticket);
  if (ok) {
    ++records_sent_;
    if (metrics_) metrics_->count_record_sent();
  }
  return ok;
}

bool Publisher::publish_heartbeat(int64_t now_ms) {
  if (!heartbeat_topic_) {
    heartbeat_topic_ = sink_.resolve_topic(options_.heartbeat_topic);
    if (!heartbeat_topic_) return false;
  }
  key_.clear();
  value_.clear();
  JsonWriter key(key_);
  key.raw("{\"serverName\":");
  key.string(options_.topic_prefix);
  key.raw('}');
  JsonWriter value(value_);
  value.raw("{\"ts_ms\":");
  value.integer(now_ms);
  value.raw('}');
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
  }
  const int64_t now = now_ms();
  const bool tombstones = options_.tombstones_on_delete;
  const int64_t commit_ts = event.source.commit_ts_ms;
  if (metrics_) metrics_->count_change(table.id, event.op);

  if (event.op == Op::Update && event.before && event.after && key_changed(table, *event.before, *event.after)) {
    // The old key's history ends with a delete (and tombstone); the new key's begins with a create.
    key_.clear();
    value_.clear();
    const bool has_key = serializer_.write_key(table, *event.before, key_);
    serializer_.write_value(event, Op::Delete, &*event.before, nullptr, value_, now);
    if (!send(*topic, has_key, true, std::nullopt, 0)) return false;
    if (tombstones && has_key && !send(*topic, true, false, std::nullopt, 0)) return false;
    key_.clear();
    value_.clear();
    serializer_.write_key(table, *event.after, key_);
    serializer_.write_value(event, Op::Create, nullptr, &*event.after, value_, now);
    return send(*topic, has_key, true, event.resume_position, commit_ts);
  }

  key_.clear();
  value_.clear();
  const Row* key_image = event.key_image();
  const bool has_key = key_image != nullptr && serializer_.write_key(table, *key_image, key_);
  serializer_.write_value(event, value_, now);
  const bool tombstone = event.op == Op::Delete && tombstones && has_key;
  if (!send(*topic, has_key, true, tombstone ? std::nullopt : event.resume_position, commit_ts)) return false;
  if (tombstone) return send(*topic, true, false, event.resume_position, commit_ts);
  return true;
}

}  // namespace tidemark
