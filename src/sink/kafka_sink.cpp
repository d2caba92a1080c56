#include "sink/kafka_sink.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include "sink/kafka_errors.hpp"
#include "sink/kafka_topics.hpp"

namespace tidemark {

namespace {

constexpr std::chrono::milliseconds kBackpressurePoll{50};
constexpr std::chrono::milliseconds kTopicCheckTimeout{5000};
constexpr std::chrono::milliseconds kTopicCreationPoll{200};
// Each transactional call waits this long at most, so that abort() is seen between calls.
constexpr std::chrono::milliseconds kTransactionCall{5000};
// Aborted transactions in a row (each sent again) before the sink gives up.
constexpr int kMaxAborts = 5;
// The ticket of the state record: its commit acknowledges the others, it has none of its own.
constexpr Ticket kStateRecord = ~Ticket{0};
constexpr TopicIndex kNoRecord = ~TopicIndex{0};

void set_property(rd_kafka_conf_t* conf, const std::string& key, const std::string& value) {
  char err[512];
  if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK)
    throw std::runtime_error("sink.kafka.properties: " + key + ": " + err);
}

// transaction.timeout.ms: librdkafka's default unless sink.kafka.properties sets it.
int64_t transaction_timeout_ms(const KafkaSinkConfig& config) {
  const auto it = config.properties.find("transaction.timeout.ms");
  return it == config.properties.end() ? 60000 : std::stoll(it->second);
}

// Waiting on Kafka, not stuck, while it lives: the watchdog stays quiet (waiting_for_room()).
struct WaitingForRoom {
  std::atomic<bool>& flag;
  explicit WaitingForRoom(std::atomic<bool>& f) : flag(f) { flag = true; }
  ~WaitingForRoom() { flag = false; }
  WaitingForRoom(const WaitingForRoom&) = delete;
  WaitingForRoom& operator=(const WaitingForRoom&) = delete;
};

// The `class` label of tidemark_delivery_errors_total.
const char* error_class(KafkaErrorAction action) {
  switch (action) {
    case KafkaErrorAction::Backpressure: return "backpressure";
    case KafkaErrorAction::Transient: return "transient";
    case KafkaErrorAction::Fatal: return "fatal";
  }
  return "fatal";
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& kafka_producer_defaults() {
  static const std::vector<std::pair<std::string, std::string>> defaults = {
      {"queue.buffering.max.kbytes", "32768"},  // bounds the producer's memory
      // librdkafka's 5 ms is 5 ms on every change that comes alone, and on the log's changes during a
      // snapshot. At high rates batches fill before any linger ends, so the shorter one costs nothing there;
      // at about a thousand lone changes a second it costs the daemon and the broker some CPU (benchmarks.md).
      {"linger.ms", "1"},
  };
  return defaults;
}

std::string KafkaSink::producer_setting(const std::string& name) const {
  char value[512];
  size_t size = sizeof(value);
  if (rd_kafka_conf_get(rd_kafka_conf(producer_), name.c_str(), value, &size) != RD_KAFKA_CONF_OK) return "";
  return value;
}

KafkaSink::KafkaSink(const KafkaSinkConfig& config, std::string client_id, PositionTracker& tracker)
    : config_(config), tracker_(&tracker), transactional_(config.exactly_once) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  try {
    // Tidemark's own defaults first, so that sink.kafka.properties can override the tunable ones.
    set_property(conf, "client.id", client_id);
    for (const auto& [key, value] : kafka_producer_defaults()) set_property(conf, key, value);
    // A sink that creates its topics must not let a broker create them first with the broker's defaults
    // (a producer's metadata request does that on a broker with auto.create.topics.enable).
    if (config.topic_creation.enabled) set_property(conf, "allow.auto.create.topics", "false");
    for (const auto& [key, value] : config.properties) set_property(conf, key, value);
    // Pinned: these make delivery ordered and acknowledged (the config validator refuses overrides).
    set_property(conf, "bootstrap.servers", config.bootstrap_servers);
    set_property(conf, "enable.idempotence", "true");
    set_property(conf, "acks", "all");
    set_property(conf, "partitioner", "murmur2_random");
    if (config.exactly_once) {
      // A record of a transaction cannot outlive it: the transaction is aborted and sent again instead, and
      // commits are retried up to delivery_timeout_ms.
      set_property(conf, "transactional.id", config.transactional_id);
      set_property(conf, "message.timeout.ms", std::to_string(transaction_timeout_ms(config)));
    } else {
      set_property(conf, "message.timeout.ms", std::to_string(config.delivery_timeout_ms));
    }
  } catch (...) {
    rd_kafka_conf_destroy(conf);
    throw;
  }
  rd_kafka_conf_set_opaque(conf, this);
  rd_kafka_conf_set_dr_msg_cb(conf, &KafkaSink::on_delivery);
  rd_kafka_conf_set_error_cb(conf, &KafkaSink::on_error);
  rd_kafka_conf_set_log_cb(conf, &KafkaSink::on_log);
  char err[512];
  producer_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (producer_ == nullptr) {
    rd_kafka_conf_destroy(conf);
    throw std::runtime_error(std::string("cannot create the Kafka producer: ") + err);
  }
  if (!transactional_) {
    const auto setting = [&](const char* name, size_t fallback) {
      const std::string value = producer_setting(name);
      char* end = nullptr;
      const unsigned long long n = std::strtoull(value.c_str(), &end, 10);
      return value.empty() || *end != '\0' || n == 0 ? fallback : static_cast<size_t>(n);
    };
    batch_size_ = setting("batch.size", 1'000'000);
    // A few releases' worth is all the gate needs to keep batches full; more would only be memory.
    held_bytes_limit_ = std::min(setting("queue.buffering.max.kbytes", 32768) * 1024, 8 * batch_size_);
    held_records_limit_ = setting("queue.buffering.max.messages", 100'000);
    // The producer's own partitioner (murmur2_random), so that a release goes over partition by partition.
    gate_.emplace(batch_size_, [this](TopicIndex topic, std::string_view key, uint32_t partitions) {
      return static_cast<uint32_t>(rd_kafka_msg_partitioner_murmur2_random(
          topics_.at(topic), key.data(), key.size(), static_cast<int32_t>(partitions), nullptr, nullptr));
    });
    hand_over_ = [this](const ProduceGate::Record& record) { return hand_over(record); };
  }
}

KafkaSink::~KafkaSink() {
  // An open transaction left behind holds read_committed consumers at its first record until the
  // coordinator times it out; aborting it releases them now (its records come again after a restart).
  if (transaction_open_ && !fatal_error()) {
    if (rd_kafka_error_t* e = rd_kafka_abort_transaction(producer_, static_cast<int>(kTransactionCall.count())))
      rd_kafka_error_destroy(e);
  }
  if (producer_ && wake_) set_wakeup(nullptr);  // the publisher's queue may be gone before the producer
  for (auto* topic : topics_) rd_kafka_topic_destroy(topic);
  if (producer_) rd_kafka_destroy(producer_);
}

std::optional<std::string> KafkaSink::check_connection(std::chrono::milliseconds timeout) {
  const rd_kafka_metadata_t* metadata = nullptr;
  const rd_kafka_resp_err_t err =
      rd_kafka_metadata(producer_, 0, nullptr, &metadata, static_cast<int>(timeout.count()));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return "cannot reach Kafka at " + config_.bootstrap_servers + " within " + std::to_string(timeout.count()) +
           " ms (" + rd_kafka_err2str(err) +
           "). Check sink.kafka.bootstrap_servers, that the brokers are up, and the security settings in "
           "sink.kafka.properties.";
  }
  const int brokers = metadata->broker_cnt;
  rd_kafka_metadata_destroy(metadata);
  if (brokers == 0) return "Kafka at " + config_.bootstrap_servers + " answered with no brokers";
  return std::nullopt;
}

std::optional<TopicIndex> KafkaSink::resolve_topic(const std::string& name) {
  if (const auto it = topic_index_.find(name); it != topic_index_.end()) return it->second;
  rd_kafka_topic_t* topic = rd_kafka_topic_new(producer_, name.c_str(), nullptr);
  if (topic == nullptr) {
    set_fatal(explain_kafka_error(rd_kafka_last_error(), name, config_.bootstrap_servers));
    return std::nullopt;
  }
  // Ask once whether the topic exists, so that a missing topic is one clear error now rather than a
  // delivery timeout minutes later. When the brokers cannot be asked, delivery reports decide.
  TopicLookup lookup = look_up_topic(producer_, topic, kTopicCheckTimeout);
  if (lookup.state == TopicState::Missing)
    lookup = config_.topic_creation.enabled ? create_and_await(topic, name) : wait_for_creation(topic, name);
  switch (lookup.state) {
    case TopicState::Exists:
      break;
    case TopicState::Unanswered:
      spdlog::warn("could not check that topic {} exists ({}); sending anyway", name, rd_kafka_err2str(lookup.error));
      break;
    case TopicState::Missing:
    case TopicState::Forbidden:
      rd_kafka_topic_destroy(topic);
      if (!fatal_error()) set_fatal(explain_kafka_error(lookup.error, name, config_.bootstrap_servers));
      return std::nullopt;
  }
  topics_.push_back(topic);
  const TopicIndex index = topics_.size() - 1;
  topic_index_.emplace(name, index);
  topic_of_.emplace(topic, index);
  // Half a batch per partition on average, so that a partition that gets more than its share still sends
  // it as one batch (a count from before the topic grew only makes releases smaller). The count also orders
  // a release by partition; a stale one only orders it less well (one key's records keep their order).
  if (gate_) {
    gate_->set_budget(index, static_cast<size_t>(std::max(1, lookup.partitions)) * batch_size_ / 2);
    gate_->set_partitions(index, static_cast<uint32_t>(std::max(0, lookup.partitions)));
  }
  return index;
}

TopicLookup KafkaSink::wait_for_creation(rd_kafka_topic_t* topic, const std::string& name) {
  const auto wait = std::chrono::milliseconds(config_.topic_creation_wait_ms);
  const auto it = config_.properties.find("allow.auto.create.topics");
  const bool producer_may_create = it == config_.properties.end() || it->second == "true";
  const AutoCreation brokers = producer_may_create ? broker_auto_creation(producer_, kTopicCheckTimeout) : AutoCreation::Off;
  TopicLookup lookup{TopicState::Missing, RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART};
  if (brokers == AutoCreation::Off || wait.count() == 0) {
    if (brokers == AutoCreation::Off)
      set_fatal(explain_kafka_error(lookup.error, name, config_.bootstrap_servers) +
                (producer_may_create ? " (the brokers have auto.create.topics.enable=false)"
                                     : " (sink.kafka.properties sets allow.auto.create.topics=false)"));
    return lookup;
  }
  spdlog::info("topic {} does not exist yet; waiting up to {} ms (sink.kafka.topic_creation_wait_ms) for the brokers to "
               "create it{}",
               name, wait.count(), brokers == AutoCreation::On ? " (auto.create.topics.enable=true)" : "");
  return await_topic(topic, name, wait);
}

TopicLookup KafkaSink::create_and_await(rd_kafka_topic_t* topic, const std::string& name) {
  const TopicSpec spec = topic_spec_for(config_.topic_creation, name);
  const auto timeout = std::max(kTopicCheckTimeout, std::chrono::milliseconds(config_.topic_creation_wait_ms));
  std::string configs;
  for (const auto& [key, value] : spec.config) configs += (configs.empty() ? "" : ", ") + key + "=" + value;
  const auto failure = create_topic(producer_, name, spec, timeout);
  if (failure) {
    std::string fix = "create it yourself (kafka-topics.sh --create --topic " + name +
                      ") or change sink.kafka.topic_creation";
    if (failure->error == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED ||
        failure->error == RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED)
      fix = "grant the producer's principal CREATE on the topic (kafka-acls.sh --add --operation Create --topic " + name +
            "), " + fix;
    set_fatal("cannot create topic " + name + " (sink.kafka.topic_creation: partitions " + std::to_string(spec.partitions) +
              ", replication_factor " + std::to_string(spec.replication_factor) + (configs.empty() ? "" : ", config " + configs) +
              "): " + rd_kafka_err2name(failure->error) + ": " + failure->message + "; " + fix);
    return {TopicState::Missing, failure->error};
  }
  spdlog::info("created topic {} (partitions {}, replication factor {}{})", name,
               spec.partitions == -1 ? std::string("the broker's default") : std::to_string(spec.partitions),
               spec.replication_factor == -1 ? std::string("the broker's default") : std::to_string(spec.replication_factor),
               configs.empty() ? "" : ", " + configs);
  return await_topic(topic, name, timeout);  // a created topic's leaders are elected within moments
}

TopicLookup KafkaSink::await_topic(rd_kafka_topic_t* topic, const std::string& name, std::chrono::milliseconds wait) {
  const auto began = std::chrono::steady_clock::now();
  TopicLookup lookup = look_up_topic(producer_, topic, kTopicCheckTimeout);
  waiting_for_room_ = true;  // waiting on Kafka, not stuck: the watchdog stays quiet
  while (lookup.state == TopicState::Missing && std::chrono::steady_clock::now() - began < wait && !aborted_) {
    serve_deliveries(kTopicCreationPoll);  // other topics' deliveries go on
    lookup = look_up_topic(producer_, topic, kTopicCheckTimeout);
  }
  waiting_for_room_ = false;
  const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - began);
  if (lookup.state == TopicState::Exists)
    spdlog::info("topic {} is there after {} ms", name, waited.count());
  else if (lookup.state == TopicState::Missing)
    set_fatal("topic " + name + " did not appear within sink.kafka.topic_creation_wait_ms (" + std::to_string(wait.count()) +
              " ms): " + explain_kafka_error(lookup.error, name, config_.bootstrap_servers));
  return lookup;
}

