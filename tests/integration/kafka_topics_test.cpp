// Topics the brokers do not have yet, written once for both databases (real PostgreSQL 15 and MariaDB
// 10.11, the real tidemark binary, real Kafka brokers):
// - a broker with the stock auto.create.topics.enable=true (a throwaway one: the shared broker has it off):
//   the first start and a table whose first change comes later both wait for the topic the broker creates;
// - sink.kafka.topic_creation on that broker: missing topics are created through the Admin API with the
//   partitions and configs of their group (never first auto-created with the broker's defaults), and a
//   topic that exists is left alone;
// - the shared broker with auto-creation off: a table whose first change comes later is one clear fatal
//   error that names the fix, and nothing is lost: after the topic is created, a restart delivers it.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "database.hpp"
#include "kafka_server.hpp"
#include "process.hpp"

namespace tidemark::test {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

class KafkaTopics : public testing::TestWithParam<std::string> {};

// The `after.id` of every record, in delivery order (one partition per key: per-key order is all Kafka keeps).
std::vector<int64_t> ids(const std::vector<ConsumedRecord>& records) {
  std::vector<int64_t> out;
  for (const auto& r : records) {
    if (!r.value) continue;
    const json v = json::parse(*r.value);
    out.push_back(v["after"].is_null() ? -v["before"]["id"].get<int64_t>() : v["after"]["id"].get<int64_t>());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST_P(KafkaTopics, OnAStockBrokerTheFirstStartAndALaterTableWaitForTheTopicsItCreates) {
  ThrowawayKafka stock(/*auto_create_topics=*/true);
  const auto db = make_database(GetParam(), stock.bootstrap());
  db->create_topics = false;
  const std::string first = db->name("first");
  const std::string later = db->name("later");
  db->create_table(first, "id INT PRIMARY KEY, version INT NOT NULL, payload VARCHAR(40)");
  db->create_table(later, "id INT PRIMARY KEY, version INT NOT NULL, payload VARCHAR(40)");
  db->fill(first, 3);
  // The first start snapshots `first`: its first records meet a topic that does not exist yet.
  db->write_config({first, later}, "snapshot:\n  initial: when_needed\n");
  ASSERT_TRUE(db->start()) << db->daemon().stderr_text();
  db->exec("INSERT INTO " + first + " VALUES (4, 0, 'streamed')");
  ASSERT_EQ(ids(db->read_until(db->topic_of(first), 4)), (std::vector<int64_t>{1, 2, 3, 4})) << db->daemon().stderr_text();

  // A table whose first change comes while the pipeline streams.
  db->exec("INSERT INTO " + later + " VALUES (1, 0, 'a')");
  db->exec("INSERT INTO " + later + " VALUES (2, 0, 'b')");
  db->exec("INSERT INTO " + first + " VALUES (5, 0, 'after the new topic')");
  ASSERT_EQ(ids(db->read_until(db->topic_of(later), 2)), (std::vector<int64_t>{1, 2})) << db->daemon().stderr_text();
  ASSERT_EQ(ids(db->read_until(db->topic_of(first), 5)), (std::vector<int64_t>{1, 2, 3, 4, 5}));
  EXPECT_TRUE(db->daemon().process().running()) << db->daemon().stderr_text();

  const std::string err = db->daemon().stderr_text();
  for (const auto& t : {first, later}) {
    EXPECT_NE(err.find("topic " + db->topic_of(t) + " does not exist yet; waiting up to 30000 ms"), std::string::npos) << err;
    EXPECT_NE(err.find("topic " + db->topic_of(t) + " is there after"), std::string::npos) << err;
  }
  EXPECT_EQ(partition_count(stock.bootstrap(), db->topic_of(later)), 3) << "the broker's num.partitions";
}

TEST_P(KafkaTopics, TopicCreationGivesEachMissingTopicItsGroupsSettingsAndLeavesExistingOnesAlone) {
  ThrowawayKafka stock(/*auto_create_topics=*/true);  // it would create topics with 3 partitions, uncompacted
  const auto db = make_database(GetParam(), stock.bootstrap());
  const std::string plain = db->name("plain");
  const std::string events = db->name("events");
  const std::string existing = db->name("existing");
  db->create_table(existing, "id INT PRIMARY KEY, version INT NOT NULL, payload VARCHAR(40)");  // and its 1-partition topic
  db->create_topics = false;
  db->create_table(plain, "id INT PRIMARY KEY, version INT NOT NULL, payload VARCHAR(40)");
  db->create_table(events, "id INT PRIMARY KEY, version INT NOT NULL, payload VARCHAR(40)");
  db->fill(plain, 2);
  db->sink_yaml = "sink:\n  type: kafka\n  kafka:\n    bootstrap_servers: " + stock.bootstrap() +
                       "\n    topic_creation:\n      enabled: true\n      partitions: 2\n      config:\n"
                       "        cleanup.policy: compact\n      groups:\n"
                       "        - include: '.*\\.events_.*'\n          partitions: 5\n          config:\n"
                       "            retention.ms: '3600000'\n";
  db->write_config({plain, events, existing}, "snapshot:\n  initial: when_needed\n");
  ASSERT_TRUE(db->start()) << db->daemon().stderr_text();
  db->exec("INSERT INTO " + events + " VALUES (1, 0, 'e')");
  db->exec("INSERT INTO " + existing + " VALUES (1, 0, 'x')");
  ASSERT_EQ(ids(db->read_until(db->topic_of(plain), 2)), (std::vector<int64_t>{1, 2})) << db->daemon().stderr_text();
  ASSERT_EQ(ids(db->read_until(db->topic_of(events), 1)), (std::vector<int64_t>{1})) << db->daemon().stderr_text();
  ASSERT_EQ(ids(db->read_until(db->topic_of(existing), 1)), (std::vector<int64_t>{1})) << db->daemon().stderr_text();

  EXPECT_EQ(partition_count(stock.bootstrap(), db->topic_of(plain)), 2) << db->daemon().stderr_text();
  auto configs = topic_configs(stock.bootstrap(), db->topic_of(plain));
  EXPECT_EQ(configs["cleanup.policy"], "compact");
  EXPECT_EQ(partition_count(stock.bootstrap(), db->topic_of(events)), 5) << "its group's partitions";
  configs = topic_configs(stock.bootstrap(), db->topic_of(events));
  EXPECT_EQ(configs["cleanup.policy"], "compact") << "the default's config, under the group's";
  EXPECT_EQ(configs["retention.ms"], "3600000");
  EXPECT_EQ(partition_count(stock.bootstrap(), db->topic_of(existing)), 1) << "an existing topic is left alone";
  EXPECT_NE(topic_configs(stock.bootstrap(), db->topic_of(existing))["cleanup.policy"], "compact");

  const std::string err = db->daemon().stderr_text();
  EXPECT_NE(err.find("created topic " + db->topic_of(events) + " (partitions 5, replication factor the broker's default, "
                     "cleanup.policy=compact, retention.ms=3600000)"),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find("created topic " + db->topic_of(existing)), std::string::npos) << err;
}

TEST_P(KafkaTopics, WithAutoCreationOffALaterTableIsOneClearErrorAndLosesNothing) {
  const auto db = make_database(GetParam());  // the shared broker: auto.create.topics.enable=false
  const std::string first = db->name("first");
  const std::string later = db->name("later");
  db->create_table(first, "id INT PRIMARY KEY, version INT NOT NULL, payload VARCHAR(40)");
  db->create_topics = false;
  db->create_table(later, "id INT PRIMARY KEY, version INT NOT NULL, payload VARCHAR(40)");
  db->write_config({first, later}, "snapshot:\n  initial: never\n");
  ASSERT_TRUE(db->start()) << db->daemon().stderr_text();
  db->exec("INSERT INTO " + first + " VALUES (1, 0, 'before')");
  ASSERT_EQ(ids(db->read_until(db->topic_of(first), 1)), (std::vector<int64_t>{1}));

  db->exec("BEGIN; INSERT INTO " + later + " VALUES (1, 0, 'lost?'); INSERT INTO " + first + " VALUES (2, 0, 'same tx'); COMMIT");
  const auto status = db->daemon().process().wait_for_exit(60s);
  ASSERT_TRUE(status.has_value()) << db->daemon().stderr_text();
  EXPECT_EQ(*status, 2) << "a fatal sink error: systemd restarts it (Restart=on-failure)";
  const std::string err = db->daemon().stderr_text();
  EXPECT_NE(err.find("topic " + db->topic_of(later) + " does not exist"), std::string::npos) << err;
  EXPECT_NE(err.find("auto.create.topics.enable=false"), std::string::npos) << err;
  EXPECT_NE(err.find("kafka-topics.sh"), std::string::npos) << err;
  EXPECT_EQ(err.find("waiting up to"), std::string::npos) << "a broker that says it does not create topics is not waited for";

  // The fix the error names, then a restart: the transaction arrives whole.
  create_topic(db->bootstrap(), db->topic_of(later), 1);
  db->daemon().start();
  ASSERT_EQ(ids(db->read_until(db->topic_of(later), 1)), (std::vector<int64_t>{1})) << db->daemon().stderr_text();
  // Row 2 may have been acknowledged before the failure: a replay is a duplicate, never a loss.
  auto replayed = ids(db->read_until(db->topic_of(first), 2));
  replayed.erase(std::unique(replayed.begin(), replayed.end()), replayed.end());
  EXPECT_EQ(replayed, (std::vector<int64_t>{1, 2})) << db->daemon().stderr_text();
}

std::string param_name(const testing::TestParamInfo<std::string>& info) { return info.param; }
INSTANTIATE_TEST_SUITE_P(BothDatabases, KafkaTopics, testing::Values("postgres", "mariadb"), param_name);

}  // namespace
}  // namespace tidemark::test
