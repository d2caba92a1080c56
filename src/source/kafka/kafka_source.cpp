#include "source/kafka/kafka_source.hpp"

#include <librdkafka/rdkafka.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "source/kafka/change_record.hpp"

namespace tidemark::kafka {

namespace {

constexpr std::chrono::milliseconds kPushWait{100};
constexpr int kPollMs = 100;
constexpr int kMetadataTimeoutMs = 10000;
// How long a revoke waits for the target to hold what was read of the partitions (well below the group's
// rebalance timeout, max.poll.interval.ms, 300 s by default).
constexpr std::chrono::seconds kRevokeDrain{30};
constexpr int kClaimAttempts = 6;  // 0.5 s, 1 s, ... 16 s apart

std::string partition_name(const std::string& topic, int32_t partition) { return topic + "/" + std::to_string(partition); }

std::string partition_names(const rd_kafka_topic_partition_list_t* list, bool with_offsets) {
  std::string out;
  for (int i = 0; i < list->cnt; ++i) {
    out += (i ? ", " : "") + partition_name(list->elems[i].topic, list->elems[i].partition);
    if (with_offsets) out += list->elems[i].offset == RD_KAFKA_OFFSET_BEGINNING ? " from its beginning"
                                                                                : " at " + std::to_string(list->elems[i].offset);
  }
  return out;
}

void on_log(const rd_kafka_t*, int level, const char* facility, const char* message) {
  if (level <= 3)
    spdlog::error("kafka source: librdkafka {}: {}", facility, message);
  else if (level <= 5)
    spdlog::info("kafka source: librdkafka {}: {}", facility, message);
  else
    spdlog::debug("kafka source: librdkafka {}: {}", facility, message);
}

// This process among the group's members: host, pid and a random part (a pid may come again).
std::string member_name() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "host");
  std::random_device random;
  return fmt::format("{}-{}-{:08x}", host, getpid(), random());
}

bool cooperative(rd_kafka_t* handle) { return std::strcmp(rd_kafka_rebalance_protocol(handle), "COOPERATIVE") == 0; }

}  // namespace

struct KafkaSource::Consumer {
  rd_kafka_t* handle = nullptr;
  ~Consumer() {
    if (!handle) return;
    rd_kafka_consumer_close(handle);
    rd_kafka_destroy(handle);
  }
};

struct KafkaSource::Callbacks {
  static void rebalance(rd_kafka_t* handle, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* partitions,
                        void* opaque) {
    auto* source = static_cast<KafkaSource*>(opaque);
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
      source->assign(handle, partitions);
    } else if (err == RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS) {
      source->revoke(handle, partitions);
    } else {
      spdlog::error("kafka source: rebalance failed: {}", rd_kafka_err2str(err));
      rd_kafka_assign(handle, nullptr);
      source->position_.clear();
    }
  }
};

KafkaSource::KafkaSource(const Config& config, ClaimPartitions claim_partitions)
    : config_(config), claim_partitions_(std::move(claim_partitions)), member_(member_name()) {}
KafkaSource::~KafkaSource() {
  closing_ = true;
  consumer_.reset();  // leaves the group; the revoke it runs does not wait (nothing persists any more)
}

namespace {

// A consumer for `config` (group member with `opaque` handed to the rebalance callback), or the error.
rd_kafka_t* make_consumer(const Config& config, std::string& error, void* opaque,
                          void (*rebalance)(rd_kafka_t*, rd_kafka_resp_err_t, rd_kafka_topic_partition_list_t*, void*)) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char message[512];
  const KafkaSourceConfig& k = config.source.kafka;
  std::map<std::string, std::string> properties = k.properties;
  properties["bootstrap.servers"] = k.bootstrap_servers;
  properties["group.id"] = kafka_group_id(config);
  properties["enable.auto.commit"] = "false";
  properties["enable.auto.offset.store"] = "false";
  properties["enable.partition.eof"] = "false";
  properties.try_emplace("isolation.level", "read_committed");
  // A member joining or leaving moves only the partitions that change hands.
  properties.try_emplace("partition.assignment.strategy", "cooperative-sticky");
  // Partitions added to the topics are seen (and assigned) within 10 s instead of librdkafka's 5 min.
  properties.try_emplace("topic.metadata.refresh.interval.ms", "10000");
  properties["client.id"] = "tidemark-" + config.name;
  for (const auto& [key, value] : properties) {
    if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), message, sizeof message) != RD_KAFKA_CONF_OK) {
      error = "source.kafka.properties: " + key + ": " + message;
      rd_kafka_conf_destroy(conf);
      return nullptr;
    }
  }
  rd_kafka_conf_set_log_cb(conf, &on_log);
  if (rebalance) {
    rd_kafka_conf_set_opaque(conf, opaque);
    rd_kafka_conf_set_rebalance_cb(conf, rebalance);
  }
  rd_kafka_t* handle = rd_kafka_new(RD_KAFKA_CONSUMER, conf, message, sizeof message);
  if (!handle) {
    error = std::string("cannot create a Kafka consumer: ") + message;
    return nullptr;
  }
  return handle;
}