bool KafkaSink::send(TopicIndex topic, std::optional<std::string_view> key, std::optional<std::string_view> value,
                     Ticket ticket) {
  if (gate_) return hold(topic, key, value, ticket);
  if (!transactional_) return produce(topic, key, value, ticket);
  if (!transaction_open_ && !begin_transaction()) return false;
  records_.push_back(BufferedRecord{topic, buffer_.size(), key ? static_cast<int64_t>(key->size()) : -1,
                                    value ? static_cast<int64_t>(value->size()) : -1, ticket});
  if (key) buffer_.append(*key);
  if (value) buffer_.append(*value);
  return produce(topic, key, value, ticket);
}

void KafkaSink::pass(Ticket ticket) {
  if (!transactional_) {
    tracker_->acknowledge(ticket);
    return;
  }
  // A position alone still waits for the transaction: the state it commits is what the position covers.
  if (!transaction_open_ && !begin_transaction()) return;
  records_.push_back(BufferedRecord{kNoRecord, buffer_.size(), -1, -1, ticket});
}

bool KafkaSink::hold(TopicIndex topic, std::optional<std::string_view> key, std::optional<std::string_view> value,
                     Ticket ticket) {
  // The gate and librdkafka together keep to librdkafka's own bounds (queue.buffering.max.*).
  const auto full = [&] {
    return gate_->held_bytes() + gate_->in_flight_bytes() >= held_bytes_limit_ ||
           gate_->held_records() + static_cast<size_t>(std::max(0, rd_kafka_outq_len(producer_))) >= held_records_limit_;
  };
  if (full()) {
    const WaitingForRoom waiting{waiting_for_room_};
    while (full()) {
      if (failed_ || aborted_) return false;
      serve_deliveries(kBackpressurePoll);
    }
  }
  if (failed_ || aborted_) return false;
  gate_->hold(ProduceGate::Record{topic, key, value, ticket}, std::chrono::steady_clock::now());
  return true;
}

