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

// What a failed call of the transactional API (init, begin, commit, abort) asks for, as librdkafka says
// it: call it again, abort the transaction and send its records again, or stop (fenced by a newer
// producer with the same transactional.id, or any other fatal error) so that systemd restarts the daemon.
enum class TransactionErrorAction { Retry, Abort, Fatal };

TransactionErrorAction classify_transaction_error(const rd_kafka_error_t* error);

// One sentence naming the cause and the fix of a failed transactional call.
std::string explain_transaction_error(const rd_kafka_error_t* error, const std::string& call,
                                      const std::string& transactional_id);

}  // namespace tidemark
