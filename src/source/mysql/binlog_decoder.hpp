#pragma once
// The one decode front end for binlog events, behind the replication stream (BinlogChangeBuilder) and
// binlog files (BinlogFileReader, tidemark binlog-dump): it tracks the FORMAT_DESCRIPTION (checksum
// algorithm, post-header lengths, MariaDB or MySQL), verifies and strips checksums, decodes each event,
// and decodes the inner events of MySQL 8's TRANSACTION_PAYLOAD under the same format.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "source/mysql/binlog_events.hpp"

namespace tidemark::mysql {

// One decoded event; `raw` views the caller's bytes.
struct EventView {
  RawEvent raw;
  BinlogEvent event;
};

// Why an event could not be decoded. `damaged`: the bytes are not the whole event as written (truncated,
// checksum mismatch), so reading them again may help; otherwise the event itself is malformed, and
// `header` is its header.
struct EventFailure {
  bool damaged = false;
  DecodeError error;
  EventHeader header{};
};

// A decoded event that owns its bytes (files, binlog-dump). `raw()` views into `bytes`.
struct DecodedEvent {
  uint64_t position = 0;
  std::string bytes;           // the whole event as read (checksum included)
  EventHeader header;
  size_t checksum_length = 0;  // bytes of checksum at the end of `bytes` (0 or 4)
  BinlogEvent event;
  RawEvent raw() const {
    return RawEvent{header, std::string_view(bytes).substr(kEventHeaderLength,
                                                          bytes.size() - kEventHeaderLength - checksum_length)};
  }
};

class BinlogDecoder {
 public:
  // The checksum algorithm of events before the first FORMAT_DESCRIPTION (a replication stream's fake
  // ROTATE: the server's binlog_checksum, as negotiated). Files start with their FORMAT_DESCRIPTION.
  void set_checksum(ChecksumAlgorithm checksum) { format_.checksum = checksum; }
  const BinlogFormat& format() const { return format_; }

  // Splits (checksum verified), decodes, and, for a FORMAT_DESCRIPTION, adopts its format.
  std::variant<EventView, EventFailure> decode_view(std::string_view bytes);
  // One inner event of a TRANSACTION_PAYLOAD: no checksum inside; the format stays.
  std::variant<EventView, EventFailure> decode_inner_view(std::string_view bytes) const;

  // The same, keeping the bytes.
  std::variant<DecodedEvent, DecodeError> decode(uint64_t position, std::string bytes);
  std::variant<DecodedEvent, DecodeError> decode_inner(std::string bytes) const;

 private:
  std::variant<EventView, EventFailure> decode_with(std::string_view bytes, ChecksumAlgorithm checksum) const;

  BinlogFormat format_;
};

}  // namespace tidemark::mysql
