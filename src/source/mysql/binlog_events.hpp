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
#include <type_traits>
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
  // The server that wrote the log is MariaDB (its FORMAT_DESCRIPTION's server version says so). A few
  // TABLE_MAP optional metadata rules differ between MariaDB and MySQL (which columns count as numeric
  // and as character columns).
  bool mariadb = false;
  // Post-header length of `type` (0 when the FDE does not list it).
  uint8_t post_header_length(EventType type) const;
};

// Splits one event: checks event_size against the buffer, verifies the CRC32 when `checksum` is Crc32
// (FORMAT_DESCRIPTION carries its own algorithm byte and is verified accordingly), strips the checksum.
std::variant<RawEvent, DecodeError> split_event(std::string_view bytes, ChecksumAlgorithm checksum);
template <typename S>
  requires std::is_same_v<S, std::string>
std::variant<RawEvent, DecodeError> split_event(S&&, ChecksumAlgorithm) = delete;  // RawEvent would view a temporary

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
// XA transaction id (X/Open XID): format id, global transaction id, branch qualifier.
struct XaXid {
  uint32_t format_id = 0;
  std::string gtrid;
  std::string bqual;
  bool operator==(const XaXid&) const = default;
};

struct MariaGtidEvent {
  // flags (MariaDB log_event.h, Gtid_log_event)
  static constexpr uint8_t kStandalone = 0x01;     // FL_STANDALONE: no BEGIN/COMMIT (DDL)
  static constexpr uint8_t kGroupCommitId = 0x02;  // FL_GROUP_COMMIT_ID: commit_id follows
  static constexpr uint8_t kTransactional = 0x04;  // FL_TRANSACTIONAL
  static constexpr uint8_t kAllowParallel = 0x08;  // FL_ALLOW_PARALLEL
  static constexpr uint8_t kWaited = 0x10;         // FL_WAITED
  static constexpr uint8_t kDdl = 0x20;            // FL_DDL
  static constexpr uint8_t kPreparedXa = 0x40;     // FL_PREPARED_XA: XA START ... XA PREPARE group; xid follows
  static constexpr uint8_t kCompletedXa = 0x80;    // FL_COMPLETED_XA: XA COMMIT/ROLLBACK; xid follows
  // flags_extra
  static constexpr uint8_t kExtraMultiEngine = 0x01;  // FL_EXTRA_MULTI_ENGINE_E1: extra_engines follows
  static constexpr uint8_t kExtraStartAlter = 0x02;   // FL_START_ALTER_E1
  static constexpr uint8_t kExtraCommitAlter = 0x04;  // FL_COMMIT_ALTER_E1: sa_seq_no follows
  static constexpr uint8_t kExtraRollbackAlter = 0x08;  // FL_ROLLBACK_ALTER_E1: sa_seq_no follows
  static constexpr uint8_t kExtraThreadId = 0x10;       // FL_EXTRA_THREAD_ID (11.x): thread_id follows

