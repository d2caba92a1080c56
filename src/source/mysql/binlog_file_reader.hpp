#pragma once
// Reading binlog files through the one decode front end (binlog_decoder.hpp), which the replication
// stream's BinlogChangeBuilder uses too.
//
//   EventSource      yields whole events (header + body + checksum) with their log position.
//   BinlogFileSource reads them from a binlog file.
//   BinlogFileReader a file source + a decoder: the events of a file, one by one, with their positions.

#include <cstdint>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "source/mysql/binlog_decoder.hpp"
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
