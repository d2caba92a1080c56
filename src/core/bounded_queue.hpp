#pragma once
// A queue between two threads, bounded in items and in bytes. A full queue blocks the producer; that is
// how Kafka's backpressure reaches the source. Producers that must keep a connection alive while blocked
// use push_for() and do their housekeeping between attempts.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <vector>

namespace tidemark {

template <typename T>
class BoundedQueue {
 public:
  using Sizer = std::function<size_t(const T&)>;

  BoundedQueue(size_t max_items, size_t max_bytes, Sizer sizer)
      : max_items_(max_items), max_bytes_(max_bytes), sizer_(std::move(sizer)) {}

  // Waits up to `timeout` for room. On timeout or close returns false and leaves `item` untouched.
  // An item larger than max_bytes is still accepted into an empty queue, so it cannot block forever.
  bool push_for(T& item, std::chrono::milliseconds timeout) {
    const size_t bytes = sizer_(item);
    std::unique_lock lock(mutex_);
    const bool room = not_full_.wait_for(lock, timeout, [&] { return closed_ || has_room(bytes); });
    if (!room || closed_) return false;
    bytes_ += bytes;
    items_.push_back(Entry{std::move(item), bytes});
    lock.unlock();
    not_empty_.notify_one();
    return true;
  }

  // Moves up to `max` items into `out` (appending), waiting up to `timeout` for the first one.
  // Returns the number moved; 0 on timeout or when closed and drained.
  size_t pop_batch(std::vector<T>& out, size_t max, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    not_empty_.wait_for(lock, timeout, [&] { return closed_ || !items_.empty(); });
    size_t moved = 0;
    while (!items_.empty() && moved < max) {
      bytes_ -= items_.front().bytes;  // measured once, at push: sizing walks every value
      out.push_back(std::move(items_.front().item));
      items_.pop_front();
      ++moved;
    }
    lock.unlock();
    if (moved) not_full_.notify_all();
    return moved;
  }

  // Wakes every waiter; pushes fail from now on, pops drain what is left.
  void close() {
    {
      const std::lock_guard lock(mutex_);
      closed_ = true;
    }
    not_full_.notify_all();
    not_empty_.notify_all();
  }

  bool closed_and_empty() const {
    const std::lock_guard lock(mutex_);
    return closed_ && items_.empty();
  }

  size_t size() const {
    const std::lock_guard lock(mutex_);
    return items_.size();
  }

 private:
  bool has_room(size_t bytes) const {
    if (items_.empty()) return true;
    return items_.size() < max_items_ && bytes_ + bytes <= max_bytes_;
  }

  const size_t max_items_;
  const size_t max_bytes_;
  const Sizer sizer_;
  mutable std::mutex mutex_;
  std::condition_variable not_full_;
  std::condition_variable not_empty_;
  struct Entry {
    T item;
    size_t bytes;
  };
  std::deque<Entry> items_;
  size_t bytes_ = 0;
  bool closed_ = false;
};

}  // namespace tidemark
