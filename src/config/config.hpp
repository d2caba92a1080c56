#pragma once
// The daemon's configuration as typed values. Filled only through the settings table (settings.cpp),
// which holds each key's name, default, help and validator in one place.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tidemark {

struct GeneratorSourceConfig {
  int64_t tables = 1;
  int64_t keys = 1000;
  int64_t rate_per_second = 0;  // 0 = as fast as the pipeline takes them
  int64_t total_events = 0;     // 0 = unbounded
  int64_t row_bytes = 200;
  int64_t transaction_size = 1;
};

struct PostgresSourceConfig {
  std::string slot;
  std::string publication;
  bool create_publication = false;  // create or extend the publication when tables are missing from it
  int64_t status_interval_ms = 0;   // standby status updates to the server
};

struct MySqlSourceConfig {
  int64_t server_id = 0;
};

// TLS to the database (docs/security.md). The loader checks the combination and that the files are readable.
struct SourceTlsConfig {
  std::string mode;  // disable | prefer | require | verify-ca | verify-full
  std::string ca;    // CA certificate file (PEM) that signed the server's certificate
  std::string cert;  // client certificate file (PEM), with key
  std::string key;   // client private key file (PEM)

  bool verifies() const { return mode == "verify-ca" || mode == "verify-full"; }
};

// Where a database connection goes: the source's server, or a database sink's target. `settings` is where
// the user sets it ("source" or "sink.database"), so that messages name the key to change.
struct DatabaseEndpoint {
  std::string type;  // postgres | mysql (a source may also be the generator)
  std::string host;
  int64_t port = 0;  // 0 = the database's usual port
  std::string user;
  std::string password;
  std::string database;
  SourceTlsConfig tls;
  std::string settings = "source";
};

// source.type kafka: topics of change records (Tidemark's or Debezium's JSON) to apply to a database sink.
struct KafkaSourceConfig {
  std::string bootstrap_servers;
  std::vector<std::string> topics;
  std::string group_id;  // empty: the pipeline's name
  std::string start;     // earliest | latest: where a first start reads each partition from
  std::map<std::string, std::string> properties;  // librdkafka consumer properties, passed as they are
};

struct SourceConfig : DatabaseEndpoint {
  std::vector<std::string> tables;
  KafkaSourceConfig kafka;
  GeneratorSourceConfig generator;
  PostgresSourceConfig postgres;
  MySqlSourceConfig mysql;
};

// What a topic the sink creates gets (partitions or replication factor -1: the broker's default).
struct TopicSpec {
  int64_t partitions = -1;
  int64_t replication_factor = -1;
  std::map<std::string, std::string> config;  // topic configs, e.g. cleanup.policy: compact
};

// Topics whose name fully matches `include` (and not `exclude`) are created with `spec`; the spec's
// -1 values and missing configs fall back to the default's. Groups are tried in order, first match wins.
struct TopicCreationGroup {
  std::string include;
  std::string exclude;  // empty: nothing excluded
  TopicSpec spec;
};

struct TopicCreationConfig {
  bool enabled = false;
  TopicSpec defaults;
  std::vector<TopicCreationGroup> groups;
};

struct KafkaSinkConfig {
  std::string bootstrap_servers;
  std::string topic_prefix;    // defaults to `name`
  std::string topic_template;  // placeholders {prefix} {database} {schema} {table}
  bool tombstones_on_delete = true;
  int64_t delivery_timeout_ms = 0;
  int64_t connect_timeout_ms = 0;
  int64_t flush_timeout_ms = 0;
  int64_t topic_creation_wait_ms = 0;
  TopicCreationConfig topic_creation;
  std::string record_shape;                  // envelope | flat
  std::vector<std::string> flat_add_fields;  // op, table, db, schema, source_ts_ms, ts_ms
  std::string flat_delete_handling;          // drop | tombstone | rewrite
  bool schemas_enable = false;               // {"schema","payload"} records, as JsonConverter's schemas.enable
  bool provide_transaction_metadata = false;
  std::string transaction_topic;  // empty: <topic prefix>.transaction
  std::map<std::string, std::string> properties;  // passed to librdkafka as they are
  // Exactly-once (docs/exactly-once.md): records and the pipeline state committed in Kafka transactions.
  bool exactly_once = false;
  std::string transactional_id;        // empty: tidemark-<name>
  std::string state_topic;             // empty: <topic prefix>.tidemark.state
  int64_t transaction_interval_ms = 0;  // a Kafka transaction commits at the first source-transaction end after this
  int64_t transaction_max_bytes = 0;    // ... or once its records reach this many bytes
};

// How one source table is written into the target (sink.database.tables): another table name, a row
// filter and the target's columns, each copied from a source column or computed by the target from an SQL
// expression over the source row (`:column` names a source column's value).
struct TableMapping {
  std::string source;  // the captured table, as source.tables names it
  std::string target;  // table, schema.table (postgres) or database.table (mysql); empty: the source's name
  std::string where;   // SQL condition over the source row; rows for which it is not true are not in the target
  // Target column -> source column name or SQL expression, in the file's order. Empty: every source column
  // into the target column of the same name.
  std::vector<std::pair<std::string, std::string>> columns;
  // The target generates its own single-column key (identity, serial, AUTO_INCREMENT, a default): the key
  // is not written, and the id map (sink.database.id_map_table) pairs each source key with the target's.
  bool generated_key = false;
  // Target column -> the mapped source table ("schema.table") whose key the copied source value is: the
  // value written is that row's target key, looked up in the id map.
  std::map<std::string, std::string> references;
  // Last writer wins: a written target column (a version number or an updated_at time) that an incoming
  // row must exceed to overwrite the target's row; updates never recreate a deleted row. Empty: every
  // change applies.
  std::string version;
  int line = 0;  // where the mapping starts in the file, for messages
  bool operator==(const TableMapping&) const = default;
};

