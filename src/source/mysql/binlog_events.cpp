// Binlog event decoding, one function per event kind (framing: binlog_framing.cpp; TABLE_MAP:
// table_map_decoder.cpp; decompression: binlog_decompress.cpp). Layout references (read, not copied):
//  - MySQL libbinlogevents: binlog_event.h (common header, FDE checksum footer), control_events.cpp
//    (Format_description_event, Rotate_event, Gtid_event, Previous_gtids_event, XA_prepare_event,
//    Transaction_payload_event, Heartbeat_event_v2), statement_events.cpp (Query_event),
//    rows_event.cpp/.h (Table_map_event and its optional metadata, Rows_event v1/v2);
//    sql/rpl_record.cc (partial JSON after images).
//  - MariaDB sql/log_event.cc/.h: Gtid_log_event (flags, XA xid, flags_extra), Gtid_list_log_event,
//    Annotate_rows_log_event, Query_compressed_log_event and Rows_log_event compressed variants
//    (binlog_buf_uncompress: 1 header byte 0x80|alg<<4|lenlen, lenlen bytes of big-endian length, zlib).

#include "source/mysql/binlog_events.hpp"

#include <algorithm>
#include <cstdio>

#include "source/mysql/binlog_decompress.hpp"
#include "source/mysql/binlog_event_parts.hpp"

