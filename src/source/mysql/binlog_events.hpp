#pragma once
// Binlog events: the v4 header, checksum verification and stripping, and one decode function per event
// kind that Tidemark reads. The same functions serve the socket source (mariadb_rpl_fetch buffers) and
// the file source (binlog files on disk), so tests replay captured bytes.
//
// Errors are values (DecodeError with the event type and the byte offset within the event), never
// exceptions, never partial results.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "source/mysql/binlog_constants.hpp"
#include "source/mysql/binlog_cursor.hpp"
#include "source/mysql/table_map.hpp"

namespace tidemark::mysql {

struct EventHeader {
  uint32_t timestamp = 0;  // seconds since the epoch, when the statement/transaction began
  uint8_t type = 0;        // EventType code
  uint32_t server_id = 0;
  uint32_t event_size = 0;     // header + body + checksum
  uint32_t next_position = 0;  // log_pos: position of the next event in the binlog file (0 for some artificial events)
  uint16_t flags = 0;
  bool operator==(const EventHeader&) const = default;
};

// One event with its checksum verified and removed. `body` excludes the header and the checksum.
struct RawEvent {
  EventHeader header;
  std::string_view body;
  EventType type() const { return static_cast<EventType>(header.type); }
};

// What FORMAT_DESCRIPTION says about the events that follow it.
struct BinlogFormat {
  ChecksumAlgorithm checksum = ChecksumAlgorithm::Off;
  uint8_t common_header_length = kEventHeaderLength;
  std::vector<uint8_t> post_header_lengths;  // index = event type - 1
  // Post-header length of `type` (0 when the FDE does not list it).
  uint8_t post_header_length(EventType type) const;
};

// Splits one event: checks event_size against the buffer, verifies the CRC32 when `checksum` is Crc32
// (FORMAT_DESCRIPTION carries its own algorithm byte and is verified accordingly), strips the checksum.
std::variant<RawEvent, DecodeError> split_event(std::string_view bytes, ChecksumAlgorithm checksum);

// The checksum algorithm a FORMAT_DESCRIPTION event declares (read before split_event, which needs it).
std::optional<ChecksumAlgorithm> peek_format_description_checksum(std::string_view bytes);

struct FormatDescriptionEvent {
  uint16_t binlog_version = 0;
  std::string server_version;
  uint32_t create_timestamp = 0;
  BinlogFormat format;
};

struct RotateEvent {
  uint64_t position = 0;
  std::string next_file;
};

// MariaDB GTID: domain-server-sequence; begins a transaction (or a standalone DDL when not `standalone`
// is false... see flags).
struct MariaGtidEvent {
  uint64_t sequence = 0;
  uint32_t domain_id = 0;
  uint32_t server_id = 0;  // from the event header
  uint8_t flags = 0;
  std::optional<uint64_t> commit_id;  // group commit id (FL_GROUP_COMMIT_ID)
  bool standalone() const { return (flags & 0x01) != 0; }  // FL_STANDALONE: no BEGIN/COMMIT, e.g. DDL
};
struct MariaGtid {
  uint32_t domain_id = 0;
  uint32_t server_id = 0;
  uint64_t sequence = 0;
  bool operator==(const MariaGtid&) const = default;
};
struct MariaGtidListEvent {
  std::vector<MariaGtid> gtids;
};

// MySQL GTID_LOG_EVENT (or ANONYMOUS_GTID): begins a transaction.
struct MysqlGtidEvent {
  uint8_t flags = 0;
  std::array<uint8_t, 16> sid{};  // source UUID
  uint64_t gno = 0;               // transaction number
  bool anonymous = false;
  std::optional<uint64_t> original_commit_timestamp_us;
  std::optional<uint64_t> transaction_length;
};
struct MysqlPreviousGtidsEvent {
  std::string gtid_set;  // canonical text "uuid:1-5:7,uuid2:1-3"
};

struct QueryEvent {
  uint32_t thread_id = 0;
  uint32_t exec_time = 0;
  uint16_t error_code = 0;
  std::string database;  // default database of the statement
  std::string query;
};

struct XidEvent {
  uint64_t xid = 0;
};

struct TableMapEvent {
  TableMap table;
};

enum class RowsKind : uint8_t { Write, Update, Delete, PartialUpdate };

// A rows event before its rows are decoded (decoding needs the TableMap of `table_id`).
struct RowsEvent {
  uint8_t event_type = 0;
  RowsKind kind = RowsKind::Write;
  uint64_t table_id = 0;
  uint16_t flags = 0;  // bit 0: STMT_END_F, the last rows event of its statement
  uint64_t column_count = 0;
  std::string before_columns;  // bitmap of the columns present in the before image (delete/update) or image (write)
  std::string after_columns;   // update: bitmap of the columns present in the after image
  std::string rows;            // the row images (decompressed for MariaDB's compressed rows events)
  size_t rows_offset = 0;      // offset of `rows` within the event, for error messages (0 when decompressed)
  bool end_of_statement() const { return (flags & 0x0001) != 0; }
};

struct HeartbeatEvent {
  std::string file;  // current binlog file name
};

struct AnnotateRowsEvent {
  std::string statement;
};

// MySQL 8 TRANSACTION_PAYLOAD: the events of a whole transaction, compressed (zstd) or not; `events` are
// the inner events' bytes (no checksums inside), in order.
struct TransactionPayloadEvent {
  uint8_t compression = 0;  // 0 zstd, 255 none
  uint64_t uncompressed_size = 0;
  std::vector<std::string> events;
};

// Any event Tidemark does not act on (INTVAR, RAND, USER_VAR, BINLOG_CHECKPOINT, START_ENCRYPTION, ...).
struct IgnoredEvent {};

using BinlogEvent = std::variant<FormatDescriptionEvent, RotateEvent, MariaGtidEvent, MariaGtidListEvent,
                                 MysqlGtidEvent, MysqlPreviousGtidsEvent, QueryEvent, XidEvent, TableMapEvent,
                                 RowsEvent, HeartbeatEvent, AnnotateRowsEvent, TransactionPayloadEvent,
                                 IgnoredEvent>;

// Decodes the body of `raw` by its type, using `format` (from the last FORMAT_DESCRIPTION) for post-header
// lengths. Unknown and ignored types give IgnoredEvent. Bytes left over after a fully decoded fixed
// layout are an error; extension areas that newer servers append (documented per event) are skipped.
std::variant<BinlogEvent, DecodeError> decode_event(const RawEvent& raw, const BinlogFormat& format);

// MySQL GTID set text for a sid + gno ("3e11fa47-71ca-11e1-9e33-c80aa9429562:23").
std::string format_mysql_gtid(const std::array<uint8_t, 16>& sid, uint64_t gno);

}  // namespace tidemark::mysql
