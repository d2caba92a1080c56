#include "source/postgres/postgres_source.hpp"

#include <poll.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include <spdlog/spdlog.h>

#include "config/source_kinds.hpp"
#include "db/pg_connection.hpp"
#include "source/postgres/pgoutput_decoder.hpp"
#include "source/postgres/postgres_prerequisites.hpp"
#include "source/postgres/pg_type_catalog.hpp"
#include "source/postgres/relation_cache.hpp"
#include "core/reconnect_backoff.hpp"

namespace tidemark::pg {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::string_view kPositionPrefix = "pg:";
constexpr std::chrono::milliseconds kPushWait{100};
constexpr int kSocketWaitMs = 100;

std::string connection_problem(const SourceConfig& c, const std::string& error) {
  const std::string problem = "cannot connect to PostgreSQL at " + c.host + ":" + std::to_string(source_port(c)) + " as " + c.user + ": " + error;
  // An error about TLS already names the setting to change (tls_hint).
  if (error.find("source.tls.") != std::string::npos) return problem;
  return problem + ". Check source.host, source.port, source.user, source.password and pg_hba.conf";
}

// Said by check() and logged by each session when prefer ended in plain text.
std::string plain_text_warning() {
  return "the connection to PostgreSQL is not encrypted: the server offers no TLS and source.tls.mode is prefer; "
         "turn TLS on in the server and set source.tls.mode to verify-full (with source.tls.ca)";
}

void log_tls(const SourceConfig& c, const Connection& conn) {
  const std::string protocol = conn.tls_protocol();
  if (!protocol.empty()) {
    spdlog::info("postgres: connected over {} (source.tls.mode {})", protocol, c.tls.mode);
  } else if (c.tls.mode == "prefer") {
    spdlog::warn("postgres: {}", plain_text_warning());
  }
}

}  // namespace

PostgresSource::PostgresSource(const Config& config) : config_(config), application_name_("tidemark-" + config.name) {}

std::optional<Lsn> PostgresSource::parse_position(const SourcePosition& position) {
  const std::string& t = position.token;
  if (t.compare(0, kPositionPrefix.size(), kPositionPrefix) != 0) return std::nullopt;
  return parse_lsn(std::string_view(t).substr(kPositionPrefix.size()));
}

SourcePosition PostgresSource::position_at(Lsn lsn) { return SourcePosition{std::string(kPositionPrefix) + lsn_to_string(lsn)}; }

void PostgresSource::on_position_persisted(const SourcePosition& position) {
  if (const auto lsn = parse_position(position)) persisted_lsn_ = *lsn;
}

std::vector<std::string> PostgresSource::check() {
  Connection conn(config_.source, application_name_, Connection::Mode::Normal);
  if (!conn.ok()) return {connection_problem(config_.source, conn.error())};
  warnings_.clear();
  if (conn.tls_protocol().empty() && config_.source.tls.mode == "prefer") warnings_.push_back(plain_text_warning());
  PrerequisiteReport report = check_prerequisites(conn, config_, false);
  std::vector<std::string> problems = std::move(report.problems);
  for (auto& w : report.warnings) warnings_.push_back(std::move(w));
  Connection replication(config_.source, application_name_, Connection::Mode::Replication);
  // A role without REPLICATION is refused too; that problem is already reported with its fix.
  const bool role_lacks_replication = std::any_of(problems.begin(), problems.end(), [](const std::string& p) {
    return p.find(" REPLICATION;") != std::string::npos;
  });
  if (!replication.ok() && !role_lacks_replication)
    problems.push_back("replication connection refused: " + replication.error() +
                       ". pg_hba.conf must let this user connect to database " + config_.source.database +
                       " (replication=database uses the database's lines)");
  return problems;
}

// One connection's worth of streaming: from START_REPLICATION until an error, a stop, or a fatal problem.
class PostgresSource::Session {
 public:
  Session(PostgresSource& source, EventQueue& out, std::stop_token stop)
      : source_(source), config_(source.config_), out_(out), stop_(std::move(stop)) {}

