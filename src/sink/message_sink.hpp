#pragma once
// Where serialized records go. The sink calls PositionTracker::acknowledge for a ticket when, and only
// when, the record is durably accepted (for Kafka: the delivery report); nothing else advances positions.

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/pipeline_metrics.hpp"
#include "core/position_tracker.hpp"

namespace tidemark {

using TopicIndex = size_t;

class MessageSink {
 public:
  virtual ~MessageSink() = default;

  // Prepares a topic for sending; an error (for example a topic that does not exist) is fatal.
  virtual std::optional<TopicIndex> resolve_topic(const std::string& name) = 0;

  // Hands one record over. Blocks while the sink is full (backpressure), serving acknowledgements
  // meanwhile. Returns false when the sink has failed or abort() was called; the record is then not sent.
  virtual bool send(TopicIndex topic, std::optional<std::string_view> key, std::optional<std::string_view> value,
                    Ticket ticket) = 0;

  // A ticket without a record (a position alone): acknowledged at once, or, in a Kafka transaction, when
  // the transaction that holds it commits.
  virtual void pass(Ticket ticket) = 0;

  // Serves acknowledgements for up to `timeout`.
  virtual void poll(std::chrono::milliseconds timeout) = 0;

  // Called (from another thread) when acknowledgements are waiting to be served by poll().
  virtual void set_wakeup(std::function<void()> wake) { (void)wake; }

  // Waits until everything sent is acknowledged; false on timeout or failure.
  virtual bool flush(std::chrono::milliseconds timeout) = 0;

  // True while send() waits for room (backpressure from a slow or unreachable broker): the publisher is
  // healthy, only waiting, so the systemd watchdog must not kill it for that.
  virtual bool waiting_for_room() const { return false; }

  // Makes a blocked send() return false (used when shutting down against a broker that is down).
  virtual void abort() = 0;

  // The first fatal error, with its cause and fix; once set, the daemon stops intake and exits non-zero.
  virtual std::optional<std::string> fatal_error() const = 0;

  // Where the sink counts acknowledgements, their latency and its errors; set before the first send.
  virtual void attach_metrics(PipelineMetrics& metrics) { (void)metrics; }
};

}  // namespace tidemark
