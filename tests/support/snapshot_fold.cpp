#include "snapshot_fold.hpp"

#include <libpq-fe.h>

#include <algorithm>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "mysql_client.hpp"
#include "pg_client.hpp"

namespace tidemark::test {

namespace {

class PgSession final : public SqlSession {
 public:
  PgSession() {
    const PgTarget t = real_postgres();
    const char* keys[] = {"host", "port", "user", "password", "dbname", nullptr};
    const char* values[] = {t.host.c_str(), t.port.c_str(), t.user.c_str(), t.password.c_str(), t.database.c_str(), nullptr};
    conn_ = PQconnectdbParams(keys, values, 0);
    if (PQstatus(conn_) != CONNECTION_OK) {
      const std::string error = std::string("writer: ") + PQerrorMessage(conn_);
      PQfinish(conn_);  // a failed connection is freed too (the destructor does not run)
      throw std::runtime_error(error);
    }
  }
  ~PgSession() override { PQfinish(conn_); }
  void exec(const std::string& sql) override {
    PGresult* r = PQexec(conn_, sql.c_str());
    const bool ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;
    PQclear(r);
    if (!ok) throw std::runtime_error("writer: " + sql + ": " + PQerrorMessage(conn_));
  }

 private:
  PGconn* conn_ = nullptr;
};

class MySqlWriterSession final : public SqlSession {
 public:
  MySqlWriterSession() : session_(real_mysql()) {}
  void exec(const std::string& sql) override { session_.exec(sql); }

 private:
  MySqlSession session_;
};

struct Record {
  char op = '?';  // c u d r, or 'x' for a tombstone
  int64_t id = 0;
  int64_t version = 0;
};

std::optional<Record> parse(const ConsumedRecord& r) {
  if (!r.value) return Record{'x', 0, 0};
  const auto v = nlohmann::json::parse(*r.value);
  const std::string op = v.at("op").get<std::string>();
  Record out;
  out.op = op.at(0);
  const auto& image = out.op == 'd' ? v.at("before") : v.at("after");
  if (!image.is_object()) return std::nullopt;
  out.id = image.at("id").get<int64_t>();
  // PostgreSQL's delete carries the replica identity only (version is null there).
  out.version = image.at("version").is_number() ? image.at("version").get<int64_t>() : -1;
  return out;
}

}  // namespace

std::unique_ptr<SqlSession> open_pg_session() { return std::make_unique<PgSession>(); }
std::unique_ptr<SqlSession> open_mysql_session() { return std::make_unique<MySqlWriterSession>(); }

ConcurrentWriters::ConcurrentWriters(std::function<std::unique_ptr<SqlSession>()> open, std::string table, int threads,
                                     uint64_t seed, int64_t initial_rows, int64_t fresh_base, KeyChanges key_changes)
    : open_(std::move(open)),
      table_(std::move(table)),
      initial_rows_(initial_rows),
      key_changes_(key_changes),
      next_fresh_(fresh_base) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this, i, seed] { run(i, seed * 1000 + static_cast<uint64_t>(i)); });
}

ConcurrentWriters::~ConcurrentWriters() { stop(); }

