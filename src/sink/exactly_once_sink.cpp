#include "sink/exactly_once_sink.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>

namespace tidemark {

namespace {
// A transaction that holds positions only (a quiet source's checkpoints, a snapshot state change) commits
// at most this often: it only keeps the state topic current.
constexpr std::chrono::milliseconds kPositionsOnlyInterval{1000};
// While the source is ahead (catching up), transactions commit this many intervals apart, or at
// sink.kafka.transaction_max_bytes.
constexpr int kCatchUpFactor = 10;
}  // namespace

ExactlyOnceSink::ExactlyOnceSink(PublisherOptions publisher, std::unique_ptr<KafkaSink> kafka, PositionTracker& tracker,
                                 ExactlyOnceOptions options)
    : kafka_(std::move(kafka)),
      publisher_(std::move(publisher), *kafka_, tracker),
      options_(std::move(options)),
      position_(options_.start),
      pass_over_(options_.partial) {
  state_topic_ = kafka_->resolve_state_topic(options_.state_topic);
  if (pass_over_)
    spdlog::info("exactly-once: the transaction after {} was split; its first {} changes are committed and are passed over "
                 "when it is replayed",
                 position_ ? position_->token : "the start", pass_over_->changes);
}

std::optional<std::string> ExactlyOnceSink::fatal_error() const {
  if (auto error = kafka_->fatal_error()) return error;
  return fatal_;
}

bool ExactlyOnceSink::fail(std::string message) {
  if (!fatal_) {
    spdlog::error("{}", message);
    fatal_ = std::move(message);
  }
  return false;
}

bool ExactlyOnceSink::publish(const StreamItem& item) {
  if (fatal_ || !state_topic_) return false;
  const auto* event = std::get_if<ChangeEvent>(&item);
  if (event && (!event->resume_position || pass_over_)) {
    if (!publish_within_transaction(*event)) return false;
    if (!event->resume_position) return !split_due() || commit(true);
  } else if (!publisher_.publish(item)) {
    return false;
  } else if (event) {
    records_since_commit_ = true;
  }
  // A source-transaction end: the state may move here.
  position_ = event ? *event->resume_position : std::get<Checkpoint>(item).position;
  changes_in_transaction_ = 0;
  splittable_ = true;
  return !commit_due() || commit(false);
}

bool ExactlyOnceSink::publish_within_transaction(const ChangeEvent& event) {
  const bool log_change = event.snapshot == SnapshotMarker::No;
  if (!log_change) splittable_ = false;
  if (log_change && changes_in_transaction_ == 0) {
    first_change_ = change_identity(event);
    bytes_before_transaction_ = kafka_->transaction_bytes();
  }
  if (pass_over_ && log_change) {
    if (changes_in_transaction_ == 0 && first_change_ != pass_over_->first)
      return fail("exactly-once: the state topic says the transaction after " + (position_ ? position_->token : "the start") +
                  " was split with its first change at " + pass_over_->first + ", but the source replayed " + first_change_ +
                  " first; cannot tell which changes are committed. Its changes would be duplicated or lost, so the "
                  "daemon stops: restore the source's log, or delete this pipeline's state from the state topic to "
                  "start over");
    if (event.resume_position)
      return fail("exactly-once: the transaction after " + (position_ ? position_->token : "the start") + " ended after " +
                  std::to_string(changes_in_transaction_ + 1) + " changes on replay, but the state topic says " +
                  std::to_string(pass_over_->changes) + " of its changes are committed; stopping");
    publisher_.set_muted(true);
    const bool ok = publisher_.publish(event);
    publisher_.set_muted(false);
    if (!ok) return false;
    if (++changes_in_transaction_ == pass_over_->changes) {
      spdlog::info("exactly-once: passed over the {} changes of the split transaction that were committed", pass_over_->changes);
      pass_over_.reset();
    }
    return true;
  }
  if (!publisher_.publish(event)) return false;
  records_since_commit_ = true;
  if (log_change) ++changes_in_transaction_;
  return true;
}

bool ExactlyOnceSink::commit_due() const {
  if (!kafka_->transaction_open()) return false;
  if (kafka_->transaction_bytes() >= options_.max_bytes) return true;
  auto interval = records_since_commit_ ? options_.interval : std::max(options_.interval, kPositionsOnlyInterval);
  // While the source is ahead, each record waits behind the backlog anyway; a commit stops production
  // (its records drain, then the markers are written), so fewer of them keep the throughput of
  // at-least-once delivery. At light load the interval alone decides the latency.
  if (source_ahead_) interval = std::min(interval * kCatchUpFactor, std::max(interval, options_.split_after));
  return Clock::now() - kafka_->transaction_began() >= interval;
}

bool ExactlyOnceSink::split_due() const {
  // Before the first position a replay would not start where this one did.
  if (!splittable_ || changes_in_transaction_ == 0 || !position_ || !kafka_->transaction_open()) return false;
  // The source transaction's own records, not the whole Kafka transaction's: smaller ones before it have
  // made the Kafka transaction large, and it commits at this one's end.
  return kafka_->transaction_bytes() - bytes_before_transaction_ >= options_.max_bytes ||
         Clock::now() - kafka_->transaction_began() >= options_.split_after;
}

bool ExactlyOnceSink::commit(bool split) {
  PipelineStateRecord state{options_.pipeline, options_.source_type, position_, options_.extensions, std::nullopt};
  if (position_ && position_->snapshot_state) {
    auto snapshot_state = nlohmann::json::parse(*position_->snapshot_state, nullptr, false);
    if (!snapshot_state.is_discarded()) options_.extensions["snapshot"] = std::move(snapshot_state);
    state.extensions = options_.extensions;
  }
  if (split) {
    state.partial = PartialTransaction{changes_in_transaction_, first_change_};
    spdlog::info("exactly-once: a source transaction is larger than one Kafka transaction allows "
                 "(sink.kafka.transaction_max_bytes, transaction.timeout.ms); committing its first {} changes",
                 changes_in_transaction_);
  }
  if (!kafka_->commit_transaction(*state_topic_, options_.pipeline, encode_state_record(state))) return false;
  records_since_commit_ = false;
  bytes_before_transaction_ = 0;
  ++commits_;
  return true;
}

bool ExactlyOnceSink::publish_heartbeat(int64_t now_ms) {
  // Not inside a source transaction: what follows a split's state must be exactly the replayed changes.
  if (changes_in_transaction_ > 0 || pass_over_ || fatal_ || !state_topic_) return !fatal_ && state_topic_;
  if (!publisher_.publish_heartbeat(now_ms)) return false;
  records_since_commit_ = true;
  return true;
}

bool ExactlyOnceSink::end_of_batch(bool source_ahead) {
  if (fatal_ || !state_topic_) return false;
  source_ahead_ = source_ahead;
  if (changes_in_transaction_ == 0 && commit_due()) return commit(false);
  return true;
}

void ExactlyOnceSink::poll(std::chrono::milliseconds timeout) { kafka_->poll(timeout); }

bool ExactlyOnceSink::flush(std::chrono::milliseconds timeout) {
  if (!fatal_ && state_topic_ && kafka_->transaction_open() && !kafka_->fatal_error()) {
    // Stopping: what is open commits now (a transaction cut off midway as a split); snapshot rows cut off
    // from their position are left to the abort, and come again after the restart.
    if (changes_in_transaction_ == 0 && splittable_) {
      if (!commit(false)) return false;
    } else if (splittable_ && position_ && !pass_over_) {
      if (!commit(true)) return false;
    }
  }
  return kafka_->flush(timeout) && !fatal_;
}

}  // namespace tidemark
