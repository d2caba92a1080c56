// The change stream end to end, one scenario for both databases (real PostgreSQL 15 and MariaDB 10.11,
// the real tidemark binary, the real Kafka broker): inserts, updates, a key change, a delete and a
// transaction over two tables. What only one database has (TOAST, REPLICA IDENTITY FULL, TRUNCATE, GTIDs,
// full before images) is tested in postgres_source_test.cpp and mysql_source_test.cpp.

#include <gtest/gtest.h>
#include <signal.h>

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "snapshot_database.hpp"

namespace tidemark::test {
namespace {

using nlohmann::json;

std::map<std::string, std::vector<ConsumedRecord>> by_key(const std::vector<ConsumedRecord>& records) {
  std::map<std::string, std::vector<ConsumedRecord>> out;
  for (const auto& r : records) out[r.key.value_or("null")].push_back(r);
  return out;
}

class ChangeStream : public testing::TestWithParam<std::string> {};

TEST_P(ChangeStream, InsertUpdateKeyChangeDeleteAndATransactionOverTwoTables) {
  const auto db = make_database(GetParam());
  const bool pg = db->kind() == "postgres";
  const std::string t = db->name("it");
  const std::string other = db->name("other");
  db->create_table(t, "id INT PRIMARY KEY, name VARCHAR(40), amount DECIMAL(12,2)");
  db->create_table(other, "k VARCHAR(10) PRIMARY KEY, v INT");
  db->write_config({t, other}, "snapshot:\n  initial: never\n");
  ASSERT_TRUE(db->start()) << db->daemon().stderr_text();

  db->exec("INSERT INTO " + t + " VALUES (1, 'a', 12345.67)");
  db->exec("UPDATE " + t + " SET name = 'b' WHERE id = 1");
  db->exec("UPDATE " + t + " SET id = 2 WHERE id = 1");  // a key change
  db->exec("DELETE FROM " + t + " WHERE id = 2");
  db->exec("BEGIN; INSERT INTO " + t + " VALUES (5, 'five', -1.5); INSERT INTO " + other + " VALUES ('x', 7); UPDATE " +
           t + " SET amount = 0 WHERE id = 5; COMMIT");

  // c, u, (key change: d + tombstone + c), d + tombstone, then c, u of id 5 = 9 records on t.
  const auto records = db->read_until(db->topic_of(t), 9);
  ASSERT_EQ(records.size(), 9u) << db->daemon().stderr_text();
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
  EXPECT_EQ(c["source"]["connector"], pg ? "postgresql" : "mysql");
  EXPECT_EQ(c["source"]["db"], db->database_name());
  EXPECT_EQ(c["source"]["table"], t);
  const json u = json::parse(*one[1].value);
  EXPECT_EQ(u["op"], "u");
  EXPECT_EQ(u["after"]["name"], "b");
  const json d = json::parse(*one[2].value);
  EXPECT_EQ(d["op"], "d");
  EXPECT_EQ(d["before"]["id"], 1);
  EXPECT_FALSE(one[3].value.has_value()) << "tombstone after the old key's delete";
  const auto& two = keys["{\"id\":2}"];
  ASSERT_EQ(two.size(), 3u);
  EXPECT_EQ(json::parse(*two[0].value)["op"], "c");
  EXPECT_EQ(json::parse(*two[0].value)["after"]["name"], "b");
  EXPECT_EQ(json::parse(*two[1].value)["op"], "d");
  EXPECT_FALSE(two[2].value.has_value());
  const auto& five = keys["{\"id\":5}"];
  ASSERT_EQ(five.size(), 2u);
  const json five_c = json::parse(*five[0].value), five_u = json::parse(*five[1].value);
  EXPECT_EQ(five_c["after"]["amount"], "-1.50");
  EXPECT_EQ(five_u["after"]["amount"], "0.00");

  const auto others = db->read_until(db->topic_of(other), 1);
  ASSERT_EQ(others.size(), 1u);
  const json o = json::parse(*others[0].value);
  EXPECT_EQ(o["after"]["k"], "x");
  EXPECT_EQ(o["after"]["v"], 7);
  // One transaction: the same transaction id on every record of it, in both tables.
  const char* txn = pg ? "txId" : "gtid";
  EXPECT_EQ(five_c["source"][txn], five_u["source"][txn]) << five_c.dump();
  EXPECT_EQ(o["source"][txn], five_c["source"][txn]) << o.dump();
  EXPECT_NE(c["source"][txn], five_c["source"][txn]) << "another transaction";

  EXPECT_EQ(db->daemon().stop(SIGTERM), 0) << db->daemon().stderr_text();
}

std::string param_name(const testing::TestParamInfo<std::string>& info) { return info.param; }

INSTANTIATE_TEST_SUITE_P(BothDatabases, ChangeStream, testing::Values("postgres", "mariadb"), param_name);

}  // namespace
}  // namespace tidemark::test
