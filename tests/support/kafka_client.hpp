#pragma once
// The tests' own Kafka client, independent of Tidemark's sink: creates topics through the admin API and
// reads topics back from the beginning to their end.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tidemark::test {

// TIDEMARK_KAFKA_BOOTSTRAP, set by scripts/test.sh after it starts the real broker. Fails the test when
// unset: integration tests never silently skip.
std::string real_kafka_bootstrap();

// A topic name no earlier run used.
std::string unique_name(const std::string& prefix);

// Creates the topic (replication factor 1); succeeds when it exists already.
void create_topic(const std::string& bootstrap, const std::string& topic, int partitions);
// Grows `topic` to `total` partitions (the admin API's CreatePartitions) and waits until they have leaders.
void add_partitions(const std::string& bootstrap, const std::string& topic, int total);

struct ConsumedRecord {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;
  std::optional<std::string> key;
  std::optional<std::string> value;  // nullopt for a tombstone
  int32_t partition_count = 0;       // of the topic, when it was read
};

// Every record of `topic`, partition by partition in offset order, up to each partition's end as it is
// when called.
std::vector<ConsumedRecord> consume_all(const std::string& bootstrap, const std::string& topic,
                                        std::chrono::milliseconds timeout = std::chrono::seconds(30));

// Every committed record of `topic` as a consumer that is not Tidemark's code reads it: kcat with
// isolation.level=read_committed, from the beginning to the end of each partition (its last stable offset).
std::vector<ConsumedRecord> consume_committed_with_kcat(const std::string& bootstrap, const std::string& topic);

// The records grouped by key ("null" for a record without one), each key's in the order given.
std::map<std::string, std::vector<ConsumedRecord>> records_by_key(const std::vector<ConsumedRecord>& records);

// Number of partitions of an existing topic.
int partition_count(const std::string& bootstrap, const std::string& topic);

// The configs of a topic as the brokers describe them (DescribeConfigs), defaults included; empty when the
// topic cannot be described.
std::map<std::string, std::string> topic_configs(const std::string& bootstrap, const std::string& topic);

// Java's default partitioner for keyed records: toPositive(murmur2(key)) % partitions, written from the
// Kafka documentation's algorithm, to check that keys land where Java clients put them.
int32_t java_partition_for_key(const std::string& key, int32_t partitions);

}  // namespace tidemark::test