void ConcurrentWriters::stop() {
  stop_ = true;
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

void ConcurrentWriters::run(int index, uint64_t seed) {
  (void)index;
  std::unique_ptr<SqlSession> session = open_();
  std::mt19937_64 random(seed);
  const int64_t fresh_start = next_fresh_.load();
  auto pick_fresh = [&]() -> std::optional<int64_t> {
    const int64_t fresh_end = next_fresh_.load();
    if (fresh_end <= fresh_start) return std::nullopt;
    return fresh_start + static_cast<int64_t>(random() % static_cast<uint64_t>(fresh_end - fresh_start));
  };
  auto pick = [&]() -> int64_t {
    // Mostly rows the snapshot reads; some rows born during it.
    if (random() % 5 == 0)
      if (const auto fresh = pick_fresh()) return *fresh;
    return 1 + static_cast<int64_t>(random() % static_cast<uint64_t>(initial_rows_));
  };
  while (!stop_) {
    uint64_t dice = random() % 10;
    int64_t id = pick();
    if (dice >= 8 && key_changes_ == KeyChanges::OwnRowsOnly) {
      // Fresh ids are unique to these writers (fresh_base): nobody else changes those rows.
      if (const auto own = pick_fresh()) id = *own;
      else dice = 0;  // nothing of our own to move yet: an update instead
    }
    if (dice < 4) {
      session->exec("UPDATE " + table_ + " SET version = version + 1 WHERE id = " + std::to_string(id));
    } else if (dice < 6) {
      session->exec("INSERT INTO " + table_ + " (id, version, payload) VALUES (" + std::to_string(next_fresh_++) +
                    ", 0, 'written during the snapshot')");
    } else if (dice < 8) {
      session->exec("DELETE FROM " + table_ + " WHERE id = " + std::to_string(id));
    } else {
      session->exec("UPDATE " + table_ + " SET id = " + std::to_string(next_fresh_++) +
                    ", version = version + 1 WHERE id = " + std::to_string(id));
    }
    ++operations_;
    // About 1-2k writes/s per writer for a 100k-row table, fewer for smaller tables: concurrent enough,
    // while most rows stay untouched and so must come from the snapshot.
    std::this_thread::sleep_for(std::chrono::microseconds(500) * std::max<int64_t>(1, 100'000 / initial_rows_));
  }
}

std::map<int64_t, int64_t> fold(const std::vector<ConsumedRecord>& records) {
  std::map<int64_t, int64_t> state;
  for (const auto& r : records) {
    const auto rec = parse(r);
    if (!rec || rec->op == 'x') continue;
    if (rec->op == 'd') {
      state.erase(rec->id);
    } else {
      state[rec->id] = rec->version;
    }
  }
  return state;
}

FoldSummary expect_fold(const std::vector<ConsumedRecord>& records, const std::map<int64_t, int64_t>& expected,
                        bool allow_replays) {
  FoldSummary summary;
  std::map<int64_t, int64_t> highest;  // key -> highest version delivered
  std::set<int64_t> deleted;
  std::set<std::tuple<int64_t, int64_t, char>> delivered;  // (key, version, op) seen so far
  size_t failures = 0;
  for (const auto& r : records) {
    const auto rec = parse(r);
    if (!rec) {
      ADD_FAILURE() << "record without the row image at offset " << r.offset << ": " << r.value.value_or("");
      continue;
    }
    if (rec->op == 'x') continue;
    ++summary.records;
    if (rec->op == 'r') ++summary.reads;
    else ++summary.changes;
    const auto seen = std::make_tuple(rec->id, rec->version, rec->op == 'd' ? 'd' : 'v');
    const bool repeat = delivered.count(seen) > 0;
    // A snapshot row equal to the version the log delivered before it is expected, not a replay.
    if (repeat && rec->op != 'r') ++summary.replays;
    const auto it = highest.find(rec->id);
    const bool back = rec->op != 'd' && it != highest.end() && rec->version < it->second;
    const bool resurrected = rec->op != 'd' && deleted.count(rec->id) > 0;
    if ((back || resurrected) && !(allow_replays && repeat) && failures++ < 20) {
      ADD_FAILURE() << "key " << rec->id << " at offset " << r.offset << ": op " << rec->op << " version " << rec->version
                    << (back ? " after version " + std::to_string(it->second) : std::string())
                    << (resurrected ? " after its delete" : "");
    }
    if (rec->op == 'd') {
      deleted.insert(rec->id);
    } else if (!resurrected || !allow_replays) {
      highest[rec->id] = std::max(rec->version, it == highest.end() ? rec->version : it->second);
    }
    delivered.insert(seen);
  }
  const std::map<int64_t, int64_t> folded = fold(records);
  size_t missing = 0, extra = 0, stale = 0;
  for (const auto& [id, version] : expected) {
    const auto f = folded.find(id);
    if (f == folded.end()) {
      if (missing++ < 10) ADD_FAILURE() << "row " << id << " (version " << version << ") is missing from the topic";
    } else if (f->second != version) {
      if (stale++ < 10) ADD_FAILURE() << "row " << id << ": topic has version " << f->second << ", table " << version;
    }
  }
  for (const auto& [id, version] : folded)
    if (!expected.count(id) && extra++ < 10) ADD_FAILURE() << "row " << id << " (version " << version << ") is not in the table";
  EXPECT_EQ(missing + extra + stale, 0u) << missing << " missing, " << extra << " extra, " << stale << " stale rows";
  return summary;
}

}  // namespace tidemark::test