namespace tidemark::mysql {

namespace {

using namespace detail;

// ---------------------------------------------------------------------------------------------------
// FORMAT_DESCRIPTION

Result decode_format_description(const RawEvent& raw) {
  const uint8_t t = raw.header.type;
  BinlogCursor c(raw.body, kEventHeaderLength);
  FormatDescriptionEvent e;
  std::string_view version;
  c.read_u16(e.binlog_version, "binlog version");
  c.read_bytes(kFdeServerVersionLength, version, "server version");
  c.read_u32(e.create_timestamp, "create timestamp");
  c.read_u8(e.format.common_header_length, "common header length");
  if (c.failed()) return c.error(t);
  if (e.binlog_version != 4) {
    return make_error(t, kEventHeaderLength, "binlog version " + std::to_string(e.binlog_version) +
                                                 " is not supported (only 4)");
  }
  if (e.format.common_header_length != kEventHeaderLength) {
    return make_error(t, kEventHeaderLength + 56, "common header length " +
                                                      std::to_string(e.format.common_header_length) +
                                                      " is not supported (only 19)");
  }
  const size_t nul = version.find('\0');
  e.server_version = std::string(nul == std::string_view::npos ? version : version.substr(0, nul));
  e.format.mariadb = e.server_version.find("MariaDB") != std::string::npos;
  std::string_view rest = c.read_rest();
  if (version_has_checksum(e.server_version)) {
    if (rest.empty()) return make_error(t, c.offset(), "missing checksum algorithm byte");
    const auto alg = static_cast<uint8_t>(rest.back());
    rest.remove_suffix(1);
    if (alg == 0) {
      e.format.checksum = ChecksumAlgorithm::Off;
    } else if (alg == 1) {
      e.format.checksum = ChecksumAlgorithm::Crc32;
    } else {
      return make_error(t, kEventHeaderLength + raw.body.size() - 1,
                        "unknown checksum algorithm " + std::to_string(alg));
    }
  } else {
    e.format.checksum = ChecksumAlgorithm::Undefined;
  }
  e.format.post_header_lengths.assign(rest.begin(), rest.end());
  return BinlogEvent{std::move(e)};
}

// ---------------------------------------------------------------------------------------------------

Result decode_rotate(const RawEvent& raw) {
  const uint8_t t = raw.header.type;
  BinlogCursor c(raw.body, kEventHeaderLength);
  RotateEvent e;
  c.read_u64(e.position, "position");
  if (c.failed()) return c.error(t);
  e.next_file = std::string(c.read_rest());
  if (e.next_file.empty()) return make_error(t, c.offset(), "empty next file name");
  return BinlogEvent{std::move(e)};
}

bool read_xa_xid_short(BinlogCursor& c, XaXid& xid) {
  // MariaDB Gtid_log_event: formatID 4, gtrid_length 1, bqual_length 1, data.
  uint8_t gl = 0, bl = 0;
  std::string_view data;
  c.read_u32(xid.format_id, "XA format id");
  c.read_u8(gl, "XA gtrid length");
  c.read_u8(bl, "XA bqual length");
  if (c.failed()) return false;
  if (gl > 64 || bl > 64) return c.fail("XA xid lengths " + std::to_string(gl) + "/" + std::to_string(bl) + " exceed 64");
  if (!c.read_bytes(size_t{gl} + bl, data, "XA xid data")) return false;
  xid.gtrid = std::string(data.substr(0, gl));
  xid.bqual = std::string(data.substr(gl));
  return true;
}

Result decode_maria_gtid(const RawEvent& raw) {
  const uint8_t t = raw.header.type;
  constexpr size_t kGtidHeaderLength = 19;  // GTID_HEADER_LEN: the body is zero-padded to at least this
  BinlogCursor c(raw.body, kEventHeaderLength);
  MariaGtidEvent e;
  e.server_id = raw.header.server_id;
  c.read_u64(e.sequence, "sequence number");
  c.read_u32(e.domain_id, "domain id");
  c.read_u8(e.flags, "flags");
  if (c.failed()) return c.error(t);
  if (e.flags & MariaGtidEvent::kGroupCommitId) {
    uint64_t id = 0;
    if (!c.read_u64(id, "commit id")) return c.error(t);
    e.commit_id = id;
  }
  if (e.flags & (MariaGtidEvent::kPreparedXa | MariaGtidEvent::kCompletedXa)) {
    XaXid xid;
    if (!read_xa_xid_short(c, xid)) return c.error(t);
    e.xid = std::move(xid);
  }
  if (!c.at_end()) {
    c.read_u8(e.flags_extra, "extra flags");
    if (e.flags_extra & MariaGtidEvent::kExtraMultiEngine) {
      uint8_t n = 0;
      if (c.read_u8(n, "extra engines")) e.extra_engines = n;
    }
    if (e.flags_extra & (MariaGtidEvent::kExtraCommitAlter | MariaGtidEvent::kExtraRollbackAlter)) {
      uint64_t seq = 0;
      if (c.read_u64(seq, "start alter sequence number")) e.start_alter_sequence = seq;
    }
    if (e.flags_extra & MariaGtidEvent::kExtraThreadId) {
      uint32_t id = 0;
      if (c.read_u32(id, "thread id")) e.thread_id = id;
    }
    if (c.failed()) return c.error(t);
  }
  const size_t used = raw.body.size() - c.remaining();
  constexpr uint8_t kKnownExtra = 0x1f;
  if ((e.flags_extra & ~kKnownExtra) != 0) {
    c.read_rest();  // flags_extra bits of a newer server: its fields follow, skipped (extension area)
  } else if (used < kGtidHeaderLength) {
    // Zero padding up to GTID_HEADER_LEN.
    if (raw.body.size() != kGtidHeaderLength) {
      return make_error(t, kEventHeaderLength + used,
                        "body is " + std::to_string(raw.body.size()) + " bytes; a GTID body shorter than 19 "
                        "bytes of fields is padded to exactly 19");
    }
    std::string_view pad = c.read_rest();
    if (pad.find_first_not_of('\0') != std::string_view::npos) {
      return make_error(t, kEventHeaderLength + used, "non-zero bytes in the padding after the GTID fields");
    }
  } else if (!expect_end(c, "the GTID fields")) {
    return c.error(t);
  }
  return BinlogEvent{std::move(e)};
}

Result decode_maria_gtid_list(const RawEvent& raw) {
  const uint8_t t = raw.header.type;
  BinlogCursor c(raw.body, kEventHeaderLength);
  uint32_t count_and_flags = 0;
  if (!c.read_u32(count_and_flags, "GTID count")) return c.error(t);
  const uint32_t count = count_and_flags & 0x0fffffff;  // the top 4 bits are flags
  // MariaDB may pad the list (a fresh server's first binlog has 0 GTIDs followed by 2 zero bytes).
  if (size_t{count} * 16 > c.remaining()) {
    return make_error(t, kEventHeaderLength, "GTID list says " + std::to_string(count) + " GTIDs (" +
                                                 std::to_string(size_t{count} * 16) + " bytes), body has " +
                                                 std::to_string(c.remaining()) + " bytes after the count");
  }
  MariaGtidListEvent e;
  e.gtids.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    MariaGtid g;
    c.read_u32(g.domain_id, "domain id");
    c.read_u32(g.server_id, "server id");
    c.read_u64(g.sequence, "sequence number");
    e.gtids.push_back(g);
  }
  if (c.failed()) return c.error(t);
  return BinlogEvent{std::move(e)};
}

// ---------------------------------------------------------------------------------------------------
// MySQL GTIDs

void append_uuid_text(std::string& out, const std::array<uint8_t, 16>& sid) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    out.push_back(kHex[sid[i] >> 4]);
    out.push_back(kHex[sid[i] & 0x0f]);
  }
}

