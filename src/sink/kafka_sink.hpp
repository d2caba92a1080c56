#pragma once
// librdkafka producer: idempotent, acks=all, murmur2_random partitioner (keys land where Java clients put
// them); records reach it through a ProduceGate (produce_gate.hpp), which hands a topic's records over when
// librdkafka can send them. The delivery report is the only place that acknowledges a ticket — except with
// sink.kafka.exactly_once, where records go out in Kafka transactions and the commit of the transaction
// holding a record is the only place that acknowledges its ticket.

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <librdkafka/rdkafka.h>

#include "config/config.hpp"
#include "sink/kafka_topics.hpp"
#include "sink/message_sink.hpp"
#include "sink/produce_gate.hpp"

namespace tidemark {

// librdkafka settings Tidemark sets where librdkafka's own default does not suit it; sink.kafka.properties
// overrides them.
const std::vector<std::pair<std::string, std::string>>& kafka_producer_defaults();

class KafkaSink final : public MessageSink {
 public:
  // Throws std::runtime_error at start-up when the producer cannot be configured.
  KafkaSink(const KafkaSinkConfig& config, std::string client_id, PositionTracker& tracker);
  ~KafkaSink() override;

  // The value the producer runs with for a librdkafka property ("" when unknown).
  std::string producer_setting(const std::string& name) const;

  // Asks the brokers for metadata; an error names the cause and the fix (used at start and by `check`).
  std::optional<std::string> check_connection(std::chrono::milliseconds timeout);

  std::optional<TopicIndex> resolve_topic(const std::string& name) override;
  bool send(TopicIndex topic, std::optional<std::string_view> key, std::optional<std::string_view> value,
            Ticket ticket) override;
  void pass(Ticket ticket) override;
  void poll(std::chrono::milliseconds timeout) override;
  // Delivery reports wake the caller of poll(): the gate hands a topic's next records over only once its
  // earlier ones are reported, so the sooner they are served, the sooner those go.
  void set_wakeup(std::function<void()> wake) override;
  bool flush(std::chrono::milliseconds timeout) override;
  void abort() override { aborted_ = true; }
  bool waiting_for_room() const override { return waiting_for_room_; }
  std::optional<std::string> fatal_error() const override;
  void attach_metrics(PipelineMetrics& metrics) override { metrics_ = &metrics; }

  // ---- sink.kafka.exactly_once ----
  bool transactional() const { return transactional_; }
  // The tracker to acknowledge, when it is made after the sink: the state that gives its start is read
  // only after init_transactions. Before the first send.
  void bind_tracker(PositionTracker& tracker) { tracker_ = &tracker; }
  // Registers the transactional.id with its coordinator: fences every earlier producer with the same id
  // and aborts the transaction it left open. Must succeed before the first send and before the state topic
  // is read. An error names the cause and the fix.
  std::optional<std::string> init_transactions(std::chrono::milliseconds timeout);
  // The state topic: created (one partition, cleanup.policy=compact) when missing.
  std::optional<TopicIndex> resolve_state_topic(const std::string& name);
  // Sends `state_value` under `state_key` to `state_topic` as the open transaction's last record, commits,
  // and then acknowledges every ticket sent in the transaction. Calls again or aborts and sends the
  // transaction's records again in a new one as librdkafka says; false when that failed for good (fenced,
  // fatal, or retried past sink.kafka.delivery_timeout_ms: fatal_error says which).
  bool commit_transaction(TopicIndex state_topic, std::string_view state_key, std::string_view state_value);
  bool transaction_open() const { return transaction_open_; }
  size_t transaction_bytes() const { return buffer_.size(); }
  std::chrono::steady_clock::time_point transaction_began() const { return transaction_began_; }

 private:
  // A record of the open transaction, kept until it commits: an abort loses the transaction's records,
  // which then go out again in the next one. Its key and value are at `at` in buffer_.
  struct BufferedRecord {
    TopicIndex topic;  // kNoRecord: a ticket passed without a record
    size_t at;
    int64_t key_size;    // -1: no key
    int64_t value_size;  // -1: null value
    Ticket ticket;
  };
  // Without exactly_once: into the gate (waiting while it holds as much as librdkafka's own queue may).
  bool hold(TopicIndex topic, std::optional<std::string_view> key, std::optional<std::string_view> value, Ticket ticket);
  // One rd_kafka_produce (the record copied); its error, or NO_ERROR.
  rd_kafka_resp_err_t produce_once(rd_kafka_topic_t* rkt, std::optional<std::string_view> key,
                                   std::optional<std::string_view> value, Ticket ticket);
  // One rd_kafka_produce for the gate.
  ProduceGate::Handed hand_over(const ProduceGate::Record& record);
  // Hands over what the gate lets through (everything when `force`).
  void release_held(bool force = false);
  // rd_kafka_produce until it is queued (waiting out backpressure); false when the sink failed.
  bool produce(TopicIndex topic, std::optional<std::string_view> key, std::optional<std::string_view> value, Ticket ticket);
  bool begin_transaction();
  // Aborts the open transaction and sends its records again in a new one.
  bool abort_and_resend();
  // A transactional call that failed: true when the caller should go on as `action` says (the error is
  // logged), false when the sink failed (fatal_error set).
  bool on_transaction_error(rd_kafka_error_t* error, const char* call, int& aborts, bool& resend);
  // Delivery reports are collected by on_delivery while librdkafka serves them, and applied to the tracker
  // and the metrics once the poll returns: one lock each per poll, not per record.
  static void on_delivery(rd_kafka_t* rk, const rd_kafka_message_t* message, void* opaque);
  void serve_deliveries(std::chrono::milliseconds timeout);  // rd_kafka_poll, then settle_deliveries
  void settle_deliveries();
  static void on_error(rd_kafka_t* rk, int err, const char* reason, void* opaque);
  static void on_queue_event(rd_kafka_t* rk, void* opaque);
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
  PositionTracker* tracker_;
  PipelineMetrics* metrics_ = nullptr;
  rd_kafka_t* producer_ = nullptr;
  std::vector<rd_kafka_topic_t*> topics_;
  std::unordered_map<std::string, TopicIndex> topic_index_;
  std::atomic<bool> aborted_{false};
  std::atomic<bool> failed_{false};
  std::atomic<bool> waiting_for_room_{false};
  mutable std::mutex fatal_mutex_;
  std::optional<std::string> fatal_;
  bool transactional_ = false;
  bool transaction_open_ = false;
  std::chrono::steady_clock::time_point transaction_began_{};
  std::string buffer_;  // keys and values of the open transaction's records
  std::vector<BufferedRecord> records_;
  // Without exactly_once (transactions commit what they hold, so records may not wait outside them).
  std::optional<ProduceGate> gate_;
  ProduceGate::HandOver hand_over_;
  size_t held_bytes_limit_ = 0;    // queue.buffering.max.kbytes, at most 8 x batch.size
  size_t held_records_limit_ = 0;  // queue.buffering.max.messages
  size_t batch_size_ = 0;  // batch.size
  std::unordered_map<const rd_kafka_topic_t*, TopicIndex> topic_of_;
  std::function<void()> wake_;
  std::vector<Ticket> delivered_;            // acknowledged, not yet given to the tracker
  std::vector<double> delivered_latencies_;  // their produce -> acknowledgement latencies (seconds)
  std::string last_delivery_error_;  // of a record in the open transaction (set by the delivery report)
};

}  // namespace tidemark
