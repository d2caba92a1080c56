#pragma once
// Reads a pipeline's state back from the state topic (sink.kafka.exactly_once) at start: every partition
// from its beginning to its last stable offset with isolation.level=read_committed, keeping the last
// record under the pipeline's name. Call it after the producer's init_transactions, which aborts what an
// earlier instance left open, so that the read does not wait for that transaction's timeout.

#include <chrono>
#include <optional>
#include <string>

#include "config/config.hpp"
#include "sink/pipeline_state_record.hpp"

namespace tidemark {

struct StateTopicRead {
  std::optional<PipelineStateRecord> state;  // absent: the topic (or this pipeline's key in it) is empty
  std::string error;                         // set when the topic could not be read to its end
};

StateTopicRead read_state_topic(const KafkaSinkConfig& config, const std::string& pipeline, std::chrono::milliseconds timeout);

}  // namespace tidemark
