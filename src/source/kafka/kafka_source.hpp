#pragma once
// source.type kafka: reads topics of change records (change_record.hpp) as a member of a consumer group
// (source.kafka.group_id) and hands them to a database sink, partition by partition in offset order. Every
// record is a transaction of its own; its position (core/partition_position.hpp) is the next offset of
// every partition this member owns, with the claim it owns it by, which the sink stores in the target's
// offsets table in the same transaction as the rows (exactly-once apply).
//
// Partitions move between members in rebalances (cooperative-sticky by default):
// - assigned: the member claims them in the target (claim_partitions), which makes it their owner and
//   returns where each one goes on; a partition without a row starts at its beginning, or, on the
//   pipeline's first start with source.kafka.start latest, at its current end;
// - revoked: the member first waits (kRevokeDrain at most) until the target holds everything it read of
//   them, then lets them go, so the next owner starts where it stopped;
// - lost (session expired), or revoked while the target stays behind: the next owner's claim fences this
//   member, whose next transaction touching those partitions then fails whole and stops the pipeline.
// The applied offsets are also committed to the group once persisted, for lag monitoring.

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "core/fallible.hpp"
#include "core/partition_position.hpp"
#include "source/source.hpp"

struct rd_kafka_s;
struct rd_kafka_topic_partition_list_s;

namespace tidemark::kafka {

// Where a partition without a stored offset starts; `first_start`: the pipeline has stored none at all.
using StartOf = std::function<std::optional<int64_t>(const std::string& partition, bool first_start, std::string& error)>;
// Makes `owner` the owner of `partitions` where the applied offsets are kept (the target database), and
// returns each one's next offset.
using ClaimPartitions = std::function<Fallible<std::map<std::string, int64_t>>(
    const std::vector<std::string>& partitions, const std::string& owner, const StartOf& start_of)>;

class KafkaSource final : public Source {
 public:
  KafkaSource(const Config& config, ClaimPartitions claim_partitions);
  ~KafkaSource() override;

  std::vector<std::string> check() override;
  SourceOutcome run(const std::optional<SourcePosition>& start, EventQueue& out, std::stop_token stop) override;
  void on_position_persisted(const SourcePosition& position) override;

 private:
  struct Consumer;
  struct Callbacks;  // librdkafka's, with access to the members
  void assign(rd_kafka_s* handle, rd_kafka_topic_partition_list_s* partitions);
  void revoke(rd_kafka_s* handle, rd_kafka_topic_partition_list_s* partitions);
  // Waits until the target holds every record of `partitions` handed on; false after kRevokeDrain.
  bool drained(const std::vector<std::string>& partitions);

  const Config config_;
  const ClaimPartitions claim_partitions_;
  const std::string member_;  // this process, in the owners it claims partitions as
  // The source thread's (the rebalance callback runs inside its poll).
  PartitionPosition position_;                 // the partitions owned, after the records handed on
  std::map<std::string, int64_t> claimed_at_;  // where each owned partition started
  std::map<std::string, int64_t> legacy_;      // offsets stored in the position table before the offsets table
  int claims_ = 0;
  bool closing_ = false;  // the consumer is being closed: a revoke does not wait
  std::string fatal_;
  std::stop_token stop_;

  std::mutex mutex_;  // the persister's thread reports positions while the source thread polls
  std::condition_variable persisted_changed_;
  PartitionPosition persisted_;
  std::unique_ptr<Consumer> consumer_;
};

}  // namespace tidemark::kafka
