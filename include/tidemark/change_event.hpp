#pragma once
// The source-neutral change event: what every source produces and every sink consumes.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "tidemark/value.hpp"

namespace tidemark {

// A captured table. `schema` is empty for MySQL/MariaDB, whose databases are schemas.
struct TableId {
  std::string database;
  std::string schema;
  std::string table;
  bool operator==(const TableId&) const = default;
  std::string to_string() const;  // "db.schema.table", or "db.table" without a schema
};

struct TableIdHash {
  size_t operator()(const TableId& id) const noexcept;
};

// What a column holds, as far as a consumer's schema needs to say (Kafka Connect JSON schemas, a target
// table's DDL): the kind of its values with the width and meaning the database declared. Each source maps
// its own types here; the value in a row is still one of value.hpp's types (an Int16 column holds int64).
enum class ColumnKind : uint8_t {
  Unknown,  // not described by the source: a consumer should treat it as text
  Boolean,
  Int16,
  Int32,
  Int64,
  UInt64,  // MySQL's BIGINT UNSIGNED
  Float32,
  Float64,
  Decimal,
  String,
  Bytes,
  Date,
  Time,
  Timestamp,
  TimestampTz,
  TimeTz,  // PostgreSQL's timetz, sent as UTC text
  Interval,
  Year,
  Json,
  Xml,
  Uuid,
  Enum,
  EnumSet,
  Bits,  // MySQL's BIT(n), n > 1, as bytes
  Array,
};

struct ColumnInfo {
  ColumnKind kind = ColumnKind::Unknown;
  ColumnKind element = ColumnKind::Unknown;  // Array: the kind of its elements
  bool optional = true;                      // the column may hold NULL
  uint32_t length = 0;                       // Bits: the declared number of bits
  std::vector<std::string> members;          // Enum and EnumSet: the allowed values, in definition order
  bool operator==(const ColumnInfo&) const = default;
};

// Column names and key of a table at one point of the log. Sources share one immutable instance between
// all events until the table's schema changes, so events carry a pointer, not the names.
struct TableSchema {
  TableId id;
  std::vector<std::string> columns;
  std::vector<size_t> key_columns;  // indexes into `columns`, in key order; empty when the table has no key
  std::vector<ColumnInfo> column_info;  // parallel to `columns`; empty when the source does not describe them
  // True when an update's or delete's old image holds every column (MySQL's binlog_row_image=FULL,
  // PostgreSQL's REPLICA IDENTITY FULL); otherwise it may hold the key columns only.
  bool complete_old_image = false;
};
using TableSchemaPtr = std::shared_ptr<const TableSchema>;

enum class Op : char { Create = 'c', Update = 'u', Delete = 'd', Read = 'r', Truncate = 't' };

// Debezium's source.snapshot values.
enum class SnapshotMarker { No, Yes, Last, Incremental };

// Where a restart resumes. Opaque outside its source: the source encodes and decodes it; everyone else
// only stores it and hands it back. Positions of one source are totally ordered by log order, which is
// the order in which the source emits them.
struct SourcePosition {
  SourcePosition() = default;
  SourcePosition(std::string position_token) : token(std::move(position_token)) {}  // NOLINT: reads as a value

  std::string token;
  // The snapshot state (serialized JSON) as of this position, stamped by the snapshot merge stage; persisted
  // with the position so that both move together. Null when snapshots are off. Not part of the identity.
  std::shared_ptr<const std::string> snapshot_state;
  bool operator==(const SourcePosition& other) const { return token == other.token; }
};

// Which connector produced the event; selects the source-specific fields of the envelope.
enum class ConnectorKind { Generator, MySql, Postgres };

// Source coordinates of one event, for the envelope's `source` block (file/pos/gtid or lsn/txId).
struct SourceInfo {
  ConnectorKind connector = ConnectorKind::Generator;
  int64_t commit_ts_ms = 0;          // commit time of the transaction in the source
  std::optional<uint64_t> txid;      // PostgreSQL xid
  std::optional<uint64_t> lsn;       // PostgreSQL LSN of the change
  std::optional<uint64_t> commit_lsn;  // PostgreSQL LSN of the transaction's commit record
  std::string gtid;                  // MySQL/MariaDB GTID of the transaction
  std::string file;                  // binlog file
  uint64_t pos = 0;                  // binlog position
  uint32_t server_id = 0;
  uint32_t row = 0;                  // index of the row within its rows event
  std::optional<uint64_t> sequence;  // generator sequence number
};

struct ChangeEvent {
  TableSchemaPtr table;
  Op op = Op::Create;
  std::optional<Row> before;  // absent when the log carries no old image
  std::optional<Row> after;
  SnapshotMarker snapshot = SnapshotMarker::No;
  SourceInfo source;
  // Set on the last event of a transaction: the position after it. Positions advance only here.
  std::optional<SourcePosition> resume_position;

  // The key columns of the image that identifies the row: `after` for creates, reads and updates,
  // `before` for deletes. Empty when the table has no key.
  const Row* key_image() const;
};

// A position without an event: a transaction whose changes were all filtered out, or a heartbeat. It lets
// the committed position move when nothing is published.
struct Checkpoint {
  SourcePosition position;
};

// What flows from a source to the publisher, in log order.
using StreamItem = std::variant<ChangeEvent, Checkpoint>;

// Rough size of an item in memory, to bound queues in bytes as well as in items.
size_t approximate_bytes(const StreamItem& item);

}  // namespace tidemark
