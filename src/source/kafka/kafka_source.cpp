#include "source/kafka/kafka_source.hpp"

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <mutex>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "source/kafka/change_record.hpp"

namespace tidemark::kafka {

namespace {

constexpr std::chrono::milliseconds kPushWait{100};
constexpr int kPollMs = 100;
constexpr int kMetadataTimeoutMs = 10000;
// How often the topics are looked at again for partitions added since start.
constexpr std::chrono::seconds kPartitionRefresh{10};

std::string partition_name(const std::string& topic, int32_t partition) { return topic + "/" + std::to_string(partition); }

void on_log(const rd_kafka_t*, int level, const char* facility, const char* message) {
  if (level <= 3)
    spdlog::error("kafka source: librdkafka {}: {}", facility, message);
  else if (level <= 5)
    spdlog::info("kafka source: librdkafka {}: {}", facility, message);
  else
    spdlog::debug("kafka source: librdkafka {}: {}", facility, message);
}

}  // namespace

std::string offsets_token(const std::map<std::string, int64_t>& next_offsets) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [p, o] : next_offsets) j[p] = o;
  return j.dump();
}

std::optional<std::map<std::string, int64_t>> parse_offsets_token(const std::string& token) {
  const auto j = nlohmann::json::parse(token, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  std::map<std::string, int64_t> out;
  for (const auto& [p, o] : j.items()) {
    if (!o.is_number_integer() || p.find('/') == std::string::npos) return std::nullopt;
    out[p] = o.get<int64_t>();
  }
  return out;
}

struct KafkaSource::Consumer {
  rd_kafka_t* handle = nullptr;
  ~Consumer() {
    if (!handle) return;
    rd_kafka_consumer_close(handle);
    rd_kafka_destroy(handle);
  }
};

KafkaSource::KafkaSource(const Config& config) : config_(config) {}
KafkaSource::~KafkaSource() = default;

namespace {

// A consumer for `config`, or the error.
rd_kafka_t* make_consumer(const Config& config, std::string& error) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char message[512];
  const KafkaSourceConfig& k = config.source.kafka;
  std::map<std::string, std::string> properties = k.properties;
  properties["bootstrap.servers"] = k.bootstrap_servers;
  properties["group.id"] = k.group_id.empty() ? config.name : k.group_id;
  properties["enable.auto.commit"] = "false";
  properties["enable.auto.offset.store"] = "false";
  properties["enable.partition.eof"] = "false";
  properties["isolation.level"] = properties.count("isolation.level") ? properties["isolation.level"] : "read_committed";
  properties["client.id"] = "tidemark-" + config.name;
  for (const auto& [key, value] : properties) {
    if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), message, sizeof message) != RD_KAFKA_CONF_OK) {
      error = "source.kafka.properties: " + key + ": " + message;
      rd_kafka_conf_destroy(conf);
      return nullptr;
    }
  }
  rd_kafka_conf_set_log_cb(conf, &on_log);
  rd_kafka_t* handle = rd_kafka_new(RD_KAFKA_CONSUMER, conf, message, sizeof message);
  if (!handle) {
    error = std::string("cannot create a Kafka consumer: ") + message;
    return nullptr;
  }
  return handle;
}

// The partitions of `topics`, or the error (a topic missing, the brokers unreachable).
std::optional<std::vector<std::pair<std::string, int32_t>>> partitions_of(rd_kafka_t* handle,
                                                                            const std::vector<std::string>& topics,
                                                                            std::string& error) {
  const rd_kafka_metadata_t* metadata = nullptr;
  const rd_kafka_resp_err_t err = rd_kafka_metadata(handle, 1, nullptr, &metadata, kMetadataTimeoutMs);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    error = std::string("cannot read the brokers' metadata (source.kafka.bootstrap_servers): ") + rd_kafka_err2str(err);
    return std::nullopt;
  }
  std::vector<std::pair<std::string, int32_t>> out;
  for (const auto& topic : topics) {
    bool found = false;
    for (int t = 0; t < metadata->topic_cnt; ++t) {
      const rd_kafka_metadata_topic_t& m = metadata->topics[t];
      if (topic != m.topic || m.err != RD_KAFKA_RESP_ERR_NO_ERROR) continue;
      found = true;
      for (int p = 0; p < m.partition_cnt; ++p) out.emplace_back(topic, m.partitions[p].id);
    }
    if (!found) error += (error.empty() ? "" : "; ") + std::string("source.kafka.topics: no topic ") + topic + " on the brokers";
  }
  rd_kafka_metadata_destroy(metadata);
  if (!error.empty()) return std::nullopt;
  return out;
}

}  // namespace

