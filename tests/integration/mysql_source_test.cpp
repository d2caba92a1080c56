// The MySQL/MariaDB source end to end: a real MariaDB 10.11 (row-based binlog), the real tidemark
// binary, the real Kafka broker, and the tests' own consumer.

#include <gtest/gtest.h>
#include <signal.h>

#include <map>
#include <thread>

#include <nlohmann/json.hpp>

#include "mysql_fixture.hpp"

namespace tidemark::test {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

// What only MySQL/MariaDB has; the scenario both databases share is in change_stream_test.cpp.
TEST(MySqlSource, WholeOldRowsGtidsBinlogCoordinatesAndUnsignedValues) {
  MySqlFixture f;
  const std::string t = f.table("myit");
  const std::string other = f.table("myother");
  f.create_table(t, "id INT PRIMARY KEY, name VARCHAR(40), amount DECIMAL(12,2), at DATETIME(6)", 3);
  f.create_table(other, "k VARCHAR(10) PRIMARY KEY, v INT UNSIGNED");
  f.write_config({t, other});
  ASSERT_TRUE(f.start_and_wait_until_streaming()) << f.daemon.stderr_text();

  MySqlSession s(f.db);
  s.exec("INSERT INTO " + t + " VALUES (1, 'a', 12345.67, '2026-01-02 03:04:05.123456')");
  s.exec("UPDATE " + t + " SET name = 'b' WHERE id = 1");
  s.exec("BEGIN; INSERT INTO " + t + " VALUES (5, 'five', -1.5, NULL); INSERT INTO " + other +
         " VALUES ('x', 4294967295); COMMIT");

  // c, u of id 1, c of id 5.
  const auto records = f.read_until(f.topic(t), 3);
  ASSERT_EQ(records.size(), 3u) << f.daemon.stderr_text();
  auto keys = records_by_key(records);
  const auto& one = keys["{\"id\":1}"];
  ASSERT_EQ(one.size(), 2u);
  const json c = json::parse(*one[0].value);
  EXPECT_EQ(c["source"]["server_id"], 1);
  EXPECT_TRUE(c["source"]["gtid"].is_string()) << c.dump();
  EXPECT_EQ(c["source"]["file"].get<std::string>().rfind("mysql-bin.", 0), 0u) << c.dump();
  const json u = json::parse(*one[1].value);
  EXPECT_EQ(u["op"], "u");
  EXPECT_EQ(u["before"]["name"], "a") << "binlog_row_image=FULL: the whole old row";
  EXPECT_EQ(u["after"]["name"], "b");
  const auto& five = keys["{\"id\":5}"];
  ASSERT_EQ(five.size(), 1u);
  const json five_c = json::parse(*five[0].value);
  EXPECT_TRUE(five_c["after"]["at"].is_null());

  const auto others = f.read_until(f.topic(other), 1);
  ASSERT_EQ(others.size(), 1u);
  const json o = json::parse(*others[0].value);
  EXPECT_EQ(o["after"]["v"], 4294967295LL);
  EXPECT_EQ(o["source"]["gtid"], five_c["source"]["gtid"]) << "the multi-table transaction has one GTID";

  ASSERT_EQ(f.daemon.stop(SIGTERM), 0) << f.daemon.stderr_text();
}

}  // namespace
}  // namespace tidemark::test