rd_kafka_resp_err_t KafkaSink::produce_once(rd_kafka_topic_t* rkt, std::optional<std::string_view> key,
                                           std::optional<std::string_view> value, Ticket ticket) {
  // Copying lets the caller reuse its buffers at once; the copy is cheap beside the serialization.
  const int rc = rd_kafka_produce(rkt, RD_KAFKA_PARTITION_UA, RD_KAFKA_MSG_F_COPY,
                                  value ? const_cast<char*>(value->data()) : nullptr, value ? value->size() : 0,
                                  key ? key->data() : nullptr, key ? key->size() : 0,
                                  reinterpret_cast<void*>(static_cast<uintptr_t>(ticket)));
  return rc == 0 ? RD_KAFKA_RESP_ERR_NO_ERROR : rd_kafka_last_error();
}

ProduceGate::Handed KafkaSink::hand_over(const ProduceGate::Record& record) {
  if (failed_ || aborted_) return ProduceGate::Handed::Failed;
  rd_kafka_topic_t* rkt = topics_.at(record.topic);
  const rd_kafka_resp_err_t err = produce_once(rkt, record.key, record.value, record.ticket);
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return ProduceGate::Handed::Queued;
  switch (classify_kafka_error(err)) {
    case KafkaErrorAction::Backpressure:
      return ProduceGate::Handed::Full;
    case KafkaErrorAction::Transient:
      spdlog::warn("{}", explain_kafka_error(err, rd_kafka_topic_name(rkt), config_.bootstrap_servers));
      return ProduceGate::Handed::Full;
    case KafkaErrorAction::Fatal:
      set_fatal(explain_kafka_error(err, rd_kafka_topic_name(rkt), config_.bootstrap_servers));
      return ProduceGate::Handed::Failed;
  }
  return ProduceGate::Handed::Failed;
}

