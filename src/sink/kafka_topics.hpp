#pragma once
// What the brokers say about a topic before its first record: does it exist, and will they create it.
// Asked once per topic, so that a missing topic is one clear error (or one bounded wait while a broker
// with auto.create.topics.enable creates it) rather than a delivery timeout minutes later.

#include <chrono>
#include <optional>
#include <string>

#include <librdkafka/rdkafka.h>

#include "config/config.hpp"

namespace tidemark {

enum class TopicState {
  Exists,      // metadata names it (a leader may still be being elected: delivery waits for that)
  Missing,     // UNKNOWN_TOPIC_OR_PART: a broker that auto-creates topics has begun creating it
  Forbidden,   // TOPIC_AUTHORIZATION_FAILED
  Unanswered,  // the brokers could not be asked: delivery reports decide
};

struct TopicLookup {
  TopicState state = TopicState::Unanswered;
  rd_kafka_resp_err_t error = RD_KAFKA_RESP_ERR_NO_ERROR;  // the brokers' answer (or why they gave none)
  int partitions = 0;  // Exists: the topic's partition count as the answer gave it (0 when unknown)
};

// One metadata request for `topic`. A producer's metadata request lets a broker with
// auto.create.topics.enable=true create the topic: the first answer is then Missing, a later one Exists.
TopicLookup look_up_topic(rd_kafka_t* producer, rd_kafka_topic_t* topic, std::chrono::milliseconds timeout);

enum class AutoCreation { On, Off, Unknown };

// auto.create.topics.enable of one broker (DescribeConfigs); Unknown when it cannot be read (no DESCRIBE_CONFIGS
// permission, a broker that names it differently).
AutoCreation broker_auto_creation(rd_kafka_t* producer, std::chrono::milliseconds timeout);

// What sink.kafka.topic_creation gives `topic`: the first group whose include matches the whole name (and
// whose exclude does not), its unset parts filled from the defaults; the defaults when no group matches.
TopicSpec topic_spec_for(const TopicCreationConfig& creation, const std::string& topic);

// CreateTopics for one topic. nullopt when it was created or already exists; otherwise the brokers' error
// (code name and message) for the caller to explain.
struct TopicCreationFailure {
  rd_kafka_resp_err_t error = RD_KAFKA_RESP_ERR_NO_ERROR;
  std::string message;
};
std::optional<TopicCreationFailure> create_topic(rd_kafka_t* producer, const std::string& topic, const TopicSpec& spec,
                                                 std::chrono::milliseconds timeout);

}  // namespace tidemark
