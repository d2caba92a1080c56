#pragma once
// A queue between two threads, bounded in items and in bytes. A full queue blocks the producer; that is
// how Kafka's backpressure reaches the source. Producers that must keep a connection alive while blocked
// use push_for() and do their housekeeping between attempts.
//
// Per item it allocates nothing: the items sit in a ring of slots that grows (up to the item bound) and is
// reused. The consumer may hand items it is done with back through recycle(); the producer destroys them at
// its next push, so that their memory is freed by the thread that allocated it (glibc serves a thread's own
// frees from its per-thread cache; frees from another thread go through the arena, and dominated profiles).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
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
    const bool collect = take_recycled();
    const bool room = not_full_.wait_for(lock, timeout, [&] { return closed_ || has_room(bytes); });
    const bool pushed = room && !closed_;
    if (pushed) {
      if (count_ == slots_.size()) grow();
      slots_[(head_ + count_) & (slots_.size() - 1)].emplace(Entry{std::move(item), bytes});
      ++count_;
      bytes_ += bytes;
    }
    lock.unlock();
    if (pushed) not_empty_.notify_one();
    if (collect) {
      dead_.clear();  // outside the lock: the consumer is not held up by the frees
      collecting_.store(false, std::memory_order_release);
    }
    return pushed;
  }

  // Moves up to `max` items into `out` (appending), waiting up to `timeout` for the first one.
  // Returns the number moved; 0 on timeout or when closed and drained.
  // wake() ends the wait early, with nothing moved.
  size_t pop_batch(std::vector<T>& out, size_t max, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    not_empty_.wait_for(lock, timeout, [&] { return closed_ || count_ != 0 || woken_; });
    woken_ = false;
    size_t moved = 0;
    while (count_ != 0 && moved < max) {
      std::optional<Entry>& slot = slots_[head_];
      bytes_ -= slot->bytes;  // measured once, at push: sizing walks every value
      out.push_back(std::move(slot->item));
      slot.reset();
      head_ = (head_ + 1) & (slots_.size() - 1);
      --count_;
      ++moved;
    }
    lock.unlock();
    if (moved) not_full_.notify_all();
    return moved;
  }

  // Takes the items of `spent` (which is left empty) to be destroyed by the producer at its next push.
  // At most one batch waits so (bounding the memory held for it): when the producer has not yet taken the
  // previous one, or the queue is closed, the items are destroyed here. Destroying them on the consumer's
  // side is just as correct, only slower.
  void recycle(std::vector<T>& spent) {
    if (spent.empty()) return;
    {
      const std::lock_guard lock(mutex_);
      if (!closed_ && graveyard_.empty()) {
        graveyard_.swap(spent);  // `spent` gets the graveyard's (empty) buffer back, with its capacity
        return;
      }
    }
    spent.clear();
  }

  // Ends a pop_batch wait (now, or the next one): the consumer has other work (acknowledgements to serve).
  void wake() {
    {
      const std::lock_guard lock(mutex_);
      woken_ = true;
    }
    not_empty_.notify_all();
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
    return closed_ && count_ == 0;
  }

  size_t size() const {
    const std::lock_guard lock(mutex_);
    return count_;
  }

  size_t bytes() const {  // the approximate bytes of the items in the queue
    const std::lock_guard lock(mutex_);
    return bytes_;
  }

 private:
  struct Entry {
    T item;
    size_t bytes;
  };

  bool has_room(size_t bytes) const {
    if (count_ == 0) return true;
    return count_ < max_items_ && bytes_ + bytes <= max_bytes_;
  }

  // Under the lock: moves the recycled items to dead_ for this producer to destroy once it has unlocked.
  // collecting_ keeps a second producer off dead_ meanwhile.
  bool take_recycled() {
    if (graveyard_.empty() || collecting_.load(std::memory_order_acquire)) return false;
    collecting_.store(true, std::memory_order_relaxed);
    dead_.swap(graveyard_);
    return true;
  }

  // Under the lock, with the ring full: doubles it (a power of two), unrolling the items to its start.
  void grow() {
    std::vector<std::optional<Entry>> bigger(slots_.empty() ? kInitialSlots : slots_.size() * 2);
    for (size_t i = 0; i < count_; ++i) {
      std::optional<Entry>& slot = slots_[(head_ + i) & (slots_.size() - 1)];
      bigger[i].emplace(std::move(*slot));
      slot.reset();
    }
    slots_.swap(bigger);
    head_ = 0;
  }

  static constexpr size_t kInitialSlots = 64;

  const size_t max_items_;
  const size_t max_bytes_;
  const Sizer sizer_;
  mutable std::mutex mutex_;
  std::condition_variable not_full_;
  std::condition_variable not_empty_;
  std::vector<std::optional<Entry>> slots_;  // a ring: count_ items from head_, size a power of two
  size_t head_ = 0;
  size_t count_ = 0;
  size_t bytes_ = 0;
  bool closed_ = false;
  bool woken_ = false;
  std::vector<T> graveyard_;               // recycled by the consumer, not yet taken by a producer
  std::vector<T> dead_;                    // taken by the producer that set collecting_
  std::atomic<bool> collecting_{false};
};

}  // namespace tidemark
