#pragma once
// Codes of the binlog format: event types (MySQL and MariaDB) and column types, as named constants.
// Layouts: MySQL's libbinlogevents (binlog_event.h, rows_event.h, control_events.h) and MariaDB's
// log_event.h; the "MySQL Replication Protocol" and "MariaDB binlog event" pages of the manuals.

#include <cstdint>
#include <string_view>

namespace tidemark::mysql {

// The 4 bytes every binlog file starts with.
inline constexpr std::string_view kBinlogMagic = "\xfe" "bin";

inline constexpr size_t kEventHeaderLength = 19;  // v4 header: timestamp, type, server id, size, next pos, flags
inline constexpr size_t kChecksumLength = 4;      // CRC32 after the body when binlog_checksum=CRC32

enum class EventType : uint8_t {
  Unknown = 0,
  StartV3 = 1,
  Query = 2,
  Stop = 3,
  Rotate = 4,
  Intvar = 5,
  Rand = 13,
  UserVar = 14,
  FormatDescription = 15,
  Xid = 16,
  BeginLoadQuery = 17,
  ExecuteLoadQuery = 18,
  TableMap = 19,
  WriteRowsV1 = 23,
  UpdateRowsV1 = 24,
  DeleteRowsV1 = 25,
  Incident = 26,
  Heartbeat = 27,
  Ignorable = 28,
  RowsQuery = 29,
  WriteRowsV2 = 30,
  UpdateRowsV2 = 31,
  DeleteRowsV2 = 32,
  MysqlGtid = 33,
  MysqlAnonymousGtid = 34,
  MysqlPreviousGtids = 35,
  TransactionContext = 36,
  ViewChange = 37,
  XaPrepare = 38,
  PartialUpdateRows = 39,   // MySQL 8: binlog_row_value_options=PARTIAL_JSON
  TransactionPayload = 40,  // MySQL 8: binlog_transaction_compression=ON
  HeartbeatV2 = 41,
  // MariaDB
  AnnotateRows = 160,
  BinlogCheckpoint = 161,
  MariaGtid = 162,
  MariaGtidList = 163,
  StartEncryption = 164,
  QueryCompressed = 165,
  WriteRowsCompressedV1 = 166,
  UpdateRowsCompressedV1 = 167,
  DeleteRowsCompressedV1 = 168,
  WriteRowsCompressed = 169,
  UpdateRowsCompressed = 170,
  DeleteRowsCompressed = 171,
};

// "WRITE_ROWS_EVENT_V1", ...; "UNKNOWN" for codes not listed above.
std::string_view event_type_name(uint8_t type);

// Header flags.
inline constexpr uint16_t kEventFlagArtificial = 0x0020;  // LOG_EVENT_ARTIFICIAL_F: fake ROTATE/FDE of a stream

// binlog_checksum.
enum class ChecksumAlgorithm : uint8_t { Off = 0, Crc32 = 1, Undefined = 255 };

// Column types of TABLE_MAP (enum_field_types).
enum class ColumnType : uint8_t {
  Decimal = 0,  // pre-5.0 DECIMAL; never written by current servers
  Tiny = 1,
  Short = 2,
  Long = 3,
  Float = 4,
  Double = 5,
  Null = 6,
  Timestamp = 7,  // old TIMESTAMP (seconds, 4 bytes)
  LongLong = 8,
  Int24 = 9,
  Date = 10,
  Time = 11,      // old TIME (3 bytes)
  DateTime = 12,  // old DATETIME (8 bytes)
  Year = 13,
  NewDate = 14,
  Varchar = 15,
  Bit = 16,
  Timestamp2 = 17,
  DateTime2 = 18,
  Time2 = 19,
  TypedArray = 20,  // MySQL 8 multi-valued index helper; never in row images of base columns
  Vector = 242,     // MySQL 9
  Json = 245,
  NewDecimal = 246,
  Enum = 247,
  Set = 248,
  TinyBlob = 249,
  MediumBlob = 250,
  LongBlob = 251,
  Blob = 252,
  VarString = 253,
  String = 254,
  Geometry = 255,
};

// "TINYINT", "VARCHAR", ...
std::string_view column_type_name(ColumnType type);

// Collation id of the `binary` character set.
inline constexpr uint32_t kBinaryCollation = 63;

}  // namespace tidemark::mysql
