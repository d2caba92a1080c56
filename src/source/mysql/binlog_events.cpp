// Binlog event decoding. Layout references (read, not copied):
//  - MySQL libbinlogevents: binlog_event.h (common header, FDE checksum footer), control_events.cpp
//    (Format_description_event, Rotate_event, Gtid_event, Previous_gtids_event, XA_prepare_event,
//    Transaction_payload_event, Heartbeat_event_v2), statement_events.cpp (Query_event),
//    rows_event.cpp/.h (Table_map_event and its optional metadata, Rows_event v1/v2);
//    sql/rpl_record.cc (partial JSON after images).
//  - MariaDB sql/log_event.cc/.h: Gtid_log_event (flags, XA xid, flags_extra), Gtid_list_log_event,
//    Annotate_rows_log_event, Query_compressed_log_event and Rows_log_event compressed variants
//    (binlog_buf_uncompress: 1 header byte 0x80|alg<<4|lenlen, lenlen bytes of big-endian length, zlib).

#include "source/mysql/binlog_events.hpp"

#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstdio>

namespace tidemark::mysql {

namespace {

constexpr size_t kMaxInflatedSize = size_t{1} << 30;  // 1 GiB: a server's max_allowed_packet ceiling
constexpr size_t kMaxDeflateRatio = 1032;             // zlib's best case (zlib.net, "Technical details")
constexpr size_t kInflateChunk = size_t{64} << 10;    // first output buffer of an inflation; doubled as needed
constexpr uint64_t kMaxColumns = 4096;                // MySQL allows 4096 columns per table

using Result = std::variant<BinlogEvent, DecodeError>;

DecodeError make_error(uint8_t type, size_t offset, std::string message) {
  return DecodeError{type, offset, std::move(message)};
}

std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

EventHeader parse_header(std::string_view bytes) {
  BinlogCursor c(bytes);
  EventHeader h;
  c.read_u32(h.timestamp);
  c.read_u8(h.type);
  c.read_u32(h.server_id);
  c.read_u32(h.event_size);
  c.read_u32(h.next_position);
  c.read_u16(h.flags);
  return h;
}

// "10.11.19-MariaDB-log" -> {10, 11, 19}.
std::array<unsigned, 3> version_triplet(std::string_view v) {
  std::array<unsigned, 3> out{0, 0, 0};
  size_t i = 0;
  for (unsigned& part : out) {
    unsigned n = 0;
    bool any = false;
    while (i < v.size() && v[i] >= '0' && v[i] <= '9' && n < 100000) {
      n = n * 10 + static_cast<unsigned>(v[i] - '0');
      ++i;
      any = true;
    }
    part = n;
    if (!any || i >= v.size() || v[i] != '.') break;
    ++i;
  }
  return out;
}

// Servers from MySQL 5.6.1 and MariaDB 5.3 on end their FORMAT_DESCRIPTION with the checksum algorithm
// byte and a 4-byte checksum, whatever binlog_checksum is.
bool version_has_checksum(std::string_view server_version) {
  const auto v = version_triplet(server_version);
  const unsigned product = (v[0] * 256 + v[1]) * 256 + v[2];
  const bool mariadb = server_version.find("MariaDB") != std::string_view::npos;
  const unsigned threshold = mariadb ? (5u * 256 + 3) * 256 : (5u * 256 + 6) * 256 + 1;
  return product >= threshold;
}

constexpr size_t kFdeServerVersionLength = 50;

std::string_view fde_server_version(std::string_view body) {
  std::string_view v = body.substr(2, kFdeServerVersionLength);
  const size_t nul = v.find('\0');
  return nul == std::string_view::npos ? v : v.substr(0, nul);
}

// Inflates MariaDB's compressed format (binlog_buf_uncompress). On failure, sets `error`.
bool maria_uncompress(std::string_view src, std::string& out, std::string& error) {
  if (src.empty()) {
    error = "compressed data: empty";
    return false;
  }
  const auto first = static_cast<unsigned char>(src[0]);
  if ((first & 0x80) == 0) {
    error = "compressed data: header byte 0x" + hex32(first).substr(8) + " lacks the compression bit";
    return false;
  }
  const unsigned alg = (first & 0x70) >> 4;
  const unsigned lenlen = first & 0x07;
  if (alg != 0) {
    error = "compressed data: unknown algorithm " + std::to_string(alg) + " (only 0 = zlib exists)";
    return false;
  }
  if (lenlen < 1 || lenlen > 4 || src.size() < 1 + lenlen) {
    error = "compressed data: bad length-of-length " + std::to_string(lenlen);
    return false;
  }
  size_t len = 0;
  for (unsigned i = 0; i < lenlen; ++i) len = (len << 8) | static_cast<unsigned char>(src[1 + i]);
  if (len > kMaxInflatedSize) {
    error = "compressed data: uncompressed length " + std::to_string(len) + " is implausible";
    return false;
  }
  std::string_view data = src.substr(1 + lenlen);
  // The length is the writer's claim: a corrupt event could claim a gigabyte from a few bytes. deflate
  // never compresses better than 1032:1, so a larger claim cannot be true; the output grows as the stream
  // inflates instead of being allocated up front.
  if (len / kMaxDeflateRatio > data.size()) {
    error = "compressed data: uncompressed length " + std::to_string(len) + " is impossible for " +
            std::to_string(data.size()) + " bytes of zlib data (deflate compresses at most 1032:1)";
    return false;
  }
  out.clear();
  z_stream zs{};
  if (inflateInit(&zs) != Z_OK) {
    error = "compressed data: zlib initialisation failed";
    return false;
  }
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = 0;
  int rc = Z_OK;
  while (true) {
    if (zs.avail_out == 0 && out.size() < len) {
      const size_t filled = out.size();
      out.resize(std::min(len, std::max(2 * filled, kInflateChunk)));
      zs.next_out = reinterpret_cast<Bytef*>(out.data() + filled);
      zs.avail_out = static_cast<uInt>(out.size() - filled);
    }
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK) break;  // Z_OK: progress was made, so this ends
  }
  const size_t produced = out.size() - zs.avail_out;
  const size_t consumed = data.size() - zs.avail_in;
  inflateEnd(&zs);
  if (rc != Z_STREAM_END) {
    error = "compressed data: zlib stream " +
            std::string(rc == Z_BUF_ERROR ? "is longer than the declared length or truncated" : "is corrupt") +
            " (declared " + std::to_string(len) + " bytes)";
    return false;
  }
  if (produced != len) {
    error = "compressed data: inflated to " + std::to_string(produced) + " bytes, header says " +
            std::to_string(len);
    return false;
  }
  if (consumed != data.size()) {
    error = "compressed data: " + std::to_string(data.size() - consumed) + " bytes after the zlib stream";
    return false;
  }
  return true;
}

// Fails the cursor unless it is at the end.
bool expect_end(BinlogCursor& c, const char* what) {
  if (c.failed()) return false;
  if (!c.at_end()) return c.fail(std::to_string(c.remaining()) + " unexpected bytes after " + what);
  return true;
}

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
// TABLE_MAP

enum OptionalMetadata : uint8_t {
  kSignedness = 1,
  kDefaultCharset = 2,
  kColumnCharset = 3,
  kColumnName = 4,
  kSetStrValue = 5,
  kEnumStrValue = 6,
  kGeometryType = 7,
  kSimplePrimaryKey = 8,
  kPrimaryKeyWithPrefix = 9,
  kEnumAndSetDefaultCharset = 10,
  kEnumAndSetColumnCharset = 11,
  kColumnVisibility = 12,
};

// Reads the type metadata of one column (Table_map_event: m_field_metadata) and resolves
// MYSQL_TYPE_STRING's real type.
bool read_column_meta(BinlogCursor& c, ColumnDef& col) {
  switch (col.type) {
    case ColumnType::Float:
    case ColumnType::Double:
    case ColumnType::Blob:
    case ColumnType::TinyBlob:
    case ColumnType::MediumBlob:
    case ColumnType::LongBlob:
    case ColumnType::Geometry:
    case ColumnType::Json:
    case ColumnType::Vector:
    case ColumnType::Timestamp2:
    case ColumnType::DateTime2:
    case ColumnType::Time2: {
      uint8_t m = 0;
      if (!c.read_u8(m, "column metadata")) return false;
      col.meta = m;
      return true;
    }
    case ColumnType::Varchar:
    case ColumnType::VarString:
    case ColumnType::Bit:
      return c.read_u16(col.meta, "column metadata");
    case ColumnType::NewDecimal: {
      uint8_t precision = 0, scale = 0;
      if (!c.read_u8(precision, "decimal precision") || !c.read_u8(scale, "decimal scale")) return false;
      col.meta = static_cast<uint16_t>(precision << 8 | scale);
      return true;
    }
    case ColumnType::String:
    case ColumnType::Enum:
    case ColumnType::Set: {
      uint8_t b0 = 0, b1 = 0;
      if (!c.read_u8(b0, "column metadata") || !c.read_u8(b1, "column metadata")) return false;
      unsigned real = b0;
      unsigned length = b1;
      if ((b0 & 0x30) != 0x30) {  // CHAR longer than 255 bytes: 2 high length bits hide in the type byte
        length = ((static_cast<unsigned>(b0 & 0x30) ^ 0x30) << 4) | b1;
        real = b0 | 0x30;
      }
      if (real == static_cast<unsigned>(ColumnType::Enum) || real == static_cast<unsigned>(ColumnType::Set)) {
        col.type = static_cast<ColumnType>(real);
        col.meta = b1;  // storage bytes
      } else if (real == static_cast<unsigned>(ColumnType::String)) {
        col.type = ColumnType::String;
        col.meta = static_cast<uint16_t>(length);
      } else {
        return c.fail("CHAR column metadata names real type " + std::to_string(real));
      }
      return true;
    }
    case ColumnType::Decimal:
    case ColumnType::Tiny:
    case ColumnType::Short:
    case ColumnType::Long:
    case ColumnType::Null:
    case ColumnType::Timestamp:
    case ColumnType::LongLong:
    case ColumnType::Int24:
    case ColumnType::Date:
    case ColumnType::Time:
    case ColumnType::DateTime:
    case ColumnType::Year:
    case ColumnType::NewDate:
      col.meta = 0;
      return true;
    case ColumnType::TypedArray:
      break;
  }
  return c.fail("unsupported column type " + std::to_string(static_cast<unsigned>(col.type)));
}

bool is_numeric_column(const ColumnDef& col, bool mariadb) {
  switch (col.type) {
    case ColumnType::Tiny:
    case ColumnType::Short:
    case ColumnType::Int24:
    case ColumnType::Long:
    case ColumnType::LongLong:
    case ColumnType::NewDecimal:
    case ColumnType::Float:
    case ColumnType::Double:
      return true;
    case ColumnType::Year:
      return mariadb;  // MariaDB's Field_year is a Field_tiny (unsigned): it gets a signedness bit
    default:
      return false;
  }
}

bool is_character_column(const ColumnDef& col, bool include_geometry) {
  switch (col.type) {
    case ColumnType::String:  // resolved: not ENUM/SET
    case ColumnType::VarString:
    case ColumnType::Varchar:
    case ColumnType::Blob:
    case ColumnType::TinyBlob:
    case ColumnType::MediumBlob:
    case ColumnType::LongBlob:
      return true;
    case ColumnType::Geometry:
      // Both servers count geometry (a BLOB underneath) as a character column with the binary charset
      // (is_character_type in their log_event.cc; MariaDB 10.11 verified on captured bytes).
      return include_geometry;
    default:
      return false;
  }
}

bool is_enum_or_set_column(const ColumnDef& col) {
  return col.type == ColumnType::Enum || col.type == ColumnType::Set;
}

template <typename Pred>
std::vector<size_t> columns_where(const TableMap& table, Pred pred) {
  std::vector<size_t> out;
  for (size_t i = 0; i < table.columns.size(); ++i)
    if (pred(table.columns[i])) out.push_back(i);
  return out;
}

// MSB-first bitmap with one bit per listed column.
bool read_msb_bitmap(BinlogCursor& c, size_t bits, std::vector<bool>& out, const char* what) {
  std::string_view bytes;
  if (!c.read_bytes((bits + 7) / 8, bytes, what)) return false;
  out.resize(bits);
  for (size_t i = 0; i < bits; ++i) out[i] = (static_cast<unsigned char>(bytes[i / 8]) >> (7 - i % 8)) & 1;
  return expect_end(c, what);
}

bool read_default_charset(BinlogCursor& c, TableMap& table, const std::vector<size_t>& cols, const char* what) {
  uint64_t def = 0;
  if (!c.read_packed(def, what)) return false;
  for (size_t i : cols) table.columns[i].collation = static_cast<uint32_t>(def);
  while (!c.at_end()) {
    uint64_t index = 0, collation = 0;
    c.read_packed(index, what);
    c.read_packed(collation, what);
    if (c.failed()) return false;
    if (index >= cols.size()) {
      return c.fail(std::string(what) + ": column index " + std::to_string(index) + " but only " +
                    std::to_string(cols.size()) + " such columns");
    }
    table.columns[cols[index]].collation = static_cast<uint32_t>(collation);
  }
  return true;
}

bool read_column_charsets(BinlogCursor& c, std::vector<uint32_t>& out, const char* what) {
  while (!c.at_end()) {
    uint64_t collation = 0;
    if (!c.read_packed(collation, what)) return false;
    out.push_back(static_cast<uint32_t>(collation));
  }
  return true;
}

bool read_str_values(BinlogCursor& c, TableMap& table, const std::vector<size_t>& cols, const char* what) {
  size_t n = 0;
  while (!c.at_end()) {
    uint64_t count = 0;
    if (!c.read_packed(count, what)) return false;
    if (n >= cols.size()) return c.fail(std::string(what) + ": more value lists than columns of that type (" + std::to_string(cols.size()) + ")");
    if (count > c.remaining()) return c.fail(std::string(what) + ": " + std::to_string(count) + " values cannot fit");
    auto& values = table.columns[cols[n]].enum_values;
    values.clear();
    for (uint64_t k = 0; k < count; ++k) {
      std::string_view v;
      if (!c.read_packed_prefixed(v, what)) return false;
      values.emplace_back(v);
    }
    ++n;
  }
  if (n != cols.size()) {
    return c.fail(std::string(what) + ": " + std::to_string(n) + " value lists for " + std::to_string(cols.size()) + " columns");
  }
  return true;
}

bool apply_optional_metadata(BinlogCursor& c, uint8_t type, TableMap& table, bool mariadb) {
  const size_t n = table.columns.size();
  switch (type) {
    case kSignedness: {
      const auto cols = columns_where(table, [&](const ColumnDef& col) { return is_numeric_column(col, mariadb); });
      std::vector<bool> bits;
      if (!read_msb_bitmap(c, cols.size(), bits, "SIGNEDNESS")) return false;
      for (size_t k = 0; k < cols.size(); ++k) table.columns[cols[k]].is_unsigned = bits[k];
      return true;
    }
    case kDefaultCharset:
      return read_default_charset(c, table, columns_where(table, [](const ColumnDef& col) {
        return is_character_column(col, true);
      }), "DEFAULT_CHARSET");
    case kColumnCharset: {
      std::vector<uint32_t> collations;
      if (!read_column_charsets(c, collations, "COLUMN_CHARSET")) return false;
      auto cols = columns_where(table, [](const ColumnDef& col) { return is_character_column(col, true); });
      if (collations.size() != cols.size()) {
        // A writer that leaves geometry columns out, before giving up.
        auto other = columns_where(table, [](const ColumnDef& col) { return is_character_column(col, false); });
        if (collations.size() != other.size()) {
          return c.fail("COLUMN_CHARSET lists " + std::to_string(collations.size()) + " collations for " +
                        std::to_string(cols.size()) + " character columns");
        }
        cols = std::move(other);
      }
      for (size_t k = 0; k < cols.size(); ++k) table.columns[cols[k]].collation = collations[k];
      return true;
    }
    case kColumnName: {
      size_t k = 0;
      while (!c.at_end()) {
        std::string_view name;
        if (!c.read_packed_prefixed(name, "COLUMN_NAME")) return false;
        if (k >= n) return c.fail("COLUMN_NAME lists more names than the " + std::to_string(n) + " columns");
        table.columns[k++].name = std::string(name);
      }
      if (k != n) return c.fail("COLUMN_NAME lists " + std::to_string(k) + " names for " + std::to_string(n) + " columns");
      table.has_column_names = true;
      return true;
    }
    case kSetStrValue:
      return read_str_values(c, table, columns_where(table, [](const ColumnDef& col) { return col.type == ColumnType::Set; }),
                             "SET_STR_VALUE");
    case kEnumStrValue:
      return read_str_values(c, table, columns_where(table, [](const ColumnDef& col) { return col.type == ColumnType::Enum; }),
                             "ENUM_STR_VALUE");
    case kGeometryType: {
      const auto cols = columns_where(table, [](const ColumnDef& col) { return col.type == ColumnType::Geometry; });
      size_t k = 0;
      while (!c.at_end()) {
        uint64_t g = 0;
        if (!c.read_packed(g, "GEOMETRY_TYPE")) return false;
        if (k >= cols.size()) return c.fail("GEOMETRY_TYPE lists more types than the " + std::to_string(cols.size()) + " geometry columns");
        table.columns[cols[k++]].geometry_type = static_cast<uint32_t>(g);
      }
      if (k != cols.size()) return c.fail("GEOMETRY_TYPE lists " + std::to_string(k) + " types for " + std::to_string(cols.size()) + " geometry columns");
      return true;
    }
    case kSimplePrimaryKey:
    case kPrimaryKeyWithPrefix: {
      const char* what = type == kSimplePrimaryKey ? "SIMPLE_PRIMARY_KEY" : "PRIMARY_KEY_WITH_PREFIX";
      table.primary_key.clear();
      table.primary_key_prefixes.clear();
      while (!c.at_end()) {
        uint64_t index = 0, prefix = 0;
        c.read_packed(index, what);
        if (type == kPrimaryKeyWithPrefix) c.read_packed(prefix, what);
        if (c.failed()) return false;
        if (index >= n) return c.fail(std::string(what) + ": column index " + std::to_string(index) + " of " + std::to_string(n) + " columns");
        table.primary_key.push_back(static_cast<size_t>(index));
        table.primary_key_prefixes.push_back(static_cast<uint32_t>(prefix));
      }
      table.has_primary_key_metadata = true;
      return true;
    }
    case kEnumAndSetDefaultCharset:
      return read_default_charset(c, table, columns_where(table, is_enum_or_set_column), "ENUM_AND_SET_DEFAULT_CHARSET");
    case kEnumAndSetColumnCharset: {
      std::vector<uint32_t> collations;
      if (!read_column_charsets(c, collations, "ENUM_AND_SET_COLUMN_CHARSET")) return false;
      const auto cols = columns_where(table, is_enum_or_set_column);
      if (collations.size() != cols.size()) {
        return c.fail("ENUM_AND_SET_COLUMN_CHARSET lists " + std::to_string(collations.size()) + " collations for " +
                      std::to_string(cols.size()) + " ENUM/SET columns");
      }
      for (size_t k = 0; k < cols.size(); ++k) table.columns[cols[k]].collation = collations[k];
      return true;
    }
    case kColumnVisibility: {
      std::vector<bool> bits;
      if (!read_msb_bitmap(c, n, bits, "COLUMN_VISIBILITY")) return false;
      for (size_t k = 0; k < n; ++k) table.columns[k].visible = bits[k];
      return true;
    }
    default:
      c.read_rest();  // a field type of a newer server: optional metadata is TLV so readers can skip it
      return true;
  }
}

bool read_table_id(BinlogCursor& c, uint8_t post_header_length, uint64_t& out) {
  if (post_header_length == 6) {  // MySQL 5.1.0-5.1.15: 4-byte table id
    uint32_t id = 0;
    if (!c.read_u32(id, "table id")) return false;
    out = id;
    return true;
  }
  return c.read_u48(out, "table id");
}

Result decode_table_map(const RawEvent& raw, const BinlogFormat& format) {
  const uint8_t t = raw.header.type;
  BinlogCursor c(raw.body, kEventHeaderLength);
  TableMapEvent e;
  TableMap& table = e.table;
  uint8_t post = format.post_header_length(raw.type());
  if (post == 0) post = 8;
  read_table_id(c, post, table.table_id);
  c.read_u16(table.flags, "flags");
  if (post > 8) c.skip(post - 8u, "post-header extension");
  std::string_view db, name;
  uint8_t nul1 = 1, nul2 = 1;
  c.read_u8_prefixed(db, "database name");
  c.read_u8(nul1, "database name terminator");
  c.read_u8_prefixed(name, "table name");
  c.read_u8(nul2, "table name terminator");
  if (c.failed()) return c.error(t);
  if (nul1 != 0 || nul2 != 0) {
    c.fail("database or table name is not followed by a NUL byte");
    return c.error(t);
  }
  table.database = std::string(db);
  table.table = std::string(name);
  uint64_t n = 0;
  if (!c.read_packed(n, "column count")) return c.error(t);
  if (n == 0 || n > kMaxColumns) {
    c.fail("column count " + std::to_string(n) + " is out of range");
    return c.error(t);
  }
  std::string_view types;
  if (!c.read_bytes(n, types, "column types")) return c.error(t);
  table.columns.resize(n);
  for (size_t i = 0; i < n; ++i) table.columns[i].type = static_cast<ColumnType>(static_cast<uint8_t>(types[i]));
  uint64_t meta_len = 0;
  if (!c.read_packed(meta_len, "metadata length")) return c.error(t);
  const size_t meta_offset = c.offset();
  std::string_view meta;
  if (!c.read_bytes(meta_len, meta, "column metadata")) return c.error(t);
  {
    BinlogCursor m(meta, meta_offset);
    for (size_t i = 0; i < n; ++i) {
      if (!read_column_meta(m, table.columns[i])) {
        m.prefix_failure("column " + std::to_string(i + 1) + " (" +
                         std::string(column_type_name(table.columns[i].type)) + "): ");
        return m.error(t);
      }
    }
    if (!expect_end(m, "the column metadata")) return m.error(t);
  }
  std::string_view nulls;
  if (!c.read_bytes((n + 7) / 8, nulls, "NULL bitmap")) return c.error(t);
  for (size_t i = 0; i < n; ++i) table.columns[i].nullable = (static_cast<unsigned char>(nulls[i / 8]) >> (i % 8)) & 1;
  // Optional metadata (binlog_row_metadata): type, packed length, value.
  while (!c.at_end()) {
    uint8_t type = 0;
    uint64_t len = 0;
    c.read_u8(type, "optional metadata type");
    c.read_packed(len, "optional metadata length");
    if (c.failed()) return c.error(t);
    const size_t value_offset = c.offset();
    std::string_view value;
    if (!c.read_bytes(len, value, "optional metadata value")) return c.error(t);
    BinlogCursor v(value, value_offset);
    if (!apply_optional_metadata(v, type, table, format.mariadb)) {
      v.prefix_failure("optional metadata " + std::to_string(type) + ": ");
      return v.error(t);
    }
  }
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
    ZSTD_DCtx* dctx = ZSTD_createDCtx();
    if (dctx == nullptr) return make_error(t, payload_offset, "zstd: out of memory");
    ZSTD_inBuffer in{payload.data(), payload.size(), 0};
    std::string out;
    size_t rc = 1;
    std::string zerr;
    while (true) {
      const size_t chunk = std::max<size_t>(ZSTD_DStreamOutSize(), 1);
      const size_t old = out.size();
      if (old + chunk > kMaxInflatedSize + chunk) {
        zerr = "decompressed data exceeds the limit";
        break;
      }
      out.resize(old + chunk);
      ZSTD_outBuffer ob{out.data() + old, chunk, 0};
      rc = ZSTD_decompressStream(dctx, &ob, &in);
      out.resize(old + ob.pos);
      if (ZSTD_isError(rc)) {
        zerr = ZSTD_getErrorName(rc);
        break;
      }
      if (rc == 0) break;                             // frame complete
      if (in.pos == in.size && ob.pos < chunk) {  // input exhausted mid-frame
        zerr = "truncated zstd frame";
        break;
      }
      if (e.uncompressed_size != 0 && out.size() > e.uncompressed_size) {
        zerr = "decompressed data exceeds the declared uncompressed size";
        break;
      }
    }
    ZSTD_freeDCtx(dctx);
    if (zerr.empty() && in.pos != in.size) zerr = std::to_string(in.size - in.pos) + " bytes after the zstd frame";
    if (zerr.empty() && e.uncompressed_size != 0 && out.size() != e.uncompressed_size) {
      zerr = "decompressed to " + std::to_string(out.size()) + " bytes, header says " + std::to_string(e.uncompressed_size);
    }
    if (!zerr.empty()) return make_error(t, payload_offset, "zstd payload: " + zerr);
    plain = std::move(out);
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

// -----------------------------------------------------------------------------------------------------

std::string DecodeError::to_string() const {
  return "event " + std::to_string(event_type) + " (" + std::string(event_type_name(event_type)) +
         ") at byte offset " + std::to_string(offset) + ": " + message;
}

uint8_t BinlogFormat::post_header_length(EventType type) const {
  const auto code = static_cast<size_t>(type);
  if (code == 0 || code > post_header_lengths.size()) return 0;
  return post_header_lengths[code - 1];
}

std::optional<ChecksumAlgorithm> peek_format_description_checksum(std::string_view bytes) {
  if (bytes.size() < kEventHeaderLength + 2 + kFdeServerVersionLength) return std::nullopt;
  const EventHeader h = parse_header(bytes);
  if (h.type != static_cast<uint8_t>(EventType::FormatDescription)) return std::nullopt;
  if (h.event_size > bytes.size() || h.event_size < kEventHeaderLength + 2 + kFdeServerVersionLength + 4 + 1) {
    return std::nullopt;
  }
  const std::string_view version = fde_server_version(bytes.substr(kEventHeaderLength));
  if (!version_has_checksum(version)) return ChecksumAlgorithm::Undefined;
  if (h.event_size < kEventHeaderLength + 2 + kFdeServerVersionLength + 4 + 1 + 1 + kChecksumLength) return std::nullopt;
  const auto alg = static_cast<uint8_t>(bytes[h.event_size - kChecksumLength - 1]);
  if (alg == 0) return ChecksumAlgorithm::Off;
  if (alg == 1) return ChecksumAlgorithm::Crc32;
  return std::nullopt;
}

std::variant<RawEvent, DecodeError> split_event(std::string_view bytes, ChecksumAlgorithm checksum) {
  if (bytes.size() < kEventHeaderLength) {
    const uint8_t type = bytes.size() > 4 ? static_cast<uint8_t>(bytes[4]) : 0;
    return make_error(type, bytes.size(), "truncated event header: " + std::to_string(bytes.size()) + " of 19 bytes");
  }
  RawEvent raw;
  raw.header = parse_header(bytes);
  const uint8_t t = raw.header.type;
  if (raw.header.event_size < kEventHeaderLength) {
    return make_error(t, 9, "event size " + std::to_string(raw.header.event_size) + " is smaller than the header");
  }
  if (raw.header.event_size != bytes.size()) {
    return make_error(t, std::min<size_t>(bytes.size(), raw.header.event_size),
                      raw.header.event_size > bytes.size()
                          ? "truncated event: header says " + std::to_string(raw.header.event_size) + " bytes, " +
                                std::to_string(bytes.size()) + " present"
                          : "event size " + std::to_string(raw.header.event_size) + " but " +
                                std::to_string(bytes.size()) + " bytes given");
  }
  ChecksumAlgorithm alg = checksum;
  if (raw.type() == EventType::FormatDescription) {
    const auto fde = peek_format_description_checksum(bytes);
    if (!fde) return make_error(t, kEventHeaderLength, "malformed FORMAT_DESCRIPTION (checksum algorithm unreadable)");
    alg = *fde;
  }
  // An FDE of a checksum-aware server always carries the 4 checksum bytes, verified only under CRC32.
  const bool has_checksum_bytes =
      alg == ChecksumAlgorithm::Crc32 || (raw.type() == EventType::FormatDescription && alg == ChecksumAlgorithm::Off);
  size_t end = bytes.size();
  if (has_checksum_bytes) {
    if (bytes.size() < kEventHeaderLength + kChecksumLength) {
      return make_error(t, bytes.size(), "event too short for its checksum");
    }
    end -= kChecksumLength;
    if (alg == ChecksumAlgorithm::Crc32) {
      BinlogCursor c(bytes.substr(end), end);
      uint32_t stored = 0;
      c.read_u32(stored);
      // A binlog file's FORMAT_DESCRIPTION has LOG_EVENT_BINLOG_IN_USE_F set while the server writes the
      // file; the checksum was computed before the flag was set, so verify with the flag cleared.
      std::string header(bytes.substr(0, kEventHeaderLength));
      if (raw.type() == EventType::FormatDescription) header[17] = static_cast<char>(header[17] & ~0x01);
      uLong crc = crc32(0L, reinterpret_cast<const Bytef*>(header.data()), static_cast<uInt>(header.size()));
      crc = crc32(crc, reinterpret_cast<const Bytef*>(bytes.data() + kEventHeaderLength),
                  static_cast<uInt>(end - kEventHeaderLength));
      const auto computed = static_cast<uint32_t>(crc);
      if (stored != computed) {
        return make_error(t, end, "checksum mismatch: event has CRC32 " + hex32(stored) + ", bytes give " + hex32(computed));
      }
    }
  }
  raw.body = bytes.substr(kEventHeaderLength, end - kEventHeaderLength);
  return raw;
}

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

std::variant<std::vector<std::string>, DecodeError> split_payload_events(std::string_view payload) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < payload.size()) {
    if (payload.size() - pos < kEventHeaderLength) {
      return make_error(0, pos, "truncated inner event header: " + std::to_string(payload.size() - pos) + " bytes left");
    }
    const EventHeader h = parse_header(payload.substr(pos));
    if (h.event_size < kEventHeaderLength || h.event_size > payload.size() - pos) {
      return make_error(0, pos, "inner event " + std::string(event_type_name(h.type)) + " has size " +
                                    std::to_string(h.event_size) + ", " + std::to_string(payload.size() - pos) +
                                    " bytes left");
    }
    // A server never nests payloads; a corrupt one that did would make the change builder, which reads
    // inner events recursively, recurse once per level (a stack overflow for a large event).
    if (h.type == static_cast<uint8_t>(EventType::TransactionPayload)) {
      return make_error(0, pos, "inner event TRANSACTION_PAYLOAD_EVENT: transaction payloads do not nest");
    }
    out.emplace_back(payload.substr(pos, h.event_size));
    pos += h.event_size;
  }
  return out;
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
