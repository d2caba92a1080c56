#include "kafka_client.hpp"

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "process.hpp"

namespace tidemark::test {

namespace {

struct KafkaDeleter {
  void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
};
using KafkaHandle = std::unique_ptr<rd_kafka_t, KafkaDeleter>;

KafkaHandle make_client(rd_kafka_type_t type, const std::string& bootstrap, bool consumer_settings) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char err[512];
  auto set = [&](const char* k, const char* v) {
    if (rd_kafka_conf_set(conf, k, v, err, sizeof err) != RD_KAFKA_CONF_OK) throw std::runtime_error(err);
  };
  set("bootstrap.servers", bootstrap.c_str());
  // The tests' clients never create a topic on a broker that auto-creates them: the daemon's must.
  set("allow.auto.create.topics", "false");
  if (consumer_settings) {
    set("group.id", "tidemark-test-reader");
    set("enable.auto.commit", "false");
    set("enable.partition.eof", "true");
  }
  rd_kafka_t* rk = rd_kafka_new(type, conf, err, sizeof err);
  if (!rk) throw std::runtime_error(err);
  return KafkaHandle(rk);
}

}  // namespace

std::string real_kafka_bootstrap() {
  const char* value = std::getenv("TIDEMARK_KAFKA_BOOTSTRAP");
  if (value == nullptr || *value == '\0') {
    ADD_FAILURE() << "TIDEMARK_KAFKA_BOOTSTRAP is not set: run the tests through ./scripts/test.sh, which starts "
                     "a real Kafka broker (or source .run/env.sh after ./scripts/servers.sh start)";
    return "127.0.0.1:1";
  }
  return value;
}

std::string unique_name(const std::string& prefix) {
  static std::atomic<int> counter{0};
  return prefix + "-" + std::to_string(::getpid()) + "-" + std::to_string(time(nullptr)) + "-" +
         std::to_string(counter++);
}

