#include "source/mysql/mysql_source.hpp"

#include <chrono>
#include <thread>

#include <spdlog/spdlog.h>

#include "config/source_kinds.hpp"
#include "source/mysql/binlog_change_builder.hpp"
#include "source/mysql/binlog_stream.hpp"
#include "db/mysql_connection.hpp"
#include "source/mysql/mysql_prerequisites.hpp"
#include "source/mysql/table_schema_loader.hpp"
#include "core/reconnect_backoff.hpp"

namespace tidemark::mysql {

namespace {

constexpr std::chrono::milliseconds kPushWait{100};

std::string connection_problem(const SourceConfig& c, const std::string& error) {
  const std::string problem = "cannot connect to MySQL/MariaDB at " + c.host + ":" +
                              std::to_string(source_port(c)) + " as " + c.user + ": " + error;
  // An error about TLS already names the setting to change (tls_hint).
  if (error.find("source.tls.") != std::string::npos) return problem;
  return problem + ". Check source.host, source.port, source.user and source.password";
}

// Said by check() and logged by each session when prefer ended in plain text.
std::string plain_text_warning() {
  return "the connection to MySQL/MariaDB is not encrypted: the server offers no TLS and source.tls.mode is prefer; "
         "start the server with ssl_cert and ssl_key and set source.tls.mode to verify-full (with source.tls.ca)";
}

}  // namespace

MySqlSource::MySqlSource(const Config& config) : config_(config) {}

std::vector<std::string> MySqlSource::check() {
  MySqlConnection conn(config_.source);
  if (!conn.ok()) return {connection_problem(config_.source, conn.error())};
  PrerequisiteReport report = check_prerequisites(conn, config_);
  warnings_ = report.warnings;  // logged by session() when streaming starts
  if (conn.tls_version().empty() && config_.source.tls.mode == "prefer") warnings_.push_back(plain_text_warning());
  return report.problems;
}

MySqlSource::SessionEnd MySqlSource::session(EventQueue& out, const std::stop_token& stop, std::string& error) {
  MySqlConnection catalog(config_.source);
  if (!catalog.ok()) {
    error = connection_problem(config_.source, catalog.error());
    return SessionEnd::Retry;
  }
  const PrerequisiteReport report = check_prerequisites(catalog, config_);
  if (!report.problems.empty()) {
    for (size_t i = 0; i < report.problems.size(); ++i) error += (i ? "; " : "") + report.problems[i];
    return SessionEnd::Fatal;
  }
  for (const auto& warning : report.warnings) spdlog::warn("mysql: {}", warning);
  if (const std::string tls = catalog.tls_version(); !tls.empty()) {
    spdlog::info("mysql: connected over {} (source.tls.mode {})", tls, config_.source.tls.mode);
  } else if (config_.source.tls.mode == "prefer") {
    spdlog::warn("mysql: {}", plain_text_warning());
  }

  auto push = [&](StreamItem&& item) {
    while (!out.push_for(item, kPushWait))
      if (stop.stop_requested()) return false;
    return true;
  };

  if (!resume_) {
    // First start: the current end of the log. Handing it over at once gets it persisted, so a restart
    // before the first change still resumes here.
    auto end = current_end_of_log(catalog, report.flavor, error);
    if (!end) return SessionEnd::Retry;
    resume_ = *end;
    spdlog::info("mysql: first start on {} ({}): streaming from the end of the binlog, {}", config_.source.host,
                 report.server_version, resume_->describe());
    if (!push(Checkpoint{resume_->to_source_position()})) return SessionEnd::Stopped;
  } else if (resume_->flavor != report.flavor) {
    error = "the state file holds a " + std::string(resume_->flavor == Flavor::MariaDb ? "MariaDB" : "MySQL") +
            " position but the server is " + report.server_version + ": this state file belongs to another server";
    return SessionEnd::Fatal;
  }

  BinlogStream stream(config_.source, static_cast<uint32_t>(config_.source.mysql.server_id));
  BinlogStream::Failure failure = stream.open(*resume_, error);
  if (failure != BinlogStream::Failure::None) {
    if (failure == BinlogStream::Failure::Retry) error = connection_problem(config_.source, error);
    return failure == BinlogStream::Failure::Fatal ? SessionEnd::Fatal : SessionEnd::Retry;
  }
  spdlog::info("mysql: streaming the binlog of {} ({}) from {}", config_.source.host, report.server_version, resume_->describe());
  set_connected(true);

  InformationSchemaLoader loader(catalog);
  BinlogChangeBuilder::Options options;
  options.flavor = report.flavor;
  options.table_patterns = config_.source.tables;
  options.initial_checksum = stream.checksum();
  BinlogChangeBuilder builder(options, &loader, *resume_);
  const BinlogChangeBuilder::Emit emit = push;

  for (;;) {
    if (stop.stop_requested()) return SessionEnd::Stopped;
    const auto bytes = stream.next(failure, error);
    if (!bytes) {
      if (stop.stop_requested()) return SessionEnd::Stopped;
      resume_ = builder.position();
      return failure == BinlogStream::Failure::Fatal ? SessionEnd::Fatal : SessionEnd::Retry;
    }
    const auto outcome = builder.on_event(*bytes, emit, error);
    resume_ = builder.position();
    switch (outcome) {
      case BinlogChangeBuilder::Outcome::Continue: break;
      case BinlogChangeBuilder::Outcome::Stopped: return SessionEnd::Stopped;
      case BinlogChangeBuilder::Outcome::Retry: return SessionEnd::Retry;
      case BinlogChangeBuilder::Outcome::Fatal: return SessionEnd::Fatal;
    }
  }
}

std::optional<std::string> MySqlSource::run_action_query(const std::string& sql) {
  if (!action_connection_ || !action_connection_->ok()) action_connection_ = std::make_unique<MySqlConnection>(config_.source);
  if (!action_connection_->ok()) return "heartbeat.action_query: " + connection_problem(config_.source, action_connection_->error());
  // A connection without CLIENT_MULTI_STATEMENTS: the server refuses a second statement.
  if (!action_connection_->execute(sql)) {
    const std::string error = action_connection_->error();
    action_connection_.reset();  // reconnect next time: the failure may have been the connection's
    return "heartbeat.action_query failed: " + error + " (one statement, run as source.user: check the SQL and its privileges)";
  }
  return std::nullopt;
}

std::optional<int64_t> MySqlSource::log_bytes_behind(const std::optional<SourcePosition>& committed) {
  if (!committed) return std::nullopt;
  const auto position = BinlogPosition::parse(*committed);
  if (!position || position->file.empty()) return std::nullopt;
  if (!probe_connection_ || !probe_connection_->ok()) probe_connection_ = std::make_unique<MySqlConnection>(config_.source);
  if (!probe_connection_->ok()) return std::nullopt;
  const auto logs = probe_connection_->query("SHOW BINARY LOGS");
  if (!logs) {
    probe_connection_.reset();
    return std::nullopt;
  }
  // Binlog names sort in order (mysql-bin.000001, ...): the rest of the position's file, then every later one.
  int64_t behind = 0;
  bool found = false;
  for (const auto& row : *logs) {
    if (row.size() < 2 || !row[0] || !row[1]) continue;
    const int64_t size = std::stoll(*row[1]);
    if (*row[0] == position->file) {
      found = true;
      behind += std::max<int64_t>(0, size - static_cast<int64_t>(position->position));
    } else if (*row[0] > position->file) {
      behind += size;
    }
  }
  if (!found) return std::nullopt;  // purged: the source will say so
  return behind;
}

SourceOutcome MySqlSource::run(const std::optional<SourcePosition>& start, EventQueue& out, std::stop_token stop) {
  if (start) {
    resume_ = BinlogPosition::parse(*start);
    if (!resume_) return {false, "the stored position '" + start->token + "' is not a MySQL/MariaDB binlog position"};
  }
  ReconnectBackoff backoff;
  while (!stop.stop_requested()) {
    backoff.session_started();
    std::string error;
    const SessionEnd end = session(out, stop, error);
    set_connected(false);
    if (end == SessionEnd::Stopped) break;
    if (end == SessionEnd::Fatal) return {false, error};
    count_reconnect();
    spdlog::warn("mysql: {}; reconnecting in {} s from {}", error, backoff.next_delay().count(),
                 resume_ ? resume_->describe() : std::string("the end of the binlog"));
    backoff.wait(stop);
  }
  return {};
}

}  // namespace tidemark::mysql
