// PostgreSQL prerequisites that the shared test server cannot lack: a second, throwaway PostgreSQL 15
// cluster with wal_level = replica (made by scripts/servers.sh in a temporary run directory on a free
// port, stopped and deleted at the end), and the real tidemark binary's `check` and `run` against it.
// (A role without REPLICATION under `check` is covered against the shared server in postgres_source_test.)

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "pg_cluster.hpp"
#include "pg_fixture.hpp"

namespace tidemark::test {
namespace {

using namespace std::chrono_literals;

const std::string kWalLevelProblem =
    "wal_level is 'replica', logical replication needs 'logical': run ALTER SYSTEM SET wal_level = logical; "
    "then restart PostgreSQL";
const std::string kStdoutSink = "sink:\n  type: stdout\n";

size_t count_of(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

class PostgresPrerequisites : public ::testing::Test {
 protected:
  // One cluster for the suite: initdb, start, ALTER SYSTEM and restart take a few seconds.
  static void SetUpTestSuite() { cluster_ = std::make_unique<ThrowawayPostgres>(std::vector<std::string>{"wal_level = replica"}); }
  static void TearDownTestSuite() { cluster_.reset(); }

  void SetUp() override {
    ASSERT_NE(cluster_, nullptr) << "the throwaway PostgreSQL cluster did not start (see above)";
    ASSERT_EQ(pg_query(cluster_->target(), "SHOW wal_level"), std::vector<std::string>{"replica"});
  }

  static std::unique_ptr<ThrowawayPostgres> cluster_;
};

std::unique_ptr<ThrowawayPostgres> PostgresPrerequisites::cluster_;

TEST_F(PostgresPrerequisites, WalLevelNotLogicalFailsCheckAndRunNamingTheFix) {
  PgFixture f(cluster_->target(), cluster_->target(true));
  const std::string t = f.table("walcheck");
  pg_exec(f.pg, "CREATE TABLE " + t + " (id int PRIMARY KEY)");
  f.write_config({t}, {.sink_yaml = kStdoutSink});

  f.daemon.start("check");
  const auto check_status = f.daemon.process().wait_for_exit(60s);
  ASSERT_TRUE(check_status.has_value()) << "tidemark check hangs";
  EXPECT_EQ(*check_status, 1);
  const std::string out = f.daemon.stdout_text();
  EXPECT_NE(out.find("problem: " + kWalLevelProblem + "\n"), std::string::npos) << out << f.daemon.stderr_text();
  EXPECT_NE(out.find("\n1 problem(s) found\n"), std::string::npos) << "wal_level is the only problem here:\n" << out;

  f.daemon.start("run");
  const auto run_status = f.daemon.process().wait_for_exit(60s);
  ASSERT_TRUE(run_status.has_value()) << "tidemark run must stop, not wait or retry:\n" << f.daemon.stderr_text();
  EXPECT_EQ(*run_status, 1) << "a startup error";
  const std::string err = f.daemon.stderr_text();
  EXPECT_EQ(count_of(err, kWalLevelProblem), 1u) << err;
  EXPECT_TRUE(pg_query(f.admin, "SELECT 1 FROM pg_replication_slots").empty()) << "no slot on a refused start";
  EXPECT_TRUE(pg_query(f.admin, "SELECT 1 FROM pg_publication").empty()) << "no publication on a refused start";
  EXPECT_EQ(f.daemon.stdout_text(), "") << "nothing was streamed";
}

// `run` with a role that may not replicate (its `check` is covered in postgres_source_test): every problem
// is reported at once, each with its fix, and the daemon stops.
TEST_F(PostgresPrerequisites, RunWithARoleWithoutReplicationReportsEveryProblemAndStops) {
  PgFixture f(cluster_->target(), cluster_->target(true));
  const std::string t = f.table("rolecheck");
  const std::string role = "norepl_" + f.suffix;
  pg_exec(f.pg, "CREATE TABLE " + t + " (id int PRIMARY KEY)");
  pg_exec(f.admin, "CREATE ROLE " + role + " LOGIN PASSWORD 'pw'");
  pg_exec(f.pg, "GRANT SELECT ON " + t + " TO " + role);
  f.pg.user = role;
  f.pg.password = "pw";
  f.write_config({t}, {.sink_yaml = kStdoutSink});

  f.daemon.start("check");
  const auto check_status = f.daemon.process().wait_for_exit(60s);
  ASSERT_TRUE(check_status.has_value()) << "tidemark check hangs";
  EXPECT_EQ(*check_status, 1);
  const std::string out = f.daemon.stdout_text();
  const std::string role_problem = "role " + role + " may not start replication: run ALTER ROLE \"" + role + "\" REPLICATION;";
  EXPECT_NE(out.find("problem: " + kWalLevelProblem + "\n"), std::string::npos) << out;
  EXPECT_NE(out.find("problem: " + role_problem + "\n"), std::string::npos) << out;

  f.daemon.start("run");
  const auto run_status = f.daemon.process().wait_for_exit(60s);
  ASSERT_TRUE(run_status.has_value()) << "tidemark run must stop, not wait or retry:\n" << f.daemon.stderr_text();
  EXPECT_EQ(*run_status, 1) << "a startup error";
  const std::string err = f.daemon.stderr_text();
  EXPECT_EQ(count_of(err, kWalLevelProblem), 1u) << err;
  EXPECT_EQ(count_of(err, role_problem), 1u) << err;
  EXPECT_TRUE(pg_query(f.admin, "SELECT 1 FROM pg_replication_slots").empty()) << "no slot on a refused start";
  pg_exec(f.admin, "DROP OWNED BY " + role + "; DROP ROLE " + role);
}

}  // namespace
}  // namespace tidemark::test
