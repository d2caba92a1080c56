// The producer's effective librdkafka settings: Tidemark's defaults, the user's overrides, the pinned ones.
// No broker is needed: librdkafka connects only in the background.

#include <gtest/gtest.h>

#include "core/position_tracker.hpp"
#include "sink/kafka_sink.hpp"

namespace tidemark {
namespace {

KafkaSinkConfig unreachable_broker() {
  KafkaSinkConfig config;
  config.bootstrap_servers = "127.0.0.1:1";
  return config;
}

TEST(KafkaProducerSettings, TidemarkDefaultsApplyWhenNotConfigured) {
  PositionTracker tracker;
  const KafkaSink sink(unreachable_broker(), "settings-test", tracker);
  EXPECT_EQ(sink.producer_setting("linger.ms"), "1");
  EXPECT_EQ(sink.producer_setting("queue.buffering.max.kbytes"), "32768");
  for (const auto& [key, value] : kafka_producer_defaults()) EXPECT_EQ(sink.producer_setting(key), value) << key;
}

TEST(KafkaProducerSettings, PropertiesOverrideTheDefaultsButNotThePinnedSettings) {
  KafkaSinkConfig config = unreachable_broker();
  config.properties = {{"linger.ms", "20"}, {"queue.buffering.max.kbytes", "1024"}, {"compression.type", "lz4"}};
  PositionTracker tracker;
  const KafkaSink sink(config, "settings-test", tracker);
  EXPECT_EQ(sink.producer_setting("linger.ms"), "20");
  EXPECT_EQ(sink.producer_setting("queue.buffering.max.kbytes"), "1024");
  EXPECT_EQ(sink.producer_setting("compression.type"), "lz4");
  EXPECT_EQ(sink.producer_setting("enable.idempotence"), "true");
  EXPECT_EQ(sink.producer_setting("partitioner"), "murmur2_random");
  EXPECT_EQ(sink.producer_setting("no.such.property"), "");
}

}  // namespace
}  // namespace tidemark