Result decode_mysql_gtid(const RawEvent& raw) {
  const uint8_t t = raw.header.type;
  BinlogCursor c(raw.body, kEventHeaderLength);
  MysqlGtidEvent e;
  e.anonymous = raw.type() == EventType::MysqlAnonymousGtid;
  std::string_view sid;
  uint64_t gno = 0;
  c.read_u8(e.flags, "flags");
  c.read_bytes(16, sid, "source uuid");
  c.read_u64(gno, "gno");
  if (c.failed()) return c.error(t);
  std::copy(sid.begin(), sid.end(), e.sid.begin());
  e.gno = gno;
  if (!e.anonymous && (gno == 0 || gno >= (uint64_t{1} << 63))) {
    return make_error(t, kEventHeaderLength + 17, "gno " + std::to_string(gno) + " is out of range");
  }
  // Logical timestamps (5.7+).
  if (!c.at_end()) {
    uint8_t typecode = 0;
    uint64_t last = 0, seq = 0;
    c.read_u8(typecode, "logical timestamp typecode");
    if (c.failed()) return c.error(t);
    if (typecode != 2) return make_error(t, c.offset() - 1, "logical timestamp typecode " + std::to_string(typecode) + " (expected 2)");
    c.read_u64(last, "last_committed");
    c.read_u64(seq, "sequence_number");
    if (c.failed()) return c.error(t);
    e.last_committed = static_cast<int64_t>(last);
    e.sequence_number = static_cast<int64_t>(seq);
  }
  // Commit timestamps (8.0.1+): 7 bytes; the top bit of the 56 says the original one follows.
  if (!c.at_end()) {
    uint64_t ts = 0;
    if (!c.read_uint(7, ts, "immediate commit timestamp")) return c.error(t);
    constexpr uint64_t kOriginalFollows = uint64_t{1} << 55;
    if (ts & kOriginalFollows) {
      ts &= ~kOriginalFollows;
      uint64_t orig = 0;
      if (!c.read_uint(7, orig, "original commit timestamp")) return c.error(t);
      e.original_commit_timestamp_us = orig;
    } else {
      e.original_commit_timestamp_us = ts;
    }
    e.immediate_commit_timestamp_us = ts;
  }
  if (!c.at_end()) {
    uint64_t len = 0;
    if (!c.read_packed(len, "transaction length")) return c.error(t);
    e.transaction_length = len;
  }
  if (!c.at_end()) {
    uint32_t v = 0;
    if (!c.read_u32(v, "immediate server version")) return c.error(t);
    constexpr uint32_t kOriginalFollows = uint32_t{1} << 31;
    if (v & kOriginalFollows) {
      v &= ~kOriginalFollows;
      uint32_t orig = 0;
      if (!c.read_u32(orig, "original server version")) return c.error(t);
      e.original_server_version = orig;
    } else {
      e.original_server_version = v;
    }
    e.immediate_server_version = v;
  }
  if (c.remaining() >= 8) {
    uint64_t ticket = 0;
    c.read_u64(ticket, "commit group ticket");
    e.commit_group_ticket = ticket;
  }
  c.read_rest();  // Gtid_event is extensible: fields of newer servers follow, each optional (skipped)
  return BinlogEvent{e};
}

