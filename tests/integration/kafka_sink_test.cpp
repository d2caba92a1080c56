// The sink against the real broker, in process: records read back by the tests' own consumer.

#include <gtest/gtest.h>

#include <map>

#include <nlohmann/json.hpp>

#include "core/position_tracker.hpp"
#include "kafka_client.hpp"
#include "sink/kafka_sink.hpp"
#include "sink/publisher.hpp"
#include "source/generator/generator_source.hpp"

namespace tidemark::test {
namespace {

using namespace std::chrono_literals;

KafkaSinkConfig sink_config(const std::string& bootstrap) {
  KafkaSinkConfig c;
  c.bootstrap_servers = bootstrap;
  c.delivery_timeout_ms = 60000;
  return c;
}

Config generator_config(int keys) {
  Config c;
  c.source.generator.tables = 1;
  c.source.generator.keys = keys;
  c.source.generator.row_bytes = 50;
  return c;
}

TEST(KafkaSink, RecordsArriveWithJavaPartitioningPerKeyOrderAndTombstones) {
  const std::string bootstrap = real_kafka_bootstrap();
  const std::string prefix = unique_name("sink");
  const std::string topic = prefix + ".generator.t0";
  create_topic(bootstrap, topic, 6);

  PositionTracker tracker;
  KafkaSink sink(sink_config(bootstrap), "sink-test", tracker);
  ASSERT_FALSE(sink.check_connection(10s).has_value());
  Publisher publisher({prefix, prefix, "{prefix}.{database}.{table}", true}, sink, tracker);
  GeneratorSource generator(generator_config(40));
  const uint64_t events = 2000;
  for (uint64_t n = 0; n < events; ++n) {
    ChangeEvent e = generator.event_at(n);
    e.resume_position = GeneratorSource::position_after(n);
    ASSERT_TRUE(publisher.publish(e)) << sink.fatal_error().value_or("");
    sink.poll(0ms);
  }
  ASSERT_TRUE(sink.flush(30s));
  EXPECT_EQ(tracker.committed().position, GeneratorSource::position_after(events - 1));
  EXPECT_EQ(tracker.in_flight(), 0u);

  const auto records = consume_all(bootstrap, topic);
  // 2000 changes over 40 keys = 50 rounds: rounds 2, 5, 8... are deletes (16 of them), each with a tombstone.
  const size_t deletes = 16 * 40;
  ASSERT_EQ(records.size(), events + deletes);
  std::map<std::string, int64_t> last_version;
  std::map<int32_t, std::string> tombstone_due;  // partition -> key of the delete just read
  std::set<int32_t> partitions_used;
  for (const auto& r : records) {
    ASSERT_TRUE(r.key.has_value());
    EXPECT_EQ(r.partition, java_partition_for_key(*r.key, 6)) << *r.key;
    partitions_used.insert(r.partition);
    if (!r.value) {
      EXPECT_EQ(tombstone_due[r.partition], *r.key);
      tombstone_due.erase(r.partition);
      continue;
    }
    EXPECT_FALSE(tombstone_due.count(r.partition)) << "delete without its tombstone right after";
    const auto v = nlohmann::json::parse(*r.value);
    const auto key = nlohmann::json::parse(*r.key);
    const int64_t n = v["source"]["sequence"];
    EXPECT_EQ(key, nlohmann::json({{"id", n % 40}}));
    EXPECT_EQ(v["source"]["connector"], "generator");
    EXPECT_EQ(v["source"]["name"], prefix);
    EXPECT_EQ(v["source"]["db"], "generator");
    EXPECT_EQ(v["source"]["table"], "t0");
    EXPECT_TRUE(v.contains("ts_ms"));
    const std::string op = v["op"];
    EXPECT_EQ(op, std::string(1, "cud"[n / 40 % 3]));
    if (op == "d") {
      EXPECT_TRUE(v["after"].is_null());
      EXPECT_EQ(v["before"]["id"], n % 40);
      tombstone_due[r.partition] = *r.key;
    } else {
      EXPECT_EQ(v["after"]["version"], n);
    }
    const auto [it, first] = last_version.emplace(*r.key, n);
    if (!first) {
      EXPECT_GT(n, it->second) << "key " << *r.key << " went back in time";
      it->second = n;
    }
  }
  EXPECT_GT(partitions_used.size(), 3u) << "keys should spread over the partitions";
}

TEST(KafkaSink, MissingTopicIsAClearFatalError) {
  const std::string bootstrap = real_kafka_bootstrap();
  PositionTracker tracker;
  KafkaSink sink(sink_config(bootstrap), "sink-test", tracker);
  const std::string topic = unique_name("missing");
  EXPECT_FALSE(sink.resolve_topic(topic).has_value());
  ASSERT_TRUE(sink.fatal_error().has_value());
  EXPECT_NE(sink.fatal_error()->find("topic " + topic + " does not exist"), std::string::npos) << *sink.fatal_error();
}

TEST(KafkaSink, PositionOnlyAdvancesWhenEverythingBeforeIsAcknowledged) {
  const std::string bootstrap = real_kafka_bootstrap();
  const std::string prefix = unique_name("order");
  create_topic(bootstrap, prefix + ".generator.t0", 3);
  PositionTracker tracker(SourcePosition{"seq:0"});
  KafkaSink sink(sink_config(bootstrap), "sink-test", tracker);
  Publisher publisher({prefix, prefix, "{prefix}.{database}.{table}", false}, sink, tracker);
  GeneratorSource generator(generator_config(10));
  // Nothing is acknowledged before poll() serves the delivery reports.
  for (uint64_t n = 0; n < 100; ++n) {
    ChangeEvent e = generator.event_at(n);
    e.resume_position = GeneratorSource::position_after(n);
    ASSERT_TRUE(publisher.publish(e));
  }
  EXPECT_EQ(tracker.committed().position, SourcePosition{"seq:0"});
  ASSERT_TRUE(sink.flush(30s));
  EXPECT_EQ(tracker.committed().position, SourcePosition{"seq:100"});
  // A checkpoint after the last record commits without a record of its own.
  ASSERT_TRUE(publisher.publish(Checkpoint{SourcePosition{"seq:150"}}));
  EXPECT_EQ(tracker.committed().position, SourcePosition{"seq:150"});
}

}  // namespace
}  // namespace tidemark::test