// Every topic of `topics` exists; else the error (a topic missing, the brokers unreachable).
bool topics_exist(rd_kafka_t* handle, const std::vector<std::string>& topics, std::string& error) {
  const rd_kafka_metadata_t* metadata = nullptr;
  const rd_kafka_resp_err_t err = rd_kafka_metadata(handle, 1, nullptr, &metadata, kMetadataTimeoutMs);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    error = std::string("cannot read the brokers' metadata (source.kafka.bootstrap_servers): ") + rd_kafka_err2str(err);
    return false;
  }
  for (const auto& topic : topics) {
    bool found = false;
    for (int t = 0; t < metadata->topic_cnt; ++t)
      found = found || (topic == metadata->topics[t].topic && metadata->topics[t].err == RD_KAFKA_RESP_ERR_NO_ERROR);
    if (!found) error += (error.empty() ? "" : "; ") + std::string("source.kafka.topics: no topic ") + topic + " on the brokers";
  }
  rd_kafka_metadata_destroy(metadata);
  return error.empty();
}

}  // namespace

std::vector<std::string> KafkaSource::check() {
  std::string error;
  rd_kafka_t* handle = make_consumer(config_, error, nullptr, nullptr);
  if (!handle) return {error};
  topics_exist(handle, config_.source.kafka.topics, error);
  rd_kafka_destroy(handle);
  if (!error.empty()) return {error};
  return {};
}

void KafkaSource::assign(rd_kafka_t* handle, rd_kafka_topic_partition_list_t* partitions) {
  std::vector<std::string> names;
  for (int i = 0; i < partitions->cnt; ++i) names.push_back(partition_name(partitions->elems[i].topic, partitions->elems[i].partition));
  const std::string owner = member_ + "#" + std::to_string(++claims_);
  const StartOf start_of = [&](const std::string& partition, bool first_start, std::string& error) -> std::optional<int64_t> {
    if (!legacy_.empty()) {
      const auto stored = legacy_.find(partition);
      return stored != legacy_.end() ? stored->second : RD_KAFKA_OFFSET_BEGINNING;
    }
    // A partition without a row came after the pipeline's first start: all of it is new.
    if (!first_start || config_.source.kafka.start != "latest") return RD_KAFKA_OFFSET_BEGINNING;
    const size_t slash = partition.rfind('/');
    int64_t low = 0, high = 0;
    const rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(
        handle, partition.substr(0, slash).c_str(), std::stoi(partition.substr(slash + 1)), &low, &high, kMetadataTimeoutMs);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      error = "cannot read the end offset of " + partition + ": " + rd_kafka_err2str(err);
      return std::nullopt;
    }
    return high;
  };
  Fallible<std::map<std::string, int64_t>> claimed;
  if (!claim_partitions_) {
    claimed = Fallible<std::map<std::string, int64_t>>::failure("source.type kafka needs a database sink (sink.type postgres or mysql)");
  } else {
    auto delay = std::chrono::milliseconds(500);
    for (int attempt = 1; !(claimed = claim_partitions_(names, owner, start_of)).ok() && attempt < kClaimAttempts &&
                          !stop_.stop_requested();
         ++attempt, delay *= 2) {
      spdlog::warn("kafka source: {}; retrying in {} ms", claimed.error, delay.count());
      for (auto waited = std::chrono::milliseconds(0); waited < delay && !stop_.stop_requested(); waited += kPushWait)
        std::this_thread::sleep_for(kPushWait);
    }
  }
  if (!claimed.ok()) {
    if (fatal_.empty()) fatal_ = "kafka source: " + claimed.error;
    return;  // the source stops; closing the consumer hands the partitions on
  }
  for (int i = 0; i < partitions->cnt; ++i) {
    const int64_t next = claimed.value->at(names[static_cast<size_t>(i)]);
    partitions->elems[i].offset = next;
    position_[names[static_cast<size_t>(i)]] = PartitionOffset{next, owner};
    claimed_at_[names[static_cast<size_t>(i)]] = next;
  }
  rd_kafka_error_t* failed = nullptr;
  if (cooperative(handle)) {
    failed = rd_kafka_incremental_assign(handle, partitions);
  } else if (const rd_kafka_resp_err_t err = rd_kafka_assign(handle, partitions); err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    failed = rd_kafka_error_new(err, "%s", rd_kafka_err2str(err));
  }
  if (failed) {
    if (fatal_.empty()) fatal_ = std::string("kafka source: cannot assign the partitions: ") + rd_kafka_error_string(failed);
    rd_kafka_error_destroy(failed);
    return;
  }
  spdlog::info("kafka source: assigned {} partition(s), claimed in the target's offsets table as {}: {}", partitions->cnt,
               owner, partition_names(partitions, true));
}

