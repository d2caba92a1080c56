#include "source/postgres/replication_messages.hpp"

#include <chrono>
#include <cstdio>

namespace tidemark::pg {

namespace {

DecodeError cursor_error(char kind, const ByteCursor& c, std::string_view context) {
  const CursorFailure& f = *c.failure();
  return DecodeError{kind, f.offset, std::string(context) + ": " + f.message};
}

// After the last field: anything left over is an error, not silently ignored.
bool check_end(ByteCursor& c) {
  if (c.failed()) return false;
  if (c.at_end()) return true;
  return c.fail(c.offset(), std::to_string(c.remaining()) + " trailing bytes after the last field");
}

std::variant<ReplicationMessage, DecodeError> read_xlog_data(ByteCursor& c) {
  XLogData m;
  if (!c.read_u64(m.wal_start, "dataStart") || !c.read_u64(m.wal_end, "walEnd") ||
      !c.read_i64(m.server_time_us, "sendTime")) {
    return cursor_error(kXLogDataTag, c, "XLogData header");
  }
  if (c.at_end()) {
    return DecodeError{kXLogDataTag, c.offset(), "XLogData without payload"};
  }
  m.payload = c.read_rest();
  return ReplicationMessage{m};
}

std::variant<ReplicationMessage, DecodeError> read_primary_keepalive(ByteCursor& c) {
  PrimaryKeepalive m;
  int64_t time = 0;
  uint8_t reply = 0;
  if (!c.read_u64(m.wal_end, "walEnd") || !c.read_i64(time, "sendTime")) {
    return cursor_error(kPrimaryKeepaliveTag, c, "primary keepalive");
  }
  const size_t reply_at = c.offset();
  if (!c.read_u8(reply, "replyRequested")) return cursor_error(kPrimaryKeepaliveTag, c, "primary keepalive");
  if (reply > 1) {
    return DecodeError{kPrimaryKeepaliveTag, reply_at,
                       "primary keepalive: replyRequested is " + std::to_string(reply) + ", expected 0 or 1"};
  }
  if (!check_end(c)) return cursor_error(kPrimaryKeepaliveTag, c, "primary keepalive");
  m.server_time_us = time;
  m.reply_requested = reply == 1;
  return ReplicationMessage{m};
}

}  // namespace

std::variant<ReplicationMessage, DecodeError> decode_replication_message(std::string_view copy_data) {
  ByteCursor c(copy_data);
  uint8_t tag = 0;
  if (!c.read_u8(tag, "message type")) {
    return DecodeError{'\0', 0, "empty CopyData message"};
  }
  const auto kind = static_cast<char>(tag);
  switch (kind) {
    case kXLogDataTag:
      return read_xlog_data(c);
    case kPrimaryKeepaliveTag:
      return read_primary_keepalive(c);
    default:
      return DecodeError{kind, 0,
                         "unknown streaming replication message type (expected 'w' XLogData or 'k' keepalive)"};
  }
}

std::string encode_standby_status_update(const StandbyStatusUpdate& update) {
  std::string out;
  out.reserve(kStandbyStatusUpdateSize);
  out.push_back(kStandbyStatusUpdateTag);
  put_u64(out, update.write_lsn);
  put_u64(out, update.flush_lsn);
  put_u64(out, update.apply_lsn);
  put_i64(out, update.client_time_us);
  put_u8(out, update.reply_requested ? 1 : 0);
  return out;
}

std::variant<StandbyStatusUpdate, DecodeError> decode_standby_status_update(std::string_view copy_data) {
  ByteCursor c(copy_data);
  uint8_t tag = 0;
  if (!c.read_u8(tag, "message type")) return DecodeError{'\0', 0, "empty CopyData message"};
  const auto kind = static_cast<char>(tag);
  if (kind != kStandbyStatusUpdateTag) {
    return DecodeError{kind, 0, "not a standby status update (expected 'r')"};
  }
  StandbyStatusUpdate m;
  uint8_t reply = 0;
  if (!c.read_u64(m.write_lsn, "write LSN") || !c.read_u64(m.flush_lsn, "flush LSN") ||
      !c.read_u64(m.apply_lsn, "apply LSN") || !c.read_i64(m.client_time_us, "sendTime")) {
    return cursor_error(kind, c, "standby status update");
  }
  const size_t reply_at = c.offset();
  if (!c.read_u8(reply, "replyRequested")) return cursor_error(kind, c, "standby status update");
  if (reply > 1) {
    return DecodeError{kind, reply_at,
                       "standby status update: replyRequested is " + std::to_string(reply) +
                           ", expected 0 or 1"};
  }
  if (!check_end(c)) return cursor_error(kind, c, "standby status update");
  m.reply_requested = reply == 1;
  return m;
}

std::string encode_xlog_data(Lsn wal_start, Lsn wal_end, int64_t server_time_us, std::string_view payload) {
  std::string out;
  out.reserve(kXLogDataHeaderSize + payload.size());
  out.push_back(kXLogDataTag);
  put_u64(out, wal_start);
  put_u64(out, wal_end);
  put_i64(out, server_time_us);
  out.append(payload);
  return out;
}

std::string encode_primary_keepalive(const PrimaryKeepalive& keepalive) {
  std::string out;
  out.reserve(kPrimaryKeepaliveSize);
  out.push_back(kPrimaryKeepaliveTag);
  put_u64(out, keepalive.wal_end);
  put_i64(out, keepalive.server_time_us);
  put_u8(out, keepalive.reply_requested ? 1 : 0);
  return out;
}

std::string lsn_to_string(Lsn lsn) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%X/%X", static_cast<unsigned>(lsn >> 32),
                static_cast<unsigned>(lsn & 0xFFFFFFFFu));
  return buf;
}

std::optional<Lsn> parse_lsn(std::string_view text) {
  // One "1 to 8 hex digits" component starting at text[pos]; advances pos.
  auto component = [&text](size_t& pos) -> std::optional<uint32_t> {
    uint32_t value = 0;
    const size_t start = pos;
    while (pos < text.size() && pos - start < 9) {
      const char ch = text[pos];
      uint32_t digit;
      if (ch >= '0' && ch <= '9') {
        digit = static_cast<uint32_t>(ch - '0');
      } else if (ch >= 'a' && ch <= 'f') {
        digit = static_cast<uint32_t>(ch - 'a' + 10);
      } else if (ch >= 'A' && ch <= 'F') {
        digit = static_cast<uint32_t>(ch - 'A' + 10);
      } else {
        break;
      }
      value = (value << 4) | digit;
      ++pos;
    }
    const size_t digits = pos - start;
    if (digits < 1 || digits > 8) return std::nullopt;
    return value;
  };
  size_t pos = 0;
  const auto high = component(pos);
  if (!high || pos >= text.size() || text[pos] != '/') return std::nullopt;
  ++pos;
  const auto low = component(pos);
  if (!low || pos != text.size()) return std::nullopt;
  return (static_cast<Lsn>(*high) << 32) | *low;
}

int64_t pg_now_us() {
  const auto since_unix =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch());
  return unix_us_to_pg_us(static_cast<int64_t>(since_unix.count()));
}

}  // namespace tidemark::pg