Result decode_previous_gtids(const RawEvent& raw) {
  const uint8_t t = raw.header.type;
  BinlogCursor c(raw.body, kEventHeaderLength);
  uint64_t n_sids = 0;
  if (!c.read_u64(n_sids, "sid count")) return c.error(t);
  if ((n_sids >> 56) != 0) {
    return make_error(t, kEventHeaderLength, "GTID set format " + std::to_string(n_sids >> 56) +
                                                 " (tagged GTIDs, MySQL 8.3+) is not supported");
  }
  if (n_sids > c.remaining() / 24) {
    return make_error(t, kEventHeaderLength, "sid count " + std::to_string(n_sids) + " does not fit in " +
                                                 std::to_string(c.remaining()) + " bytes");
  }
  MysqlPreviousGtidsEvent e;
  for (uint64_t i = 0; i < n_sids; ++i) {
    std::string_view sid_bytes;
    uint64_t n_intervals = 0;
    c.read_bytes(16, sid_bytes, "sid");
    c.read_u64(n_intervals, "interval count");
    if (c.failed()) return c.error(t);
    if (n_intervals > c.remaining() / 16) {
      c.fail("interval count " + std::to_string(n_intervals) + " does not fit in " + std::to_string(c.remaining()) + " bytes");
      return c.error(t);
    }
    std::array<uint8_t, 16> sid{};
    std::copy(sid_bytes.begin(), sid_bytes.end(), sid.begin());
    if (i > 0) e.gtid_set.push_back(',');
    append_uuid_text(e.gtid_set, sid);
    for (uint64_t k = 0; k < n_intervals; ++k) {
      uint64_t start = 0, end = 0;
      c.read_u64(start, "interval start");
      c.read_u64(end, "interval end");
      if (c.failed()) return c.error(t);
      if (start < 1 || end <= start) {
        return make_error(t, c.offset() - 16, "bad interval [" + std::to_string(start) + ", " + std::to_string(end) + ")");
      }
      e.gtid_set += ':' + std::to_string(start);
      if (end - 1 != start) e.gtid_set += '-' + std::to_string(end - 1);
    }
  }
  if (!expect_end(c, "the GTID set")) return c.error(t);
  return BinlogEvent{std::move(e)};
}

// ---------------------------------------------------------------------------------------------------

Result decode_query(const RawEvent& raw, const BinlogFormat& format) {
  const uint8_t t = raw.header.type;
  BinlogCursor c(raw.body, kEventHeaderLength);
  QueryEvent e;
  uint8_t db_len = 0;
  uint16_t status_len = 0;
  c.read_u32(e.thread_id, "thread id");
  c.read_u32(e.exec_time, "execution time");
  c.read_u8(db_len, "database name length");
  c.read_u16(e.error_code, "error code");
  c.read_u16(status_len, "status variables length");
  const uint8_t post = format.post_header_length(raw.type());
  if (post > 13) c.skip(post - 13u, "post-header extension");
  c.skip(status_len, "status variables");
  std::string_view db;
  uint8_t nul = 1;
  c.read_bytes(db_len, db, "database name");
  c.read_u8(nul, "database name terminator");
  if (c.failed()) return c.error(t);
  if (nul != 0) {
    c.fail("database name is not followed by a NUL byte");
    return c.error(t);
  }
  e.database = std::string(db);
  const size_t query_offset = c.offset();
  std::string_view query = c.read_rest();
  if (raw.type() == EventType::QueryCompressed) {
    std::string error;
    if (!maria_uncompress(query, e.query, error)) return make_error(t, query_offset, "query: " + error);
  } else {
    e.query = std::string(query);
  }
  return BinlogEvent{std::move(e)};
}

Result decode_xid(const RawEvent& raw) {
  const uint8_t t = raw.header.type;
  BinlogCursor c(raw.body, kEventHeaderLength);
  XidEvent e;
  c.read_u64(e.xid, "xid");
  if (!expect_end(c, "the xid")) return c.error(t);
  return BinlogEvent{e};
}

