#pragma once
// Knows, for every record handed to Kafka, whether it has been acknowledged, and from that the committed
// source position: the last resumable position below which every record is acknowledged. Delivery
// reports arrive in any order across partitions; the committed position only ever moves forward along
// log order, so a restart from it never skips an unacknowledged record.

#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <utility>

#include "tidemark/change_event.hpp"

namespace tidemark {

using Ticket = uint64_t;

class PositionTracker {
 public:
  explicit PositionTracker(std::optional<SourcePosition> start = std::nullopt);

  // Registers the next record in log order. `resume_after` is set when the record completes a transaction
  // (or is a checkpoint): once it and everything before it are acknowledged, that position is committed.
  Ticket begin(std::optional<SourcePosition> resume_after);

  // Marks one record acknowledged by Kafka. Unknown or repeated tickets are a broken invariant.
  void acknowledge(Ticket ticket);

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
  std::deque<std::pair<Ticket, SourcePosition>> positions_;
  Ticket first_ticket_ = 0;
  Ticket next_ticket_ = 0;
  Committed committed_;
};

}  // namespace tidemark
