#pragma once
// Which of several instances of one pipeline runs it (ha.enabled): the one holding the pipeline's lease, a
// lock on the source database that needs nothing created and no privilege —
//   PostgreSQL: the session advisory lock pg_try_advisory_lock(hashtextextended('tidemark/<name>', 0));
//   MySQL/MariaDB: GET_LOCK('tidemark/<name>', 0).
// The lock lives as long as the holder's session. The session asks the server to close it once idle for
// ha.lease_timeout_ms (idle_session_timeout, wait_timeout) and the holder touches it every second, so a
// leader that dies loses the lease at once and one that stops answering (SIGSTOP, a partition) within the
// timeout. Invariant: renew() is true only while this session still holds the lock.

#include <memory>
#include <optional>
#include <string>

#include "config/config.hpp"

namespace tidemark {

class LeaderLease {
 public:
  explicit LeaderLease(const Config& config);
  ~LeaderLease();
  LeaderLease(const LeaderLease&) = delete;
  LeaderLease& operator=(const LeaderLease&) = delete;

  // One attempt, without waiting: true when this instance holds the lease now. False with `error` set when
  // the source database could not be asked (the next attempt connects again).
  bool try_acquire(std::string& error);
  // While held: touches the session. False once the lease is lost (the session was closed, the server is
  // unreachable, or the lock is gone): the caller must stop writing.
  bool renew();
  // Who holds the lease, as the holder named itself (ha.instance); nullopt when nobody does or the database
  // cannot be asked.
  std::optional<std::string> holder();

  const std::string& instance() const { return instance_; }
  const std::string& lock_name() const { return lock_name_; }

 private:
  struct Session;
  const Config& config_;
  std::string instance_;
  std::string lock_name_;  // tidemark/<name>
  std::unique_ptr<Session> session_;
  bool held_ = false;
};

// This instance's name: ha.instance, or "<hostname> pid <pid>".
std::string instance_name(const Config& config);

}  // namespace tidemark
