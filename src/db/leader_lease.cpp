#include "db/leader_lease.hpp"

#include <unistd.h>

#include <algorithm>

#include "db/mysql_connection.hpp"
#include "db/pg_connection.hpp"

namespace tidemark {

namespace {

bool is_postgres(const Config& config) { return config.source.type == "postgres"; }

// PostgreSQL's application_name and the text MySQL's holder keeps in a user variable are both this.
std::string holder_label(const std::string& instance) { return ("tidemark " + instance).substr(0, 63); }

}  // namespace

struct LeaderLease::Session {
  std::unique_ptr<pg::Connection> pg;
  std::unique_ptr<mysql::MySqlConnection> my;
};

std::string instance_name(const Config& config) {
  if (!config.ha.instance.empty()) return config.ha.instance;
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return std::string(host) + " pid " + std::to_string(::getpid());
}

LeaderLease::LeaderLease(const Config& config)
    : config_(config), instance_(instance_name(config)), lock_name_("tidemark/" + config.name) {}

LeaderLease::~LeaderLease() = default;

bool LeaderLease::try_acquire(std::string& error) {
  error.clear();
  const int64_t timeout_ms = config_.ha.lease_timeout_ms;
  if (is_postgres(config_)) {
    if (!session_ || !session_->pg || !session_->pg->ok()) {
      session_ = std::make_unique<Session>();
      session_->pg = std::make_unique<pg::Connection>(config_.source, holder_label(instance_), pg::Connection::Mode::Normal);
      if (!session_->pg->ok()) {
        error = "cannot connect to the source to take the lease: " + session_->pg->error();
        session_.reset();
        return false;
      }
      // The server ends the session (and with it the lock) once the holder stops touching it.
      if (!session_->pg->query("SET idle_session_timeout = " + std::to_string(timeout_ms))) {
        error = "cannot set idle_session_timeout for the lease session: " + session_->pg->last_error();
        session_.reset();
        return false;
      }
    }
    const auto r = session_->pg->query("SELECT pg_try_advisory_lock(hashtextextended($1, 0))", {lock_name_});
    if (!r) {
      error = "cannot ask for the lease: " + session_->pg->last_error();
      session_.reset();
      return false;
    }
    held_ = std::string(PQgetvalue(r->get(), 0, 0)) == "t";
    return held_;
  }
  if (!session_ || !session_->my || !session_->my->ok()) {
    session_ = std::make_unique<Session>();
    session_->my = std::make_unique<mysql::MySqlConnection>(config_.source);
    if (!session_->my->ok()) {
      error = "cannot connect to the source to take the lease: " + session_->my->error();
      session_.reset();
      return false;
    }
    const int64_t seconds = std::max<int64_t>(1, (timeout_ms + 999) / 1000);
    if (!session_->my->execute("SET SESSION wait_timeout = " + std::to_string(seconds))) {
      error = "cannot set wait_timeout for the lease session: " + session_->my->error();
      session_.reset();
      return false;
    }
  }
  const auto got = session_->my->query_value("SELECT GET_LOCK(" + session_->my->quote(lock_name_) + ", 0)");
  if (!got) {
    error = "cannot ask for the lease: " + session_->my->error();
    session_.reset();
    return false;
  }
  held_ = *got == "1";
  return held_;
}

bool LeaderLease::renew() {
  if (!held_ || !session_) return false;
  bool still = false;
  if (session_->pg) {
    // The lock is this session's as long as the session lives; ask anyway, so a lock released by hand counts.
    const auto r = session_->pg->query(
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid = pg_backend_pid() AND objsubid = 1 "
        "AND ((classid::bigint << 32) | objid::bigint) = hashtextextended($1, 0)",
        {lock_name_});
    still = r && std::string(PQgetvalue(r->get(), 0, 0)) == "1";
  } else {
    const auto mine = session_->my->query_value("SELECT IS_USED_LOCK(" + session_->my->quote(lock_name_) + ") = CONNECTION_ID()");
    still = mine && *mine == "1";
  }
  if (!still) {
    held_ = false;
    session_.reset();
  }
  return still;
}

std::optional<std::string> LeaderLease::holder() {
  if (is_postgres(config_)) {
    pg::Connection c(config_.source, "tidemark status", pg::Connection::Mode::Normal);
    if (!c.ok()) return std::nullopt;
    const auto r = c.query(
        "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' "
        "AND l.granted AND l.objsubid = 1 AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended($1, 0)",
        {lock_name_});
    if (!r || PQntuples(r->get()) == 0) return std::nullopt;
    std::string name = PQgetvalue(r->get(), 0, 0);
    if (name.rfind("tidemark ", 0) == 0) name.erase(0, 9);
    return name;
  }
  mysql::MySqlConnection c(config_.source);
  if (!c.ok()) return std::nullopt;
  const auto rows = c.query("SELECT ID, HOST FROM information_schema.PROCESSLIST WHERE ID = IS_USED_LOCK(" +
                            c.quote(lock_name_) + ")");
  if (!rows || rows->empty()) return std::nullopt;
  const auto& row = rows->front();
  return "connection " + row[0].value_or("?") + " from " + row[1].value_or("?");
}

}  // namespace tidemark
