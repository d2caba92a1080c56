#pragma once
// source.type kafka: reads topics of change records (change_record.hpp) and hands them to a database sink,
// partition by partition in offset order. Every record is a transaction of its own; the position after
// it is the next offset of every partition read so far, so the target's position table holds, in the same
// transaction as the rows, exactly where to go on (exactly-once apply). On start the consumer is assigned
// every partition of the topics at those offsets (first start: source.kafka.start; a partition the stored
// offsets do not name is read from its beginning), and partitions added to the topics later are assigned
// from their beginning within kPartitionRefresh. The applied offsets are also committed to the consumer
// group (source.kafka.group_id) once persisted, for lag monitoring.

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "config/config.hpp"
#include "source/source.hpp"

namespace tidemark::kafka {

class KafkaSource final : public Source {
 public:
  explicit KafkaSource(const Config& config);
  ~KafkaSource() override;

  std::vector<std::string> check() override;
  SourceOutcome run(const std::optional<SourcePosition>& start, EventQueue& out, std::stop_token stop) override;
  void on_position_persisted(const SourcePosition& position) override;

 private:
  struct Consumer;
  // Assigns the topics' partitions that `assigned` ("topic/partition") does not hold yet, from their start.
  void add_new_partitions(std::set<std::string>& assigned);
  const Config config_;
  std::mutex mutex_;  // the persister's thread commits offsets while the source thread polls
  std::unique_ptr<Consumer> consumer_;
};

// Offsets as a position token and back: {"topic/partition": next offset, ...}.
std::string offsets_token(const std::map<std::string, int64_t>& next_offsets);
std::optional<std::map<std::string, int64_t>> parse_offsets_token(const std::string& token);

}  // namespace tidemark::kafka
