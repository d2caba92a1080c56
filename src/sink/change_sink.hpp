#pragma once
// Where the publish stage hands the stream, in log order: records for Kafka or stdout (RecordSink), or
// changes applied to a database (DatabaseSink). Either calls PositionTracker::acknowledge for a ticket
// when, and only when, what the ticket covers is durably held by the sink; nothing else advances positions.

#include <chrono>
#include <functional>
#include <cstdint>
#include <optional>
#include <string>

#include "core/pipeline_metrics.hpp"
#include "tidemark/change_event.hpp"

namespace tidemark {

class ChangeSink {
 public:
  virtual ~ChangeSink() = default;

  // Takes one stream item. False when the sink has failed (see fatal_error) or was aborted.
  virtual bool publish(const StreamItem& item) = 0;

  // A liveness record for consumers (Debezium's heartbeat topic); sinks without one ignore it.
  virtual bool publish_heartbeat(int64_t now_ms) = 0;

  // The end of what the queue held at one look: a sink that gathers changes (a database transaction) hands
  // over what it holds when that ends a source transaction. `source_ahead`: the batch was full, more is
  // waiting (the source is ahead, catching up). False when the sink failed.
  virtual bool end_of_batch(bool source_ahead) {
    (void)source_ahead;
    return true;
  }

  // Something handed over is not acknowledged yet (or waits behind something that is not).
  virtual bool awaiting_acknowledgements() const = 0;

  // Serves acknowledgements for up to `timeout`.
  virtual void poll(std::chrono::milliseconds timeout) = 0;

  // Called (from another thread) when acknowledgements are waiting to be served by poll(): the caller of
  // poll() may be waiting for something else. Sinks that never have any leave it unused.
  virtual void set_wakeup(std::function<void()> wake) { (void)wake; }

  // Hands over everything gathered and waits until all of it is acknowledged; false on timeout or failure.
  virtual bool flush(std::chrono::milliseconds timeout) = 0;

  // True while the sink waits for room or for its destination to come back (backpressure, an outage being
  // retried): the publisher is healthy, only waiting, so the systemd watchdog must not kill it for that.
  virtual bool waiting_for_room() const { return false; }

  // Makes a blocked call return false (used when shutting down against a destination that is down).
  virtual void abort() = 0;

  // The first fatal error, with its cause and fix; once set, the daemon stops intake and exits non-zero.
  virtual std::optional<std::string> fatal_error() const = 0;

  // Where the sink counts changes, acknowledgements and errors; set before the first item.
  virtual void attach_metrics(PipelineMetrics& metrics) { (void)metrics; }
};

}  // namespace tidemark
