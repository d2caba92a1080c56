#include "sink/state_topic_reader.hpp"

#include <memory>
#include <set>

#include <librdkafka/rdkafka.h>

namespace tidemark {

namespace {

struct ConsumerDeleter {
  void operator()(rd_kafka_t* rk) const {
    rd_kafka_consumer_close(rk);
    rd_kafka_destroy(rk);
  }
};

}  // namespace

StateTopicRead read_state_topic(const KafkaSinkConfig& config, const std::string& pipeline, std::chrono::milliseconds timeout) {
  StateTopicRead out;
  const std::string& topic = config.state_topic;
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char err[512];
  // The producer's connection settings (security.protocol, sasl.*, ssl.*) apply to the reader as well; the
  // producer-only ones are left out.
  for (const auto& [key, value] : config.properties)
    if (key.rfind("security.", 0) == 0 || key.rfind("sasl.", 0) == 0 || key.rfind("ssl.", 0) == 0 ||
        key.rfind("client.", 0) == 0 || key == "broker.address.family")
      rd_kafka_conf_set(conf, key.c_str(), value.c_str(), err, sizeof err);
  const std::pair<const char*, std::string> settings[] = {
      {"bootstrap.servers", config.bootstrap_servers}, {"isolation.level", "read_committed"},
      {"enable.partition.eof", "true"},                {"enable.auto.commit", "false"},
      {"enable.auto.offset.store", "false"},           {"allow.auto.create.topics", "false"},
      // The topic is read once to its end at start: a fetch that finds nothing new returns at once instead of after
      // the default 500 ms, which every start would wait.
      {"fetch.wait.max.ms", "10"},
      // librdkafka's consumer wants a group; it is never joined (assign, not subscribe) nor committed to.
      {"group.id", "tidemark-state-reader-" + pipeline}};
  for (const auto& [key, value] : settings) {
    if (rd_kafka_conf_set(conf, key, value.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      out.error = std::string("cannot configure the state topic reader: ") + err;
      return out;
    }
  }
  std::unique_ptr<rd_kafka_t, ConsumerDeleter> consumer(rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err));
  if (!consumer) {
    rd_kafka_conf_destroy(conf);
    out.error = std::string("cannot create the state topic reader: ") + err;
    return out;
  }
  rd_kafka_poll_set_consumer(consumer.get());

  const rd_kafka_metadata_t* metadata = nullptr;
  std::unique_ptr<rd_kafka_topic_t, decltype(&rd_kafka_topic_destroy)> handle(rd_kafka_topic_new(consumer.get(), topic.c_str(), nullptr),
                                                                              &rd_kafka_topic_destroy);
  const rd_kafka_resp_err_t meta_err =
      rd_kafka_metadata(consumer.get(), 0, handle.get(), &metadata, static_cast<int>(timeout.count()));
  if (meta_err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    out.error = "cannot read the state topic " + topic + " (sink.kafka.state_topic): " + rd_kafka_err2str(meta_err);
    return out;
  }
  int partitions = 0;
  rd_kafka_resp_err_t topic_err = RD_KAFKA_RESP_ERR_NO_ERROR;
  if (metadata->topic_cnt == 1) {
    partitions = metadata->topics[0].partition_cnt;
    topic_err = metadata->topics[0].err;
  }
  rd_kafka_metadata_destroy(metadata);
  if (topic_err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART || (topic_err == RD_KAFKA_RESP_ERR_NO_ERROR && partitions == 0))
    return out;  // not created yet: no state
  if (topic_err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    out.error = "cannot read the state topic " + topic + " (sink.kafka.state_topic): " + rd_kafka_err2str(topic_err);
    return out;
  }
  rd_kafka_topic_partition_list_t* assignment = rd_kafka_topic_partition_list_new(partitions);
  for (int p = 0; p < partitions; ++p)
    rd_kafka_topic_partition_list_add(assignment, topic.c_str(), p)->offset = RD_KAFKA_OFFSET_BEGINNING;
  const rd_kafka_resp_err_t assign_err = rd_kafka_assign(consumer.get(), assignment);
  rd_kafka_topic_partition_list_destroy(assignment);
  if (assign_err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    out.error = "cannot read the state topic " + topic + ": " + rd_kafka_err2str(assign_err);
    return out;
  }

  std::set<int32_t> at_end;
  std::optional<std::string> last_value;  // of this pipeline's key; nullopt after a tombstone
  bool found = false;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (static_cast<int>(at_end.size()) < partitions) {
    if (std::chrono::steady_clock::now() > deadline) {
      out.error = "the state topic " + topic + " could not be read to its end within " + std::to_string(timeout.count()) +
                  " ms (sink.kafka.connect_timeout_ms); a transaction of another producer may hold it open: check that "
                  "no other pipeline uses the same sink.kafka.transactional_id";
      return out;
    }
    rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer.get(), 200);
    if (m == nullptr) continue;
    std::unique_ptr<rd_kafka_message_t, decltype(&rd_kafka_message_destroy)> message(m, &rd_kafka_message_destroy);
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      at_end.insert(m->partition);
      continue;
    }
    if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      out.error = "cannot read the state topic " + topic + ": " + rd_kafka_message_errstr(m);
      return out;
    }
    at_end.erase(m->partition);
    if (m->key == nullptr || std::string_view(static_cast<const char*>(m->key), m->key_len) != pipeline) continue;
    found = true;
    if (m->payload == nullptr)
      last_value.reset();
    else
      last_value.emplace(static_cast<const char*>(m->payload), m->len);
  }
  if (!found || !last_value) return out;
  DecodedStateRecord decoded = decode_state_record(*last_value);
  if (!decoded.state) {
    out.error = "the last state of pipeline '" + pipeline + "' in topic " + topic + " cannot be read: " + decoded.error;
    return out;
  }
  out.state = std::move(decoded.state);
  return out;
}

}  // namespace tidemark