Result decode_xa_prepare(const RawEvent& raw) {
  const uint8_t t = raw.header.type;
  BinlogCursor c(raw.body, kEventHeaderLength);
  XaPrepareEvent e;
  uint8_t one_phase = 0;
  uint32_t gl = 0, bl = 0;
  c.read_u8(one_phase, "one phase flag");
  c.read_u32(e.xid.format_id, "XA format id");
  c.read_u32(gl, "XA gtrid length");
  c.read_u32(bl, "XA bqual length");
  if (c.failed()) return c.error(t);
  if (gl > 64 || bl > 64) {
    c.fail("XA xid lengths " + std::to_string(gl) + "/" + std::to_string(bl) + " exceed 64");
    return c.error(t);
  }
  std::string_view data;
  c.read_bytes(size_t{gl} + bl, data, "XA xid data");
  if (!expect_end(c, "the XA xid")) return c.error(t);
  e.one_phase = one_phase != 0;
  e.xid.gtrid = std::string(data.substr(0, gl));
  e.xid.bqual = std::string(data.substr(gl));
  return BinlogEvent{std::move(e)};
}

// ---------------------------------------------------------------------------------------------------
// Rows events

struct RowsShape {
  RowsKind kind;
  bool v2;
  bool compressed;
};

std::optional<RowsShape> rows_shape(EventType type) {
  switch (type) {
    case EventType::WriteRowsV1: return RowsShape{RowsKind::Write, false, false};
    case EventType::UpdateRowsV1: return RowsShape{RowsKind::Update, false, false};
    case EventType::DeleteRowsV1: return RowsShape{RowsKind::Delete, false, false};
    case EventType::WriteRowsV2: return RowsShape{RowsKind::Write, true, false};
    case EventType::UpdateRowsV2: return RowsShape{RowsKind::Update, true, false};
    case EventType::DeleteRowsV2: return RowsShape{RowsKind::Delete, true, false};
    case EventType::PartialUpdateRows: return RowsShape{RowsKind::PartialUpdate, true, false};
    case EventType::WriteRowsCompressedV1: return RowsShape{RowsKind::Write, false, true};
    case EventType::UpdateRowsCompressedV1: return RowsShape{RowsKind::Update, false, true};
    case EventType::DeleteRowsCompressedV1: return RowsShape{RowsKind::Delete, false, true};
    case EventType::WriteRowsCompressed: return RowsShape{RowsKind::Write, true, true};
    case EventType::UpdateRowsCompressed: return RowsShape{RowsKind::Update, true, true};
    case EventType::DeleteRowsCompressed: return RowsShape{RowsKind::Delete, true, true};
    default: return std::nullopt;
  }
}

Result decode_rows_event(const RawEvent& raw, const BinlogFormat& format, RowsShape shape) {
  const uint8_t t = raw.header.type;
  BinlogCursor c(raw.body, kEventHeaderLength);
  RowsEvent e;
  e.event_type = t;
  e.kind = shape.kind;
  e.compressed = shape.compressed;
  e.after_image_has_value_options = shape.kind == RowsKind::PartialUpdate;
  uint8_t post = format.post_header_length(raw.type());
  const uint8_t fixed = shape.v2 ? 10 : 8;
  if (post == 0) post = fixed;
  read_table_id(c, post, e.table_id);
  c.read_u16(e.flags, "flags");
  if (shape.v2) {
    uint16_t var_len = 0;
    if (!c.read_u16(var_len, "extra data length")) return c.error(t);
    if (var_len < 2) {
      c.fail("extra data length " + std::to_string(var_len) + " is less than its own 2 bytes");
      return c.error(t);
    }
    std::string_view extra;
    c.read_bytes(var_len - 2u, extra, "extra data");
    e.extra_data = std::string(extra);
  }
  if (post > fixed) c.skip(post - fixed, "post-header extension");
  if (c.failed()) return c.error(t);
  if (!c.read_packed(e.column_count, "column count")) return c.error(t);
  if (e.column_count == 0 || e.column_count > kMaxColumns) {
    c.fail("column count " + std::to_string(e.column_count) + " is out of range");
    return c.error(t);
  }
  const size_t bitmap_len = (e.column_count + 7) / 8;
  std::string_view before, after;
  c.read_bytes(bitmap_len, before, "column bitmap");
  if (shape.kind == RowsKind::Update || shape.kind == RowsKind::PartialUpdate) {
    c.read_bytes(bitmap_len, after, "after-image column bitmap");
  }
  if (c.failed()) return c.error(t);
  e.before_columns = std::string(before);
  e.after_columns = std::string(after);
  const size_t rows_offset = c.offset();
  std::string_view rows = c.read_rest();
  if (shape.compressed) {
    std::string error;
    if (!maria_uncompress(rows, e.rows, error)) return make_error(t, rows_offset, "rows: " + error);
    e.rows_offset = 0;
  } else {
    e.rows = std::string(rows);
    e.rows_offset = rows_offset;
  }
  return BinlogEvent{std::move(e)};
}

