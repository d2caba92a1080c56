#include "sink/kafka_topics.hpp"

#include <memory>
#include <regex>
#include <string>

namespace tidemark {

namespace {

template <typename T, void (*Destroy)(T*)>
struct Deleter {
  void operator()(T* p) const { Destroy(p); }
};
using Metadata = std::unique_ptr<const rd_kafka_metadata_t, Deleter<const rd_kafka_metadata_t, rd_kafka_metadata_destroy>>;
using Queue = std::unique_ptr<rd_kafka_queue_t, Deleter<rd_kafka_queue_t, rd_kafka_queue_destroy>>;
using Options = std::unique_ptr<rd_kafka_AdminOptions_t, Deleter<rd_kafka_AdminOptions_t, rd_kafka_AdminOptions_destroy>>;
using Resource = std::unique_ptr<rd_kafka_ConfigResource_t, Deleter<rd_kafka_ConfigResource_t, rd_kafka_ConfigResource_destroy>>;
using Event = std::unique_ptr<rd_kafka_event_t, Deleter<rd_kafka_event_t, rd_kafka_event_destroy>>;
using NewTopic = std::unique_ptr<rd_kafka_NewTopic_t, Deleter<rd_kafka_NewTopic_t, rd_kafka_NewTopic_destroy>>;

}  // namespace

TopicLookup look_up_topic(rd_kafka_t* producer, rd_kafka_topic_t* topic, std::chrono::milliseconds timeout) {
  const rd_kafka_metadata_t* raw = nullptr;
  const rd_kafka_resp_err_t err = rd_kafka_metadata(producer, 0, topic, &raw, static_cast<int>(timeout.count()));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return {TopicState::Unanswered, err};
  const Metadata metadata(raw);
  const rd_kafka_resp_err_t topic_err =
      metadata->topic_cnt > 0 ? metadata->topics[0].err : RD_KAFKA_RESP_ERR_NO_ERROR;
  switch (topic_err) {
    case RD_KAFKA_RESP_ERR_NO_ERROR:
    case RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE:  // created, electing a leader: delivery waits for it
      return {TopicState::Exists, topic_err, metadata->topic_cnt > 0 ? metadata->topics[0].partition_cnt : 0};
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
      return {TopicState::Missing, topic_err};
    case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
      return {TopicState::Forbidden, topic_err};
    default:
      return {TopicState::Unanswered, topic_err};
  }
}

AutoCreation broker_auto_creation(rd_kafka_t* producer, std::chrono::milliseconds timeout) {
  const rd_kafka_metadata_t* raw = nullptr;
  if (rd_kafka_metadata(producer, 0, nullptr, &raw, static_cast<int>(timeout.count())) != RD_KAFKA_RESP_ERR_NO_ERROR)
    return AutoCreation::Unknown;
  const Metadata metadata(raw);
  if (metadata->broker_cnt == 0) return AutoCreation::Unknown;
  const std::string broker = std::to_string(metadata->brokers[0].id);

  const Queue queue(rd_kafka_queue_new(producer));
  const Options options(rd_kafka_AdminOptions_new(producer, RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS));
  char err[256];
  if (rd_kafka_AdminOptions_set_request_timeout(options.get(), static_cast<int>(timeout.count()), err, sizeof err) !=
      RD_KAFKA_RESP_ERR_NO_ERROR)
    return AutoCreation::Unknown;
  Resource resource(rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_BROKER, broker.c_str()));
  rd_kafka_ConfigResource_t* resources[] = {resource.get()};
  rd_kafka_DescribeConfigs(producer, resources, 1, options.get(), queue.get());
  const Event event(rd_kafka_queue_poll(queue.get(), static_cast<int>(timeout.count()) + 1000));
  if (!event || rd_kafka_event_error(event.get()) != RD_KAFKA_RESP_ERR_NO_ERROR) return AutoCreation::Unknown;
  const rd_kafka_DescribeConfigs_result_t* result = rd_kafka_event_DescribeConfigs_result(event.get());
  if (result == nullptr) return AutoCreation::Unknown;
  size_t count = 0;
  const rd_kafka_ConfigResource_t** described = rd_kafka_DescribeConfigs_result_resources(result, &count);
  if (count != 1 || rd_kafka_ConfigResource_error(described[0]) != RD_KAFKA_RESP_ERR_NO_ERROR) return AutoCreation::Unknown;
  size_t entries = 0;
  const rd_kafka_ConfigEntry_t** configs = rd_kafka_ConfigResource_configs(described[0], &entries);
  for (size_t i = 0; i < entries; ++i) {
    if (std::string(rd_kafka_ConfigEntry_name(configs[i])) != "auto.create.topics.enable") continue;
    const char* value = rd_kafka_ConfigEntry_value(configs[i]);
    if (value == nullptr) return AutoCreation::Unknown;
    return std::string(value) == "true" ? AutoCreation::On : AutoCreation::Off;
  }
  return AutoCreation::Unknown;
}

