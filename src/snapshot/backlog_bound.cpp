#include "snapshot/backlog_bound.hpp"

#include <algorithm>

namespace tidemark::snapshot {

BacklogBound::BacklogBound(int64_t floor, int64_t ceiling, std::chrono::milliseconds target)
    : floor_(1), ceiling_(1), target_(target), bound_(1) {
  set_limits(floor, ceiling, target);
  bound_ = floor_;  // start low: the latency is not known yet
}

void BacklogBound::set_limits(int64_t floor, int64_t ceiling, std::chrono::milliseconds target) {
  floor_ = std::max<int64_t>(1, floor);
  ceiling_ = std::max(floor_, ceiling);
  target_ = target;
  bound_ = std::clamp(bound_, floor_, ceiling_);
}

int64_t BacklogBound::update(const BacklogReading& reading, Clock::time_point now) {
  if (reading.max_ack_latency) {
    period_acked_ = true;
    period_max_ = std::max(period_max_, *reading.max_ack_latency);
  }
  period_waiting_ = period_waiting_ || reading.records > 0;
  period_acks_ += reading.acknowledged;
  if (period_start_ == Clock::time_point{}) period_start_ = now;
  if (now - period_start_ < kPeriod) return bound_;
  const double seconds = std::chrono::duration<double>(now - period_start_).count();
  ack_rate_ = 0.5 * ack_rate_ + 0.5 * (static_cast<double>(period_acks_) / seconds);
  // A period in which records waited but none was acknowledged was at least a period slow.
  const bool slow = period_acked_ ? period_max_ > target_ : period_waiting_ && kPeriod > target_;
  if (target_.count() == 0) {
    bound_ = ceiling_;  // no latency target: the configured bound alone
  } else if (slow) {
    bound_ = std::max(floor_, bound_ / 2);
  } else {
    bound_ = std::min(ceiling_, bound_ + floor_);
  }
  if (target_.count() > 0) {
    const double drains_in_target = 2 * ack_rate_ * std::chrono::duration<double>(target_).count();
    bound_ = std::clamp(std::min(bound_, static_cast<int64_t>(drains_in_target)), floor_, ceiling_);
  }
  period_start_ = now;
  period_acks_ = 0;
  period_max_ = std::chrono::microseconds{0};
  period_acked_ = false;
  period_waiting_ = false;
  return bound_;
}

int64_t adaptive_chunk_rows(int64_t bound, int64_t windows, int64_t min_rows, int64_t max_rows) {
  const int64_t low = std::max<int64_t>(1, min_rows);
  const int64_t high = std::max(low, max_rows);
  return std::clamp(bound / std::max<int64_t>(1, windows), low, high);
}

}  // namespace tidemark::snapshot