  SessionEnd run(Lsn start_lsn, bool have_stored_position, std::string& error) {
    catalog_.emplace(config_.source, source_.application_name_, Connection::Mode::Normal);
    if (!catalog_->ok()) {
      error = connection_problem(config_.source, catalog_->error());
      return SessionEnd::Retry;
    }
    const PrerequisiteReport report = check_prerequisites(*catalog_, config_, true);
    if (!report.problems.empty()) {
      for (size_t i = 0; i < report.problems.size(); ++i) error += (i ? "; " : "") + report.problems[i];
      return SessionEnd::Fatal;
    }
    relations_.emplace(config_.source.database, config_.source.tables,
                       [this](uint32_t oid) { return catalog_of(oid); });
    replication_.emplace(config_.source, source_.application_name_, Connection::Mode::Replication);
    if (!replication_->ok()) {
      error = connection_problem(config_.source, replication_->error());
      return SessionEnd::Retry;
    }
    log_tls(config_.source, *replication_);
    const std::string& slot = config_.source.postgres.slot;
    if (!report.slot_exists) {
      if (have_stored_position) {
        error = "replication slot " + slot + " is gone, but the state file says streaming stopped at " +
                lsn_to_string(start_lsn) + ": changes since then are lost. Recover by deleting the state file " +
                "(a new slot is created at the current end of the log) and taking a new snapshot of the tables";
        return SessionEnd::Fatal;
      }
      if (!replication_->query("CREATE_REPLICATION_SLOT " + quote_identifier(slot) + " LOGICAL pgoutput (SNAPSHOT 'nothing')")) {
        error = "cannot create replication slot " + slot + ": " + replication_->last_error();
        return replication_->last_sqlstate() == "53400" ? SessionEnd::Fatal : SessionEnd::Retry;
      }
      spdlog::info("postgres: created replication slot {}", slot);
    }
    const std::string command = "START_REPLICATION SLOT " + quote_identifier(slot) + " LOGICAL " +
                                lsn_to_string(start_lsn) + " (proto_version '1', publication_names " +
                                quote_literal(quote_identifier(config_.source.postgres.publication)) +
                                ", messages 'true')";
    if (!replication_->query(command)) {
      error = "START_REPLICATION failed: " + replication_->last_error();
      // The slot still streams to an earlier leader's walsender (paused, cut off: wal_sender_timeout ends it
      // eventually). This instance holds the lease, so that one no longer leads: end it now.
      if (replication_->last_sqlstate() == "55006" && config_.ha.enabled) end_stale_walsender(slot);
      return SessionEnd::Retry;
    }
    spdlog::info("postgres: streaming slot {} from {}", slot, lsn_to_string(start_lsn));
    source_.set_connected(true);
    start_lsn_ = start_lsn;
    received_lsn_ = start_lsn;
    return stream(error);
  }

 private:
  void end_stale_walsender(const std::string& slot) {
    const auto r = catalog_->query(
        "SELECT active_pid, pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = $1 AND active",
        {slot});
    if (r && PQntuples(r->get()) == 1)
      spdlog::warn("postgres: slot {} was still streaming to process {} of an earlier leader; ended it, as this "
                   "instance holds the lease (ha.enabled)",
                   slot, PQgetvalue(r->get(), 0, 0));
    else if (!r)
      spdlog::warn("postgres: cannot end the walsender still holding slot {} ({}); waiting for wal_sender_timeout", slot,
                   catalog_->last_error());
  }

  std::optional<RelationCatalog> catalog_of(uint32_t relation_oid) {
    RelationCatalog table;
    const auto key = catalog_->query(
        "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) "
        "WHERE i.indrelid = $1::oid AND i.indisprimary ORDER BY array_position(i.indkey, a.attnum)",
        {std::to_string(relation_oid)});
    if (!key) return std::nullopt;
    for (int i = 0; i < PQntuples(key->get()); ++i) table.primary_key.emplace_back(PQgetvalue(key->get(), i, 0));
    const auto not_null = catalog_->query(
        "SELECT attname FROM pg_attribute WHERE attrelid = $1::oid AND attnum > 0 AND NOT attisdropped AND attnotnull",
        {std::to_string(relation_oid)});
    if (!not_null) return std::nullopt;
    for (int i = 0; i < PQntuples(not_null->get()); ++i) table.not_null.emplace_back(PQgetvalue(not_null->get(), i, 0));
    return table;
  }

