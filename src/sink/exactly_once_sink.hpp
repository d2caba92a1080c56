#pragma once
// sink.kafka.exactly_once (docs/exactly-once.md): the stream as records in Kafka transactions. Each
// transaction holds whole source transactions and, as its last record, the pipeline state in the state
// topic: the position after them, with the snapshot state stamped on it. Its commit is what acknowledges
// its records, so the tracker (and with it PostgreSQL's flush LSN and the state file, now a cache) moves only
// with a commit, and the state read back with read_committed covers exactly the committed records.
//
// Invariants:
// - A Kafka transaction ends at a source-transaction end, with one exception: a log transaction too large
//   for one Kafka transaction (sink.kafka.transaction_max_bytes, or open past half of
//   transaction.timeout.ms) is split, and the state then says how many of its changes are committed
//   (PartialTransaction). After a restart the source replays that transaction from its start; the first
//   change must be the one recorded, and that many changes are passed over (published muted).
// - Snapshot rows emitted at a high watermark are never split from it (they leave the merge stage within
//   one call, bounded by the chunk size).

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "sink/change_sink.hpp"
#include "sink/kafka_sink.hpp"
#include "sink/pipeline_state_record.hpp"
#include "sink/publisher.hpp"

namespace tidemark {

struct ExactlyOnceOptions {
  std::string pipeline;
  std::string source_type;
  std::string state_topic;
  std::chrono::milliseconds interval{100};        // sink.kafka.transaction_interval_ms
  size_t max_bytes = 16 << 20;                    // sink.kafka.transaction_max_bytes
  std::chrono::milliseconds split_after{30'000};  // half of transaction.timeout.ms
  // The state read at start: its position and the rest (the snapshot state), and a split transaction's
  // committed part to pass over.
  std::optional<SourcePosition> start;
  nlohmann::json extensions = nlohmann::json::object();
  std::optional<PartialTransaction> partial;
};

class ExactlyOnceSink final : public ChangeSink {
 public:
  // `kafka` is transactional, its init_transactions done.
  ExactlyOnceSink(PublisherOptions publisher, std::unique_ptr<KafkaSink> kafka, PositionTracker& tracker,
                  ExactlyOnceOptions options);

  bool publish(const StreamItem& item) override;
  bool publish_heartbeat(int64_t now_ms) override;
  bool end_of_batch(bool source_ahead) override;
  bool awaiting_acknowledgements() const override { return publisher_.awaiting_acknowledgements(); }
  void poll(std::chrono::milliseconds timeout) override;
  bool flush(std::chrono::milliseconds timeout) override;
  bool waiting_for_room() const override { return kafka_->waiting_for_room(); }
  void abort() override { kafka_->abort(); }
  std::optional<std::string> fatal_error() const override;
  void attach_metrics(PipelineMetrics& metrics) override {
    kafka_->attach_metrics(metrics);
    publisher_.set_metrics(&metrics);
  }

  uint64_t commits() const { return commits_; }

 private:
  using Clock = std::chrono::steady_clock;
  // A change of the log transaction in progress (not its last): counted, and passed over while replaying
  // what a split already committed. False when the sink failed.
  bool publish_within_transaction(const ChangeEvent& event);
  // Commits the open Kafka transaction with the state as of now; `split`: in the middle of a log transaction.
  bool commit(bool split);
  // The open transaction has gathered enough (at a source-transaction end).
  bool commit_due() const;
  bool split_due() const;
  bool fail(std::string message);

  std::unique_ptr<KafkaSink> kafka_;
  Publisher publisher_;
  ExactlyOnceOptions options_;
  std::optional<TopicIndex> state_topic_;
  std::optional<SourcePosition> position_;  // the last position published: where a restart resumes
  // The log transaction in progress after position_ (none at a source-transaction end): its changes so far,
  // committed ones included, and the identity of its first.
  uint64_t changes_in_transaction_ = 0;
  std::string first_change_;
  size_t bytes_before_transaction_ = 0;  // of the open Kafka transaction when the source transaction began
  bool splittable_ = true;  // no snapshot row since position_
  std::optional<PartialTransaction> pass_over_;  // still to pass over after a restart
  bool records_since_commit_ = false;  // the open transaction holds records, not only positions
  bool source_ahead_ = false;  // the last batch was full: catching up, commits spaced out
  std::optional<std::string> fatal_;
  uint64_t commits_ = 0;
};

}  // namespace tidemark