// A database sink: the target server (its type is sink.type) and how changes are applied there
// (docs/apply.md).
struct DatabaseSinkConfig : DatabaseEndpoint {
  DatabaseSinkConfig() { settings = "sink.database"; }
  std::string schema;                // PostgreSQL: the schema of the target tables
  int64_t batch_max_events = 0;      // events per target transaction, at most (whole source transactions)
  std::string truncate;              // apply | ignore
  std::string position_table;        // the table holding the applied position, in the target
  std::string offsets_table;         // source.type kafka: the applied offset of each partition, in the target
  std::string id_map_table;          // source key <-> target key of tables with generated keys, in the target
  std::string conflict_table;        // changes a version column kept out (conflict_log.hpp), in the target
  int64_t retry_max_ms = 0;          // how long a lost target connection is retried before the daemon stops
  std::vector<TableMapping> tables;  // tables not listed go to the target table of the same name
};

struct SinkConfig {
  std::string type;  // kafka | stdout | postgres | mysql
  KafkaSinkConfig kafka;
  DatabaseSinkConfig database;
};

struct StateConfig {
  std::string path;
  int64_t flush_interval_ms = 0;
};

struct QueueConfig {
  int64_t max_events = 0;
  int64_t max_bytes = 0;
};

// Two pipelines in opposite directions between two databases (docs/apply.md, Two-way sync).
struct TwoWayConfig {
  std::string peer;          // the pipeline applying changes into this one's source database; empty: one way
  std::string marker_table;  // in both databases: each sink marks its transactions there
  // The pipeline (this one or the peer) whose source side always wins conflicts; empty: the mappings'
  // version columns decide (last writer wins), or every change applies.
  std::string winner;
  // This pipeline loses conflicts: its changes apply only where the target still holds the old values.
  bool loses() const { return enabled() && !winner.empty() && winner == peer; }
  bool enabled() const { return !peer.empty(); }
};

// With a database sink, unless set: a chunk and the latency target of the backlog bound that suit target
// transactions of thousands of rows. PostgreSQL loads a chunk by one COPY, whose fixed costs (the savepoint,
// the round trips, the commit) larger chunks share out (docs/benchmarks.md).
inline constexpr int64_t kDatabaseSinkChunkSize = 4096;
inline constexpr int64_t kPostgresSinkChunkSize = 8192;
inline constexpr int64_t kDatabaseSinkAckLatencyMs = 500;

// DBLog snapshots beside the log (docs/snapshots.md).
struct SnapshotConfig {
  bool enabled = true;
  std::string initial;           // when_needed | always | never
  int64_t chunk_size = 0;
  std::string signal_table;      // "table" (in source.database / schema public) or "schema.table"
  std::string watermark_table;
  bool create_tables = true;     // create the signal and watermark tables when missing
  bool paused = false;           // reloadable
  int64_t max_chunks_per_second = 0;  // 0 = unlimited; reloadable
  int64_t max_backlog_events = 0;     // pause chunks while more records than this wait for Kafka; reloadable
  int64_t target_ack_latency_ms = 0;  // the backlog bound adapts to keep acknowledgements this fast; reloadable
  int64_t chunks_in_flight = 0;       // windows read ahead of the one the merge stage waits for; reloadable
  int64_t max_chunk_size = 0;         // chunks grow up to this while the latency target holds; reloadable
  int64_t watermark_timeout_ms = 0;   // a watermark not seen in the log within this is a fatal error
  int64_t query_timeout_ms = 0;       // statement timeout of chunk and key queries
  std::map<std::string, std::string> surrogate_keys;  // "schema.table" -> "col1,col2" for tables without a primary key
};

// Heartbeat records (Debezium's __debezium-heartbeat.<prefix> topic) and the optional action query.
struct HeartbeatConfig {
  int64_t interval_ms = 0;  // 0: no heartbeats
  std::string topic_prefix;
  std::string action_query;
};

// The metrics, health and status endpoints.
struct HttpConfig {
  std::string listen;  // host:port; empty: no endpoints
  int64_t ready_max_lag_ms = 0;
};

// Standby instances (docs/exactly-once.md): the instance holding the pipeline's lease on the source
// database runs it; the others wait.
struct HaConfig {
  bool enabled = false;
  int64_t lease_timeout_ms = 0;  // a leader that stops answering loses the lease after this
  std::string instance;          // how this instance is named in status and logs; empty: <hostname> pid <pid>
};

struct Config {
  std::string name;
  std::string log_level;
  SourceConfig source;
  SinkConfig sink;
  StateConfig state;
  QueueConfig queue;
  SnapshotConfig snapshot;
  HttpConfig http;
  HeartbeatConfig heartbeat;
  TwoWayConfig two_way;
  HaConfig ha;
};

// source.type kafka: the consumer group (source.kafka.group_id, by default the pipeline's name).
inline std::string kafka_group_id(const Config& config) {
  return config.source.kafka.group_id.empty() ? config.name : config.source.kafka.group_id;
}

}  // namespace tidemark