  uint64_t sequence = 0;
  uint32_t domain_id = 0;
  uint32_t server_id = 0;  // from the event header
  uint8_t flags = 0;
  std::optional<uint64_t> commit_id;  // group commit id (FL_GROUP_COMMIT_ID)
  std::optional<XaXid> xid;           // FL_PREPARED_XA / FL_COMPLETED_XA
  uint8_t flags_extra = 0;
  std::optional<uint8_t> extra_engines;      // FL_EXTRA_MULTI_ENGINE_E1
  std::optional<uint64_t> start_alter_sequence;  // FL_COMMIT_ALTER_E1 / FL_ROLLBACK_ALTER_E1
  std::optional<uint32_t> thread_id;         // FL_EXTRA_THREAD_ID
  bool standalone() const { return (flags & kStandalone) != 0; }  // no BEGIN/COMMIT, e.g. DDL
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
// Layout: libbinlogevents control_events.h/.cpp (Gtid_event); every part after sid+gno is optional
// (older servers stop earlier) and a newer server may append more (skipped).
struct MysqlGtidEvent {
  uint8_t flags = 0;              // bit 0: FLAG_MAY_HAVE_SBR
  std::array<uint8_t, 16> sid{};  // source UUID
  uint64_t gno = 0;               // transaction number
  bool anonymous = false;
  // Logical clock of the writer (5.7+): typecode 2.
  std::optional<int64_t> last_committed;
  std::optional<int64_t> sequence_number;
  // 8.0.1+: microseconds since the epoch.
  std::optional<uint64_t> immediate_commit_timestamp_us;
  std::optional<uint64_t> original_commit_timestamp_us;  // = immediate when not logged separately
  std::optional<uint64_t> transaction_length;            // 8.0.2+
  std::optional<uint32_t> immediate_server_version;      // 8.0.14+
  std::optional<uint32_t> original_server_version;       // = immediate when not logged separately
  std::optional<uint64_t> commit_group_ticket;           // 8.0.33+ (binlog group commit ticket)
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
//
// PartialUpdate (MySQL PARTIAL_UPDATE_ROWS_EVENT, binlog_row_value_options=PARTIAL_JSON): the layout is
// UPDATE_ROWS_EVENT_V2's, except that every *after* image starts with `value_options` (a packed integer,
// 0 or 1 = PARTIAL_JSON_UPDATES) and, when bit 1 is set, a bitmap with one bit per JSON column of the
// *table* (LSB first) that says which JSON columns hold a binary JSON diff instead of a full value; the
// NULL bitmap and the values follow. `after_image_has_value_options` is true for these events; a row
// decoder reads that prefix with read_partial_update_header() (below) before the after image.
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
  bool compressed = false;     // MariaDB *_ROWS_COMPRESSED_EVENT: `rows` was inflated
  std::string extra_data;      // v2 events: the extra-row-info area (NDB info, partition ids), raw, possibly empty
  bool after_image_has_value_options = false;  // PARTIAL_UPDATE_ROWS_EVENT (see above)
  bool end_of_statement() const { return (flags & 0x0001) != 0; }
};

// The prefix of an after image of a PARTIAL_UPDATE_ROWS_EVENT (MySQL sql/rpl_record.cc, pack_row /
// start_partial_bit_reader).
struct PartialUpdateHeader {
  uint64_t value_options = 0;  // 0, or 1 = PARTIAL_JSON_UPDATES
  // Indexed by table column: true when that (JSON) column's after value is a binary diff
  // (mysql_json_binary's diff format), not a full value. Empty when value_options is 0.
  std::vector<bool> partial_json;
};
inline constexpr uint64_t kPartialJsonUpdates = 1;
// Reads value_options and the partial bits at the cursor (the start of an after image). False (with the
// cursor's failure) on truncation or value_options > 1.
bool read_partial_update_header(BinlogCursor& cursor, const TableMap& table, PartialUpdateHeader& out);

struct HeartbeatEvent {
  std::string file;                  // current binlog file name
  std::optional<uint64_t> position;  // HEARTBEAT_LOG_EVENT_V2 only (v1: the header's next_position)
};

// XA PREPARE (type 38, MySQL and MariaDB): ends the event group of an XA transaction's first phase.
struct XaPrepareEvent {
  bool one_phase = false;
  XaXid xid;
};

struct AnnotateRowsEvent {
  std::string statement;
};

// MySQL 8 TRANSACTION_PAYLOAD: the events of a whole transaction, compressed (zstd) or not; `events` are
// the inner events' bytes (no checksums inside), in order.
struct TransactionPayloadEvent {
  uint8_t compression = 0;  // 0 zstd, 255 none
  uint64_t payload_size = 0;       // compressed bytes, as the event says
  uint64_t uncompressed_size = 0;
  std::vector<std::string> events;
};

// Any event Tidemark does not act on (INTVAR, RAND, USER_VAR, BINLOG_CHECKPOINT, START_ENCRYPTION, ...).
struct IgnoredEvent {};

using BinlogEvent = std::variant<FormatDescriptionEvent, RotateEvent, MariaGtidEvent, MariaGtidListEvent,
                                 MysqlGtidEvent, MysqlPreviousGtidsEvent, QueryEvent, XidEvent, TableMapEvent,
                                 RowsEvent, HeartbeatEvent, AnnotateRowsEvent, TransactionPayloadEvent,
                                 XaPrepareEvent, IgnoredEvent>;

// Decodes the body of `raw` by its type, using `format` (from the last FORMAT_DESCRIPTION) for post-header
// lengths. Unknown and ignored types give IgnoredEvent. Bytes left over after a fully decoded fixed
// layout are an error; extension areas that newer servers append (documented per event) are skipped.
std::variant<BinlogEvent, DecodeError> decode_event(const RawEvent& raw, const BinlogFormat& format);

// MySQL GTID set text for a sid + gno ("3e11fa47-71ca-11e1-9e33-c80aa9429562:23").
std::string format_mysql_gtid(const std::array<uint8_t, 16>& sid, uint64_t gno);

// Splits the decompressed payload of a TRANSACTION_PAYLOAD event into its inner events (each a whole
// event: header + body, no checksum). Used by decode_event; exposed for tests.
std::variant<std::vector<std::string>, DecodeError> split_payload_events(std::string_view payload);

}  // namespace tidemark::mysql
