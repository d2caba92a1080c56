#pragma once
// The meeting point of the chunk worker (its own thread and connection) and the merge stage (in the
// publisher thread, where log order is fixed). It owns the snapshot state and the open watermark windows,
// behind one mutex; the worker waits on it for the merge stage to close them.
//
// Invariant: the open windows are the consecutive chunks of one table, in the order the worker wrote their
// watermarks (so their high watermarks reach the merge stage in that order); each window's chunk starts
// after the previous window's last key. Closing a window other than by emitting it therefore closes every
// later one too, and bumps restarts(): the worker then reads again from the last emitted key.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <unordered_set>
#include <vector>

#include "snapshot/snapshot_state.hpp"

namespace tidemark::snapshot {

// One chunk between its low and high watermark.
struct Window {
  uint64_t id = 0;
  TableId table;
  std::vector<std::string> key_names;  // the chunk key, matched by name in the log's events
  std::string low;                     // the watermark marks (fresh UUIDs)
  std::string high;
  // Filled by the merge stage:
  bool low_seen = false;
  bool poisoned = false;  // an event in the window on this table whose key could not be known: redo the chunk
  std::unordered_set<std::string> touched;  // encoded keys changed between the watermarks
  // Filled by the worker before it writes the high watermark:
  bool rows_ready = false;
  TableSchemaPtr schema;   // the layout the chunk was read with
  std::vector<Row> rows;
  KeyText last_key;
  bool table_finished = false;  // the chunk was the table's last (fewer rows than asked for)
};

class SnapshotCoordinator {
 public:
  explicit SnapshotCoordinator(SnapshotState initial);

  // ---- state ----
  SnapshotState state() const;
  // Applies `change` to the state under the lock (and wakes the worker).
  template <typename F>
  void update(F&& change) {
    {
      const std::lock_guard lock(mutex_);
      change(state_);
      stamp_.reset();
      ++generation_;
    }
    changed_.notify_all();
  }
  // The state serialized, shared by every position stamped until the next change.
  std::shared_ptr<const std::string> stamp();

  // ---- windows, worker side ----
  void open_window(Window window);  // after the windows already open
  // Hands the chunk over; must happen before the high watermark is written.
  void attach_rows(uint64_t window_id, TableSchemaPtr schema, std::vector<Row> rows, KeyText last_key, bool finished);
  // The chunk failed or is given up: every open window is closed, their marks ignored.
  void cancel_window(uint64_t window_id);
  enum class WaitResult { Closed, LowWatermarkMissing, Stopped };
  // Waits until the merge stage closed the window. LowWatermarkMissing when the low watermark has not come
  // through the log within `low_timeout` (the watermark table is not captured).
  WaitResult wait_closed(uint64_t window_id, std::stop_token stop, std::chrono::milliseconds low_timeout);
  // True while the window is open (not closed by the merge stage, a stop signal or cancel_window).
  bool window_open(uint64_t window_id) const;
  size_t windows_open() const;
  // Bumped whenever windows are closed without being emitted (a redo, a cancel, a stop signal).
  uint64_t restarts() const;
  // The worker registers how to cancel its query in flight (nullptr: none runs); cancel_query() calls it,
  // from the merge stage when a stop signal drops the table being read, or from shutdown.
  void set_query_canceller(std::function<void()> cancel);
  void cancel_query();
  // Sleeps until the state changes, `stop`, or `timeout`.
  void wait_for_change(std::stop_token stop, std::chrono::milliseconds timeout);

  // ---- windows, merge-stage side (publisher thread) ----
  // Runs `f(Window&)` on each open window, oldest first, until f returns true; returns whether one did.
  template <typename F>
  bool with_windows(F&& f) {
    const std::lock_guard lock(mutex_);
    for (Window& w : windows_)
      if (f(w)) return true;
    return false;
  }
  // The window's rows were emitted at its high watermark: it closes alone.
  void close_emitted(uint64_t window_id);
  // Closes the window and every later one without emitting them (a redo), or all windows (`0`: a stop
  // signal dropped their table).
  void close_from(uint64_t window_id);
  void close_all() { close_from(0); }

  // Set by the merge stage when a watermark row of this pipeline comes through the log: from then on the
  // watermark table is known to be captured and the stream to be live.
  void note_watermark_seen() { watermark_seen_ = true; }
  bool watermark_seen() const { return watermark_seen_; }

  // ---- memory ----
  // Published chunk rows go back to the worker, which allocated them: glibc frees far more cheaply on the
  // allocating thread (as with the event queue's recycling).
  void hand_back(std::vector<Row>&& rows);
  std::vector<Row> take_spent();

 private:
  mutable std::mutex mutex_;
  std::condition_variable_any changed_;
  SnapshotState state_;
  std::shared_ptr<const std::string> stamp_;
  std::deque<Window> windows_;
  uint64_t generation_ = 0;
  uint64_t restarts_ = 0;  // bumped on every change the worker may wait for
  std::vector<Row> spent_;
  std::atomic<bool> watermark_seen_{false};
  std::mutex canceller_mutex_;  // held while the canceller runs, so it cannot outlive its query's registration
  std::function<void()> canceller_;
};

}  // namespace tidemark::snapshot
