// libFuzzer target: a binlog event stream through the decode path the sources use (BinlogDecoder: split,
// checksum, decode_event, FORMAT_DESCRIPTION adoption), then the rows of each rows event with the last
// TABLE_MAP of its table id, and the inner events of TRANSACTION_PAYLOAD as BinlogChangeBuilder reads them.
//
// Input: one flags byte, then events back to back (a binlog file without its magic).
//   bit 0: keep checksums as given; otherwise the harness rewrites the CRC32 of every event that the
//          current format checksums, so mutations reach the decoders instead of the checksum check.
//   bit 1: CRC32 before the first FORMAT_DESCRIPTION (a replication stream), else none.
// Decode errors are expected results; only crashes, sanitizer reports, leaks and timeouts are findings.

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "fuzz_input.hpp"
#include "source/mysql/binlog_events.hpp"
#include "source/mysql/binlog_file_reader.hpp"
#include "source/mysql/row_decoder.hpp"

namespace {

using namespace tidemark::mysql;

constexpr size_t kMaxTables = 16;  // TABLE_MAPs remembered; enough for the harness, bounded for memory

// What split_event verifies: CRC32 over the header (the FDE's in-use flag cleared) and the body.
void fix_crc32(std::string& event) {
  if (event.size() < kEventHeaderLength + kChecksumLength) return;
  std::string header = event.substr(0, kEventHeaderLength);
  if (static_cast<uint8_t>(header[4]) == static_cast<uint8_t>(EventType::FormatDescription)) {
    header[17] = static_cast<char>(header[17] & ~0x01);
  }
  const size_t end = event.size() - kChecksumLength;
  uLong crc = crc32(0L, reinterpret_cast<const Bytef*>(header.data()), static_cast<uInt>(header.size()));
  crc = crc32(crc, reinterpret_cast<const Bytef*>(event.data() + kEventHeaderLength),
              static_cast<uInt>(end - kEventHeaderLength));
  for (size_t i = 0; i < kChecksumLength; ++i) event[end + i] = static_cast<char>((crc >> (8 * i)) & 0xFF);
}

bool checksummed(const std::string& event, const BinlogFormat& format) {
  if (event.size() > 4 && static_cast<uint8_t>(event[4]) == static_cast<uint8_t>(EventType::FormatDescription)) {
    return peek_format_description_checksum(event) == ChecksumAlgorithm::Crc32;
  }
  return format.checksum == ChecksumAlgorithm::Crc32;
}

class Harness {
 public:
  void on_event(const BinlogDecoder& decoder, const BinlogEvent& event) {
    if (const auto* map = std::get_if<TableMapEvent>(&event)) {
      if (tables_.size() >= kMaxTables) tables_.erase(tables_.begin());
      tables_[map->table.table_id] = map->table;
    } else if (const auto* rows = std::get_if<RowsEvent>(&event)) {
      auto table = tables_.find(rows->table_id);
      if (table == tables_.end()) return;
      std::vector<RowChange> changes;
      if (auto error = decode_rows(*rows, table->second, changes)) (void)error->to_string();
    } else if (const auto* payload = std::get_if<TransactionPayloadEvent>(&event)) {
      for (const std::string& inner : payload->events) {
        auto decoded = decoder.decode_inner(inner);
        if (auto* error = std::get_if<DecodeError>(&decoded)) {
          (void)error->to_string();
          continue;
        }
        on_event(decoder, std::get<DecodedEvent>(decoded).event);
      }
    }
  }

 private:
  std::map<uint64_t, TableMap> tables_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tidemark::fuzz::FuzzInput in(data, size);
  const uint8_t flags = in.u8();
  const bool keep_checksums = (flags & 1) != 0;
  BinlogDecoder decoder;
  decoder.set_checksum((flags & 2) != 0 ? ChecksumAlgorithm::Crc32 : ChecksumAlgorithm::Off);
  Harness harness;
  uint64_t position = 4;
  while (!in.at_end()) {
    std::string event(in.bytes(kEventHeaderLength));
    if (event.size() == kEventHeaderLength) {
      const uint32_t declared = static_cast<uint32_t>(static_cast<uint8_t>(event[9])) |
                                static_cast<uint32_t>(static_cast<uint8_t>(event[10])) << 8 |
                                static_cast<uint32_t>(static_cast<uint8_t>(event[11])) << 16 |
                                static_cast<uint32_t>(static_cast<uint8_t>(event[12])) << 24;
      // A size below the header is passed on as is (split_event reports it); the last event may be cut.
      if (declared > kEventHeaderLength) event += in.bytes(declared - kEventHeaderLength);
    }
    if (!keep_checksums && checksummed(event, decoder.format())) fix_crc32(event);
    const size_t length = event.size();
    auto decoded = decoder.decode(position, std::move(event));
    position += length;
    if (auto* error = std::get_if<DecodeError>(&decoded)) {
      (void)error->to_string();
      continue;
    }
    harness.on_event(decoder, std::get<DecodedEvent>(decoded).event);
  }
  return 0;
}
