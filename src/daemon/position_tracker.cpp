#include "daemon/position_tracker.hpp"

#include <stdexcept>
#include <string>

namespace tidemark {

PositionTracker::PositionTracker(std::optional<SourcePosition> start) { committed_.position = std::move(start); }

Ticket PositionTracker::begin(std::optional<SourcePosition> resume_after) {
  const std::lock_guard lock(mutex_);
  window_.push_back(Entry{false, std::move(resume_after)});
  return next_ticket_++;
}

void PositionTracker::acknowledge(Ticket ticket) {
  const std::lock_guard lock(mutex_);
  if (ticket < first_ticket_ || ticket >= next_ticket_)
    throw std::logic_error("position tracker: acknowledgement for unknown ticket " + std::to_string(ticket));
  Entry& entry = window_[ticket - first_ticket_];
  if (entry.acknowledged)
    throw std::logic_error("position tracker: ticket " + std::to_string(ticket) + " acknowledged twice");
  entry.acknowledged = true;
  // Slide the window over the acknowledged prefix; the last position in it becomes the committed one.
  bool moved = false;
  while (!window_.empty() && window_.front().acknowledged) {
    if (window_.front().resume_after) {
      committed_.position = std::move(window_.front().resume_after);
      moved = true;
    }
    window_.pop_front();
    ++first_ticket_;
  }
  if (moved) ++committed_.generation;
}

PositionTracker::Committed PositionTracker::committed() const {
  const std::lock_guard lock(mutex_);
  return committed_;
}

uint64_t PositionTracker::in_flight() const {
  const std::lock_guard lock(mutex_);
  return window_.size();
}

}  // namespace tidemark