void KafkaSink::release_held(bool force) {
  if (gate_ && gate_->held_records() > 0) gate_->release(hand_over_, std::chrono::steady_clock::now(), force);
}

bool KafkaSink::produce(TopicIndex topic, std::optional<std::string_view> key, std::optional<std::string_view> value,
                        Ticket ticket) {
  rd_kafka_topic_t* rkt = topics_.at(topic);
  struct WaitFlag {  // cleared on every way out of the loop (a plain load when it was never set)
    std::atomic<bool>& flag;
    ~WaitFlag() {
      if (flag.load(std::memory_order_relaxed)) flag = false;
    }
  } wait_flag{waiting_for_room_};
  for (;;) {
    if (failed_ || aborted_) return false;
    const rd_kafka_resp_err_t err = produce_once(rkt, key, value, ticket);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return true;
    // A transaction in an abortable state takes no records: abort it, send its records again, go on.
    if (transactional_ && err == RD_KAFKA_RESP_ERR__STATE && !rd_kafka_fatal_error(producer_, nullptr, 0)) {
      if (!abort_and_resend()) return false;
      continue;
    }
    switch (classify_kafka_error(err)) {
      case KafkaErrorAction::Backpressure:
        waiting_for_room_ = true;
        serve_deliveries(kBackpressurePoll);
        continue;
      case KafkaErrorAction::Transient:
        spdlog::warn("{}", explain_kafka_error(err, rd_kafka_topic_name(rkt), config_.bootstrap_servers));
        serve_deliveries(kBackpressurePoll);
        continue;
      case KafkaErrorAction::Fatal:
        set_fatal(explain_kafka_error(err, rd_kafka_topic_name(rkt), config_.bootstrap_servers));
        return false;
    }
  }
}

