// The signal table as a way in (issue #15's findings, each reproduced against the daemon before the fix):
// a `where` cannot run other statements, read other tables or call functions with effects; a snapshot
// query held up in the server is cancelled by stop-snapshot and by shutdown instead of outliving them.
// One scenario, both databases: the real daemon, PostgreSQL 15 / MariaDB 10.11 and the Kafka broker.

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <thread>

#include <sys/stat.h>

#include "mysql_client.hpp"
#include "pg_client.hpp"
#include "process.hpp"
#include "database.hpp"
#include "snapshot_fold.hpp"

namespace tidemark::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::string json_string(const std::string& s) { return nlohmann::json(s).dump(); }

std::string own_control_tables(Database& db, const std::string& settings = "") {
  db.signal_table = db.name("sig");
  return "snapshot:\n  initial: never\n  signal_table: " + db.signal_table + "\n  watermark_table: " + db.name("wm") +
         "\n" + settings;
}

void drop_tables(Database& db, const std::vector<std::string>& tables) {
  for (const auto& t : tables) {
    try {
      db.exec("DROP TABLE IF EXISTS " + t);
    } catch (...) {
    }
  }
}

bool table_exists(Database& db, const std::string& table) {
  const bool pg = db.kind() == "postgres";
  return !db.column(pg ? "SELECT 1 FROM pg_tables WHERE tablename = '" + table + "'"
                       : "SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '" +
                             table + "'")
              .empty();
}

// Statements of the daemon's snapshot connection that read `table` and are running on the server now.
size_t running_snapshot_queries(Database& db, const std::string& table) {
  if (db.kind() == "postgres")
    return db.column("SELECT pid FROM pg_stat_activity WHERE application_name = 'tidemark-" + db.daemon().name() +
                     "-snapshot' AND state = 'active' AND query LIKE '%" + table + "%'")
        .size();
  return db.column("SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT%" + table +
                   "%' AND INFO NOT LIKE '%PROCESSLIST%'")
      .size();
}

std::string last_error(Database& db) {
  const auto s = snapshot_state(db.daemon());
  return s.is_object() ? s.value("last_error", "") : "";
}

class SignalSecurity : public testing::TestWithParam<std::string> {};

std::string param_name(const testing::TestParamInfo<std::string>& info) { return info.param; }

// Findings 1 and 2: stacked statements, a UNION over another table, functions with effects. Each request is
// refused with a message naming the rule, nothing outside the table is touched or published, and a good
// request after them runs as usual.
TEST_P(SignalSecurity, AWhereCanOnlyFilterTheRowsOfItsTable) {
  auto db = make_database(GetParam());
  const bool pg = GetParam() == "postgres";
  const std::string items = db->name("items"), victim = db->name("victim"), secret = db->name("secret"),
                    pwned = db->name("pwned");
  db->create_table(items, "id BIGINT PRIMARY KEY, version BIGINT NOT NULL, payload TEXT");
  db->fill(items, 100);
  db->create_table(victim, "id BIGINT PRIMARY KEY");
  db->create_table(secret, "id BIGINT PRIMARY KEY, secret TEXT");
  db->exec("INSERT INTO " + secret + " VALUES (1, 'hunter2'), (2, 'swordfish')");
  db->write_config({items}, own_control_tables(*db));
  ASSERT_TRUE(db->start()) << db->daemon().stderr_text();
  const std::string table = json_string(db->qualified_name(items));
  const std::vector<std::string> attacks = {
      "1=1); CREATE TABLE " + pwned + "(x int); DROP TABLE " + victim + "; --",
      "1=1; CREATE TABLE " + pwned + "(x int)",
      "1=0) UNION SELECT 800000+id, 0, secret FROM " + secret + " -- ",
      "id IN (SELECT id FROM " + secret + ")",
      pg ? "id > 0 OR pg_sleep(30) IS NULL" : "id > 0 OR sleep(30) = 1",
      pg ? "id > 0 OR pg_drop_replication_slot('x') IS NULL" : "id > 0 OR load_file('/etc/passwd') IS NULL",
  };
  for (size_t i = 0; i < attacks.size(); ++i)
    db->signal("attack-" + std::to_string(i) + "-" + items, "execute-snapshot",
               "{\"tables\": [{\"table\": " + table + ", \"where\": " + json_string(attacks[i]) +
                   ", \"upto\": [\"99999999\"]}]}");
  // A key bound is a value of the key's type, never SQL: "1-- " commented out the rest of MySQL's chunk SQL
  // (its LIMIT and conditions) when numeric bounds were pasted in checked only for digit-like characters.
  db->signal("bound-" + items, "execute-snapshot",
             "{\"tables\": [{\"table\": " + table + ", \"after\": [\"1-- \"], \"upto\": [\"99999999\"]}]}");
  db->signal("good-" + items, "execute-snapshot", "{\"tables\": [{\"table\": " + table + ", \"where\": \"id % 10 = 0\"}]}");
  ASSERT_TRUE(wait_until([&] { return snapshots_done(db->daemon(), 1); }, 60s))
      << snapshot_state(db->daemon()).dump() << db->daemon().stderr_text();

  EXPECT_TRUE(table_exists(*db, victim)) << "a signal dropped a table";
  EXPECT_FALSE(table_exists(*db, pwned)) << "a signal created a table";
  std::multiset<std::string> expected;
  for (int i = 10; i <= 100; i += 10) expected.insert(std::to_string(i));
  const auto rows = snapshot_rows(consume_all(db->bootstrap(), db->topic_of(items)));
  EXPECT_EQ(std::multiset<std::string>(rows.begin(), rows.end()), expected) << "only the good request's rows";
  const std::string log = db->daemon().stderr_text();
  size_t refusals = 0;
  for (size_t at = log.find("is not allowed"); at != std::string::npos; at = log.find("is not allowed", at + 1)) ++refusals;
  EXPECT_GE(refusals, attacks.size()) << log;
  EXPECT_EQ(log.find("hunter2"), std::string::npos) << log;
  EXPECT_EQ(log.find("DROP TABLE " + victim), std::string::npos) << "conditions are not logged at info level\n" << log;
  EXPECT_TRUE(db->daemon().process().running()) << "refusals never stop the daemon";
  EXPECT_EQ(db->daemon().stop(SIGTERM), 0) << db->daemon().stderr_text();
  drop_tables(*db, {items, victim, secret, pwned, db->signal_table, db->name("wm")});
}

