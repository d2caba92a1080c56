#include "core/position_tracker.hpp"

#include <stdexcept>
#include <string>

namespace tidemark {

PositionTracker::PositionTracker(std::optional<SourcePosition> start) { committed_.position = std::move(start); }

Ticket PositionTracker::begin(std::optional<SourcePosition> resume_after, int64_t source_commit_ts_ms) {
  const std::lock_guard lock(mutex_);
  acknowledged_.push_back(false);
  if (resume_after) positions_.push_back(PendingPosition{next_ticket_, std::move(*resume_after), source_commit_ts_ms});
  return next_ticket_++;
}

void PositionTracker::check_unacknowledged(Ticket ticket) const {
  if (ticket < first_ticket_ || ticket >= next_ticket_)
    throw std::logic_error("position tracker: acknowledgement for unknown ticket " + std::to_string(ticket));
  if (acknowledged_[ticket - first_ticket_])
    throw std::logic_error("position tracker: ticket " + std::to_string(ticket) + " acknowledged twice");
}

void PositionTracker::acknowledge(Ticket ticket) {
  const std::lock_guard lock(mutex_);
  check_unacknowledged(ticket);
  acknowledged_[ticket - first_ticket_] = true;
  if (ticket == first_ticket_) slide_window();  // otherwise the acknowledged prefix did not grow
}

void PositionTracker::acknowledge(std::span<const Ticket> tickets) {
  const std::lock_guard lock(mutex_);
  for (size_t i = 0; i < tickets.size(); ++i) {
    try {
      check_unacknowledged(tickets[i]);
      acknowledged_[tickets[i] - first_ticket_] = true;
    } catch (...) {
      for (size_t j = 0; j < i; ++j) acknowledged_[tickets[j] - first_ticket_] = false;  // as it was
      throw;
    }
  }
  if (!acknowledged_.empty() && acknowledged_.front()) slide_window();
}

void PositionTracker::slide_window() {
  // The last position in the acknowledged prefix becomes the committed one.
  while (!acknowledged_.empty() && acknowledged_.front()) {
    acknowledged_.pop_front();
    ++first_ticket_;
  }
  bool moved = false;
  while (!positions_.empty() && positions_.front().ticket < first_ticket_) {
    committed_.position = std::move(positions_.front().position);
    if (observer_) observer_(positions_.front().source_commit_ts_ms);
    positions_.pop_front();
    moved = true;
  }
  if (moved) ++committed_.generation;
}

PositionTracker::Committed PositionTracker::committed() const {
  const std::lock_guard lock(mutex_);
  return committed_;
}

uint64_t PositionTracker::in_flight() const {
  const std::lock_guard lock(mutex_);
  return acknowledged_.size();
}

}  // namespace tidemark
