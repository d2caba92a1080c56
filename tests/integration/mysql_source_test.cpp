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

std::map<std::string, std::vector<ConsumedRecord>> by_key(const std::vector<ConsumedRecord>& records) {
  std::map<std::string, std::vector<ConsumedRecord>> out;
  for (const auto& r : records) out[r.key.value_or("null")].push_back(r);
  return out;
}

TEST(MySqlSource, InsertUpdateDeleteKeyChangeAndMultiTableTransaction) {
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
  s.exec("UPDATE " + t + " SET id = 2 WHERE id = 1");  // a key change
  s.exec("DELETE FROM " + t + " WHERE id = 2");
  s.exec("BEGIN; INSERT INTO " + t + " VALUES (5, 'five', -1.5, NULL); INSERT INTO " + other +
         " VALUES ('x', 4294967295); UPDATE " + t + " SET amount = 0 WHERE id = 5; COMMIT");

  // c, u, (key change: d + tombstone + c), d + tombstone, then c, u of id 5 = 9 records on t.
  const auto records = f.read_until(f.topic(t), 9);
  ASSERT_EQ(records.size(), 9u) << f.daemon.stderr_text();
  auto keys = by_key(records);
  ASSERT_EQ(keys.size(), 3u);
  const auto& one = keys["{\"id\":1}"];
  ASSERT_EQ(one.size(), 4u);
  const json c = json::parse(*one[0].value);
  EXPECT_EQ(c["op"], "c");
  EXPECT_TRUE(c["before"].is_null());
  EXPECT_EQ(c["after"]["id"], 1);
  EXPECT_EQ(c["after"]["name"], "a");
  EXPECT_EQ(c["after"]["amount"], "12345.67");
  EXPECT_EQ(c["source"]["connector"], "mysql");
  EXPECT_EQ(c["source"]["db"], f.db.database);
  EXPECT_EQ(c["source"]["table"], t);
  EXPECT_EQ(c["source"]["server_id"], 1);
  EXPECT_TRUE(c["source"]["gtid"].is_string()) << c.dump();
  EXPECT_EQ(c["source"]["file"].get<std::string>().rfind("mysql-bin.", 0), 0u) << c.dump();
  const json u = json::parse(*one[1].value);
  EXPECT_EQ(u["op"], "u");
  EXPECT_EQ(u["before"]["name"], "a") << "binlog_row_image=FULL: the whole old row";
  EXPECT_EQ(u["after"]["name"], "b");
  const json d = json::parse(*one[2].value);
  EXPECT_EQ(d["op"], "d");
  EXPECT_EQ(d["before"]["id"], 1);
  EXPECT_FALSE(one[3].value.has_value()) << "tombstone after the old key's delete";
  const auto& two = keys["{\"id\":2}"];
  ASSERT_EQ(two.size(), 3u);
  EXPECT_EQ(json::parse(*two[0].value)["op"], "c");
  EXPECT_EQ(json::parse(*two[1].value)["op"], "d");
  const auto& five = keys["{\"id\":5}"];
  ASSERT_EQ(five.size(), 2u);
  const json five_c = json::parse(*five[0].value), five_u = json::parse(*five[1].value);
  EXPECT_EQ(five_c["after"]["amount"], "-1.50");
  EXPECT_TRUE(five_c["after"]["at"].is_null());
  EXPECT_EQ(five_u["after"]["amount"], "0.00");
  EXPECT_EQ(five_c["source"]["gtid"], five_u["source"]["gtid"]) << "one transaction";

  const auto others = f.read_until(f.topic(other), 1);
  ASSERT_EQ(others.size(), 1u);
  const json o = json::parse(*others[0].value);
  EXPECT_EQ(o["after"]["k"], "x");
  EXPECT_EQ(o["after"]["v"], 4294967295LL);
  EXPECT_EQ(o["source"]["gtid"], five_c["source"]["gtid"]) << "the multi-table transaction has one GTID";

  ASSERT_EQ(f.daemon.stop(SIGTERM), 0) << f.daemon.stderr_text();
}

}  // namespace
}  // namespace tidemark::test
