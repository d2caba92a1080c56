#pragma once
// The replica side of the binlog protocol over libmariadb's replication API (mariadb_rpl_*): registers
// with a server id, asks for checksummed events and MariaDB GTID events, starts at a GTID state or a
// file/position, and hands out each event's bytes (header + body + checksum) for our own decoder.

#include <mysql.h>
#include <mariadb_rpl.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "source/mysql/binlog_constants.hpp"
#include "source/mysql/binlog_position.hpp"
#include "db/mysql_connection.hpp"

namespace tidemark::mysql {

class BinlogStream {
 public:
  // Heartbeats every `heartbeat_ms` keep an idle stream alive and let the reader look up (stop requests)
  // at least that often; a read that sees nothing for `read_timeout_s` means the server is gone.
  BinlogStream(const SourceConfig& source, uint32_t server_id, unsigned heartbeat_ms = 1000, unsigned read_timeout_s = 30);
  ~BinlogStream();
  BinlogStream(const BinlogStream&) = delete;
  BinlogStream& operator=(const BinlogStream&) = delete;

  enum class Failure { None, Retry, Fatal };

  // Starts the dump at `from`: MariaDB with a GTID state resumes by GTID, otherwise by file and position.
  Failure open(const BinlogPosition& from, std::string& error);
  // The server's binlog_checksum (read by open): the algorithm of the events before the first
  // FORMAT_DESCRIPTION (the stream's artificial ROTATE).
  ChecksumAlgorithm checksum() const { return checksum_; }

  // The next event's bytes, valid until the next call; nullopt with `failure` and `error` set when the
  // stream broke (Retry) or the server refused the position (Fatal: purged).
  std::optional<std::string_view> next(Failure& failure, std::string& error);

 private:
  Failure classify(unsigned code, const std::string& message, std::string& error) const;

  MySqlConnection connection_;
  uint32_t server_id_;
  unsigned heartbeat_ms_;
  MARIADB_RPL* rpl_ = nullptr;
  MARIADB_RPL_EVENT* event_ = nullptr;
  BinlogPosition from_;
  ChecksumAlgorithm checksum_ = ChecksumAlgorithm::Off;
};

}  // namespace tidemark::mysql