std::optional<std::string> KafkaSink::init_transactions(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    rd_kafka_error_t* e = rd_kafka_init_transactions(producer_, static_cast<int>(timeout.count()));
    if (e == nullptr) return std::nullopt;
    const bool retry = classify_transaction_error(e) == TransactionErrorAction::Retry &&
                       std::chrono::steady_clock::now() < deadline;
    std::string message = explain_transaction_error(e, "init_transactions", config_.transactional_id);
    rd_kafka_error_destroy(e);
    if (!retry)
      return "sink.kafka.exactly_once: " + message + " (Kafka at " + config_.bootstrap_servers + ", within " +
             std::to_string(timeout.count()) + " ms, sink.kafka.connect_timeout_ms)";
    spdlog::warn("{}; trying again", message);
    std::this_thread::sleep_for(kBackpressurePoll);
  }
}

std::optional<TopicIndex> KafkaSink::resolve_state_topic(const std::string& name) {
  rd_kafka_topic_t* topic = rd_kafka_topic_new(producer_, name.c_str(), nullptr);
  if (topic == nullptr) {
    set_fatal(explain_kafka_error(rd_kafka_last_error(), name, config_.bootstrap_servers));
    return std::nullopt;
  }
  const TopicLookup lookup = look_up_topic(producer_, topic, kTopicCheckTimeout);
  rd_kafka_topic_destroy(topic);
  if (lookup.state == TopicState::Missing) {
    // Compacted, so that it keeps each pipeline's last state however long the pipeline runs; one partition
    // is plenty for one record per commit.
    const TopicSpec spec{1, -1, {{"cleanup.policy", "compact"}}};
    const auto failure = create_topic(producer_, name, spec, kTopicCheckTimeout);
    if (failure) {
      set_fatal("cannot create the state topic " + name + " (sink.kafka.state_topic): " + rd_kafka_err2name(failure->error) +
                ": " + failure->message + "; create it yourself: kafka-topics.sh --bootstrap-server " +
                config_.bootstrap_servers + " --create --topic " + name +
                " --partitions 1 --config cleanup.policy=compact");
      return std::nullopt;
    }
    spdlog::info("created the state topic {} (1 partition, cleanup.policy=compact)", name);
  }
  return resolve_topic(name);
}

