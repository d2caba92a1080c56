#pragma once
// Turns stream items into records: topic, key, envelope; a tombstone after a delete; a key-changing
// update as a delete of the old key (plus tombstone) and a create of the new one, as Debezium does.
// Registers every record with the position tracker in log order, the event's resume position on the last.

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/pipeline_metrics.hpp"
#include "core/position_tracker.hpp"
#include "sink/envelope_serializer.hpp"
#include "sink/message_sink.hpp"
#include "sink/topic_namer.hpp"

namespace tidemark {

// How a flat record shows a delete.
enum class FlatDeletes { Drop, Tombstone, Rewrite };

struct PublisherOptions {
  std::string server_name;
  std::string topic_prefix;
  std::string topic_template;
  bool tombstones_on_delete = true;
  std::string heartbeat_topic{};  // <heartbeat.topic_prefix>.<topic prefix>
  bool transaction_metadata = false;  // the envelope's transaction block, BEGIN/END records
  std::string transaction_topic{};
  bool flat = false;  // Debezium's ExtractNewRecordState shape instead of the envelope
  FlatFields flat_fields{};
  FlatDeletes flat_deletes = FlatDeletes::Tombstone;
  // JsonConverter's schemas.enable=true: every key and value is {"schema": ..., "payload": ...}.
  bool connect_schemas = false;
};

class Publisher {
 public:
  // `metrics` (may be null) counts every change and record.
  Publisher(PublisherOptions options, MessageSink& sink, PositionTracker& tracker, PipelineMetrics* metrics = nullptr);

  // False when the sink failed (see MessageSink::fatal_error) or was aborted.
  bool publish(const StreamItem& item);

  // Where every change and record is counted from now on (null: nowhere).
  void set_metrics(PipelineMetrics* metrics) { metrics_ = metrics; }

  uint64_t records_sent() const { return records_sent_; }

  // Muted, published events change the publisher's own state (a transaction's BEGIN and its counters) but
  // send nothing: how changes already committed (exactly-once, a split transaction replayed) are passed over.
  void set_muted(bool muted) { muted_ = muted; }
  // One heartbeat record, Debezium's shape: key {"serverName": <topic prefix>}, value {"ts_ms": now_ms}. It
  // carries no position (the sources' checkpoints move positions). False when the sink failed.
  bool publish_heartbeat(int64_t now_ms);

  // Some record handed over is not acknowledged yet (or waits behind one that is not).
  bool awaiting_acknowledgements() const { return tracker_.in_flight() > 0; }

 private:
  bool publish_event(const ChangeEvent& event);
  // The flat shape of one event; `resume` goes on its last record (or is committed at once when the event
  // gives no record).
  struct SchemaHeads;
  bool publish_flat(const ChangeEvent& event, TopicIndex topic, std::optional<SourcePosition> resume, int64_t now,
                    const SchemaHeads* heads);
  // Transaction metadata: opens the transaction at its first event (the BEGIN record) and numbers the event;
  // the END record carries the transaction's position, so it commits only once END is acknowledged.
  bool begin_transaction(const ChangeEvent& event);
  const TransactionBlock* next_in_transaction(const TableId& table);
  bool end_transaction(std::optional<SourcePosition> position);
  bool send(TopicIndex topic, bool has_key, bool has_value, std::optional<SourcePosition> resume_after,
            int64_t source_commit_ts_ms);
  std::optional<TopicIndex> topic_for(const TableId& table);
  // With connect_schemas: `{"schema":<schema>,"payload":` heads of a table's keys and values, built once.
  struct SchemaHeads {
    TableSchemaPtr table;  // holds the schema, so its address (the cache key) is never reused
    std::string key;
    std::string value;
  };
  const SchemaHeads& schema_heads(const TableSchemaPtr& table);
  // Start key_/value_ (with the head when schemas are on); close them once the payload is written.
  void start_record(const std::string* key_head, const std::string* value_head);
  void close_record(bool has_key, bool has_value);

  PublisherOptions options_;
  MessageSink& sink_;
  PositionTracker& tracker_;
  PipelineMetrics* metrics_;
  EnvelopeSerializer serializer_;
  TopicNamer namer_;
  std::unordered_map<TableId, TopicIndex, TableIdHash> topics_;
  TableSchemaPtr last_table_;  // the schema of the last event published, and its topic
  TopicIndex last_topic_ = 0;
  ConnectorKind connector_ = ConnectorKind::Generator;  // of the events seen (one source per pipeline)
  std::optional<TopicIndex> heartbeat_topic_;
  struct OpenTransaction {
    std::string id;
    int64_t ts_ms = 0;
    uint64_t events = 0;
    std::vector<std::pair<std::string, uint64_t>> collections;  // in first-seen order
    TransactionBlock block;
  };
  std::optional<OpenTransaction> transaction_;
  // key_ = {"id":…}; value_ = {"status":…,"id":…,"ts_ms":… (the caller ends the object).
  void write_frame_start(const char* status, const OpenTransaction& t);
  std::optional<TopicIndex> transaction_topic_;
  std::unordered_map<const TableSchema*, SchemaHeads> schema_heads_;
  const SchemaHeads* last_heads_ = nullptr;  // those of last_table_
  const PipelineMetrics::ChangeCounters* last_counters_ = nullptr;  // last_table_'s change counters
  std::string heartbeat_heads_[2];
  std::string transaction_heads_[2];
  std::string key_;
  std::string value_;
  uint64_t records_sent_ = 0;
  bool muted_ = false;
};

// True when the key columns of the two images differ (a primary-key change).
bool key_changed(const TableSchema& table, const Row& before, const Row& after);

}  // namespace tidemark
