#pragma once
// MySQL/MariaDB: the row-based binlog read as a replica (binlog_stream), decoded by our own decoder
// (binlog_events, row_decoder) into change events (binlog_change_builder). Positions are GTID states with
// file/position fallback (binlog_position); a restart resumes after the last transaction Kafka
// acknowledged.

#include <memory>
#include <optional>

#include "source/mysql/binlog_position.hpp"
#include "db/mysql_connection.hpp"
#include "source/source.hpp"

namespace tidemark::mysql {

class MySqlSource final : public Source {
 public:
  explicit MySqlSource(const Config& config);

  std::vector<std::string> check() override;
  std::vector<std::string> warnings() const override { return warnings_; }
  SourceOutcome run(const std::optional<SourcePosition>& start, EventQueue& out, std::stop_token stop) override;
  std::optional<std::string> run_action_query(const std::string& sql) override;
  std::optional<int64_t> log_bytes_behind(const std::optional<SourcePosition>& committed) override;

 private:
  enum class SessionEnd { Stopped, Retry, Fatal };
  SessionEnd session(EventQueue& out, const std::stop_token& stop, std::string& error);

  Config config_;
  std::unique_ptr<MySqlConnection> action_connection_;  // heartbeat thread only
  std::unique_ptr<MySqlConnection> probe_connection_;   // probe thread only
  std::vector<std::string> warnings_;  // from the last check()
  std::optional<BinlogPosition> resume_;  // after the last transaction handed to the queue
};

}  // namespace tidemark::mysql