bool KafkaSink::begin_transaction() {
  if (rd_kafka_error_t* e = rd_kafka_begin_transaction(producer_)) {
    set_fatal("sink.kafka.exactly_once: " + explain_transaction_error(e, "begin_transaction", config_.transactional_id));
    rd_kafka_error_destroy(e);
    return false;
  }
  transaction_open_ = true;
  transaction_began_ = std::chrono::steady_clock::now();
  last_delivery_error_.clear();
  return true;
}

bool KafkaSink::on_transaction_error(rd_kafka_error_t* error, const char* call, int& aborts, bool& resend) {
  const TransactionErrorAction action = classify_transaction_error(error);
  std::string message = explain_transaction_error(error, call, config_.transactional_id);
  rd_kafka_error_destroy(error);
  if (!last_delivery_error_.empty()) message += " A record of the transaction failed: " + last_delivery_error_;
  resend = false;
  switch (action) {
    case TransactionErrorAction::Retry:
      spdlog::warn("sink.kafka.exactly_once: {}; calling it again", message);
      return true;
    case TransactionErrorAction::Abort:
      if (++aborts > kMaxAborts) {
        set_fatal("sink.kafka.exactly_once: " + message + " The transaction was aborted and sent again " +
                  std::to_string(kMaxAborts) + " times; stopping (a restart resumes from the state topic).");
        return false;
      }
      spdlog::warn("sink.kafka.exactly_once: {}; aborting the transaction and sending its {} records again", message,
                   records_.size());
      resend = true;
      return true;
    case TransactionErrorAction::Fatal:
      set_fatal("sink.kafka.exactly_once: " + message);
      return false;
  }
  return false;
}

bool KafkaSink::abort_and_resend() {
  for (;;) {
    if (aborted_ || failed_) return false;
    rd_kafka_error_t* e = rd_kafka_abort_transaction(producer_, static_cast<int>(kTransactionCall.count()));
    if (e == nullptr) break;
    int aborts = 0;
    bool resend = false;
    if (!on_transaction_error(e, "abort_transaction", aborts, resend)) return false;
  }
  transaction_open_ = false;
  if (metrics_) metrics_->count_kafka_transaction(false);
  if (!begin_transaction()) return false;
  for (const BufferedRecord& r : records_) {
    if (r.topic == kNoRecord) continue;
    const char* at = buffer_.data() + r.at;
    const std::optional<std::string_view> key =
        r.key_size < 0 ? std::nullopt : std::optional<std::string_view>(std::string_view(at, static_cast<size_t>(r.key_size)));
    const char* value_at = at + std::max<int64_t>(r.key_size, 0);
    const std::optional<std::string_view> value =
        r.value_size < 0 ? std::nullopt
                         : std::optional<std::string_view>(std::string_view(value_at, static_cast<size_t>(r.value_size)));
    if (!produce(r.topic, key, value, r.ticket)) return false;
  }
  return true;
}

