#pragma once
// The pipeline's state as one record of the state topic (sink.kafka.exactly_once): the key is the
// pipeline's name, the value this JSON. It is written as the last record of every Kafka transaction, so
// the state read back with read_committed is exactly what the committed records cover.
//
//   {"format": 1, "pipeline": "orders", "source_type": "postgres",
//    "position": "<token>" | null,                 resume after this source position
//    "extensions": {"snapshot": {...}},            the snapshot state stamped on that position
//    "partial": {"changes": N, "first": "<id>"}}   optional: the log transaction after `position` was split,
//                                                  and its first N changes (the first one has identity
//                                                  `first`) are already committed

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tidemark/change_event.hpp"

namespace tidemark {

struct PartialTransaction {
  uint64_t changes = 0;  // committed changes of the transaction that follows the position
  std::string first;     // change_identity() of its first change, checked when it is replayed
  bool operator==(const PartialTransaction&) const = default;
};

struct PipelineStateRecord {
  std::string pipeline;
  std::string source_type;
  std::optional<SourcePosition> position;
  nlohmann::json extensions = nlohmann::json::object();
  std::optional<PartialTransaction> partial;
};

std::string encode_state_record(const PipelineStateRecord& state);

// The record, or why it cannot be read (names the topic's record for the operator).
struct DecodedStateRecord {
  std::optional<PipelineStateRecord> state;
  std::string error;
};
DecodedStateRecord decode_state_record(std::string_view value);

// Where a change sits in the source's log, the same on every replay of it: PostgreSQL's LSN and xid,
// MySQL's binlog file, position and row, the generator's sequence.
std::string change_identity(const ChangeEvent& event);

}  // namespace tidemark