bool KafkaSource::drained(const std::vector<std::string>& partitions) {
  const auto deadline = std::chrono::steady_clock::now() + kRevokeDrain;
  std::unique_lock lock(mutex_);
  const auto done = [&] {
    return std::all_of(partitions.begin(), partitions.end(), [&](const std::string& p) {
      const auto read = position_.find(p);
      if (read == position_.end() || read->second.next == claimed_at_[p]) return true;  // nothing handed on
      const auto stored = persisted_.find(p);
      return stored != persisted_.end() && stored->second.owner == read->second.owner && stored->second.next >= read->second.next;
    });
  };
  while (!done()) {
    if (stop_.stop_requested() || std::chrono::steady_clock::now() >= deadline) return false;
    persisted_changed_.wait_for(lock, kPushWait);
  }
  return true;
}

void KafkaSource::revoke(rd_kafka_t* handle, rd_kafka_topic_partition_list_t* partitions) {
  std::vector<std::string> names;
  for (int i = 0; i < partitions->cnt; ++i) names.push_back(partition_name(partitions->elems[i].topic, partitions->elems[i].partition));
  const bool lost = rd_kafka_assignment_lost(handle);
  if (closing_) {
    // Records of them still on their way are committed before the next owner's claim or fenced by it.
  } else if (lost)
    spdlog::warn("kafka source: lost {} to the group (session expired): records of them not yet in the target are "
                 "the new owner's now", partition_names(partitions, false));
  else if (!drained(names))
    spdlog::warn("kafka source: revoking {} before the target holds all that was read of them; the new owner's claim "
                 "fences this member", partition_names(partitions, false));
  for (const std::string& name : names) {
    position_.erase(name);
    claimed_at_.erase(name);
  }
  if (cooperative(handle)) {
    if (rd_kafka_error_t* failed = rd_kafka_incremental_unassign(handle, partitions)) {
      spdlog::warn("kafka source: cannot unassign: {}", rd_kafka_error_string(failed));
      rd_kafka_error_destroy(failed);
    }
  } else {
    rd_kafka_assign(handle, nullptr);
  }
  if (!lost && !closing_) spdlog::info("kafka source: revoked {}", partition_names(partitions, false));
}

