#pragma once
// The CopyData framing of PostgreSQL's streaming replication protocol (after START_REPLICATION; see
// "Streaming Replication Protocol" in the PostgreSQL manual and pg_recvlogical.c):
//
//   server → client  'w' XLogData:           Int64 dataStart, Int64 walEnd, Int64 sendTime, Byte* data
//                    'k' Primary keepalive:   Int64 walEnd, Int64 sendTime, Byte1 replyRequested
//   client → server  'r' Standby status:      Int64 write, Int64 flush, Int64 apply, Int64 sendTime,
//                                             Byte1 replyRequested
//
// All integers big-endian; times are microseconds since 2000-01-01 00:00:00 UTC (the PostgreSQL epoch).
// For logical replication the XLogData's data is one output-plugin message (pgoutput_decoder.hpp).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "source/postgres/byte_cursor.hpp"

namespace tidemark::pg {

// A WAL position (XLogRecPtr). 0 is InvalidXLogRecPtr.
using Lsn = uint64_t;
inline constexpr Lsn kInvalidLsn = 0;

inline constexpr char kXLogDataTag = 'w';
inline constexpr char kPrimaryKeepaliveTag = 'k';
inline constexpr char kStandbyStatusUpdateTag = 'r';

inline constexpr size_t kXLogDataHeaderSize = 1 + 8 + 8 + 8;              // 25
inline constexpr size_t kPrimaryKeepaliveSize = 1 + 8 + 8 + 1;            // 18
inline constexpr size_t kStandbyStatusUpdateSize = 1 + 8 + 8 + 8 + 8 + 1;  // 34

// For logical replication (seen on PostgreSQL 15.20): wal_start == wal_end == the message's write location
// (Begin: first LSN of the transaction, Commit: its end LSN, a change: its LSN), but both are 0/0 for
// Relation and Type messages. So not every XLogData carries a usable position: take positions from the
// decoded Begin/Commit, not from this header.
struct XLogData {
  Lsn wal_start = 0;
  Lsn wal_end = 0;
  int64_t server_time_us = 0;  // PostgreSQL epoch
  std::string_view payload;    // view into the decoded buffer: never empty
};

struct PrimaryKeepalive {
  Lsn wal_end = 0;
  int64_t server_time_us = 0;  // PostgreSQL epoch
  bool reply_requested = false;
};

struct StandbyStatusUpdate {
  Lsn write_lsn = 0;
  Lsn flush_lsn = 0;
  Lsn apply_lsn = 0;
  int64_t client_time_us = 0;  // PostgreSQL epoch
  bool reply_requested = false;
  bool operator==(const StandbyStatusUpdate&) const = default;
};

using ReplicationMessage = std::variant<XLogData, PrimaryKeepalive>;

// Decodes one CopyData payload received during START_REPLICATION. Anything but a well-formed 'w' (with a
// non-empty payload) or 'k' (exactly 18 bytes, reply byte 0 or 1) is a DecodeError.
std::variant<ReplicationMessage, DecodeError> decode_replication_message(std::string_view copy_data);

// The 34-byte 'r' message to send with PQputCopyData.
std::string encode_standby_status_update(const StandbyStatusUpdate& update);
// The inverse, for tests and fake servers.
std::variant<StandbyStatusUpdate, DecodeError> decode_standby_status_update(std::string_view copy_data);

// Server-side encoders, for tests and fake servers.
std::string encode_xlog_data(Lsn wal_start, Lsn wal_end, int64_t server_time_us, std::string_view payload);
std::string encode_primary_keepalive(const PrimaryKeepalive& keepalive);

// pg_lsn text: "%X/%X" of the high and low 32 bits, upper case, no leading zeros ("16/B374D848").
std::string lsn_to_string(Lsn lsn);
// Accepts what PostgreSQL's pg_lsn input accepts: 1 to 8 hex digits (either case), '/', 1 to 8 hex digits,
// nothing else.
std::optional<Lsn> parse_lsn(std::string_view text);

// Seconds from 1970-01-01 to 2000-01-01.
inline constexpr int64_t kPostgresEpochUnixSeconds = 946'684'800;
inline constexpr int64_t kPostgresEpochUnixMicros = kPostgresEpochUnixSeconds * 1'000'000;

// Microseconds since the Unix epoch ↔ since the PostgreSQL epoch. Saturate at the int64 limits instead
// of overflowing (PostgreSQL's ±infinity timestamps are the int64 limits and stay there).
constexpr int64_t unix_us_to_pg_us(int64_t unix_us) {
  constexpr int64_t kMin = INT64_MIN;
  if (unix_us == INT64_MAX) return INT64_MAX;
  if (unix_us < kMin + kPostgresEpochUnixMicros) return kMin;
  return unix_us - kPostgresEpochUnixMicros;
}
constexpr int64_t pg_us_to_unix_us(int64_t pg_us) {
  constexpr int64_t kMax = INT64_MAX;
  if (pg_us == INT64_MIN) return INT64_MIN;
  if (pg_us > kMax - kPostgresEpochUnixMicros) return kMax;
  return pg_us + kPostgresEpochUnixMicros;
}

// The current time in microseconds since the PostgreSQL epoch (for the status update's sendTime).
int64_t pg_now_us();

}  // namespace tidemark::pg
