// MySQL/MariaDB prerequisites (issue #4, items 4 and 7) through the real tidemark binary: `check` lists every
// problem with its fix and exits 1, `run` stops at once with the same messages (no retrying), and
// binlog_row_metadata other than FULL is only a warning. Server settings the shared server must not have come
// from throwaway MariaDB servers (scripts/servers.sh with their own run directory and a free port): one with
// binary logging off, one whose binlog_format, binlog_row_image and binlog_row_metadata each test sets with
// SET GLOBAL. Missing privileges are tested on the shared server with a user of the test's own.

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "mariadb_server.hpp"
#include "mysql_fixture.hpp"

namespace tidemark::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

const std::string kStdoutSink = "sink:\n  type: stdout\n";
const std::string kLogBinProblem =
    "binary logging is off on the server: start it with log_bin (e.g. [mysqld] log_bin=mysql-bin, server_id=1, "
    "binlog_format=ROW in my.cnf) and restart it";

std::string format_problem(const std::string& format) {
  return "binlog_format is " + format +
         ", Tidemark needs ROW: SET GLOBAL binlog_format = 'ROW' and put binlog_format=ROW in my.cnf (sessions "
         "already open keep the old format until they reconnect)";
}
std::string image_problem(const std::string& image) {
  return "binlog_row_image is " + image +
         ", Tidemark needs FULL (complete before and after images): SET GLOBAL binlog_row_image = 'FULL' and put "
         "binlog_row_image=FULL in my.cnf";
}
const std::string kMetadataRecommendation =
    "Recommended: SET GLOBAL binlog_row_metadata = 'FULL' and binlog_row_metadata=FULL in my.cnf";
std::string metadata_warning(const std::string& metadata) {
  return "binlog_row_metadata is " + metadata +
         ": column names, keys and ENUM/SET members are read from information_schema, which describes tables as "
         "they are now, not as they were when older events were logged. " + kMetadataRecommendation;
}
std::string replication_slave_problem(const std::string& user) {
  return "user " + user + " lacks REPLICATION SLAVE, needed to read the binlog: GRANT REPLICATION SLAVE ON *.* TO '" +
         user + "'@'%'";
}
std::string replication_client_problem(const std::string& user) {
  return "user " + user + " lacks REPLICATION CLIENT (BINLOG MONITOR on MariaDB), needed to find the end of the "
         "binlog: GRANT REPLICATION CLIENT ON *.* TO '" + user + "'@'%'";
}

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
  std::chrono::milliseconds run_time{};
  std::string run_stderr;
  std::string run_stdout;
};

CheckThenRun check_then_run(MySqlFixture& f) {
  CheckThenRun result;
  f.daemon.start("check");
  result.check_status = f.daemon.process().wait_for_exit(60s);
  result.check_output = f.daemon.stdout_text() + f.daemon.stderr_text();
  const auto started = Clock::now();
  f.daemon.start("run");
  result.run_status = f.daemon.process().wait_for_exit(60s);
  result.run_time = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
  result.run_stderr = f.daemon.stderr_text();
  result.run_stdout = f.daemon.stdout_text();
  return result;
}

// `check` failed with exactly `problems` (each on its own "problem: " line), `run` stopped quickly with a
// startup error naming each of them once and streamed nothing.
void expect_refused(const CheckThenRun& r, const std::vector<std::string>& problems) {
  EXPECT_EQ(r.check_status, 1) << "tidemark check must end with status 1:\n" << r.check_output;
  for (const auto& p : problems)
    EXPECT_NE(r.check_output.find("problem: " + p + "\n"), std::string::npos) << "missing: " << p << "\nin:\n" << r.check_output;
  EXPECT_NE(r.check_output.find("\n" + std::to_string(problems.size()) + " problem(s) found\n"), std::string::npos)
      << "exactly these problems are expected:\n" << r.check_output;
  EXPECT_EQ(r.run_status, 1) << "tidemark run must stop with a startup error, not wait or retry:\n" << r.run_stderr;
  EXPECT_LT(r.run_time, 20s) << r.run_stderr;
  for (const auto& p : problems) EXPECT_EQ(count_of(r.run_stderr, p), 1u) << "missing: " << p << "\nin:\n" << r.run_stderr;
  EXPECT_EQ(r.run_stdout, "") << "nothing was streamed";
}

