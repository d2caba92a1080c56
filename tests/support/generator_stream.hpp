#pragma once
// Checks what the generator source put into Kafka, from the records alone: every change present, each in
// its partition by Java's partitioner, per-key order never going back (replays after a crash excepted).

#include <string>
#include <vector>

#include "kafka_client.hpp"

namespace tidemark::test {

struct GeneratorStreamExpectation {
  int tables = 1;
  int keys = 1;
  int64_t first_sequence = 0;  // every sequence in [first_sequence, end_sequence) must be present
  int64_t end_sequence = 0;
  bool allow_duplicates = false;  // after a crash or an unflushed stop, replays are allowed
  bool tombstones = true;
};

struct GeneratorStreamReport {
  std::vector<std::string> failures;  // empty when everything holds
  size_t records = 0;
  size_t duplicates = 0;
  int64_t max_sequence = -1;
};

// `records` must hold every topic of the generator's tables (in per-partition offset order).
GeneratorStreamReport check_generator_stream(const std::vector<ConsumedRecord>& records,
                                             const GeneratorStreamExpectation& expect);

// Consumes <prefix>.generator.t0 .. t(tables-1).
std::vector<ConsumedRecord> consume_generator_topics(const std::string& bootstrap, const std::string& prefix,
                                                     int tables);

std::string generator_topic(const std::string& prefix, int table);

}  // namespace tidemark::test
