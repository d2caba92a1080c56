#include "pg_fixture.hpp"

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "process.hpp"

namespace tidemark::test {

using namespace std::chrono_literals;

PgFixture::PgFixture(PgTarget target, PgTarget admin_target, std::string kafka)
    : pg(std::move(target)), admin(std::move(admin_target)), bootstrap(std::move(kafka)) {
  suffix = daemon.name().substr(3);  // after "it-"
  for (char& c : suffix)
    if (c == '-') c = '_';
  slot = "tm_" + suffix;
}

PgFixture::~PgFixture() {
  if (daemon.started() && daemon.process().running()) daemon.stop(SIGKILL);
  try {
    // The walsender of a killed daemon may hold the slot for a moment.
    wait_until([&] { return !slot_active(); }, 10s);
    pg_exec(admin, "SELECT pg_drop_replication_slot('" + slot + "') FROM pg_replication_slots WHERE slot_name = '" +
                       slot + "'");
  } catch (...) {
  }
}

void PgFixture::write_config(const std::vector<std::string>& tables, const PgConfigOptions& options) {
  std::string yaml = "source:\n  type: postgres\n  host: " + pg.host + "\n  port: " + pg.port + "\n  user: " + pg.user +
                     "\n  password: " + pg.password + "\n  database: " + pg.database + "\n  tables:\n";
  for (const auto& t : tables) yaml += "    - public." + t + "\n";
  yaml += "  postgres:\n    slot: " + slot + "\n    publication: " + slot +
          "\n    create_publication: " + (options.create_publication ? "true" : "false") +
          "\n    status_interval_ms: 1000\n";
  daemon.write_config(options.sink_yaml, "info", yaml + options.snapshot_yaml + options.extra_yaml);
}

bool PgFixture::slot_active() const {
  return !pg_query(admin, "SELECT 1 FROM pg_replication_slots WHERE slot_name = '" + slot + "' AND active").empty();
}

bool PgFixture::start_and_wait_for_slot() {
  daemon.start();
  const bool ok = wait_until([&] { return slot_active(); }, 30s);
  std::this_thread::sleep_for(300ms);
  return ok;
}

std::vector<ConsumedRecord> PgFixture::read_until(const std::string& bootstrap_servers, const std::string& topic_name,
                                                  size_t count, std::chrono::milliseconds timeout) {
  std::vector<ConsumedRecord> records;
  wait_until([&] {
    if (partition_count(bootstrap_servers, topic_name) <= 0) return false;  // not created yet
    records = consume_all(bootstrap_servers, topic_name);
    return records.size() >= count;
  }, timeout);
  return records;
}

std::string PgFixture::walsender_pid() const {
  const auto rows =
      pg_query(admin, "SELECT active_pid::text FROM pg_replication_slots WHERE slot_name = '" + slot + "' AND active");
  return rows.empty() ? "" : rows[0];
}

std::set<std::pair<int, int>> distinct_changes(const std::vector<ConsumedRecord>& records) {
  std::set<std::pair<int, int>> changes;
  for (const auto& r : records) {
    if (!r.value) continue;
    const auto v = nlohmann::json::parse(*r.value);
    if (v["after"].is_object()) changes.emplace(v["after"]["id"].get<int>(), v["after"]["version"].get<int>());
  }
  return changes;
}

std::map<int, std::vector<int>> versions_by_key(const std::vector<ConsumedRecord>& records) {
  std::map<int, std::vector<int>> versions;
  for (const auto& r : records) {
    const auto v = nlohmann::json::parse(r.value.value_or("null"));
    if (!v.is_object() || !v["after"].is_object()) {
      ADD_FAILURE() << "not an insert or update at " << r.topic << "/" << r.partition << "@" << r.offset << ": "
                    << r.value.value_or("<tombstone>");
      continue;
    }
    versions[v["after"]["id"].get<int>()].push_back(v["after"]["version"].get<int>());
  }
  return versions;
}

size_t expect_every_version_in_commit_order(const std::map<int, std::vector<int>>& versions, int keys,
                                            int versions_per_key) {
  EXPECT_EQ(versions.size(), static_cast<size_t>(keys)) << "keys with at least one record";
  size_t repeats = 0;
  for (const auto& [key, seen] : versions) {
    const std::set<int> distinct(seen.begin(), seen.end());
    EXPECT_EQ(distinct.size(), static_cast<size_t>(versions_per_key)) << "key " << key << " lost a version";
    if (!distinct.empty()) {
      EXPECT_EQ(*distinct.begin(), 0) << "key " << key;
      EXPECT_EQ(*distinct.rbegin(), versions_per_key - 1) << "key " << key;
    }
    int highest = -1;
    for (const int v : seen) {
      // Going back is allowed only as a replay of a version delivered before.
      if (v < highest) {
        EXPECT_GT(std::count(seen.begin(), seen.end(), v), 1) << "key " << key << " went back to " << v;
      }
      highest = std::max(highest, v);
    }
    repeats += seen.size() - distinct.size();
  }
  return repeats;
}

}  // namespace tidemark::test