  void register_type(uint32_t oid) { register_catalog_type(*catalog_, relations_->types(), oid); }

  bool send_status(bool reply_requested = false) {
    // Flush: only what is persisted (never beyond), so the server keeps what a restart would need.
    Lsn flushed = std::max<Lsn>(source_.persisted_lsn_.load(), start_lsn_);
    // With nothing in flight and every handed-over transaction persisted, the WAL received since holds no
    // captured change: confirm it, so the slot does not pin WAL of other tables and a fast shutdown's
    // walsender (which waits for the client to flush everything sent) can finish. Restarts are unaffected:
    // commits after this point are still decoded.
    if (!held_ && !in_transaction_ && flushed >= source_.resume_lsn_) flushed = std::max(flushed, received_lsn_);
    const std::string msg = encode_standby_status_update(
        StandbyStatusUpdate{received_lsn_, flushed, flushed, pg_now_us(), reply_requested});
    last_status_ = Clock::now();
    return PQputCopyData(replication_->raw(), msg.data(), static_cast<int>(msg.size())) == 1 &&
           PQflush(replication_->raw()) == 0;
  }

  bool status_due() const {
    return Clock::now() - last_status_ >= std::chrono::milliseconds(config_.source.postgres.status_interval_ms);
  }

  // Hands an item over, keeping the server informed while Kafka's backpressure holds us.
  bool push(StreamItem item) {
    while (!out_.push_for(item, kPushWait)) {
      if (stop_.stop_requested()) return false;
      if (status_due() && !send_status()) return false;
    }
    return true;
  }

  bool emit(ChangeEvent event) {
    bool ok = true;
    if (held_) ok = push(std::move(*held_));
    held_ = std::move(event);
    return ok;
  }

  ChangeEvent make_event(const CachedRelation& relation, Op op) const {
    ChangeEvent e;
    e.table = relation.schema;
    e.op = op;
    e.source.connector = ConnectorKind::Postgres;
    e.source.txid = xid_;
    e.source.lsn = message_lsn_;
    e.source.commit_lsn = commit_lsn_;
    e.source.commit_ts_ms = commit_ts_ms_;
    return e;
  }

  // Converts an optional tuple; false (with `error`) on a value that does not parse.
  bool convert(const CachedRelation& relation, const TupleData* tuple, std::optional<Row>& row, std::string& error) {
    if (!tuple) return true;
    row = relations_->to_row(relation, *tuple, error);
    return row.has_value();
  }

  // A failed hand-over is a stop request, or a connection that broke while we waited.
  SessionEnd after_push(bool ok) const {
    if (ok) return SessionEnd::Continue;
    return stop_.stop_requested() ? SessionEnd::Stopped : SessionEnd::Retry;
  }

