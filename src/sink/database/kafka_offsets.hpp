#pragma once
// The offsets table in the target (sink.database.offsets_table) of a pipeline that applies Kafka topics
// (source.type kafka): per consumer group (source.kafka.group_id), one row per partition ("topic/partition")
// with the next offset to apply and the group member that owns the partition. Invariant: a partition's row moves only in a transaction
// that also holds the rows of its records, and only while the member writing it is the row's owner. A
// member takes a partition over with claim(), which waits for the previous owner's transaction in flight
// and reads the offset after it; any later transaction of the previous owner (a member that lost the
// partition in a rebalance, or stalled past its session) fails as a whole instead of applying records the
// new owner applies too. So every record is applied exactly once, whichever member applies it.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "core/fallible.hpp"
#include "core/partition_position.hpp"
#include "sink/database/target_connection.hpp"

namespace tidemark::dbsink {

class KafkaOffsetsTable {
 public:
  // The text a fenced write fails with (in the target's error message).
  static constexpr const char* kFenced = "tidemark fenced";
  // Where a partition without a row starts: `first_start` when the group has no row at all.
  using StartOf = std::function<std::optional<int64_t>(const std::string& partition, bool first_start, std::string& error)>;

  KafkaOffsetsTable(const DatabaseSinkConfig& config, const std::string& group);

  const std::string& label() const { return where_.label; }
  std::string create_statement() const;
  // Creates the table when `create`, else only looks; `exists` says whether it is there afterwards.
  std::optional<TargetError> ensure(TargetConnection& target, bool create, bool& exists) const;
  // The group's rows, by partition.
  std::optional<PartitionPosition> read(TargetConnection& target, TargetError* error) const;
  // In one transaction of its own: makes `owner` the owner of `partitions` (a row missing is created at
  // start_of) and returns their next offsets as they stand after every earlier owner's commit.
  Fallible<std::map<std::string, int64_t>> claim(TargetConnection& target, const std::vector<std::string>& partitions,
                                                 const std::string& owner, const StartOf& start_of) const;
  // Appends the statement that stores `offsets` (ends with ";\n"); it fails the transaction, with kFenced in
  // the error, when another owner holds one of the partitions.
  void append_write(std::string& script, const PartitionPosition& offsets) const;

 private:
  OwnTable where_;
  std::string group_;  // quoted literal
};

// "topic/partition" split at its last '/'; nullopt when it is not one.
std::optional<std::pair<std::string, int32_t>> split_partition_name(const std::string& name);

}  // namespace tidemark::dbsink
