#pragma once
// What every source (PostgreSQL, MySQL/MariaDB, the generator) offers the daemon.

#include <atomic>
#include <cstdint>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "core/bounded_queue.hpp"
#include "tidemark/change_event.hpp"

namespace tidemark {

using EventQueue = BoundedQueue<StreamItem>;

struct SourceOutcome {
  bool ok = true;      // false: a fatal error; the daemon stops and exits non-zero
  std::string error;   // the cause and the fix
};

class Source {
 public:
  virtual ~Source() = default;

  // Connects and checks every prerequisite (privileges, server settings, slots...); returns each problem
  // with its fix. Used by `tidemark check` and before `run`.
  virtual std::vector<std::string> check() = 0;

  // Recommendations the last check() found that do not stop the source (MySQL: binlog_row_metadata not
  // FULL). `tidemark check` prints them; `run` logs them when the source starts streaming.
  virtual std::vector<std::string> warnings() const { return {}; }

  // Reads the log from `start` (none: where a first start begins) and pushes items into `out` in log
  // order until `stop` is requested or a fatal error. Transient failures (a dropped connection) are
  // retried inside with backoff and resume from the last committed position.
  virtual SourceOutcome run(const std::optional<SourcePosition>& start, EventQueue& out, std::stop_token stop) = 0;

  // Called after `position` has been persisted. Sources that confirm progress to the server (PostgreSQL's
  // flush LSN) do it from here only, so the server never discards what a restart would need.
  virtual void on_position_persisted(const SourcePosition& position) { (void)position; }

  // Applies the reloadable settings of a new configuration (SIGHUP).
  virtual void reconfigure(const Config& config) { (void)config; }

  // Runs heartbeat.action_query on the source, on a connection of its own (the heartbeat thread's, never the
  // log reader's). The error, with what to check, on failure.
  virtual std::optional<std::string> run_action_query(const std::string& sql) {
    (void)sql;
    return std::string("this source has no database to run heartbeat.action_query on");
  }

  // How far the server's log runs past `committed` (the persisted position), in bytes: PostgreSQL the WAL
  // the slot retains past its confirmed flush LSN, MySQL the binlog bytes after the position. On a
  // connection of its own (the probe thread's); nullopt when it cannot be known.
  virtual std::optional<int64_t> log_bytes_behind(const std::optional<SourcePosition>& committed) {
    (void)committed;
    return std::nullopt;
  }

  // For metrics and readiness, read from any thread: whether a replication session is up, and how many
  // were lost and retried since start.
  bool connected() const { return connected_.load(std::memory_order_relaxed); }
  uint64_t reconnects() const { return reconnects_.load(std::memory_order_relaxed); }

 protected:
  void set_connected(bool up) { connected_.store(up, std::memory_order_relaxed); }
  void count_reconnect() { reconnects_.fetch_add(1, std::memory_order_relaxed); }

 private:
  std::atomic<bool> connected_{false};
  std::atomic<uint64_t> reconnects_{0};
};

}  // namespace tidemark