SourceOutcome KafkaSource::run(const std::optional<SourcePosition>& start, EventQueue& out, std::stop_token stop) {
  stop_ = stop;
  if (start) {
    // Written by a Tidemark before the offsets table: where to go on in each partition.
    const auto stored = parse_partition_position(start->token);
    if (!stored) return {false, "the stored position '" + start->token + "' is not a Kafka position"};
    for (const auto& [partition, offset] : *stored) legacy_[partition] = offset.next;
  }
  std::string error;
  auto consumer = std::make_unique<Consumer>();
  consumer->handle = make_consumer(config_, error, this, &Callbacks::rebalance);
  if (!consumer->handle) return {false, error};
  for (auto delay = std::chrono::milliseconds(500); !topics_exist(consumer->handle, config_.source.kafka.topics, error);
       delay = std::min(delay * 2, std::chrono::milliseconds(30000))) {
    spdlog::warn("kafka source: {}; retrying in {} ms", error, delay.count());
    error.clear();
    for (auto waited = std::chrono::milliseconds(0); waited < delay; waited += kPushWait) {
      if (stop.stop_requested()) return {};
      std::this_thread::sleep_for(kPushWait);
    }
  }
  rd_kafka_topic_partition_list_t* topics =
      rd_kafka_topic_partition_list_new(static_cast<int>(config_.source.kafka.topics.size()));
  for (const auto& topic : config_.source.kafka.topics)
    rd_kafka_topic_partition_list_add(topics, topic.c_str(), RD_KAFKA_PARTITION_UA);
  const rd_kafka_resp_err_t subscribed = rd_kafka_subscribe(consumer->handle, topics);
  rd_kafka_topic_partition_list_destroy(topics);
  if (subscribed != RD_KAFKA_RESP_ERR_NO_ERROR)
    return {false, std::string("cannot subscribe to source.kafka.topics: ") + rd_kafka_err2str(subscribed)};
  spdlog::info("kafka source: member {} of group {} reading {} topic(s)", member_, kafka_group_id(config_),
               config_.source.kafka.topics.size());
  rd_kafka_t* handle = consumer->handle;
  {
    const std::lock_guard lock(mutex_);
    consumer_ = std::move(consumer);
  }
  set_connected(true);
  ChangeRecordDecoder decoder;
  while (!stop.stop_requested()) {
    rd_kafka_message_t* message = rd_kafka_consumer_poll(handle, kPollMs);
    if (!fatal_.empty()) {
      if (message) rd_kafka_message_destroy(message);
      return {false, fatal_};
    }
    if (!message) continue;
    if (message->err) {
      const std::string reason = rd_kafka_message_errstr(message);
      const bool fatal = message->err == RD_KAFKA_RESP_ERR__FATAL || message->err == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED;
      rd_kafka_message_destroy(message);
      if (fatal) return {false, "kafka source: " + reason};
      spdlog::warn("kafka source: {} (librdkafka retries)", reason);
      continue;
    }
    const std::string where = partition_name(rd_kafka_topic_name(message->rkt), message->partition);
    const int64_t offset = message->offset;
    const auto owned = position_.find(where);
    if (owned == position_.end()) {  // not assigned to this member (cannot happen after the revoke)
      rd_kafka_message_destroy(message);
      continue;
    }
    const std::string_view key(static_cast<const char*>(message->key), message->key ? message->key_len : 0);
    const std::string_view value(static_cast<const char*>(message->payload), message->payload ? message->len : 0);
    DecodedRecord decoded = decoder.decode(key, value);
    rd_kafka_message_destroy(message);
    if (!decoded.error.empty())
      return {false, "kafka source: the record at " + where + " offset " + std::to_string(offset) + " cannot be applied: " +
                         decoded.error};
    owned->second.next = offset + 1;
    SourcePosition position(partition_position_token(position_));
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

void KafkaSource::on_position_persisted(const SourcePosition& position) {
  auto offsets = parse_partition_position(position.token);
  if (!offsets) return;
  const std::lock_guard lock(mutex_);
  persisted_ = *offsets;
  persisted_changed_.notify_all();
  // The consumer group's offsets follow the target's, for lag tools; a restart reads the target's.
  if (!consumer_ || offsets->empty()) return;
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(static_cast<int>(offsets->size()));
  for (const auto& [p, o] : *offsets) {
    if (o.next < 0) continue;
    const size_t slash = p.rfind('/');
    rd_kafka_topic_partition_list_add(list, p.substr(0, slash).c_str(), std::stoi(p.substr(slash + 1)))->offset = o.next;
  }
  if (list->cnt > 0) rd_kafka_commit(consumer_->handle, list, 1);
  rd_kafka_topic_partition_list_destroy(list);
}

}  // namespace tidemark::kafka
