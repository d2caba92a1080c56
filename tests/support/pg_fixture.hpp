#pragma once
// One PostgreSQL pipeline of an integration test: the real daemon with a postgres source, a slot and a
// publication of its own, tables and topics whose names no other run used, and the tests' own consumer.

#include <chrono>
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "daemon_runner.hpp"
#include "kafka_client.hpp"
#include "pg_client.hpp"

namespace tidemark::test {

// Every member has a default initializer, so designated initializers may name any subset.
struct PgConfigOptions {
  std::string sink_yaml{};   // empty: the real Kafka broker (`bootstrap`)
  std::string extra_yaml{};  // appended at top level, e.g. "queue:\n  max_events: 100\n"
  bool create_publication = true;
  // The snapshot section: tests that do not test snapshots take none on first start.
  std::string snapshot_yaml{"snapshot:\n  initial: never\n"};
};

struct PgFixture {
  // `target` is the daemon's account, `admin` a superuser of the same server (cleanup, walsender lookups).
  // `kafka` is the broker the daemon and the consumer use.
  explicit PgFixture(PgTarget target = real_postgres(), PgTarget admin_target = real_postgres(true),
                     std::string kafka = real_kafka_bootstrap());
  // Kills a daemon still running, waits for its slot to be released and drops the slot.
  ~PgFixture();
  PgFixture(const PgFixture&) = delete;
  PgFixture& operator=(const PgFixture&) = delete;

  PgTarget pg;     // what the daemon connects as (a test may change user/password before write_config)
  PgTarget admin;  // superuser
  std::string bootstrap;
  DaemonRunner daemon{bootstrap, GeneratorSettings{}};
  std::string suffix;  // unique to this fixture: the tail of table() names, slot and publication
  std::string slot;    // the slot's and the publication's name

  std::string table(const std::string& base) const { return base + "_" + suffix; }
  std::string topic(const std::string& table_name) const { return daemon.name() + ".public." + table_name; }

  // A postgres source capturing public.<each of tables>, slot and publication `slot`.
  void write_config(const std::vector<std::string>& tables, const PgConfigOptions& options = {});

  // Starts `tidemark run` and waits (30 s) until its slot exists and is streaming; false when it never is.
  [[nodiscard]] bool start_and_wait_for_slot();
  bool slot_active() const;

  // Reads the topic until it holds at least `count` records (or the timeout passed) and returns what it holds.
  std::vector<ConsumedRecord> read_until(const std::string& bootstrap_servers, const std::string& topic_name,
                                         size_t count, std::chrono::milliseconds timeout = std::chrono::seconds(60));
  std::vector<ConsumedRecord> read_until(const std::string& topic_name, size_t count) {
    return read_until(bootstrap, topic_name, count);
  }

  // The walsender's pid of this daemon's replication connection, or "" when there is none.
  std::string walsender_pid() const;
};

// The (id, version) pairs of the after images of a table (id int, version int); tombstones left out.
std::set<std::pair<int, int>> distinct_changes(const std::vector<ConsumedRecord>& records);

// Records of a table (id int, version int): per after.id, the after.version values in delivery order.
std::map<int, std::vector<int>> versions_by_key(const std::vector<ConsumedRecord>& records);

// At-least-once with per-key commit order: every one of `keys` keys has every version 0..versions_per_key-1,
// and a key goes back to an older version only as a repeat of one it had delivered before. Reports each
// violation as a test failure; returns the number of repeated records.
size_t expect_every_version_in_commit_order(const std::map<int, std::vector<int>>& versions, int keys,
                                            int versions_per_key);

}  // namespace tidemark::test