std::vector<std::string> KafkaSource::check() {
  std::string error;
  rd_kafka_t* handle = make_consumer(config_, error);
  if (!handle) return {error};
  partitions_of(handle, config_.source.kafka.topics, error);
  rd_kafka_destroy(handle);
  if (!error.empty()) return {error};
  return {};
}

SourceOutcome KafkaSource::run(const std::optional<SourcePosition>& start, EventQueue& out, std::stop_token stop) {
  std::map<std::string, int64_t> next;
  if (start) {
    auto parsed = parse_offsets_token(start->token);
    if (!parsed) return {false, "the stored position '" + start->token + "' is not a Kafka position"};
    next = std::move(*parsed);
  }
  std::string error;
  auto consumer = std::make_unique<Consumer>();
  consumer->handle = make_consumer(config_, error);
  if (!consumer->handle) return {false, error};
  std::optional<std::vector<std::pair<std::string, int32_t>>> partitions;
  for (auto delay = std::chrono::milliseconds(500); !(partitions = partitions_of(consumer->handle, config_.source.kafka.topics, error));
       delay = std::min(delay * 2, std::chrono::milliseconds(30000))) {
    spdlog::warn("kafka source: {}; retrying in {} ms", error, delay.count());
    error.clear();
    for (auto waited = std::chrono::milliseconds(0); waited < delay; waited += kPushWait) {
      if (stop.stop_requested()) return {};
      std::this_thread::sleep_for(kPushWait);
    }
  }
  // A partition the stored offsets do not name came after them (nothing of it was read): all of it is new.
  // On a first start with `latest`, the current ends are noted, so that the offsets stored with the first
  // record name every partition.
  const bool latest = !start && config_.source.kafka.start == "latest";
  std::set<std::string> assigned_names;
  rd_kafka_topic_partition_list_t* assignment = rd_kafka_topic_partition_list_new(static_cast<int>(partitions->size()));
  for (const auto& [topic, partition] : *partitions) {
    const std::string name = partition_name(topic, partition);
    assigned_names.insert(name);
    int64_t offset = RD_KAFKA_OFFSET_BEGINNING;
    if (const auto stored = next.find(name); stored != next.end()) {
      offset = stored->second;
    } else if (latest) {
      int64_t low = 0, high = 0;
      const rd_kafka_resp_err_t err =
          rd_kafka_query_watermark_offsets(consumer->handle, topic.c_str(), partition, &low, &high, kMetadataTimeoutMs);
      if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
        return {false, "cannot read the end offset of " + name + ": " + rd_kafka_err2str(err)};
      offset = next[name] = high;
    }
    rd_kafka_topic_partition_list_add(assignment, topic.c_str(), partition)->offset = offset;
  }
  const rd_kafka_resp_err_t assigned = rd_kafka_assign(consumer->handle, assignment);
  rd_kafka_topic_partition_list_destroy(assignment);
  if (assigned != RD_KAFKA_RESP_ERR_NO_ERROR) return {false, std::string("cannot assign the partitions: ") + rd_kafka_err2str(assigned)};
  auto refreshed = std::chrono::steady_clock::now();
  spdlog::info("kafka source: reading {} partition(s) of {} topic(s) {}", partitions->size(), config_.source.kafka.topics.size(),
               start ? "from the target's stored offsets" : "from the " + config_.source.kafka.start + " offsets");
  {
    const std::lock_guard lock(mutex_);
    consumer_ = std::move(consumer);
  }
  set_connected(true);
  ChangeRecordDecoder decoder;
  while (!stop.stop_requested()) {
    if (std::chrono::steady_clock::now() - refreshed >= kPartitionRefresh) {
      refreshed = std::chrono::steady_clock::now();
      add_new_partitions(assigned_names);
    }
    rd_kafka_message_t* message = rd_kafka_consumer_poll(consumer_->handle, kPollMs);
    if (!message) continue;
    if (message->err) {
      const std::string reason = rd_kafka_message_errstr(message);
      const bool fatal = message->err == RD_KAFKA_RESP_ERR__FATAL || message->err == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED;
      rd_kafka_message_destroy(message);
      if (fatal) return {false, "kafka source: " + reason};
      spdlog::warn("kafka source: {} (librdkafka retries)", reason);
      continue;
    }
    const std::string topic = rd_kafka_topic_name(message->rkt);
    const std::string where = partition_name(topic, message->partition);
    const int64_t offset = message->offset;
    const std::string_view key(static_cast<const char*>(message->key), message->key ? message->key_len : 0);
    const std::string_view value(static_cast<const char*>(message->payload), message->payload ? message->len : 0);
    DecodedRecord decoded = decoder.decode(key, value);
    rd_kafka_message_destroy(message);
    if (!decoded.error.empty())
      return {false, "kafka source: the record at " + where + " offset " + std::to_string(offset) + " cannot be applied: " +
                         decoded.error};
    next[where] = offset + 1;
    SourcePosition position(offsets_token(next));
    StreamItem item;
    if (decoded.skip) {
      item = Checkpoint{std::move(position)};
    } else {
      decoded.event.resume_position = std::move(position);
      item = std::move(decoded.event);
    }
    while (!out.push_for(item, kPushWait))
      if (stop.stop_requested()) return {};
  }
  set_connected(false);
  return {};
}