// Finding 4: a chunk query that the server holds (here: another session locks the table) ends when a
// stop-snapshot signal drops its table, and when the daemon is stopped: within seconds, not when the lock
// goes or a timeout fires, and nothing of it keeps running on the server.
TEST_P(SignalSecurity, StopSignalAndShutdownCancelAQueryInFlight) {
  auto db = make_database(GetParam());
  const bool pg = GetParam() == "postgres";
  const std::string items = db->name("held");
  db->create_table(items, "id BIGINT PRIMARY KEY, version BIGINT NOT NULL, payload TEXT");
  db->fill(items, 50);
  db->write_config({items}, own_control_tables(*db));
  ASSERT_TRUE(db->start()) << db->daemon().stderr_text();
  const std::string table = json_string(db->qualified_name(items));

  // Another session holds the table, so the snapshot's SELECT waits in the server (LOCK TABLES needs more
  // than the test user may do on MariaDB: root holds it there).
  std::unique_ptr<SqlSession> pg_locker;
  std::unique_ptr<MySqlSession> mysql_locker;
  if (pg) {
    pg_locker = db->session();
    pg_locker->exec("BEGIN");
    pg_locker->exec("LOCK TABLE " + items + " IN ACCESS EXCLUSIVE MODE");
  } else {
    mysql_locker = std::make_unique<MySqlSession>(real_mysql(true));
    mysql_locker->exec("LOCK TABLES " + db->qualified_name(items) + " WRITE");
  }

  db->signal("held-1-" + items, "execute-snapshot", "{\"tables\": [" + table + "]}");
  ASSERT_TRUE(wait_until([&] { return running_snapshot_queries(*db, items) > 0; }, 30s)) << db->daemon().stderr_text();
  db->signal("stop-" + items, "stop-snapshot", "{\"tables\": [" + table + "]}");
  EXPECT_TRUE(wait_until([&] { return running_snapshot_queries(*db, items) == 0; }, 10s))
      << "stop-snapshot left the query running\n" << db->daemon().stderr_text();
  EXPECT_TRUE(wait_until([&] {
    const auto s = snapshot_state(db->daemon());
    return s.is_object() && s.value("processed_signals", nlohmann::json::array()).size() >= 2 &&
           s.value("queue", nlohmann::json::array()).empty() && !s.contains("current");
  }, 10s)) << snapshot_state(db->daemon()).dump();
  EXPECT_EQ(last_error(*db), "") << "a stopped request is not a refusal";

  db->signal("held-2-" + items, "execute-snapshot", "{\"tables\": [" + table + "]}");
  ASSERT_TRUE(wait_until([&] { return running_snapshot_queries(*db, items) > 0; }, 30s)) << db->daemon().stderr_text();
  const auto stopping = Clock::now();
  EXPECT_EQ(db->daemon().stop(SIGTERM, 40s), 0) << db->daemon().stderr_text();
  EXPECT_LT(Clock::now() - stopping, 15s) << "shutdown waited for the query";
  EXPECT_TRUE(wait_until([&] { return running_snapshot_queries(*db, items) == 0; }, 10s)) << "the query outlived the daemon";
  EXPECT_EQ(last_error(*db), "") << "shutdown is not a refusal: " << snapshot_state(db->daemon()).dump();

  if (pg_locker) pg_locker->exec("ROLLBACK");
  if (mysql_locker) mysql_locker->exec("UNLOCK TABLES");
  pg_locker.reset();
  mysql_locker.reset();
  drop_tables(*db, {items, db->signal_table, db->name("wm")});
}