// A fixture whose daemon connects to `server` as tidemark and captures one fresh table there.
void use_server(MySqlFixture& f, const ThrowawayMariaDb& server, const std::string& table) {
  f.db = server.target();
  f.root = server.target(true);
  mysql_exec(f.root, "CREATE TABLE `" + f.db.database + "`.`" + table + "` (id INT PRIMARY KEY, v VARCHAR(20))");
  f.created.push_back(table);
}

// One throwaway server per suite (starting one takes a few seconds), made by the suite's first test: a
// failure in SetUpTestSuite would only mark the tests skipped, this fails each of them.
template <const char* kExtraArgs>
class WithThrowawayMariaDb : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!server_) {
      try {
        std::vector<std::string> args;
        if (*kExtraArgs) args.emplace_back(kExtraArgs);
        server_ = std::make_unique<ThrowawayMariaDb>(args);
      } catch (const std::exception& e) {
        FAIL() << "the throwaway MariaDB server did not start: " << e.what();
      }
    }
  }
  static void TearDownTestSuite() { server_.reset(); }
  static inline std::unique_ptr<ThrowawayMariaDb> server_;
};

constexpr char kBinlogOn[] = "";
constexpr char kBinlogOff[] = "--skip-log-bin";

// Binary logging on (the script's ROW/FULL/FULL defaults); each test sets what it needs with SET GLOBAL.
class MySqlBinlogSettings : public WithThrowawayMariaDb<kBinlogOn> {
 protected:
  void SetUp() override {
    WithThrowawayMariaDb::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_NO_FATAL_FAILURE(set_globals("ROW", "FULL", "FULL"));
  }
  static void set_globals(const std::string& format, const std::string& image, const std::string& metadata) {
    const MySqlTarget root = server_->target(true);
    mysql_exec(root, "SET GLOBAL binlog_format = '" + format + "'; SET GLOBAL binlog_row_image = '" + image +
                         "'; SET GLOBAL binlog_row_metadata = '" + metadata + "'");
    ASSERT_EQ(mysql_value(root, "SELECT CONCAT_WS(',', @@global.log_bin, @@global.binlog_format, "
                                "@@global.binlog_row_image, @@global.binlog_row_metadata)"),
              "ON," + format + "," + image + "," + metadata);
  }
};

class MySqlBinlogOff : public WithThrowawayMariaDb<kBinlogOff> {};

TEST_F(MySqlBinlogOff, LogBinOffFailsCheckAndRunNamingTheFix) {
  ASSERT_EQ(mysql_value(server_->target(true), "SELECT CONCAT_WS(',', @@global.log_bin, @@global.binlog_format)"), "OFF,ROW");
  MySqlFixture f;
  const std::string t = f.table("nolog");
  use_server(f, *server_, t);
  f.write_config({t}, {.sink_yaml = kStdoutSink});
  expect_refused(check_then_run(f), {kLogBinProblem});
}

TEST_F(MySqlBinlogSettings, BinlogFormatMixedFailsCheckAndRunNamingTheFix) {
  ASSERT_NO_FATAL_FAILURE(set_globals("MIXED", "FULL", "FULL"));
  MySqlFixture f;
  const std::string t = f.table("mixed");
  use_server(f, *server_, t);
  f.write_config({t}, {.sink_yaml = kStdoutSink});
  expect_refused(check_then_run(f), {format_problem("MIXED")});
}

TEST_F(MySqlBinlogSettings, BinlogRowImageMinimalFailsCheckAndRunNamingTheFix) {
  ASSERT_NO_FATAL_FAILURE(set_globals("ROW", "MINIMAL", "FULL"));
  MySqlFixture f;
  const std::string t = f.table("minimage");
  use_server(f, *server_, t);
  f.write_config({t}, {.sink_yaml = kStdoutSink});
  expect_refused(check_then_run(f), {image_problem("MINIMAL")});
}

