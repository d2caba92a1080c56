#pragma once
// Knows, for every record handed to Kafka, whether it has been acknowledged, and from that the committed
// source position: the last resumable position below which every record is acknowledged. Delivery
// reports arrive in any order across partitions; the committed position only ever moves forward along
// log order, so a restart from it never skips an unacknowledged record.

#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <utility>

#include "tidemark/change_event.hpp"

namespace tidemark {

using Ticket = uint64_t;

class PositionTracker {
 public:
  explicit PositionTracker(std::optional<SourcePosition> start = std::nullopt);

  // Registers the next record in log order. `resume_after` is set when the record completes a transaction
  // (or is a checkpoint): once it and everything before it are acknowledged, that position is committed.
  // `source_commit_ts_ms` is that transaction's commit time in the source (0: unknown), for the observer.
  Ticket begin(std::optional<SourcePosition> resume_after, int64_t source_commit_ts_ms = 0);

  // Called (under the tracker's lock, so it must be quick) with the source commit time of every position
  // that becomes committed. Set before any record is registered.
  void set_commit_observer(std::function<void(int64_t source_commit_ts_ms)> observer) { observer_ = std::move(observer); }

  // Marks one record acknowledged by Kafka. Unknown or repeated tickets are a broken invariant.
  void acknowledge(Ticket ticket);
  // The same for a batch (one delivery poll's reports), under one lock. Checks every ticket before marking
  // any, so a broken invariant leaves the tracker as it was.
  void acknowledge(std::span<const Ticket> tickets);

  // The committed position and a counter that changes whenever it moves.
  struct Committed {
    std::optional<SourcePosition> position;
    uint64_t generation = 0;
  };
  Committed committed() const;

  uint64_t in_flight() const;  // registered, not yet acknowledged, or waiting behind one that is not

 private:
  mutable std::mutex mutex_;
  // acknowledged_[i] is ticket first_ticket_ + i: one byte per record in flight (up to librdkafka's queue of
  // 100k messages), so that acknowledging touches little memory. The few tickets that carry a resume
  // position (one per transaction) are kept beside, in ticket order.
  std::deque<bool> acknowledged_;
  struct PendingPosition {
    Ticket ticket;
    SourcePosition position;
    int64_t source_commit_ts_ms;
  };
  std::deque<PendingPosition> positions_;
  std::function<void(int64_t)> observer_;
  Ticket first_ticket_ = 0;
  Ticket next_ticket_ = 0;
  Committed committed_;

  void check_unacknowledged(Ticket ticket) const;  // throws on an unknown or repeated ticket
  void slide_window();                              // past the acknowledged prefix, committing its positions
};

}  // namespace tidemark
