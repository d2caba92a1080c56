#pragma once
// How many records a snapshot may keep waiting between the source and Kafka's acknowledgement. A log change
// enters the same producer queue behind them, so their number over the rate at which Kafka acknowledges is
// the latency a snapshot adds to the log. Two rules, evaluated once per period:
//   - the bound never exceeds what Kafka acknowledges in twice the target latency (the measured rate,
//     smoothed), so a full backlog drains within about the target;
//   - within that, additive increase and multiplicative decrease on the measured acknowledgement latency
//     (produce -> broker ack), as TCP's congestion window: one chunk more per period while the slowest
//     acknowledgement of the period stays within the target, half as many when it does not.
//
// Invariant: floor <= bound() <= ceiling. The floor is one chunk, so a snapshot always progresses.

#include <chrono>
#include <cstdint>
#include <optional>

namespace tidemark::snapshot {

// What the pipeline reports to the snapshot worker.
struct BacklogReading {
  uint64_t records = 0;       // queued or in flight, not yet acknowledged
  uint64_t acknowledged = 0;  // records acknowledged since the previous reading
  // The slowest acknowledgement since the previous reading; nullopt when there was none.
  std::optional<std::chrono::microseconds> max_ack_latency;
};

class BacklogBound {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kPeriod{50};

  BacklogBound(int64_t floor, int64_t ceiling, std::chrono::milliseconds target);

  // Takes a reading (any number per period) and returns the bound that applies now.
  int64_t update(const BacklogReading& reading, Clock::time_point now);
  int64_t bound() const { return bound_; }

  // New limits (a reloaded configuration, another chunk size); the bound is clamped into them.
  void set_limits(int64_t floor, int64_t ceiling, std::chrono::milliseconds target);

 private:
  int64_t floor_;
  int64_t ceiling_;
  std::chrono::microseconds target_;
  int64_t bound_;
  Clock::time_point period_start_{};
  std::chrono::microseconds period_max_{0};
  bool period_acked_ = false;
  bool period_waiting_ = false;  // records waited at some reading of the period
  uint64_t period_acks_ = 0;
  double ack_rate_ = 0;  // records acknowledged per second, smoothed over periods
};

// The rows of the next chunk when the chunk size adapts: the bound shared among the windows that may be open,
// within [min_rows, max_rows]. The rows held by open windows then stay within what Kafka drains in about the
// latency target, and a Kafka that keeps up gets fewer, larger chunks (each chunk costs the database a
// watermark commit and a query, the broker a request). Invariant: min_rows <= result <= max(min_rows, max_rows).
int64_t adaptive_chunk_rows(int64_t bound, int64_t windows, int64_t min_rows, int64_t max_rows);

}  // namespace tidemark::snapshot