// ---------------------------------------------------------------------------------------------------

Result decode_heartbeat_v2(const RawEvent& raw) {
  // Heartbeat_event_v2: TLV fields (type, length: packed integers), ended by type 0.
  const uint8_t t = raw.header.type;
  BinlogCursor c(raw.body, kEventHeaderLength);
  HeartbeatEvent e;
  while (true) {
    uint64_t type = 0, len = 0;
    if (!c.read_packed(type, "field type")) return c.error(t);
    if (type == 0) break;
    if (!c.read_packed(len, "field length")) return c.error(t);
    const size_t value_offset = c.offset();
    std::string_view value;
    if (!c.read_bytes(len, value, "field value")) return c.error(t);
    if (type == 1) {
      e.file = std::string(value);
    } else if (type == 2) {
      BinlogCursor v(value, value_offset);
      uint64_t pos = 0;
      v.read_packed(pos, "log position");
      if (!expect_end(v, "the log position")) return v.error(t);
      e.position = pos;
    }
  }
  if (!expect_end(c, "the end mark")) return c.error(t);
  return BinlogEvent{std::move(e)};
}

Result decode_transaction_payload(const RawEvent& raw) {
  // Transaction_payload_event: header fields (type, length, value: packed integers) ended by type 0,
  // then the payload.
  const uint8_t t = raw.header.type;
  BinlogCursor c(raw.body, kEventHeaderLength);
  TransactionPayloadEvent e;
  bool have_size = false, have_compression = false;
  uint64_t compression = 0;
  while (true) {
    uint64_t type = 0, len = 0;
    if (!c.read_packed(type, "field type")) return c.error(t);
    if (type == 0) break;
    if (!c.read_packed(len, "field length")) return c.error(t);
    const size_t value_offset = c.offset();
    std::string_view value;
    if (!c.read_bytes(len, value, "field value")) return c.error(t);
    if (type >= 1 && type <= 3) {
      BinlogCursor v(value, value_offset);
      uint64_t x = 0;
      v.read_packed(x, type == 1 ? "payload size" : type == 2 ? "compression type" : "uncompressed size");
      if (!expect_end(v, "the field value")) return v.error(t);
      if (type == 1) {
        e.payload_size = x;
        have_size = true;
      } else if (type == 2) {
        compression = x;
        have_compression = true;
      } else {
        e.uncompressed_size = x;
      }
    }
  }
  if (!have_size || !have_compression) {
    c.fail(std::string("missing ") + (have_size ? "compression type" : "payload size") + " field");
    return c.error(t);
  }
  if (compression != 0 && compression != 255) {
    c.fail("unknown compression type " + std::to_string(compression));
    return c.error(t);
  }
  e.compression = static_cast<uint8_t>(compression);
  const size_t payload_offset = c.offset();
  std::string_view payload = c.read_rest();
  if (payload.size() != e.payload_size) {
    return make_error(t, payload_offset, "payload is " + std::to_string(payload.size()) + " bytes, header says " +
                                             std::to_string(e.payload_size));
  }
  std::string plain;
  if (compression == 255) {
    plain = std::string(payload);
  } else {
    if (e.uncompressed_size > kMaxInflatedSize) {
      return make_error(t, payload_offset, "uncompressed size " + std::to_string(e.uncompressed_size) + " is implausible");
    }
    std::string zerr;
    if (!zstd_decompress(payload, e.uncompressed_size, plain, zerr)) return make_error(t, payload_offset, "zstd payload: " + zerr);
  }
  auto split = split_payload_events(plain);
  if (auto* err = std::get_if<DecodeError>(&split)) {
    err->event_type = t;
    err->message = "payload (uncompressed) byte " + std::to_string(err->offset) + ": " + err->message;
    err->offset = payload_offset;
    return *err;
  }
  e.events = std::move(std::get<std::vector<std::string>>(split));
  if (e.uncompressed_size == 0) e.uncompressed_size = plain.size();
  return BinlogEvent{std::move(e)};
}

}  // namespace

