// PostgreSQL prerequisites that the shared test server cannot lack: a second, throwaway PostgreSQL 15
// cluster with wal_level = replica (made by scripts/servers.sh in a temporary run directory on a free
// port, stopped and deleted at the end), and the real tidemark binary's `check` and `run` against it.
// (A role without REPLICATION under `check` is covered against the shared server in postgres_source_test.)

#include <gtest/gtest.h>

#include <memory>
#include <optional>
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

// What `tidemark check` and then `tidemark run` did with the fixture's configuration (60 s each at most;
// a status of nullopt means the command had not ended by then).
struct CheckThenRun {
  std::optional<int> check_status;
  std::string check_output;  // stdout and stderr
  std::optional<int> run_status;
  std::string run_stderr;
  std::string run_stdout;
};

CheckThenRun check_then_run(PgFixture& f) {
  CheckThenRun result;
  f.daemon.start("check");
  result.check_status = f.daemon.process().wait_for_exit(60s);
  result.check_output = f.daemon.stdout_text() + f.daemon.stderr_text();
  f.daemon.start("run");
  result.run_status = f.daemon.process().wait_for_exit(60s);
  result.run_stderr = f.daemon.stderr_text();
  result.run_stdout = f.daemon.stdout_text();
  return result;
}

class PostgresPrerequisites : public ::testing::Test {
 protected:
  // One cluster for the suite (initdb, start, ALTER SYSTEM and restart take a few seconds), made by the
  // first test: a failure in SetUpTestSuite would only mark the tests skipped, this fails each of them.
  void SetUp() override {
    if (!cluster_) {
      try {
        cluster_ = std::make_unique<ThrowawayPostgres>(std::vector<std::string>{"wal_level = replica"});
      } catch (const std::exception& e) {
        FAIL() << "the throwaway PostgreSQL cluster did not start: " << e.what();
      }
    }
    ASSERT_EQ(pg_query(cluster_->target(), "SHOW wal_level"), std::vector<std::string>{"replica"});
  }
  static void TearDownTestSuite() { cluster_.reset(); }

  static std::unique_ptr<ThrowawayPostgres> cluster_;
};

std::unique_ptr<ThrowawayPostgres> PostgresPrerequisites::cluster_;

TEST_F(PostgresPrerequisites, WalLevelNotLogicalFailsCheckAndRunNamingTheFix) {
  PgFixture f(cluster_->target(), cluster_->target(true));
  const std::string t = f.table("walcheck");
  pg_exec(f.pg, "CREATE TABLE " + t + " (id int PRIMARY KEY)");
  f.write_config({t}, {.sink_yaml = kStdoutSink});

  const CheckThenRun r = check_then_run(f);
  EXPECT_EQ(r.check_status, 1) << "tidemark check must end with status 1:\n" << r.check_output;
  EXPECT_NE(r.check_output.find("problem: " + kWalLevelProblem + "\n"), std::string::npos) << r.check_output;
  EXPECT_NE(r.check_output.find("\n1 problem(s) found\n"), std::string::npos)
      << "wal_level is the only problem here:\n" << r.check_output;
  EXPECT_EQ(r.run_status, 1) << "tidemark run must stop with a startup error, not wait or retry:\n" << r.run_stderr;
  EXPECT_EQ(count_of(r.run_stderr, kWalLevelProblem), 1u) << r.run_stderr;
  EXPECT_TRUE(pg_query(f.admin, "SELECT 1 FROM pg_replication_slots").empty()) << "no slot on a refused start";
  EXPECT_TRUE(pg_query(f.admin, "SELECT 1 FROM pg_publication").empty()) << "no publication on a refused start";
  EXPECT_EQ(r.run_stdout, "") << "nothing was streamed";
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

  const std::string role_problem = "role " + role + " may not start replication: run ALTER ROLE \"" + role + "\" REPLICATION;";
  const CheckThenRun r = check_then_run(f);
  EXPECT_EQ(r.check_status, 1) << "tidemark check must end with status 1:\n" << r.check_output;
  EXPECT_NE(r.check_output.find("problem: " + kWalLevelProblem + "\n"), std::string::npos) << r.check_output;
  EXPECT_NE(r.check_output.find("problem: " + role_problem + "\n"), std::string::npos) << r.check_output;
  EXPECT_EQ(r.run_status, 1) << "tidemark run must stop with a startup error, not wait or retry:\n" << r.run_stderr;
  EXPECT_EQ(count_of(r.run_stderr, kWalLevelProblem), 1u) << r.run_stderr;
  EXPECT_EQ(count_of(r.run_stderr, role_problem), 1u) << r.run_stderr;
  EXPECT_TRUE(pg_query(f.admin, "SELECT 1 FROM pg_replication_slots").empty()) << "no slot on a refused start";
  pg_exec(f.admin, "DROP OWNED BY " + role + "; DROP ROLE " + role);
}

}  // namespace
}  // namespace tidemark::test