void create_topic(const std::string& bootstrap, const std::string& topic, int partitions) {
  KafkaHandle rk = make_client(RD_KAFKA_PRODUCER, bootstrap, false);
  char err[512];
  rd_kafka_NewTopic_t* new_topic = rd_kafka_NewTopic_new(topic.c_str(), partitions, 1, err, sizeof err);
  if (!new_topic) throw std::runtime_error(err);
  rd_kafka_queue_t* queue = rd_kafka_queue_new(rk.get());
  rd_kafka_CreateTopics(rk.get(), &new_topic, 1, nullptr, queue);
  rd_kafka_event_t* event = rd_kafka_queue_poll(queue, 30000);
  std::string failure;
  if (!event) {
    failure = "CreateTopics timed out";
  } else if (rd_kafka_event_error(event)) {
    failure = rd_kafka_event_error_string(event);
  } else {
    const rd_kafka_CreateTopics_result_t* result = rd_kafka_event_CreateTopics_result(event);
    size_t count = 0;
    const rd_kafka_topic_result_t** topics = rd_kafka_CreateTopics_result_topics(result, &count);
    for (size_t i = 0; i < count; ++i) {
      const rd_kafka_resp_err_t e = rd_kafka_topic_result_error(topics[i]);
      if (e != RD_KAFKA_RESP_ERR_NO_ERROR && e != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
        failure = rd_kafka_topic_result_error_string(topics[i]);
    }
  }
  if (event) rd_kafka_event_destroy(event);
  rd_kafka_queue_destroy(queue);
  rd_kafka_NewTopic_destroy(new_topic);
  if (!failure.empty()) throw std::runtime_error("create topic " + topic + ": " + failure);
  // Wait until the topic's partitions have leaders, so the first produce does not race creation.
  for (int attempt = 0; attempt < 100; ++attempt) {
    if (partition_count(bootstrap, topic) == partitions) return;
    usleep(100'000);
  }
  throw std::runtime_error("topic " + topic + " did not appear");
}

void add_partitions(const std::string& bootstrap, const std::string& topic, int total) {
  KafkaHandle rk = make_client(RD_KAFKA_PRODUCER, bootstrap, false);
  char err[512];
  rd_kafka_NewPartitions_t* grow = rd_kafka_NewPartitions_new(topic.c_str(), static_cast<size_t>(total), err, sizeof err);
  if (!grow) throw std::runtime_error(err);
  rd_kafka_queue_t* queue = rd_kafka_queue_new(rk.get());
  rd_kafka_CreatePartitions(rk.get(), &grow, 1, nullptr, queue);
  rd_kafka_event_t* event = rd_kafka_queue_poll(queue, 30000);
  std::string failure;
  if (!event) {
    failure = "CreatePartitions timed out";
  } else if (rd_kafka_event_error(event)) {
    failure = rd_kafka_event_error_string(event);
  } else {
    size_t count = 0;
    const rd_kafka_topic_result_t** topics =
        rd_kafka_CreatePartitions_result_topics(rd_kafka_event_CreatePartitions_result(event), &count);
    for (size_t i = 0; i < count; ++i)
      if (rd_kafka_topic_result_error(topics[i]) != RD_KAFKA_RESP_ERR_NO_ERROR)
        failure = rd_kafka_topic_result_error_string(topics[i]);
  }
  if (event) rd_kafka_event_destroy(event);
  rd_kafka_queue_destroy(queue);
  rd_kafka_NewPartitions_destroy(grow);
  if (!failure.empty()) throw std::runtime_error("add partitions to " + topic + ": " + failure);
  for (int attempt = 0; attempt < 100; ++attempt) {
    if (partition_count(bootstrap, topic) == total) return;
    usleep(100'000);
  }
  throw std::runtime_error("topic " + topic + " did not grow to " + std::to_string(total) + " partitions");
}

int partition_count(const std::string& bootstrap, const std::string& topic) {
  KafkaHandle rk = make_client(RD_KAFKA_PRODUCER, bootstrap, false);
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk.get(), topic.c_str(), nullptr);
  const rd_kafka_metadata_t* md = nullptr;
  int count = -1;
  if (rd_kafka_metadata(rk.get(), 0, rkt, &md, 10000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
    if (md->topic_cnt == 1 && md->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      count = md->topics[0].partition_cnt;
      for (int p = 0; p < count; ++p)
        if (md->topics[0].partitions[p].leader < 0) count = -1;
    }
    rd_kafka_metadata_destroy(md);
  }
  rd_kafka_topic_destroy(rkt);
  return count;
}

std::map<std::string, std::string> topic_configs(const std::string& bootstrap, const std::string& topic) {
  KafkaHandle rk = make_client(RD_KAFKA_PRODUCER, bootstrap, false);
  rd_kafka_ConfigResource_t* resource = rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, topic.c_str());
  rd_kafka_queue_t* queue = rd_kafka_queue_new(rk.get());
  rd_kafka_DescribeConfigs(rk.get(), &resource, 1, nullptr, queue);
  rd_kafka_event_t* event = rd_kafka_queue_poll(queue, 30000);
  std::map<std::string, std::string> out;
  if (event && !rd_kafka_event_error(event)) {
    const rd_kafka_DescribeConfigs_result_t* result = rd_kafka_event_DescribeConfigs_result(event);
    size_t count = 0;
    const rd_kafka_ConfigResource_t** described = rd_kafka_DescribeConfigs_result_resources(result, &count);
    if (count == 1 && rd_kafka_ConfigResource_error(described[0]) == RD_KAFKA_RESP_ERR_NO_ERROR) {
      size_t entries = 0;
      const rd_kafka_ConfigEntry_t** configs = rd_kafka_ConfigResource_configs(described[0], &entries);
      for (size_t i = 0; i < entries; ++i) {
        const char* value = rd_kafka_ConfigEntry_value(configs[i]);
        out[rd_kafka_ConfigEntry_name(configs[i])] = value ? value : "";
      }
    }
  }
  if (event) rd_kafka_event_destroy(event);
  rd_kafka_queue_destroy(queue);
  rd_kafka_ConfigResource_destroy(resource);
  return out;
}

std::vector<ConsumedRecord> consume_committed_with_kcat(const std::string& bootstrap, const std::string& topic) {
  TempDir dir;
  ChildProcess kcat({"/usr/bin/kcat", "-C", "-b", bootstrap, "-t", topic, "-X", "isolation.level=read_committed", "-o", "beginning",
                     "-e", "-q", "-J"},
                    dir.file("out"), dir.file("err"));
  const auto status = kcat.wait_for_exit(std::chrono::seconds(60));
  if (status != 0) {
    ADD_FAILURE() << "kcat -C -t " << topic << " ended with " << (status ? std::to_string(*status) : "a timeout") << ": "
                  << read_file(dir.file("err"));
    return {};
  }
  std::vector<ConsumedRecord> out;
  const std::string text = read_file(dir.file("out"));
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    const auto j = nlohmann::json::parse(line);
    ConsumedRecord r;
    r.topic = topic;
    r.partition = j.at("partition").get<int32_t>();
    r.offset = j.at("offset").get<int64_t>();
    if (!j.at("key").is_null()) r.key = j["key"].get<std::string>();
    if (!j.at("payload").is_null()) r.value = j["payload"].get<std::string>();
    out.push_back(std::move(r));
  }
  // kcat interleaves partitions; the tests read each partition in offset order.
  std::stable_sort(out.begin(), out.end(), [](const ConsumedRecord& a, const ConsumedRecord& b) {
    return a.partition != b.partition ? a.partition < b.partition : a.offset < b.offset;
  });
  return out;
}

std::vector<ConsumedRecord> consume_all(const std::string& bootstrap, const std::string& topic,
                                        std::chrono::milliseconds timeout) {
  const int partitions = partition_count(bootstrap, topic);
  if (partitions <= 0) throw std::runtime_error("topic " + topic + " not found");
  KafkaHandle rk = make_client(RD_KAFKA_CONSUMER, bootstrap, true);
  // Each partition's end as of now; read from the beginning up to it.
  std::vector<int64_t> high(static_cast<size_t>(partitions));
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(partitions);
  int remaining = 0;
  for (int p = 0; p < partitions; ++p) {
    int64_t lo = 0, hi = 0;
    rd_kafka_resp_err_t e = rd_kafka_query_watermark_offsets(rk.get(), topic.c_str(), p, &lo, &hi, 10000);
    // A topic created a moment ago may still be moving its leaders.
    for (int retry = 0; retry < 50 && (e == RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION ||
                                       e == RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE ||
                                       e == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART);
         ++retry) {
      usleep(100'000);
      e = rd_kafka_query_watermark_offsets(rk.get(), topic.c_str(), p, &lo, &hi, 10000);
    }
    if (e != RD_KAFKA_RESP_ERR_NO_ERROR) throw std::runtime_error(std::string("watermarks: ") + rd_kafka_err2str(e));
    high[static_cast<size_t>(p)] = hi;
    if (hi > lo) {
      rd_kafka_topic_partition_list_add(list, topic.c_str(), p)->offset = lo;
      ++remaining;
    }
  }
  std::vector<ConsumedRecord> records;
  if (remaining > 0) {
    rd_kafka_assign(rk.get(), list);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::vector<bool> done(static_cast<size_t>(partitions), false);
    while (remaining > 0) {
      if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("consume of " + topic + " timed out");
      rd_kafka_message_t* m = rd_kafka_consumer_poll(rk.get(), 500);
      if (!m) continue;
      const auto p = static_cast<size_t>(m->partition);
      if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR && !done[p]) {
        ConsumedRecord r;
        r.topic = topic;
        r.partition = m->partition;
        r.offset = m->offset;
        r.partition_count = partitions;
        if (m->key) r.key = std::string(static_cast<const char*>(m->key), m->key_len);
        if (m->payload) r.value = std::string(static_cast<const char*>(m->payload), m->len);
        records.push_back(std::move(r));
        if (m->offset + 1 >= high[p]) {
          done[p] = true;
          --remaining;
        }
      }
      rd_kafka_message_destroy(m);
    }
    rd_kafka_consumer_close(rk.get());
  }
  rd_kafka_topic_partition_list_destroy(list);
  return records;
}

int32_t java_partition_for_key(const std::string& key, int32_t partitions) {
  // org.apache.kafka.common.utils.Utils.murmur2, with Java's 32-bit wrap-around arithmetic.
  const auto* data = reinterpret_cast<const uint8_t*>(key.data());
  const auto length = static_cast<uint32_t>(key.size());
  const uint32_t seed = 0x9747b28c;
  const uint32_t m = 0x5bd1e995;
  const int r = 24;
  uint32_t h = seed ^ length;
  const uint32_t length4 = length / 4;
  for (uint32_t i = 0; i < length4; ++i) {
    const uint32_t i4 = i * 4;
    uint32_t k = uint32_t{data[i4]} | uint32_t{data[i4 + 1]} << 8 | uint32_t{data[i4 + 2]} << 16 |
                 uint32_t{data[i4 + 3]} << 24;
    k *= m;
    k ^= k >> r;
    k *= m;
    h *= m;
    h ^= k;
  }
  const uint32_t tail = length & ~3u;
  switch (length % 4) {
    case 3: h ^= uint32_t{data[tail + 2]} << 16; [[fallthrough]];
    case 2: h ^= uint32_t{data[tail + 1]} << 8; [[fallthrough]];
    case 1:
      h ^= data[tail];
      h *= m;
  }
  h ^= h >> 13;
  h *= m;
  h ^= h >> 15;
  const auto positive = static_cast<int32_t>(h & 0x7fffffff);
  return positive % partitions;
}

std::map<std::string, std::vector<ConsumedRecord>> records_by_key(const std::vector<ConsumedRecord>& records) {
  std::map<std::string, std::vector<ConsumedRecord>> out;
  for (const auto& r : records) out[r.key.value_or("null")].push_back(r);
  return out;
}

}  // namespace tidemark::test
