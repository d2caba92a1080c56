#pragma once
// Kafka Connect's own JsonConverter (schemas.enable=true) over records read from a topic: the reader a
// Connect sink or a Debezium consumer would use, run from the broker's jars (tests/support/java).

#include <string>
#include <vector>

#include "kafka_client.hpp"

namespace tidemark::test {

struct ConverterReport {
  int exit_status = -1;
  // Per record, in order: "ok\t<the Connect value as Struct.toString()>" or "error\t<n>: <reason>".
  std::vector<std::string> lines;
  std::string output;  // everything the checker printed, for failure messages
};

// Runs tests/support/java/JsonConverterCheck.java with the jars in $TIDEMARK_KAFKA_LIBS (servers.sh exports
// it). Each key and value goes to Connect data and back, and must come back as the same payload.
ConverterReport read_with_json_converter(const std::vector<ConsumedRecord>& records);

}  // namespace tidemark::test
