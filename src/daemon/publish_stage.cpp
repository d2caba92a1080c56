#include "daemon/publish_stage.hpp"

#include <vector>

#include "core/thread_name.hpp"

namespace tidemark {

namespace {

constexpr std::chrono::milliseconds kPopWait{100};
// While records await their acknowledgement, delivery reports are served within this (they run inside
// sink_.poll): a quiet source must not add the idle wait to every transaction's commit -> ack latency.
constexpr std::chrono::milliseconds kPopWaitInFlight{2};
constexpr size_t kPopBatch = 1024;

}  // namespace

PublishStage::PublishStage(EventQueue& queue, EchoFilter* echo, snapshot::SnapshotMerger* merger, ChangeSink& sink,
                           std::chrono::milliseconds flush_timeout, std::chrono::milliseconds heartbeat_interval)
    : queue_(queue),
      echo_(echo),
      merger_(merger),
      sink_(sink),
      flush_timeout_(flush_timeout),
      heartbeat_interval_(heartbeat_interval) {}

PublishStage::~PublishStage() {
  join();
  sink_.set_wakeup(nullptr);  // the sink may outlive this stage and its queue
}

void PublishStage::start() {
  beat();
  sink_.set_wakeup([this] { queue_.wake(); });
  thread_ = std::jthread([this] {
    name_this_thread("tm-publish");
    loop();
  });
}

void PublishStage::join() {
  if (thread_.joinable()) thread_.join();
}

void PublishStage::loop() {
  std::vector<StreamItem> batch;
  const snapshot::SnapshotMerger::Emit emit = [this](const StreamItem& item) { return sink_.publish(item); };
  auto next_heartbeat = Clock::now() + heartbeat_interval_;
  for (;;) {
    batch.reserve(kPopBatch);  // recycle() may hand back a buffer without capacity
    queue_.pop_batch(batch, kPopBatch, sink_.awaiting_acknowledgements() ? kPopWaitInFlight : kPopWait);
    const bool source_ahead = batch.size() == kPopBatch;
    for (auto& item : batch) {
      if (echo_ && !echo_->pass(item)) continue;
      const bool published = merger_ ? merger_->process(item, emit) : sink_.publish(item);
      if (!published) {
        failed_ = true;
        break;
      }
    }
    if (merger_ && !failed_ && !merger_->flush_state(emit)) failed_ = true;
    if (!failed_ && !sink_.end_of_batch(source_ahead)) failed_ = true;
    if (heartbeat_interval_.count() > 0 && !failed_ && Clock::now() >= next_heartbeat) {
      const auto wall = std::chrono::system_clock::now().time_since_epoch();
      if (!sink_.publish_heartbeat(std::chrono::duration_cast<std::chrono::milliseconds>(wall).count())) failed_ = true;
      next_heartbeat = Clock::now() + heartbeat_interval_;
    }
    // The source thread frees the published events (its own allocations) at its next push: much cheaper
    // than freeing them here. Leaves `batch` empty.
    queue_.recycle(batch);
    sink_.poll(std::chrono::milliseconds(0));
    beat();
    if (failed_ || queue_.closed_and_empty()) break;
  }
  // Intake has stopped: wait for the sink to acknowledge what was handed over (bounded).
  flushed_ = sink_.flush(flush_timeout_);
  done_ = true;
}

}  // namespace tidemark