TopicSpec topic_spec_for(const TopicCreationConfig& creation, const std::string& topic) {
  for (const auto& group : creation.groups) {
    if (!std::regex_match(topic, std::regex(group.include))) continue;
    if (!group.exclude.empty() && std::regex_match(topic, std::regex(group.exclude))) continue;
    TopicSpec spec = creation.defaults;
    if (group.spec.partitions != -1) spec.partitions = group.spec.partitions;
    if (group.spec.replication_factor != -1) spec.replication_factor = group.spec.replication_factor;
    for (const auto& [key, value] : group.spec.config) spec.config[key] = value;
    return spec;
  }
  return creation.defaults;
}

std::optional<TopicCreationFailure> create_topic(rd_kafka_t* producer, const std::string& topic, const TopicSpec& spec,
                                                 std::chrono::milliseconds timeout) {
  char err[512];
  const NewTopic new_topic(rd_kafka_NewTopic_new(topic.c_str(), static_cast<int>(spec.partitions),
                                                 static_cast<int>(spec.replication_factor), err, sizeof err));
  if (!new_topic) return TopicCreationFailure{RD_KAFKA_RESP_ERR__INVALID_ARG, err};
  for (const auto& [key, value] : spec.config) {
    if (rd_kafka_NewTopic_set_config(new_topic.get(), key.c_str(), value.c_str()) != RD_KAFKA_RESP_ERR_NO_ERROR)
      return TopicCreationFailure{RD_KAFKA_RESP_ERR__INVALID_ARG, "config " + key + " cannot be set"};
  }
  const Options options(rd_kafka_AdminOptions_new(producer, RD_KAFKA_ADMIN_OP_CREATETOPICS));
  if (rd_kafka_AdminOptions_set_request_timeout(options.get(), static_cast<int>(timeout.count()), err, sizeof err) !=
          RD_KAFKA_RESP_ERR_NO_ERROR ||
      rd_kafka_AdminOptions_set_operation_timeout(options.get(), static_cast<int>(timeout.count()), err, sizeof err) !=
          RD_KAFKA_RESP_ERR_NO_ERROR)
    return TopicCreationFailure{RD_KAFKA_RESP_ERR__INVALID_ARG, err};
  const Queue queue(rd_kafka_queue_new(producer));
  rd_kafka_NewTopic_t* topics[] = {new_topic.get()};
  rd_kafka_CreateTopics(producer, topics, 1, options.get(), queue.get());
  const Event event(rd_kafka_queue_poll(queue.get(), static_cast<int>(timeout.count()) + 1000));
  if (!event) return TopicCreationFailure{RD_KAFKA_RESP_ERR__TIMED_OUT, "no answer to CreateTopics"};
  if (rd_kafka_event_error(event.get()) != RD_KAFKA_RESP_ERR_NO_ERROR)
    return TopicCreationFailure{rd_kafka_event_error(event.get()), rd_kafka_event_error_string(event.get())};
  const rd_kafka_CreateTopics_result_t* result = rd_kafka_event_CreateTopics_result(event.get());
  size_t count = 0;
  const rd_kafka_topic_result_t** results = result ? rd_kafka_CreateTopics_result_topics(result, &count) : nullptr;
  if (count != 1) return TopicCreationFailure{RD_KAFKA_RESP_ERR__BAD_MSG, "CreateTopics answered for no topic"};
  const rd_kafka_resp_err_t code = rd_kafka_topic_result_error(results[0]);
  if (code == RD_KAFKA_RESP_ERR_NO_ERROR || code == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) return std::nullopt;
  const char* message = rd_kafka_topic_result_error_string(results[0]);
  return TopicCreationFailure{code, message ? message : rd_kafka_err2str(code)};
}

}  // namespace tidemark