bool KafkaSink::commit_transaction(TopicIndex state_topic, std::string_view state_key, std::string_view state_value) {
  const WaitingForRoom waiting{waiting_for_room_};
  const auto began = std::chrono::steady_clock::now();
  const auto give_up = config_.delivery_timeout_ms == 0 ? std::chrono::steady_clock::time_point::max()
                                                        : began + std::chrono::milliseconds(config_.delivery_timeout_ms);
  if (!transaction_open_ && !begin_transaction()) return false;
  if (!produce(state_topic, state_key, state_value, kStateRecord)) return false;
  int aborts = 0;
  for (;;) {
    if (aborted_ || failed_) return false;
    rd_kafka_error_t* e = rd_kafka_commit_transaction(producer_, static_cast<int>(kTransactionCall.count()));
    if (e == nullptr) break;
    bool resend = false;
    if (!on_transaction_error(e, "commit_transaction", aborts, resend)) return false;
    if (std::chrono::steady_clock::now() > give_up) {
      set_fatal("sink.kafka.exactly_once: a Kafka transaction could not be committed within sink.kafka.delivery_timeout_ms (" +
                std::to_string(config_.delivery_timeout_ms) + " ms); check that the brokers are up (a restart resumes "
                "from the state topic)");
      return false;
    }
    if (resend && (!abort_and_resend() || !produce(state_topic, state_key, state_value, kStateRecord))) return false;
  }
  transaction_open_ = false;
  if (metrics_) metrics_->count_kafka_transaction(true);
  const double latency = std::chrono::duration<double>(std::chrono::steady_clock::now() - transaction_began_).count();
  try {
    for (const BufferedRecord& r : records_) {
      if (metrics_ && r.topic != kNoRecord) metrics_->count_record_acknowledged(latency);
      tracker_->acknowledge(r.ticket);
    }
  } catch (const std::exception& e) {  // a broken invariant: better to stop than to commit wrongly
    spdlog::critical("{}", e.what());
    std::abort();
  }
  records_.clear();
  buffer_.clear();
  if (buffer_.capacity() > (size_t{64} << 20)) buffer_.shrink_to_fit();
  return true;
}

void KafkaSink::poll(std::chrono::milliseconds timeout) { serve_deliveries(timeout); }

void KafkaSink::set_wakeup(std::function<void()> wake) {
  rd_kafka_queue_t* main_queue = rd_kafka_queue_get_main(producer_);
  // Off first: the callback runs under the queue's lock, so none is running once this returns.
  rd_kafka_queue_cb_event_enable(main_queue, nullptr, nullptr);
  wake_ = std::move(wake);
  if (wake_) rd_kafka_queue_cb_event_enable(main_queue, &KafkaSink::on_queue_event, this);
  rd_kafka_queue_destroy(main_queue);
}

void KafkaSink::on_queue_event(rd_kafka_t*, void* opaque) {
  // On a librdkafka thread, when the queue of delivery reports stops being empty: must not call librdkafka.
  auto* self = static_cast<KafkaSink*>(opaque);
  if (self->wake_) self->wake_();
}

void KafkaSink::serve_deliveries(std::chrono::milliseconds timeout) {
  rd_kafka_poll(producer_, static_cast<int>(timeout.count()));
  settle_deliveries();
}

void KafkaSink::settle_deliveries() {
  if (!delivered_.empty()) {
    if (metrics_) metrics_->count_records_acknowledged(delivered_latencies_);
    try {
      tracker_->acknowledge(delivered_);
    } catch (const std::exception& e) {  // a broken invariant: better to stop than to commit wrongly
      spdlog::critical("{}", e.what());
      std::abort();
    }
    delivered_.clear();
    delivered_latencies_.clear();
  }
  release_held();  // what the deliveries let through, and what librdkafka had no room for before
}