// Finding 7: `tidemark check` warns about a superuser (ALL PRIVILEGES) CDC user and a password written
// into a world-readable configuration file, and says nothing of either for a least-privilege user whose
// file only its owner reads.
TEST_P(SignalSecurity, CheckWarnsAboutASuperuserAndAnInlinePassword) {
  auto db = make_database(GetParam());
  const bool pg = GetParam() == "postgres";
  const std::string items = db->name("checked");
  db->create_table(items, "id BIGINT PRIMARY KEY, version BIGINT NOT NULL, payload TEXT");
  db->write_config({items}, own_control_tables(*db));
  const std::string path = db->daemon().config_path();
  const std::string least = read_file(path);
  const std::string user = pg ? real_postgres().user : real_mysql().user;
  const std::string password = pg ? real_postgres().password : real_mysql().password;
  const std::string super_user = pg ? real_postgres(true).user : real_mysql(true).user;
  const std::string super_password = pg ? real_postgres(true).password : real_mysql(true).password;
  std::string super = least;
  const std::string credentials = "  user: " + user + "\n  password: " + password + "\n";
  ASSERT_NE(super.find(credentials), std::string::npos) << super;
  super.replace(super.find(credentials), credentials.size(), "  user: " + super_user + "\n  password: " + super_password + "\n");

  write_file(path, super);
  ::chmod(path.c_str(), 0644);
  const CliResult exposed = run_tidemark(db->daemon(), {"check", "--config", path});
  EXPECT_NE(exposed.out.find(pg ? "is a superuser" : "has ALL PRIVILEGES"), std::string::npos) << exposed.out << exposed.err;
  EXPECT_NE(exposed.out.find("warning: source.password (line"), std::string::npos) << exposed.out;
  EXPECT_EQ(exposed.out.find("password: " + super_password), std::string::npos) << "the warning does not print the password";

  write_file(path, least);
  ::chmod(path.c_str(), 0600);
  const CliResult quiet = run_tidemark(db->daemon(), {"check", "--config", path});
  EXPECT_EQ(quiet.out.find("is a superuser"), std::string::npos) << quiet.out;
  EXPECT_EQ(quiet.out.find("ALL PRIVILEGES"), std::string::npos) << quiet.out;
  EXPECT_EQ(quiet.out.find("source.password (line"), std::string::npos) << quiet.out;
  drop_tables(*db, {items});  // never started: no control tables
}

// `check` says who else may write the signal table and how to restrict it: on PostgreSQL the roles in its
// ACL (a grant to PUBLIC here; nothing while only the CDC user has it); on MySQL, where database-wide
// grants reach it, when it shares a database with captured tables.
TEST_P(SignalSecurity, CheckNamesWhoElseMayWriteTheSignalTable) {
  auto db = make_database(GetParam());
  const bool pg = GetParam() == "postgres";
  const std::string items = db->name("writers");
  db->create_table(items, "id BIGINT PRIMARY KEY, version BIGINT NOT NULL, payload TEXT");
  db->write_config({items}, own_control_tables(*db));
  ASSERT_TRUE(db->start()) << db->daemon().stderr_text();  // creates the control tables
  ASSERT_EQ(db->daemon().stop(SIGTERM), 0) << db->daemon().stderr_text();
  const std::string path = db->daemon().config_path();
  const std::string warning = "the signal table ";
  if (pg) {
    const CliResult alone = run_tidemark(db->daemon(), {"check", "--config", path});
    EXPECT_EQ(alone.out.find(warning), std::string::npos) << alone.out;
    db->exec("GRANT INSERT ON " + db->signal_table + " TO PUBLIC");
    const CliResult shared = run_tidemark(db->daemon(), {"check", "--config", path});
    EXPECT_NE(shared.out.find(warning), std::string::npos) << shared.out;
    EXPECT_NE(shared.out.find("REVOKE INSERT ON \"public\".\"" + db->signal_table + "\" FROM PUBLIC"), std::string::npos) << shared.out;
  } else {
    const CliResult shared = run_tidemark(db->daemon(), {"check", "--config", path});
    EXPECT_NE(shared.out.find(warning), std::string::npos) << shared.out;
    EXPECT_NE(shared.out.find("a database of their own"), std::string::npos) << shared.out;
  }
  drop_tables(*db, {items, db->signal_table, db->name("wm")});
}

INSTANTIATE_TEST_SUITE_P(BothDatabases, SignalSecurity, testing::Values("postgres", "mariadb"), param_name);

}  // namespace
}  // namespace tidemark::test
