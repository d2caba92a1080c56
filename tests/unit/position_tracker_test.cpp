// PositionTracker under acknowledgements in any order: the committed position is always the last position
// inside the longest fully acknowledged prefix of tickets, computed here independently.

#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <numeric>
#include <optional>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/position_tracker.hpp"

namespace tidemark {
namespace {

std::optional<std::string> token(const std::optional<SourcePosition>& p) {
  if (!p) return std::nullopt;
  return p->token;
}

TEST(PositionTracker, StartsAtTheGivenPosition) {
  const PositionTracker empty;
  EXPECT_EQ(token(empty.committed().position), std::nullopt);
  EXPECT_EQ(empty.committed().generation, 0u);
  EXPECT_EQ(empty.in_flight(), 0u);

  const PositionTracker started(SourcePosition{"lsn:10"});
  EXPECT_EQ(token(started.committed().position), "lsn:10");
  EXPECT_EQ(started.committed().generation, 0u);
}

TEST(PositionTracker, TicketsAreConsecutive) {
  PositionTracker t;
  EXPECT_EQ(t.begin(std::nullopt), 0u);
  EXPECT_EQ(t.begin(SourcePosition{"a"}), 1u);
  EXPECT_EQ(t.begin(std::nullopt), 2u);
}

TEST(PositionTracker, RandomAcknowledgementOrders) {
  std::mt19937_64 rng(2024);
  for (int round = 0; round < 2000; ++round) {
    const size_t n = 1 + rng() % 40;
    const bool has_start = rng() % 2 == 0;
    const std::optional<std::string> start = has_start ? std::optional<std::string>("start") : std::nullopt;
    PositionTracker tracker(has_start ? std::optional<SourcePosition>(SourcePosition{*start}) : std::nullopt);

    // Random tickets: about half complete a transaction and carry a (strictly increasing) position.
    std::vector<std::optional<std::string>> positions(n);
    for (size_t i = 0; i < n; ++i) {
      if (rng() % 2 == 0) positions[i] = "pos-" + std::to_string(i) + "-" + std::to_string(rng() % 1000);
      ASSERT_EQ(tracker.begin(positions[i] ? std::optional<SourcePosition>(SourcePosition{*positions[i]}) : std::nullopt), i);
    }
    EXPECT_EQ(tracker.in_flight(), n);

    std::vector<Ticket> order(n);
    std::iota(order.begin(), order.end(), Ticket{0});
    std::shuffle(order.begin(), order.end(), rng);

    std::vector<bool> acked(n, false);
    std::optional<std::string> expected = start;
    uint64_t expected_generation = 0;
    size_t prefix = 0;  // tickets [0, prefix) are all acknowledged
    for (const Ticket ticket : order) {
      tracker.acknowledge(ticket);
      acked[ticket] = true;
      bool moved = false;
      while (prefix < n && acked[prefix]) {
        if (positions[prefix]) {
          expected = positions[prefix];
          moved = true;
        }
        ++prefix;
      }
      if (moved) ++expected_generation;
      const auto committed = tracker.committed();
      ASSERT_EQ(token(committed.position), expected) << "round " << round << " after ack " << ticket;
      ASSERT_EQ(committed.generation, expected_generation) << "round " << round << " after ack " << ticket;
      ASSERT_EQ(tracker.in_flight(), n - prefix) << "round " << round << " after ack " << ticket;
    }
    EXPECT_EQ(tracker.in_flight(), 0u);
  }
}

TEST(PositionTracker, BatchesCommitWhatTheirTicketsOneByOneWould) {
  // The sink applies one poll's delivery reports as a batch: same committed position and in-flight count
  // after every batch as a tracker given the same tickets one at a time; the generation moves once per
  // batch that moved the position.
  std::mt19937_64 rng(77);
  for (int round = 0; round < 500; ++round) {
    const size_t n = 1 + rng() % 60;
    PositionTracker batched;
    PositionTracker single;
    for (size_t i = 0; i < n; ++i) {
      const std::optional<SourcePosition> p =
          rng() % 3 == 0 ? std::optional<SourcePosition>(SourcePosition{"p" + std::to_string(i)}) : std::nullopt;
      batched.begin(p);
      single.begin(p);
    }
    std::vector<Ticket> order(n);
    std::iota(order.begin(), order.end(), Ticket{0});
    std::shuffle(order.begin(), order.end(), rng);
    for (size_t at = 0; at < n;) {
      const size_t size = std::min(n - at, 1 + static_cast<size_t>(rng() % 8));
      const std::span<const Ticket> batch(order.data() + at, size);
      const auto before = batched.committed();
      batched.acknowledge(batch);
      for (const Ticket t : batch) single.acknowledge(t);
      at += size;
      const auto after = batched.committed();
      ASSERT_EQ(token(after.position), token(single.committed().position)) << "round " << round;
      const bool moved = token(after.position) != token(before.position);
      ASSERT_EQ(after.generation, before.generation + (moved ? 1 : 0)) << "round " << round;
      ASSERT_EQ(batched.in_flight(), single.in_flight()) << "round " << round;
    }
    EXPECT_EQ(batched.in_flight(), 0u);
  }
}

TEST(PositionTracker, ABatchWithABrokenTicketChangesNothing) {
  PositionTracker t;
  for (int i = 0; i < 4; ++i) t.begin(SourcePosition{"p" + std::to_string(i)});
  t.acknowledge(2);
  const std::vector<Ticket> repeated{0, 1, 2};  // 2 was acknowledged before
  EXPECT_THROW(t.acknowledge(std::span<const Ticket>(repeated)), std::logic_error);
  const std::vector<Ticket> twice{0, 0};
  EXPECT_THROW(t.acknowledge(std::span<const Ticket>(twice)), std::logic_error);
  const std::vector<Ticket> unknown{1, 9};
  EXPECT_THROW(t.acknowledge(std::span<const Ticket>(unknown)), std::logic_error);
  EXPECT_EQ(token(t.committed().position), std::nullopt) << "nothing of the failed batches was applied";
  EXPECT_EQ(t.in_flight(), 4u);
  const std::vector<Ticket> rest{1, 0, 3};
  t.acknowledge(std::span<const Ticket>(rest));
  EXPECT_EQ(token(t.committed().position), "p3");
  EXPECT_EQ(t.committed().generation, 1u);
  EXPECT_EQ(t.in_flight(), 0u);
}

TEST(PositionTracker, InterleavedBeginsAndAcknowledgements) {
  // Tickets keep being registered while older ones are acknowledged, as in the daemon.
  std::mt19937_64 rng(77);
  PositionTracker tracker;
  std::vector<std::optional<std::string>> positions;
  std::vector<bool> acked;
  std::vector<Ticket> pending;
  size_t prefix = 0;
  std::optional<std::string> expected;
  uint64_t generation = 0;
  for (int step = 0; step < 20000; ++step) {
    if (pending.empty() || rng() % 3 != 0) {
      std::optional<std::string> p;
      if (rng() % 4 == 0) p = "p" + std::to_string(positions.size());
      const Ticket t = tracker.begin(p ? std::optional<SourcePosition>(SourcePosition{*p}) : std::nullopt);
      ASSERT_EQ(t, positions.size());
      positions.push_back(p);
      acked.push_back(false);
      pending.push_back(t);
    } else {
      const size_t i = rng() % pending.size();
      const Ticket t = pending[i];
      pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(i));
      tracker.acknowledge(t);
      acked[t] = true;
      bool moved = false;
      while (prefix < acked.size() && acked[prefix]) {
        if (positions[prefix]) {
          expected = positions[prefix];
          moved = true;
        }
        ++prefix;
      }
      if (moved) ++generation;
      ASSERT_EQ(token(tracker.committed().position), expected) << "step " << step;
      ASSERT_EQ(tracker.committed().generation, generation) << "step " << step;
      ASSERT_EQ(tracker.in_flight(), acked.size() - prefix) << "step " << step;
    }
  }
}

TEST(PositionTracker, GenerationMovesOnlyWithThePosition) {
  PositionTracker t(SourcePosition{"s"});
  const Ticket a = t.begin(std::nullopt);
  const Ticket b = t.begin(SourcePosition{"p1"});
  const Ticket c = t.begin(std::nullopt);
  t.acknowledge(a);  // prefix grows over a ticket without a position
  EXPECT_EQ(t.committed().generation, 0u);
  EXPECT_EQ(token(t.committed().position), "s");
  t.acknowledge(c);  // not a prefix yet
  EXPECT_EQ(t.committed().generation, 0u);
  t.acknowledge(b);  // b and c: the position moves once
  EXPECT_EQ(t.committed().generation, 1u);
  EXPECT_EQ(token(t.committed().position), "p1");
}

TEST(PositionTracker, SeveralPositionsCommittedByOneAcknowledgement) {
  PositionTracker t;
  const Ticket first = t.begin(SourcePosition{"p1"});
  t.begin(SourcePosition{"p2"});
  t.begin(SourcePosition{"p3"});
  t.acknowledge(2);
  t.acknowledge(1);
  EXPECT_EQ(token(t.committed().position), std::nullopt);
  t.acknowledge(first);
  EXPECT_EQ(token(t.committed().position), "p3");
  EXPECT_EQ(t.committed().generation, 1u);  // one move, however many positions it passed
}

TEST(PositionTracker, DoubleAcknowledgementThrows) {
  PositionTracker t;
  const Ticket a = t.begin(std::nullopt);
  const Ticket b = t.begin(std::nullopt);
  t.acknowledge(b);
  EXPECT_THROW(t.acknowledge(b), std::logic_error);  // still in the window, behind a
  t.acknowledge(a);
  EXPECT_THROW(t.acknowledge(a), std::logic_error);  // already slid out of the window
  EXPECT_EQ(t.in_flight(), 0u);
}

TEST(PositionTracker, UnknownTicketThrows) {
  PositionTracker t;
  EXPECT_THROW(t.acknowledge(0), std::logic_error);
  t.begin(std::nullopt);
  EXPECT_THROW(t.acknowledge(1), std::logic_error);
  EXPECT_THROW(t.acknowledge(~Ticket{0}), std::logic_error);
  EXPECT_EQ(t.in_flight(), 1u);
  t.acknowledge(0);
  EXPECT_EQ(t.in_flight(), 0u);
}

TEST(PositionTracker, InFlightCountsWaitingTickets) {
  PositionTracker t;
  for (int i = 0; i < 3; ++i) t.begin(std::nullopt);
  EXPECT_EQ(t.in_flight(), 3u);
  t.acknowledge(1);
  EXPECT_EQ(t.in_flight(), 3u);  // acknowledged but waiting behind 0
  t.acknowledge(0);
  EXPECT_EQ(t.in_flight(), 1u);
  t.acknowledge(2);
  EXPECT_EQ(t.in_flight(), 0u);
}

TEST(PositionTracker, AcknowledgementsFromAnotherThread) {
  // Registration on one thread, acknowledgements (delivery reports) on another.
  constexpr Ticket kCount = 50000;
  PositionTracker t;
  std::vector<Ticket> ready;
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  std::thread acker([&] {
    Ticket acked = 0;
    while (acked < kCount) {
      std::vector<Ticket> batch;
      {
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return !ready.empty() || done; });
        batch.swap(ready);
      }
      std::reverse(batch.begin(), batch.end());  // out of order within each batch
      for (const Ticket x : batch) t.acknowledge(x);
      acked += batch.size();
    }
  });
  for (Ticket i = 0; i < kCount; ++i) {
    const Ticket x = t.begin((i + 1) % 100 == 0 ? std::optional<SourcePosition>(SourcePosition{std::to_string(i)}) : std::nullopt);
    {
      const std::lock_guard lock(m);
      ready.push_back(x);
    }
    cv.notify_one();
  }
  {
    const std::lock_guard lock(m);
    done = true;
  }
  cv.notify_one();
  acker.join();
  EXPECT_EQ(t.in_flight(), 0u);
  EXPECT_EQ(token(t.committed().position), std::to_string(kCount - 1));
}

}  // namespace
}  // namespace tidemark
