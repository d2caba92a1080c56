#pragma once
// What the binlog decoder's files share (binlog_framing.cpp, binlog_events.cpp, table_map_decoder.cpp);
// not for use outside them.

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <variant>

#include "source/mysql/binlog_events.hpp"

namespace tidemark::mysql::detail {

using Result = std::variant<BinlogEvent, DecodeError>;

constexpr uint64_t kMaxColumns = 4096;  // MySQL allows 4096 columns per table
constexpr size_t kFdeServerVersionLength = 50;

inline DecodeError make_error(uint8_t type, size_t offset, std::string message) {
  return DecodeError{type, offset, std::move(message)};
}

inline std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

// Fails the cursor unless it is at the end.
inline bool expect_end(BinlogCursor& c, const char* what) {
  if (c.failed()) return false;
  if (!c.at_end()) return c.fail(std::to_string(c.remaining()) + " unexpected bytes after " + what);
  return true;
}

// The 19-byte common header (the caller checked the length).
EventHeader parse_header(std::string_view bytes);
// The server version in a FORMAT_DESCRIPTION body, and whether that server writes checksums.
std::string_view fde_server_version(std::string_view body);
bool version_has_checksum(std::string_view server_version);

// The table id of TABLE_MAP and rows events: 6 bytes, or 4 under a 6-byte post-header (MySQL 5.1.0-5.1.15).
bool read_table_id(BinlogCursor& c, uint8_t post_header_length, uint64_t& out);
Result decode_table_map(const RawEvent& raw, const BinlogFormat& format);

}  // namespace tidemark::mysql::detail
