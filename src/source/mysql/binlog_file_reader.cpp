#include "source/mysql/binlog_file_reader.hpp"

#include <cerrno>
#include <cstring>

namespace tidemark::mysql {

BinlogFileSource::BinlogFileSource(const std::string& path, uint64_t start_position)
    : path_(path), in_(path, std::ios::binary) {
  if (!in_) {
    open_error_ = BinlogReadError{0, path + ": cannot open: " + std::strerror(errno), std::nullopt};
    return;
  }
  char magic[4] = {};
  in_.read(magic, 4);
  if (in_.gcount() != 4 || std::string_view(magic, 4) != kBinlogMagic) {
    open_error_ = BinlogReadError{0, path + ": not a binlog file (the first 4 bytes are not \\xfe\"bin\")", std::nullopt};
    return;
  }
  position_ = start_position;
  if (start_position != 4) in_.seekg(static_cast<std::streamoff>(start_position));
}

std::variant<SourcedEvent, EndOfEvents, BinlogReadError> BinlogFileSource::next() {
  if (open_error_) {
    done_ = true;
    auto err = *open_error_;
    open_error_.reset();
    return err;
  }
  if (done_) return EndOfEvents{};
  SourcedEvent ev;
  ev.position = position_;
  ev.bytes.resize(kEventHeaderLength);
  in_.read(ev.bytes.data(), kEventHeaderLength);
  const auto got = static_cast<size_t>(in_.gcount());
  if (got == 0) {
    done_ = true;
    return EndOfEvents{};
  }
  const std::string where = path_ + " at position " + std::to_string(position_);
  if (got < kEventHeaderLength) {
    done_ = true;
    return BinlogReadError{position_, where + ": truncated event header (" + std::to_string(got) +
                                          " of 19 bytes; the file ends mid-event, it may still be being written)",
                           std::nullopt};
  }
  BinlogCursor c(ev.bytes);
  uint32_t size = 0;
  c.skip(9);
  c.read_u32(size);
  const auto type = static_cast<uint8_t>(ev.bytes[4]);
  if (size < kEventHeaderLength || size > kMaxEventSize) {
    done_ = true;
    return BinlogReadError{position_, where + ": event " + std::string(event_type_name(type)) + " has implausible size " +
                                          std::to_string(size) + " (corrupt file?)",
                           std::nullopt};
  }
  ev.bytes.resize(size);
  in_.read(ev.bytes.data() + kEventHeaderLength, size - kEventHeaderLength);
  const auto body_got = static_cast<size_t>(in_.gcount());
  if (body_got < size - kEventHeaderLength) {
    done_ = true;
    return BinlogReadError{position_, where + ": truncated event " + std::string(event_type_name(type)) + ": header says " +
                                          std::to_string(size) + " bytes, the file has " +
                                          std::to_string(kEventHeaderLength + body_got) +
                                          " (the file ends mid-event; it may still be being written)",
                           std::nullopt};
  }
  position_ += size;
  return ev;
}

BinlogFileReader::BinlogFileReader(const std::string& path) : source_(path) {}

std::variant<DecodedEvent, EndOfEvents, BinlogReadError> BinlogFileReader::next() {
  if (failed_) return EndOfEvents{};
  auto sourced = source_.next();
  if (auto* err = std::get_if<BinlogReadError>(&sourced)) {
    failed_ = true;
    return *err;
  }
  if (std::holds_alternative<EndOfEvents>(sourced)) return EndOfEvents{};
  auto& ev = std::get<SourcedEvent>(sourced);
  const uint64_t position = ev.position;
  auto decoded = decoder_.decode(position, std::move(ev.bytes));
  if (auto* err = std::get_if<DecodeError>(&decoded)) {
    failed_ = true;
    return BinlogReadError{position, "position " + std::to_string(position) + ": " + err->to_string(), *err};
  }
  return std::move(std::get<DecodedEvent>(decoded));
}

}  // namespace tidemark::mysql
