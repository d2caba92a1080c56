#pragma once
// Every librdkafka error the sink can meet, decided in one place: backpressure, transient (librdkafka
// retries by itself; we only log), or fatal (stop intake, flush, exit non-zero for systemd to restart).

#include <string>

#include <librdkafka/rdkafka.h>

namespace tidemark {

enum class KafkaErrorAction { Backpressure, Transient, Fatal };

KafkaErrorAction classify_kafka_error(rd_kafka_resp_err_t err);

// One sentence naming the cause and the fix, for the log.
std::string explain_kafka_error(rd_kafka_resp_err_t err, const std::string& topic, const std::string& bootstrap);

}  // namespace tidemark
