#include "sink/sink_factory.hpp"

#include <cstdio>

#include "sink/kafka_sink.hpp"
#include "sink/stdout_sink.hpp"

namespace tidemark {

bool is_database_sink(const Config& config) { return config.sink.type == "postgres" || config.sink.type == "mysql"; }

std::unique_ptr<MessageSink> make_message_sink(const Config& config, PositionTracker& tracker) {
  if (config.sink.type == "stdout") return std::make_unique<StdoutSink>(stdout, tracker);
  return std::make_unique<KafkaSink>(config.sink.kafka, "tidemark-" + config.name, tracker);
}

PublisherOptions publisher_options(const Config& config) {
  const auto& k = config.sink.kafka;
  FlatFields fields;
  for (const auto& f : k.flat_add_fields) {
    fields.op |= f == "op";
    fields.table |= f == "table";
    fields.db |= f == "db";
    fields.schema |= f == "schema";
    fields.source_ts_ms |= f == "source_ts_ms";
    fields.ts_ms |= f == "ts_ms";
  }
  fields.deleted = k.flat_delete_handling == "rewrite";
  const FlatDeletes deletes = k.flat_delete_handling == "drop"      ? FlatDeletes::Drop
                              : k.flat_delete_handling == "rewrite" ? FlatDeletes::Rewrite
                                                                    : FlatDeletes::Tombstone;
  return PublisherOptions{config.name, config.sink.kafka.topic_prefix, config.sink.kafka.topic_template,
                          config.sink.kafka.tombstones_on_delete,
                          config.heartbeat.topic_prefix + "." + config.sink.kafka.topic_prefix,
                          config.sink.kafka.provide_transaction_metadata,
                          config.sink.kafka.transaction_topic.empty() ? config.sink.kafka.topic_prefix + ".transaction"
                                                                      : config.sink.kafka.transaction_topic,
                          k.record_shape == "flat", fields, deletes, k.schemas_enable};
}

}  // namespace tidemark
