#include "sink/kafka_errors.hpp"

namespace tidemark {

KafkaErrorAction classify_kafka_error(rd_kafka_resp_err_t err) {
  switch (err) {
    case RD_KAFKA_RESP_ERR__QUEUE_FULL:
      return KafkaErrorAction::Backpressure;
    // Connection-level trouble: librdkafka reconnects and retries within message.timeout.ms.
    case RD_KAFKA_RESP_ERR__TRANSPORT:
    case RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN:
    case RD_KAFKA_RESP_ERR__RESOLVE:
    case RD_KAFKA_RESP_ERR__TIMED_OUT:
    case RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT:
    case RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION:
    case RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS:
    case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND:
    case RD_KAFKA_RESP_ERR_NETWORK_EXCEPTION:
    case RD_KAFKA_RESP_ERR_BROKER_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS:
    case RD_KAFKA_RESP_ERR__WAIT_COORD:
    case RD_KAFKA_RESP_ERR_KAFKA_STORAGE_ERROR:
      return KafkaErrorAction::Transient;
    default:
      // Anything else on a record (timed out, unknown topic, not authorized, too large, and every fatal
      // idempotence error) means that record was not stored: later records must not overtake it.
      return KafkaErrorAction::Fatal;
  }
}

std::string explain_kafka_error(rd_kafka_resp_err_t err, const std::string& topic, const std::string& bootstrap) {
  const std::string name = rd_kafka_err2name(err);
  const std::string what = name + " (" + rd_kafka_err2str(err) + ")";
  const std::string on_topic = topic.empty() ? "" : " on topic " + topic;
  switch (err) {
    case RD_KAFKA_RESP_ERR__MSG_TIMED_OUT:
      return "Kafka at " + bootstrap + " did not acknowledge a record" + on_topic +
             " within sink.kafka.delivery_timeout_ms: " + what +
             ". Check that the brokers are up and reachable, or raise sink.kafka.delivery_timeout_ms.";
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
    case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
    case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION:
      return "topic " + topic + " does not exist and the brokers do not create topics automatically: " + what +
             ". Create it (kafka-topics.sh --bootstrap-server " + bootstrap + " --create --topic " + topic +
             "), enable auto.create.topics.enable on the brokers, or change sink.kafka.topic_template.";
    case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED:
      return "not authorized to write" + on_topic + ": " + what +
             ". Grant the principal WRITE and DESCRIBE on the topic and IDEMPOTENT_WRITE on the cluster.";
    case RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE:
      return "a record" + on_topic + " is larger than Kafka accepts: " + what +
             ". Raise max.message.bytes on the topic and message.max.bytes in sink.kafka.properties.";
    case RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN:
    case RD_KAFKA_RESP_ERR__TRANSPORT:
    case RD_KAFKA_RESP_ERR__RESOLVE:
      return "cannot reach Kafka at " + bootstrap + ": " + what +
             ". Check sink.kafka.bootstrap_servers and that the brokers are up.";
    default:
      return "Kafka error" + on_topic + ": " + what + ".";
  }
}

TransactionErrorAction classify_transaction_error(const rd_kafka_error_t* error) {
  if (rd_kafka_error_is_fatal(error)) return TransactionErrorAction::Fatal;  // fenced included
  if (rd_kafka_error_txn_requires_abort(error)) return TransactionErrorAction::Abort;
  if (rd_kafka_error_is_retriable(error)) return TransactionErrorAction::Retry;
  return TransactionErrorAction::Fatal;
}

std::string explain_transaction_error(const rd_kafka_error_t* error, const std::string& call,
                                      const std::string& transactional_id) {
  const rd_kafka_resp_err_t code = rd_kafka_error_code(error);
  const std::string what = call + " failed: " + rd_kafka_error_name(error) + " (" + rd_kafka_error_string(error) + ")";
  switch (code) {
    case RD_KAFKA_RESP_ERR__FENCED:
    case RD_KAFKA_RESP_ERR_PRODUCER_FENCED:
    case RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH:
      return what + ": another producer with transactional.id " + transactional_id +
             " started (a standby that took over, or a second copy of this pipeline), so this one may not write any "
             "more; stopping. Run one active instance per sink.kafka.transactional_id.";
    case RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED:
      return what + ": grant the principal WRITE and DESCRIBE on transactional id " + transactional_id +
             " (kafka-acls.sh --add --operation Write --operation Describe --transactional-id " + transactional_id + ").";
    case RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED:
      return what + ": grant the principal IDEMPOTENT_WRITE on the cluster.";
    case RD_KAFKA_RESP_ERR_UNSUPPORTED_VERSION:
    case RD_KAFKA_RESP_ERR__UNSUPPORTED_FEATURE:
      return what + ": the brokers do not support transactions (Kafka 0.11 or later is needed); turn "
             "sink.kafka.exactly_once off.";
    case RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE:
      return what + ": the brokers have no transaction coordinator: the __transaction_state topic needs "
             "transaction.state.log.replication.factor brokers (3 by default; 1 on a single-broker cluster).";
    default:
      return what + ".";
  }
}

}  // namespace tidemark
