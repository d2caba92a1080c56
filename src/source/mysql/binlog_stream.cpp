#include "source/mysql/binlog_stream.hpp"

#include <cstring>
#include <vector>

namespace tidemark::mysql {

namespace {
constexpr unsigned kErrorReadingBinlog = 1236;  // ER_MASTER_FATAL_ERROR_READING_BINLOG
}

BinlogStream::BinlogStream(const SourceConfig& source, uint32_t server_id, unsigned heartbeat_ms, unsigned read_timeout_s)
    : connection_(source, read_timeout_s), server_id_(server_id), heartbeat_ms_(heartbeat_ms) {}

BinlogStream::~BinlogStream() {
  if (event_) mariadb_free_rpl_event(event_);
  if (rpl_) mariadb_rpl_close(rpl_);
}

BinlogStream::Failure BinlogStream::open(const BinlogPosition& from, std::string& error) {
  if (!connection_.ok()) {
    error = "cannot connect: " + connection_.error();
    return Failure::Retry;
  }
  from_ = from;
  const auto server_checksum = connection_.query_value("SELECT @@global.binlog_checksum");
  if (!server_checksum) {
    error = "cannot read binlog_checksum: " + connection_.error();
    return Failure::Retry;
  }
  checksum_ = *server_checksum == "CRC32" ? ChecksumAlgorithm::Crc32 : ChecksumAlgorithm::Off;
  const std::string heartbeat_ns = std::to_string(static_cast<uint64_t>(heartbeat_ms_) * 1000000ULL);
  const bool gtid_start = from.flavor == Flavor::MariaDb && !from.gtid.empty();
  std::vector<std::string> setup = {
      // Without the checksum handshake the server refuses to send checksummed events (error 1236).
      "SET @master_binlog_checksum = @@global.binlog_checksum",
      "SET @master_heartbeat_period = " + heartbeat_ns,
      "SET @mariadb_slave_capability = 4",  // GTID events instead of BEGIN queries, annotate rows
  };
  if (gtid_start) {
    setup.push_back("SET @slave_connect_state = " + connection_.quote(from.gtid));
    setup.push_back("SET @slave_gtid_strict_mode = 1");
    setup.push_back("SET @slave_gtid_ignore_duplicates = 0");
  }
  for (const std::string& sql : setup) {
    if (!connection_.execute(sql)) {
      error = sql + ": " + connection_.error();
      return Failure::Retry;
    }
  }
  rpl_ = mariadb_rpl_init(connection_.raw());
  if (!rpl_) {
    error = "mariadb_rpl_init failed: " + connection_.error();
    return Failure::Retry;
  }
  const std::string file = gtid_start ? std::string() : from.file;
  const unsigned long start = gtid_start ? 4UL : static_cast<unsigned long>(from.position);
  mariadb_rpl_optionsv(rpl_, MARIADB_RPL_FILENAME, file.c_str(), file.size());
  mariadb_rpl_optionsv(rpl_, MARIADB_RPL_START, start);
  mariadb_rpl_optionsv(rpl_, MARIADB_RPL_SERVER_ID, server_id_);
  mariadb_rpl_optionsv(rpl_, MARIADB_RPL_FLAGS, 0);
  if (mariadb_rpl_open(rpl_) != 0) {
    return classify(connection_.error_code(), connection_.error(), error);
  }
  return Failure::None;
}

std::optional<std::string_view> BinlogStream::next(Failure& failure, std::string& error) {
  event_ = mariadb_rpl_fetch(rpl_, event_);
  if (!event_) {
    std::string message = connection_.error();
    if (message.empty() && rpl_->error_msg[0]) message = rpl_->error_msg;
    failure = classify(connection_.error_code() ? connection_.error_code() : rpl_->error_no, message, error);
    if (failure == Failure::None) failure = Failure::Retry;
    return std::nullopt;
  }
  // raw_data starts with the packet's OK byte; the event follows.
  if (event_->raw_data_size <= event_->raw_data_ofs) {
    failure = Failure::Retry;
    error = "empty replication packet";
    return std::nullopt;
  }
  return std::string_view(reinterpret_cast<const char*>(event_->raw_data) + event_->raw_data_ofs,
                          event_->raw_data_size - event_->raw_data_ofs);
}

BinlogStream::Failure BinlogStream::classify(unsigned code, const std::string& message, std::string& error) const {
  error = message.empty() ? "replication stream ended (error " + std::to_string(code) + ")" : message;
  if (code == kErrorReadingBinlog) {
    // A file that is gone, and a GTID the server does not have (MariaDB: "... which is not in the master's
    // binlog", "the binlog on the master is missing the GTID"; MySQL: "the master has purged binary logs
    // containing GTIDs"): retrying cannot bring either back.
    const bool purged = message.find("purged") != std::string::npos || message.find("Could not find") != std::string::npos ||
                        message.find("could not find") != std::string::npos || message.find("not find first log") != std::string::npos ||
                        message.find("not in the master's binlog") != std::string::npos ||
                        message.find("is missing the GTID") != std::string::npos;
    if (purged) {
      error = "the server no longer has the binlog at " + from_.describe() + " (" + message +
              "): changes since then are lost to Tidemark. Recover by deleting the state file (streaming restarts at the "
              "current end of the binlog) and re-snapshotting the captured tables; keep binlogs longer "
              "(binlog_expire_logs_seconds / expire_logs_days) so a stopped daemon can catch up";
      return Failure::Fatal;
    }
  }
  return Failure::Retry;
}

}  // namespace tidemark::mysql