bool KafkaSink::flush(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while ((gate_ && gate_->held_records() > 0) || rd_kafka_outq_len(producer_) > 0) {
    if (failed_) return false;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    release_held(true);
    rd_kafka_flush(producer_, static_cast<int>(std::min<int64_t>(left.count(), 100)));
    settle_deliveries();
  }
  return !failed_;
}

std::optional<std::string> KafkaSink::fatal_error() const {
  const std::lock_guard lock(fatal_mutex_);
  return fatal_;
}

void KafkaSink::set_fatal(std::string message) {
  const std::lock_guard lock(fatal_mutex_);
  if (!fatal_) {
    spdlog::error("{}", message);
    fatal_ = std::move(message);
  }
  failed_ = true;
}

void KafkaSink::on_delivery(rd_kafka_t*, const rd_kafka_message_t* message, void* opaque) {
  auto* self = static_cast<KafkaSink*>(opaque);
  const auto ticket = static_cast<Ticket>(reinterpret_cast<uintptr_t>(message->_private));
  if (self->transactional_) {
    // The commit decides (it fails when a record did, and the transaction is sent again): remember why.
    if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR)
      self->last_delivery_error_ = explain_kafka_error(message->err, message->rkt ? rd_kafka_topic_name(message->rkt) : "",
                                                       self->config_.bootstrap_servers);
    return;
  }
  if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    // librdkafka has already retried what can be retried: this record is lost to this session, so
    // nothing after it may be committed. Stop; a restart replays from the committed position.
    if (self->metrics_) self->metrics_->count_delivery_error("fatal");
    self->set_fatal(explain_kafka_error(message->err, message->rkt ? rd_kafka_topic_name(message->rkt) : "",
                                        self->config_.bootstrap_servers));
    return;
  }
  std::chrono::microseconds waited{0};  // in the gate, before librdkafka's latency starts
  if (self->gate_) {
    const auto it = self->topic_of_.find(message->rkt);
    if (it != self->topic_of_.end()) waited = self->gate_->delivered(it->second, ticket, message->len + message->key_len);
  }
  self->delivered_.push_back(ticket);
  self->delivered_latencies_.push_back(static_cast<double>(rd_kafka_message_latency(message) + waited.count()) / 1e6);
}

void KafkaSink::on_error(rd_kafka_t* rk, int err, const char* reason, void* opaque) {
  auto* self = static_cast<KafkaSink*>(opaque);
  const auto code = static_cast<rd_kafka_resp_err_t>(err);
  if (code == RD_KAFKA_RESP_ERR__FATAL) {
    char detail[512];
    const rd_kafka_resp_err_t original = rd_kafka_fatal_error(rk, detail, sizeof detail);
    if (self->metrics_) self->metrics_->count_delivery_error("fatal");
    if (original == RD_KAFKA_RESP_ERR__FENCED || original == RD_KAFKA_RESP_ERR_PRODUCER_FENCED ||
        original == RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH) {
      self->set_fatal("sink.kafka.exactly_once: fenced (" + std::string(rd_kafka_err2name(original)) + "): another producer with "
                      "transactional.id " + self->config_.transactional_id + " started (a standby that took over, or a second "
                      "copy of this pipeline), so nothing this instance sends counts any more; stopping. " + detail);
      return;
    }
    self->set_fatal("fatal Kafka producer error " + std::string(rd_kafka_err2name(original)) + ": " + detail);
    return;
  }
  if (self->metrics_) self->metrics_->count_delivery_error(error_class(classify_kafka_error(code)));
  if (classify_kafka_error(code) == KafkaErrorAction::Transient) {
    spdlog::warn("Kafka: {} (librdkafka retries)", reason);
  } else {
    spdlog::error("Kafka: {}: {}", rd_kafka_err2name(code), reason);
  }
}

void KafkaSink::on_log(const rd_kafka_t*, int level, const char* facility, const char* message) {
  if (level <= 3) {
    spdlog::error("librdkafka {}: {}", facility, message);
  } else if (level <= 5) {
    spdlog::info("librdkafka {}: {}", facility, message);
  } else {
    spdlog::debug("librdkafka {}: {}", facility, message);
  }
}

}  // namespace tidemark
