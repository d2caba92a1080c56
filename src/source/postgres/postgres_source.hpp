#pragma once
// PostgreSQL logical replication: a pgoutput slot streamed over a replication=database libpq connection.
// Positions are the end LSN of each transaction's commit record ("pg:16/B374D848"); the slot's flush LSN
// is confirmed only after that position is persisted (Source::on_position_persisted).

#include <atomic>
#include <memory>

#include "db/pg_connection.hpp"
#include "source/postgres/replication_messages.hpp"
#include "source/source.hpp"

namespace tidemark::pg {

class PostgresSource final : public Source {
 public:
  explicit PostgresSource(const Config& config);

  std::vector<std::string> check() override;
  std::vector<std::string> warnings() const override { return warnings_; }
  SourceOutcome run(const std::optional<SourcePosition>& start, EventQueue& out, std::stop_token stop) override;
  void on_position_persisted(const SourcePosition& position) override;
  std::optional<std::string> run_action_query(const std::string& sql) override;
  std::optional<int64_t> log_bytes_behind(const std::optional<SourcePosition>& committed) override;

  static std::optional<Lsn> parse_position(const SourcePosition& position);
  static SourcePosition position_at(Lsn lsn);

 private:
  enum class SessionEnd { Continue, Stopped, Retry, Fatal };
  class Session;

  Config config_;
  std::string application_name_;
  std::unique_ptr<Connection> action_connection_;  // heartbeat thread only
  std::unique_ptr<Connection> probe_connection_;   // probe thread only
  std::atomic<Lsn> persisted_lsn_{kInvalidLsn};
  Lsn resume_lsn_ = kInvalidLsn;  // end of the last transaction handed to the queue
  bool streamed_from_stored_position_ = false;
  std::vector<std::string> warnings_;  // from the last check()
};

}  // namespace tidemark::pg
