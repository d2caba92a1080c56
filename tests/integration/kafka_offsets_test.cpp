// The offsets table of a Kafka input on real PostgreSQL and MariaDB targets: a claim makes its member the
// owner and returns where each partition goes on; a write by a member whose partition was claimed away
// fails (and with it its whole transaction), naming the fence; the owner's writes go through.

#include <gtest/gtest.h>

#include "kafka_client.hpp"
#include "mysql_client.hpp"
#include "pg_client.hpp"
#include "sink/database/kafka_offsets.hpp"

namespace tidemark::test {
namespace {

DatabaseSinkConfig target_config(const std::string& kind) {
  DatabaseSinkConfig config;
  config.type = kind == "postgres" ? "postgres" : "mysql";
  if (kind == "postgres") {
    const PgTarget pg = real_postgres();
    config.host = pg.host, config.port = std::stoll(pg.port), config.user = pg.user, config.password = pg.password;
    config.database = pg.database;
  } else {
    const MySqlTarget my = real_mysql();
    config.host = my.host, config.port = std::stoll(my.port), config.user = my.user, config.password = my.password;
    config.database = my.database;
  }
  config.schema = "public";
  config.tls.mode = "disable";
  config.offsets_table = "tidemark_apply_offsets";
  return config;
}

class KafkaOffsetsTableTest : public testing::TestWithParam<std::string> {};

TEST_P(KafkaOffsetsTableTest, ClaimsHandPartitionsOverAndFenceThePreviousOwner) {
  const DatabaseSinkConfig config = target_config(GetParam());
  auto target = dbsink::make_target_connection(config, "tidemark-offsets-test");
  ASSERT_FALSE(target->connect());
  const std::string group = unique_name("offsets");
  const dbsink::KafkaOffsetsTable table(config, group);
  bool exists = false;
  ASSERT_FALSE(table.ensure(*target, true, exists));
  ASSERT_TRUE(exists);

  std::vector<std::pair<std::string, bool>> asked;
  const auto start_of = [&](const std::string& partition, bool first_start, std::string&) -> std::optional<int64_t> {
    asked.emplace_back(partition, first_start);
    return partition == "t.a/1" ? 100 : -2;
  };
  // A first start: every partition gets its start.
  auto claimed = table.claim(*target, {"t.a/0", "t.a/1"}, "m1#1", start_of);
  ASSERT_TRUE(claimed.ok()) << claimed.error;
  EXPECT_EQ(*claimed.value, (std::map<std::string, int64_t>{{"t.a/0", -2}, {"t.a/1", 100}}));
  EXPECT_EQ(asked, (std::vector<std::pair<std::string, bool>>{{"t.a/0", true}, {"t.a/1", true}}));

  // The owner moves its offsets.
  std::string script = "BEGIN;\n";
  table.append_write(script, {{"t.a/0", {7, "m1#1"}}, {"t.a/1", {120, "m1#1"}}});
  ASSERT_FALSE(target->execute(script + "COMMIT"));

  // Another member claims t.a/1 (and a partition added later, which is no first start): it goes on at 120.
  asked.clear();
  claimed = table.claim(*target, {"t.a/1", "t.a/2"}, "m2#1", start_of);
  ASSERT_TRUE(claimed.ok()) << claimed.error;
  EXPECT_EQ(*claimed.value, (std::map<std::string, int64_t>{{"t.a/1", 120}, {"t.a/2", -2}}));
  EXPECT_EQ(asked, (std::vector<std::pair<std::string, bool>>{{"t.a/2", false}}));

  // The first member's next write of t.a/1 fails whole: neither of its offsets moves.
  script = "BEGIN;\n";
  table.append_write(script, {{"t.a/0", {9, "m1#1"}}, {"t.a/1", {130, "m1#1"}}});
  const auto fenced = target->execute(script + "COMMIT");
  ASSERT_TRUE(fenced);
  EXPECT_NE(fenced->message.find(dbsink::KafkaOffsetsTable::kFenced), std::string::npos) << fenced->message;
  EXPECT_NE(fenced->message.find("t.a/1"), std::string::npos) << fenced->message;
  target->execute("ROLLBACK");
  dbsink::TargetError error;
  auto rows = table.read(*target, &error);
  ASSERT_TRUE(rows) << error.message;
  EXPECT_EQ(rows->at("t.a/0"), (PartitionOffset{7, "m1#1"}));
  EXPECT_EQ(rows->at("t.a/1"), (PartitionOffset{120, "m2#1"}));

  // The new owner's write goes through.
  script = "BEGIN;\n";
  table.append_write(script, {{"t.a/1", {125, "m2#1"}}});
  ASSERT_FALSE(target->execute(script + "COMMIT"));
  rows = table.read(*target, &error);
  ASSERT_TRUE(rows) << error.message;
  EXPECT_EQ(rows->at("t.a/1"), (PartitionOffset{125, "m2#1"}));
  EXPECT_EQ(rows->size(), 3u);
  target->execute("DELETE FROM tidemark_apply_offsets WHERE consumer_group = '" + group + "'");
}

INSTANTIATE_TEST_SUITE_P(Targets, KafkaOffsetsTableTest, testing::Values("postgres", "mariadb"));

}  // namespace
}  // namespace tidemark::test
