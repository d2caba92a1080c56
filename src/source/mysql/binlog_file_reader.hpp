#pragma once
// Reading binlog events from any source through one decode path.
//
//   EventSource      yields whole events (header + body + checksum) with their log position: the file
//                    source below reads a binlog file; the replication stream wraps mariadb_rpl_fetch.
//   BinlogDecoder    the shared decode path: tracks the FORMAT_DESCRIPTION (checksum algorithm, post-header
//                    lengths, MariaDB or MySQL), verifies and strips checksums, decodes each event.
//   BinlogFileReader a file source + a decoder: the events of a file, one by one, with their positions.

#include <cstdint>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "source/mysql/binlog_events.hpp"

namespace tidemark::mysql {

// One event as a source delivers it.
struct SourcedEvent {
  uint64_t position = 0;  // offset of the event's first byte in its binlog file
  std::string bytes;      // the whole event, checksum included
};

struct EndOfEvents {};

// A failure to obtain or decode an event: I/O, bad magic, truncation, checksum, malformed event.
struct BinlogReadError {
  uint64_t position = 0;                    // position of the event (or of the problem, for file errors)
  std::string message;                      // complete, with the position
  std::optional<DecodeError> decode_error;  // when the event's bytes were there but wrong
};

class EventSource {
 public:
  virtual ~EventSource() = default;
  virtual std::variant<SourcedEvent, EndOfEvents, BinlogReadError> next() = 0;
};

// A decoded event. `raw()` views into `bytes`.
struct DecodedEvent {
  uint64_t position = 0;
  std::string bytes;            // the whole event as read (checksum included)
  EventHeader header;
  size_t checksum_length = 0;   // bytes of checksum at the end of `bytes` (0 or 4)
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
  std::variant<DecodedEvent, DecodeError> decode(uint64_t position, std::string bytes);

  // Decodes one inner event of a TRANSACTION_PAYLOAD (no checksum inside; the format stays).
  std::variant<DecodedEvent, DecodeError> decode_inner(std::string bytes) const;

 private:
  BinlogFormat format_;
};

// Reads a binlog file: "\xfebin", then events back to back.
class BinlogFileSource : public EventSource {
 public:
  // Opens the file and checks the magic; a failure is reported by the first next().
  explicit BinlogFileSource(const std::string& path, uint64_t start_position = 4);
  std::variant<SourcedEvent, EndOfEvents, BinlogReadError> next() override;

 private:
  std::string path_;
  std::ifstream in_;
  uint64_t position_ = 0;
  std::optional<BinlogReadError> open_error_;
  bool done_ = false;
};

// The events of a binlog file, decoded. After an error, next() keeps returning EndOfEvents.
class BinlogFileReader {
 public:
  explicit BinlogFileReader(const std::string& path);
  std::variant<DecodedEvent, EndOfEvents, BinlogReadError> next();
  const BinlogFormat& format() const { return decoder_.format(); }

 private:
  BinlogFileSource source_;
  BinlogDecoder decoder_;
  bool failed_ = false;
};

// Events larger than this are refused as corrupt (servers cap a packet at 1 GiB).
inline constexpr uint32_t kMaxEventSize = uint32_t{1} << 30;

}  // namespace tidemark::mysql