  SessionEnd handle(const PgOutputMessage& message, std::string& error) {
    if (const auto* begin = std::get_if<BeginMessage>(&message)) {
      xid_ = begin->xid;
      commit_lsn_ = begin->final_lsn;
      commit_ts_ms_ = pg_us_to_unix_us(begin->commit_time) / 1000;
      held_.reset();
      return SessionEnd::Continue;  // "continue"
    }
    if (const auto* commit = std::get_if<CommitMessage>(&message)) {
      const SourcePosition position = position_at(commit->end_lsn);
      bool ok;
      if (held_) {
        held_->resume_position = position;
        ok = push(std::move(*held_));
        held_.reset();
      } else {
        ok = push(Checkpoint{position});
      }
      if (!ok) return after_push(false);
      source_.resume_lsn_ = commit->end_lsn;
      return SessionEnd::Continue;
    }
    if (const auto* relation = std::get_if<RelationMessage>(&message)) {
      for (const auto& column : relation->columns)
        if (!PgTypeRegistry::builtin(column.type_oid)) register_type(column.type_oid);
      if (auto problem = relations_->on_relation(*relation)) {
        error = *problem;
        return SessionEnd::Retry;
      }
      return SessionEnd::Continue;
    }
    if (const auto* type = std::get_if<TypeMessage>(&message)) {
      register_type(type->type_oid);
      return SessionEnd::Continue;
    }
    if (const auto* insert = std::get_if<InsertMessage>(&message)) {
      const CachedRelation* relation = relations_->find(insert->relation_id);
      if (!relation) return unknown_relation(insert->relation_id, error);
      if (!relation->schema) return SessionEnd::Continue;
      ChangeEvent e = make_event(*relation, Op::Create);
      if (!convert(*relation, &insert->new_tuple, e.after, error)) return SessionEnd::Fatal;
      return after_push(emit(std::move(e)));
    }
    if (const auto* update = std::get_if<UpdateMessage>(&message)) {
      const CachedRelation* relation = relations_->find(update->relation_id);
      if (!relation) return unknown_relation(update->relation_id, error);
      if (!relation->schema) return SessionEnd::Continue;
      ChangeEvent e = make_event(*relation, Op::Update);
      if (!convert(*relation, update->old_image(), e.before, error) ||
          !convert(*relation, &update->new_tuple, e.after, error))
        return SessionEnd::Fatal;
      return after_push(emit(std::move(e)));
    }
    if (const auto* del = std::get_if<DeleteMessage>(&message)) {
      const CachedRelation* relation = relations_->find(del->relation_id);
      if (!relation) return unknown_relation(del->relation_id, error);
      if (!relation->schema) return SessionEnd::Continue;
      ChangeEvent e = make_event(*relation, Op::Delete);
      if (!convert(*relation, &del->old_image(), e.before, error)) return SessionEnd::Fatal;
      return after_push(emit(std::move(e)));
    }
    if (const auto* truncate = std::get_if<TruncateMessage>(&message)) {
      for (const uint32_t id : truncate->relation_ids) {
        const CachedRelation* relation = relations_->find(id);
        if (!relation) return unknown_relation(id, error);
        if (relation->schema && !emit(make_event(*relation, Op::Truncate))) return after_push(false);
      }
      return SessionEnd::Continue;
    }
    return SessionEnd::Continue;  // Origin, logical Message: nothing to publish
  }

  SessionEnd unknown_relation(uint32_t id, std::string& error) {
    error = "pgoutput sent a change for relation " + std::to_string(id) + " before its Relation message";
    return SessionEnd::Retry;
  }

  SessionEnd process(std::string_view copy_data, std::string& error) {
    auto decoded = decode_replication_message(copy_data);
    if (auto* bad = std::get_if<DecodeError>(&decoded)) {
      error = "replication protocol: " + bad->to_string();
      return SessionEnd::Retry;
    }
    const auto& message = std::get<ReplicationMessage>(decoded);
    if (const auto* keepalive = std::get_if<PrimaryKeepalive>(&message)) {
      // Only what was fully received counts: a keepalive's end may be past an unfinished transaction.
      if (!held_ && keepalive->wal_end > received_lsn_ && !in_transaction_) received_lsn_ = keepalive->wal_end;
      if (keepalive->reply_requested && !send_status()) return SessionEnd::Retry;
      return SessionEnd::Continue;
    }
    const auto& xlog = std::get<XLogData>(message);
    message_lsn_ = xlog.wal_start;
    auto pgoutput = decode_pgoutput(xlog.payload);
    if (auto* bad = std::get_if<DecodeError>(&pgoutput)) {
      error = "pgoutput at " + lsn_to_string(xlog.wal_start) + ": " + bad->to_string();
      return SessionEnd::Fatal;
    }
    const auto& msg = std::get<PgOutputMessage>(pgoutput);
    if (std::holds_alternative<BeginMessage>(msg)) in_transaction_ = true;
    const SessionEnd end = handle(msg, error);
    if (const auto* commit = std::get_if<CommitMessage>(&msg)) {
      in_transaction_ = false;
      received_lsn_ = std::max(received_lsn_, commit->end_lsn);
    }
    return end;
  }

