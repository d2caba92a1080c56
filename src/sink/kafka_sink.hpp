#pragma once
// librdkafka producer: idempotent, acks=all, murmur2_random partitioner (keys land where Java clients put
// them). The delivery report is the only place that acknowledges a ticket.

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <librdkafka/rdkafka.h>

#include "config/config.hpp"
#include "sink/kafka_topics.hpp"
#include "sink/message_sink.hpp"

namespace tidemark {

class KafkaSink final : public MessageSink {
 public:
  // Throws std::runtime_error at start-up when the producer cannot be configured.
  KafkaSink(const KafkaSinkConfig& config, std::string client_id, PositionTracker& tracker);
  ~KafkaSink() override;

  // Asks the brokers for metadata; an error names the cause and the fix (used at start and by `check`).
  std::optional<std::string> check_connection(std::chrono::milliseconds timeout);

  std::optional<TopicIndex> resolve_topic(const std::string& name) override;
  bool send(TopicIndex topic, std::optional<std::string_view> key, std::optional<std::string_view> value,
            Ticket ticket) override;
  void poll(std::chrono::milliseconds timeout) override;
  bool flush(std::chrono::milliseconds timeout) override;
  void abort() override { aborted_ = true; }
  bool waiting_for_room() const override { return waiting_for_room_; }
  std::optional<std::string> fatal_error() const override;
  void attach_metrics(PipelineMetrics& metrics) override { metrics_ = &metrics; }

 private:
  static void on_delivery(rd_kafka_t* rk, const rd_kafka_message_t* message, void* opaque);
  static void on_error(rd_kafka_t* rk, int err, const char* reason, void* opaque);
  static void on_log(const rd_kafka_t* rk, int level, const char* facility, const char* message);
  void set_fatal(std::string message);
  // A topic the brokers do not know yet: a broker with auto.create.topics.enable creates it on the first
  // metadata request, so wait (bounded by sink.kafka.topic_creation_wait_ms) until it appears; at once
  // fatal when the broker says it does not create topics.
  TopicLookup wait_for_creation(rd_kafka_topic_t* topic, const std::string& name);
  // sink.kafka.topic_creation: CreateTopics with the topic's spec, then wait until metadata shows it.
  TopicLookup create_and_await(rd_kafka_topic_t* topic, const std::string& name);
  // Polls metadata until the topic exists, for `wait` at most.
  TopicLookup await_topic(rd_kafka_topic_t* topic, const std::string& name, std::chrono::milliseconds wait);

  KafkaSinkConfig config_;
  PositionTracker& tracker_;
  PipelineMetrics* metrics_ = nullptr;
  rd_kafka_t* producer_ = nullptr;
  std::vector<rd_kafka_topic_t*> topics_;
  std::unordered_map<std::string, TopicIndex> topic_index_;
  std::atomic<bool> aborted_{false};
  std::atomic<bool> failed_{false};
  std::atomic<bool> waiting_for_room_{false};
  mutable std::mutex fatal_mutex_;
  std::optional<std::string> fatal_;
};

}  // namespace tidemark
