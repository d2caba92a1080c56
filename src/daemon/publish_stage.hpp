#pragma once
// The publisher thread: takes batches off the event queue, drops the peer's echoes (two-way sync), passes
// each item through the snapshot merge stage (when snapshotting) to the sink, polls the sink and beats for the watchdog. When intake has
// stopped and the queue is drained, it flushes the sink (bounded) and is done.

#include <atomic>
#include <chrono>
#include <thread>

#include "core/bounded_queue.hpp"
#include "sink/change_sink.hpp"
#include "snapshot/snapshot_merger.hpp"
#include "source/echo_filter.hpp"
#include "source/source.hpp"

namespace tidemark {

class PublishStage {
 public:
  using Clock = std::chrono::steady_clock;

  // `echo` (two-way sync) and `merger` (snapshots) may be null. All must outlive the stage. A heartbeat
  // record goes out every `heartbeat_interval` (0: never).
  PublishStage(EventQueue& queue, EchoFilter* echo, snapshot::SnapshotMerger* merger, ChangeSink& sink,
               std::chrono::milliseconds flush_timeout, std::chrono::milliseconds heartbeat_interval);
  ~PublishStage();
  PublishStage(const PublishStage&) = delete;
  PublishStage& operator=(const PublishStage&) = delete;

  void start();
  void join();

  bool done() const { return done_; }        // the loop ended and the flush returned
  bool failed() const { return failed_; }    // the sink refused a record: the daemon stops
  bool flushed() const { return flushed_; }  // everything handed over was acknowledged in time
  Clock::time_point last_beat() const { return Clock::time_point(Clock::duration(heartbeat_.load())); }

 private:
  void loop();
  void beat() { heartbeat_ = Clock::now().time_since_epoch().count(); }

  EventQueue& queue_;
  EchoFilter* echo_;
  snapshot::SnapshotMerger* merger_;
  ChangeSink& sink_;
  std::chrono::milliseconds flush_timeout_;
  std::chrono::milliseconds heartbeat_interval_;
  std::jthread thread_;
  std::atomic<Clock::rep> heartbeat_{0};
  std::atomic<bool> failed_{false};
  std::atomic<bool> flushed_{false};
  std::atomic<bool> done_{false};
};

}  // namespace tidemark
