#pragma once
// The position of a source read as partitions (source.type kafka): for every partition this group member
// owns ("topic/partition"), the offset of the next record to apply and the claim by which the member owns
// it. The Kafka source puts it into every record's position; the database sink stores it in its offsets
// table (sink/database/kafka_offsets.hpp), one row per partition, fenced by the owner.

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace tidemark {

struct PartitionOffset {
  int64_t next = 0;   // librdkafka's logical offsets too (-2: the partition's beginning)
  std::string owner;  // empty in a position written before partitions had owners
  bool operator==(const PartitionOffset&) const = default;
};

using PartitionPosition = std::map<std::string, PartitionOffset>;

// {"topic/partition": [next, "owner"], ...}
std::string partition_position_token(const PartitionPosition& position);
// Also reads the earlier form {"topic/partition": next, ...} (no owners); nullopt when it is neither.
std::optional<PartitionPosition> parse_partition_position(const std::string& token);

}  // namespace tidemark