// binlog_row_metadata=MINIMAL works (names and keys from information_schema): `check` passes and prints the
// recommendation, `run` logs it and streams.
TEST_F(MySqlBinlogSettings, BinlogRowMetadataMinimalIsOnlyAWarningRecommendingFull) {
  ASSERT_NO_FATAL_FAILURE(set_globals("ROW", "FULL", "MINIMAL"));
  MySqlFixture f;
  const std::string t = f.table("minmeta");
  use_server(f, *server_, t);
  f.write_config({t}, {.sink_yaml = kStdoutSink});

  f.daemon.start("check");
  EXPECT_EQ(f.daemon.process().wait_for_exit(60s), 0) << "a warning is no problem:\n" << f.daemon.stdout_text()
                                                      << f.daemon.stderr_text();
  const std::string check_stdout = f.daemon.stdout_text();
  EXPECT_NE(check_stdout.find("warning: " + metadata_warning("MINIMAL") + "\n"), std::string::npos) << check_stdout;
  EXPECT_NE(check_stdout.find("\nok: "), std::string::npos) << check_stdout;
  EXPECT_EQ(check_stdout.find("problem"), std::string::npos) << check_stdout;

  // The fresh server's first binlog opens with an empty GTID_LIST that MariaDB pads with two bytes.
  ASSERT_TRUE(f.start_and_wait_until_streaming()) << f.daemon.stderr_text();
  mysql_exec(f.db, "INSERT INTO `" + t + "` VALUES (7, 'seven')");
  EXPECT_TRUE(wait_until([&] { return f.daemon.stdout_text().find("\"seven\"") != std::string::npos; }, 30s))
      << "stdout:\n" << f.daemon.stdout_text() << "\nstderr:\n" << f.daemon.stderr_text();
  EXPECT_EQ(f.daemon.stop(SIGTERM), 0) << f.daemon.stderr_text();
  EXPECT_NE(f.daemon.stderr_text().find(" warning mysql: " + metadata_warning("MINIMAL")), std::string::npos)
      << "run logs the recommendation:\n" << f.daemon.stderr_text();
}

// Everything wrong at once: `check` lists every problem (and the warning), `run` names them all and stops.
TEST_F(MySqlBinlogSettings, EveryProblemIsReportedAtOnce) {
  ASSERT_NO_FATAL_FAILURE(set_globals("STATEMENT", "MINIMAL", "MINIMAL"));
  MySqlFixture f;
  const std::string t = f.table("allwrong");
  use_server(f, *server_, t);
  const std::string user = "tm_noprivs_" + f.suffix;
  mysql_exec(f.root, "CREATE USER '" + user + "'@'%' IDENTIFIED BY 'pw'; GRANT SELECT ON `" + f.db.database +
                         "`.* TO '" + user + "'@'%'");
  f.db.user = user;
  f.db.password = "pw";
  f.write_config({t}, {.sink_yaml = kStdoutSink});

  const CheckThenRun r = check_then_run(f);
  expect_refused(r, {format_problem("STATEMENT"), image_problem("MINIMAL"), replication_slave_problem(user),
                     replication_client_problem(user)});
  EXPECT_NE(r.check_output.find("warning: " + metadata_warning("MINIMAL") + "\n"), std::string::npos) << r.check_output;
}

// On the shared server (its settings are right): a user with SELECT on the test database only.
TEST(MySqlPrivileges, UserWithoutReplicationPrivilegesFailsCheckAndRunNamingTheGrants) {
  MySqlFixture f;
  const std::string t = f.table("noprivs");
  mysql_exec(f.root, "CREATE TABLE `" + f.db.database + "`.`" + t + "` (id INT PRIMARY KEY)");
  f.created.push_back(t);
  const std::string user = "tm_noprivs_" + f.suffix;  // the suffix holds the pid and is unique
  struct DropUser {
    MySqlTarget root;
    std::string user;
    ~DropUser() {
      try {
        mysql_exec(root, "DROP USER IF EXISTS '" + user + "'@'%'");
      } catch (const std::exception& e) {
        ADD_FAILURE() << "could not drop " << user << ": " << e.what();
      }
    }
  } drop{f.root, user};
  mysql_exec(f.root, "CREATE USER '" + user + "'@'%' IDENTIFIED BY 'pw'; GRANT SELECT ON `" + f.db.database + "`.* TO '" +
                         user + "'@'%'");
  f.db.user = user;
  f.db.password = "pw";
  f.write_config({t}, {.sink_yaml = kStdoutSink});
  expect_refused(check_then_run(f), {replication_slave_problem(user), replication_client_problem(user)});
}

}  // namespace
}  // namespace tidemark::test