std::variant<BinlogEvent, DecodeError> decode_event(const RawEvent& raw, const BinlogFormat& format) {
  const EventType type = raw.type();
  if (auto shape = rows_shape(type)) return decode_rows_event(raw, format, *shape);
  switch (type) {
    case EventType::FormatDescription: return decode_format_description(raw);
    case EventType::Rotate: return decode_rotate(raw);
    case EventType::MariaGtid: return decode_maria_gtid(raw);
    case EventType::MariaGtidList: return decode_maria_gtid_list(raw);
    case EventType::MysqlGtid:
    case EventType::MysqlAnonymousGtid: return decode_mysql_gtid(raw);
    case EventType::MysqlPreviousGtids: return decode_previous_gtids(raw);
    case EventType::Query:
    case EventType::QueryCompressed: return decode_query(raw, format);
    case EventType::Xid: return decode_xid(raw);
    case EventType::XaPrepare: return decode_xa_prepare(raw);
    case EventType::TableMap: return decode_table_map(raw, format);
    case EventType::Heartbeat: return BinlogEvent{HeartbeatEvent{std::string(raw.body), std::nullopt}};
    case EventType::HeartbeatV2: return decode_heartbeat_v2(raw);
    case EventType::AnnotateRows: return BinlogEvent{AnnotateRowsEvent{std::string(raw.body)}};
    case EventType::RowsQuery: {
      // Rows_query_log_event: a 1-byte length (the statement truncated to 255, unused), then the statement.
      if (raw.body.empty()) return make_error(raw.header.type, kEventHeaderLength, "empty ROWS_QUERY event");
      return BinlogEvent{AnnotateRowsEvent{std::string(raw.body.substr(1))}};
    }
    case EventType::TransactionPayload: return decode_transaction_payload(raw);
    default: return BinlogEvent{IgnoredEvent{}};
  }
}

std::string format_mysql_gtid(const std::array<uint8_t, 16>& sid, uint64_t gno) {
  std::string out;
  append_uuid_text(out, sid);
  out += ':' + std::to_string(gno);
  return out;
}

bool read_partial_update_header(BinlogCursor& cursor, const TableMap& table, PartialUpdateHeader& out) {
  out = PartialUpdateHeader{};
  if (!cursor.read_packed(out.value_options, "value_options")) return false;
  if (out.value_options > kPartialJsonUpdates) {
    return cursor.fail("value_options " + std::to_string(out.value_options) + " has unknown bits");
  }
  if ((out.value_options & kPartialJsonUpdates) == 0) return true;
  std::vector<size_t> json_columns;
  for (size_t i = 0; i < table.columns.size(); ++i)
    if (table.columns[i].type == ColumnType::Json) json_columns.push_back(i);
  std::string_view bits;
  if (!cursor.read_bytes((json_columns.size() + 7) / 8, bits, "partial JSON bitmap")) return false;
  out.partial_json.assign(table.columns.size(), false);
  for (size_t k = 0; k < json_columns.size(); ++k)
    out.partial_json[json_columns[k]] = (static_cast<unsigned char>(bits[k / 8]) >> (k % 8)) & 1;
  return true;
}


}  // namespace tidemark::mysql
