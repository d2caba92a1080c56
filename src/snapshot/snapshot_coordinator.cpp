#include "snapshot/snapshot_coordinator.hpp"

#include <algorithm>
#include <utility>

namespace tidemark::snapshot {

SnapshotCoordinator::SnapshotCoordinator(SnapshotState initial) : state_(std::move(initial)) {}

SnapshotState SnapshotCoordinator::state() const {
  const std::lock_guard lock(mutex_);
  return state_;
}

std::shared_ptr<const std::string> SnapshotCoordinator::stamp() {
  const std::lock_guard lock(mutex_);
  if (!stamp_) stamp_ = std::make_shared<const std::string>(to_json(state_).dump());
  return stamp_;
}

void SnapshotCoordinator::open_window(Window window) {
  const std::lock_guard lock(mutex_);
  windows_.push_back(std::move(window));
}

void SnapshotCoordinator::attach_rows(uint64_t window_id, TableSchemaPtr schema, std::vector<Row> rows, KeyText last_key,
                                      bool finished) {
  const std::lock_guard lock(mutex_);
  for (Window& w : windows_) {
    if (w.id != window_id) continue;
    w.schema = std::move(schema);
    w.rows = std::move(rows);
    w.last_key = std::move(last_key);
    w.table_finished = finished;
    w.rows_ready = true;
  }
}

void SnapshotCoordinator::cancel_window(uint64_t window_id) {
  // The worker gives up its read-ahead with the window: the next chunk starts after the last emitted one.
  if (window_open(window_id)) close_all();
}

bool SnapshotCoordinator::window_open(uint64_t window_id) const {
  const std::lock_guard lock(mutex_);
  for (const Window& w : windows_)
    if (w.id == window_id) return true;
  return false;
}

size_t SnapshotCoordinator::windows_open() const {
  const std::lock_guard lock(mutex_);
  return windows_.size();
}

uint64_t SnapshotCoordinator::restarts() const {
  const std::lock_guard lock(mutex_);
  return restarts_;
}

void SnapshotCoordinator::set_query_canceller(std::function<void()> cancel) {
  const std::lock_guard lock(canceller_mutex_);
  canceller_ = std::move(cancel);
}

void SnapshotCoordinator::cancel_query() {
  const std::lock_guard lock(canceller_mutex_);
  if (canceller_) canceller_();
}

void SnapshotCoordinator::close_emitted(uint64_t window_id) {
  {
    const std::lock_guard lock(mutex_);
    for (auto it = windows_.begin(); it != windows_.end(); ++it) {
      if (it->id != window_id) continue;
      windows_.erase(it);
      break;
    }
    ++generation_;
  }
  changed_.notify_all();
}

void SnapshotCoordinator::close_from(uint64_t window_id) {
  {
    const std::lock_guard lock(mutex_);
    auto it = windows_.begin();
    while (it != windows_.end() && window_id != 0 && it->id != window_id) ++it;
    if (it != windows_.end()) {
      windows_.erase(it, windows_.end());
      ++restarts_;
    }
    ++generation_;
  }
  changed_.notify_all();
}

void SnapshotCoordinator::hand_back(std::vector<Row>&& rows) {
  const std::lock_guard lock(mutex_);
  if (spent_.empty()) {
    spent_ = std::move(rows);
  } else {
    for (auto& row : rows) spent_.push_back(std::move(row));
  }
}

std::vector<Row> SnapshotCoordinator::take_spent() {
  const std::lock_guard lock(mutex_);
  return std::exchange(spent_, {});
}

SnapshotCoordinator::WaitResult SnapshotCoordinator::wait_closed(uint64_t window_id, std::stop_token stop,
                                                                 std::chrono::milliseconds low_timeout) {
  std::unique_lock lock(mutex_);
  const auto low_deadline = std::chrono::steady_clock::now() + low_timeout;
  for (;;) {
    const auto it = std::find_if(windows_.begin(), windows_.end(), [&](const Window& w) { return w.id == window_id; });
    if (it == windows_.end()) return WaitResult::Closed;
    if (stop.stop_requested()) return WaitResult::Stopped;
    if (!it->low_seen && std::chrono::steady_clock::now() >= low_deadline) return WaitResult::LowWatermarkMissing;
    const uint64_t seen = generation_;
    changed_.wait_for(lock, stop, std::chrono::milliseconds(100), [&] { return generation_ != seen; });
  }
}

void SnapshotCoordinator::wait_for_change(std::stop_token stop, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  const uint64_t seen = generation_;
  changed_.wait_for(lock, stop, timeout, [&] { return generation_ != seen; });
}

}  // namespace tidemark::snapshot
