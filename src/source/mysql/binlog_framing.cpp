// Binlog framing: the common header, the FORMAT_DESCRIPTION's checksum algorithm, CRC32 verified and
// stripped before any parser sees a body, and the inner events of a transaction payload.
// References: MySQL libbinlogevents binlog_event.h (common header, FDE checksum footer); MariaDB
// sql/log_event.cc (checksum and LOG_EVENT_BINLOG_IN_USE_F).

#include <zlib.h>

#include <algorithm>

#include "source/mysql/binlog_event_parts.hpp"

namespace tidemark::mysql {

namespace detail {

namespace {

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

}  // namespace

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

// Servers from MySQL 5.6.1 and MariaDB 5.3 on end their FORMAT_DESCRIPTION with the checksum algorithm
// byte and a 4-byte checksum, whatever binlog_checksum is.
bool version_has_checksum(std::string_view server_version) {
  const auto v = version_triplet(server_version);
  const unsigned product = (v[0] * 256 + v[1]) * 256 + v[2];
  const bool mariadb = server_version.find("MariaDB") != std::string_view::npos;
  const unsigned threshold = mariadb ? (5u * 256 + 3) * 256 : (5u * 256 + 6) * 256 + 1;
  return product >= threshold;
}

std::string_view fde_server_version(std::string_view body) {
  std::string_view v = body.substr(2, kFdeServerVersionLength);
  const size_t nul = v.find('\0');
  return nul == std::string_view::npos ? v : v.substr(0, nul);
}

}  // namespace detail

using namespace detail;

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

}  // namespace tidemark::mysql