  SessionEnd stream(std::string& error) {
    PGconn* conn = replication_->raw();
    send_status();
    for (;;) {
      if (stop_.stop_requested()) return SessionEnd::Stopped;
      if (status_due() && !send_status()) {
        error = "cannot send status update: " + replication_->error();
        return SessionEnd::Retry;
      }
      char* buffer = nullptr;
      const int n = PQgetCopyData(conn, &buffer, 1);
      if (n > 0) {
        const SessionEnd end = process(std::string_view(buffer, static_cast<size_t>(n)), error);
        PQfreemem(buffer);
        if (end != SessionEnd::Continue) return end;
        continue;
      }
      if (n == 0) {
        pollfd pfd{PQsocket(conn), POLLIN, 0};
        ::poll(&pfd, 1, kSocketWaitMs);
        if (PQconsumeInput(conn) == 0) {
          error = "connection lost: " + replication_->error();
          return SessionEnd::Retry;
        }
        continue;
      }
      // -1: the server ended the stream; -2: an error.
      error = n == -1 ? "the server ended the replication stream" : "connection lost: " + replication_->error();
      if (n == -1) {
        if (PGresult* r = PQgetResult(conn)) {
          error += std::string(": ") + PQresultErrorMessage(r);
          PQclear(r);
        }
      }
      return SessionEnd::Retry;
    }
  }

  PostgresSource& source_;
  const Config& config_;
  EventQueue& out_;
  std::stop_token stop_;
  std::optional<Connection> catalog_;
  std::optional<Connection> replication_;
  std::optional<RelationCache> relations_;
  std::optional<ChangeEvent> held_;  // the newest event: it gets the resume position if Commit comes next
  Clock::time_point last_status_{};
  Lsn start_lsn_ = kInvalidLsn;
  Lsn received_lsn_ = kInvalidLsn;
  Lsn message_lsn_ = kInvalidLsn;
  uint32_t xid_ = 0;
  Lsn commit_lsn_ = kInvalidLsn;
  int64_t commit_ts_ms_ = 0;
  bool in_transaction_ = false;
};

std::optional<std::string> PostgresSource::run_action_query(const std::string& sql) {
  if (!action_connection_ || !action_connection_->ok())
    action_connection_ = std::make_unique<Connection>(config_.source, application_name_ + "-heartbeat", Connection::Mode::Normal);
  if (!action_connection_->ok()) return "heartbeat.action_query: " + connection_problem(config_.source, action_connection_->error());
  if (!action_connection_->query_one_statement(sql))
    return "heartbeat.action_query failed: " + action_connection_->last_error() +
           " (one statement, run as source.user: check the SQL and its privileges)";
  return std::nullopt;
}

std::optional<int64_t> PostgresSource::log_bytes_behind(const std::optional<SourcePosition>&) {
  if (!probe_connection_ || !probe_connection_->ok())
    probe_connection_ = std::make_unique<Connection>(config_.source, application_name_ + "-probe", Connection::Mode::Normal);
  if (!probe_connection_->ok()) return std::nullopt;
  const auto r = probe_connection_->query(
      "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::bigint FROM pg_replication_slots "
      "WHERE slot_name = $1",
      {config_.source.postgres.slot});
  if (!r || PQntuples(r->get()) != 1 || PQgetisnull(r->get(), 0, 0)) return std::nullopt;
  return std::stoll(PQgetvalue(r->get(), 0, 0));
}

SourceOutcome PostgresSource::run(const std::optional<SourcePosition>& start, EventQueue& out, std::stop_token stop) {
  const bool have_stored_position = start.has_value();
  if (start) {
    const auto lsn = parse_position(*start);
    if (!lsn) return {false, "the stored position '" + start->token + "' is not a PostgreSQL position"};
    resume_lsn_ = *lsn;
    persisted_lsn_ = *lsn;
  }
  ReconnectBackoff backoff;
  while (!stop.stop_requested()) {
    backoff.session_started();
    std::string error;
    Session session(*this, out, stop);
    // After a drop, resume after the last transaction already handed over; the server resends the rest.
    const SessionEnd end = session.run(resume_lsn_, have_stored_position || resume_lsn_ != kInvalidLsn, error);
    set_connected(false);
    if (end == SessionEnd::Stopped || end == SessionEnd::Continue) break;
    if (end == SessionEnd::Fatal) return {false, error};
    count_reconnect();
    spdlog::warn("postgres: {}; reconnecting in {} s from {}", error, backoff.next_delay().count(), lsn_to_string(resume_lsn_));
    backoff.wait(stop);
  }
  return {};
}

}  // namespace tidemark::pg