void KafkaSource::add_new_partitions(std::set<std::string>& assigned) {
  std::string error;
  const auto partitions = partitions_of(consumer_->handle, config_.source.kafka.topics, error);
  if (!partitions) {
    spdlog::warn("kafka source: cannot look for new partitions: {}", error);
    return;
  }
  rd_kafka_topic_partition_list_t* added = rd_kafka_topic_partition_list_new(1);
  for (const auto& [topic, partition] : *partitions) {
    if (!assigned.insert(partition_name(topic, partition)).second) continue;
    rd_kafka_topic_partition_list_add(added, topic.c_str(), partition)->offset = RD_KAFKA_OFFSET_BEGINNING;
    spdlog::info("kafka source: new partition {}, read from its beginning", partition_name(topic, partition));
  }
  if (added->cnt > 0) {
    const std::lock_guard lock(mutex_);
    if (rd_kafka_error_t* failed = rd_kafka_incremental_assign(consumer_->handle, added)) {
      spdlog::warn("kafka source: cannot assign the new partitions: {}", rd_kafka_error_string(failed));
      rd_kafka_error_destroy(failed);
      for (int i = 0; i < added->cnt; ++i) assigned.erase(partition_name(added->elems[i].topic, added->elems[i].partition));
    }
  }
  rd_kafka_topic_partition_list_destroy(added);
}

void KafkaSource::on_position_persisted(const SourcePosition& position) {
  // The consumer group's offsets follow the target's, for lag tools; a restart reads the target's.
  const auto offsets = parse_offsets_token(position.token);
  if (!offsets || offsets->empty()) return;
  const std::lock_guard lock(mutex_);
  if (!consumer_) return;
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(static_cast<int>(offsets->size()));
  for (const auto& [p, o] : *offsets) {
    const size_t slash = p.rfind('/');
    rd_kafka_topic_partition_list_add(list, p.substr(0, slash).c_str(), std::stoi(p.substr(slash + 1)))->offset = o;
  }
  rd_kafka_commit(consumer_->handle, list, 1);
  rd_kafka_topic_partition_list_destroy(list);
}

}  // namespace tidemark::kafka
