// The PostgreSQL source end to end: a real PostgreSQL 15 (wal_level=logical), the real tidemark binary,
// the real Kafka broker, and the tests' own consumer.

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <set>
#include <map>
#include <thread>

#include <nlohmann/json.hpp>

#include "pg_fixture.hpp"

namespace tidemark::test {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

// What only PostgreSQL has; the scenario both databases share is in change_stream_test.cpp.
TEST(PostgresSource, ToastArraysFullIdentityTruncateAndLsns) {
  PgFixture f;
  const std::string t = f.table("pgit");
  const std::string full = f.table("pgfull");
  pg_exec(f.pg, "CREATE TABLE " + t + " (id int PRIMARY KEY, name text, big text, amount numeric(12,2), at timestamptz, tags text[])");
  pg_exec(f.pg, "CREATE TABLE " + full + " (id int PRIMARY KEY, name text); ALTER TABLE " + full + " REPLICA IDENTITY FULL");
  create_topic(f.bootstrap, f.topic(t), 3);
  create_topic(f.bootstrap, f.topic(full), 1);
  f.write_config({t, full});
  ASSERT_TRUE(f.start_and_wait_for_slot()) << f.daemon.stderr_text();

  pg_exec(f.pg, "INSERT INTO " + t + " VALUES (1, 'a', (SELECT string_agg(md5(i::text), '') FROM generate_series(1, 3000) i), "
                "12345.67, '2026-01-02 03:04:05.123456+00', ARRAY['x', NULL, 'y,z'])");
  pg_exec(f.pg, "UPDATE " + t + " SET name = 'b' WHERE id = 1");  // big is TOASTed and unchanged
  pg_exec(f.pg, "INSERT INTO " + full + " VALUES (10, 'x')");
  pg_exec(f.pg, "UPDATE " + full + " SET name = 'y' WHERE id = 10");
  pg_exec(f.pg, "TRUNCATE " + full);

  // c, u on t; c, u, t on full.
  const auto records = f.read_until(f.topic(t), 2);
  ASSERT_EQ(records.size(), 2u) << f.daemon.stderr_text();
  auto keys = records_by_key(records);
  ASSERT_EQ(keys.size(), 1u);
  const auto& one = keys["{\"id\":1}"];
  ASSERT_EQ(one.size(), 2u);
  const json c = json::parse(*one[0].value);
  EXPECT_EQ(c["op"], "c");
  EXPECT_EQ(c["after"]["name"], "a");
  EXPECT_EQ(c["after"]["big"].get<std::string>().size(), 96000u);
  EXPECT_EQ(c["after"]["amount"], "12345.67");
  EXPECT_EQ(c["after"]["at"], "2026-01-02T03:04:05.123456Z");
  EXPECT_EQ(c["after"]["tags"], json::parse(R"(["x", null, "y,z"])"));
  EXPECT_EQ(c["source"]["schema"], "public");
  EXPECT_TRUE(c["source"]["txId"].is_number());
  EXPECT_TRUE(c["source"]["lsn"].is_number());
  ASSERT_TRUE(c["source"]["commit_lsn"].is_number());
  EXPECT_GT(c["source"]["commit_lsn"].get<uint64_t>(), c["source"]["lsn"].get<uint64_t>())
      << "the commit record comes after the change";
  const json u = json::parse(*one[1].value);
  EXPECT_EQ(u["op"], "u");
  EXPECT_TRUE(u["before"].is_null()) << "default replica identity: no old row without a key change";
  EXPECT_EQ(u["after"]["name"], "b");
  EXPECT_EQ(u["after"]["big"], "__debezium_unavailable_value") << "unchanged TOAST is unavailable, never null";

  const auto full_records = f.read_until(f.topic(full), 3);
  ASSERT_EQ(full_records.size(), 3u);
  const json fu = json::parse(*full_records[1].value);
  EXPECT_EQ(fu["op"], "u");
  EXPECT_EQ(fu["before"], json::parse(R"({"id":10,"name":"x"})")) << "REPLICA IDENTITY FULL: complete old row";
  EXPECT_EQ(*full_records[1].key, "{\"id\":10}") << "keyed by the primary key, not by every column";
  EXPECT_EQ(json::parse(*full_records[2].value)["op"], "t");
  EXPECT_FALSE(full_records[2].key.has_value());
  EXPECT_EQ(f.daemon.stop(SIGTERM), 0) << f.daemon.stderr_text();
}

TEST(PostgresSource, ADroppedSlotIsAFatalErrorNamingTheRecovery) {
  PgFixture f;
  const std::string t = f.table("pgslot");
  pg_exec(f.pg, "CREATE TABLE " + t + " (id int PRIMARY KEY)");
  create_topic(f.bootstrap, f.topic(t), 1);
  f.write_config({t});
  ASSERT_TRUE(f.start_and_wait_for_slot()) << f.daemon.stderr_text();
  pg_exec(f.pg, "INSERT INTO " + t + " VALUES (1)");
  ASSERT_TRUE(wait_until([&] { return f.daemon.committed_sequence().has_value(); }, 30s)) << f.daemon.stderr_text();
  ASSERT_EQ(f.daemon.stop(SIGTERM), 0) << f.daemon.stderr_text();

  pg_exec(f.pg, "SELECT pg_drop_replication_slot('" + f.slot + "')");
  pg_exec(f.pg, "INSERT INTO " + t + " VALUES (2)");  // a change nobody can stream any more
  f.daemon.start();
  const auto status = f.daemon.process().wait_for_exit(60s);
  ASSERT_TRUE(status.has_value()) << "a lost slot must stop the daemon, not hang or silently start over";
  EXPECT_EQ(*status, 2);
  const std::string err = f.daemon.stderr_text();
  EXPECT_NE(err.find("replication slot " + f.slot + " is gone"), std::string::npos) << err;
  EXPECT_NE(err.find("taking a new snapshot"), std::string::npos) << err;
  EXPECT_TRUE(pg_query(f.pg, "SELECT 1 FROM pg_replication_slots WHERE slot_name = '" + f.slot + "'").empty())
      << "the daemon must not quietly create a new slot over the gap";
}

TEST(PostgresSource, CheckListsEveryMissingPrerequisiteWithTheFix) {
  PgFixture f;
  const std::string t = f.table("pgcheck");
  const std::string role = "norepl_" + f.suffix;
  pg_exec(f.pg, "CREATE TABLE " + t + " (id int PRIMARY KEY)");
  pg_exec(f.admin, "CREATE ROLE " + role + " LOGIN PASSWORD 'pw'");
  f.pg.user = role;
  f.pg.password = "pw";
  f.write_config({t, "no_such_table_" + f.suffix}, {.create_publication = false});
  f.daemon.start("check");
  EXPECT_EQ(f.daemon.process().wait_for_exit(60s), 1);
  const std::string out = f.daemon.stdout_text();
  EXPECT_NE(out.find("may not start replication: run ALTER ROLE \"" + role + "\" REPLICATION;"), std::string::npos) << out;
  EXPECT_NE(out.find("may not read \"public\".\"" + t + "\": run GRANT SELECT ON"), std::string::npos) << out;
  EXPECT_NE(out.find("publication " + f.slot + " does not exist: run CREATE PUBLICATION"), std::string::npos) << out;
  pg_exec(f.admin, "DROP ROLE " + role);
}

}  // namespace
}  // namespace tidemark::test
