#pragma once
// The snapshot tests' oracle: concurrent writers that insert, update (with a per-row version), change keys
// and delete while a snapshot runs, and a fold of the topic (read by the tests' own consumer) that must
// equal the table's final contents, with no key's version going backwards in delivery order.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "kafka_client.hpp"

namespace tidemark::test {

// One writer's connection (each writer thread owns one).
class SqlSession {
 public:
  virtual ~SqlSession() = default;
  virtual void exec(const std::string& sql) = 0;
};
std::unique_ptr<SqlSession> open_pg_session();     // real_postgres()
std::unique_ptr<SqlSession> open_mysql_session();  // real_mysql()

// Which rows the writers move to a new key.
enum class KeyChanges {
  AnyRow,
  // Only rows these writers inserted themselves: the loser of a two-way pair with two_way.winner may not
  // move rows the winner's side changes too (docs/apply.md), so its writers move only rows of their own.
  OwnRowsOnly,
};

// Table shape the writers and the fold expect: (id BIGINT PRIMARY KEY, version BIGINT NOT NULL, payload text).
class ConcurrentWriters {
 public:
  // Writers change rows of `table` (ids 1..initial_rows exist at the start), using fresh ids from
  // `fresh_base` up for inserts and key changes, so no id is ever used twice.
  ConcurrentWriters(std::function<std::unique_ptr<SqlSession>()> open, std::string table, int threads, uint64_t seed,
                    int64_t initial_rows, int64_t fresh_base = 10'000'000, KeyChanges key_changes = KeyChanges::AnyRow);
  ~ConcurrentWriters();
  void stop();
  uint64_t operations() const { return operations_.load(); }

 private:
  void run(int index, uint64_t seed);
  std::function<std::unique_ptr<SqlSession>()> open_;
  std::string table_;
  int64_t initial_rows_;
  KeyChanges key_changes_;
  std::atomic<int64_t> next_fresh_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> operations_{0};
  std::vector<std::thread> threads_;
};

struct FoldSummary {
  size_t records = 0;
  size_t reads = 0;     // op r (snapshot rows)
  size_t changes = 0;   // c, u, d
  size_t replays = 0;   // change records that repeat a (key, version) delivered before
};

// Folds the records of one topic by key and checks it against `expected` (id -> version): equal contents,
// no version going back for a key, and no key coming back after its delete — except, when `allow_replays`
// (a daemon was killed), as an exact repeat of a record delivered before.
FoldSummary expect_fold(const std::vector<ConsumedRecord>& records, const std::map<int64_t, int64_t>& expected,
                        bool allow_replays);

// The fold of `records` (id -> version), without checks, to wait until the topic has caught up.
std::map<int64_t, int64_t> fold(const std::vector<ConsumedRecord>& records);

}  // namespace tidemark::test
