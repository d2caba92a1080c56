// BoundedQueue: item and byte bounds, timeouts that leave the item alone, batching, close, and ordering
// between two threads.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/bounded_queue.hpp"

namespace tidemark {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

BoundedQueue<std::string> string_queue(size_t max_items, size_t max_bytes) {
  return BoundedQueue<std::string>(max_items, max_bytes, [](const std::string& s) { return s.size(); });
}

TEST(BoundedQueue, ItemBound) {
  auto q = string_queue(3, 1'000'000);
  for (int i = 0; i < 3; ++i) {
    std::string item = "item" + std::to_string(i);
    ASSERT_TRUE(q.push_for(item, 0ms));
  }
  EXPECT_EQ(q.size(), 3u);
  std::string extra = "extra";
  EXPECT_FALSE(q.push_for(extra, 10ms));
  EXPECT_EQ(extra, "extra");  // untouched on timeout
  EXPECT_EQ(q.size(), 3u);
}

TEST(BoundedQueue, ByteBound) {
  auto q = string_queue(100, 10);
  std::string a = "aaaa", b = "bbbb", c = "ccc", d = "cc";
  ASSERT_TRUE(q.push_for(a, 0ms));  // 4
  ASSERT_TRUE(q.push_for(b, 0ms));  // 8
  EXPECT_FALSE(q.push_for(c, 0ms)); // 11 > 10
  EXPECT_EQ(c, "ccc");
  EXPECT_TRUE(q.push_for(d, 0ms));  // exactly 10
  EXPECT_EQ(q.size(), 3u);

  // Popping frees bytes.
  std::vector<std::string> out;
  ASSERT_EQ(q.pop_batch(out, 1, 0ms), 1u);
  EXPECT_EQ(out, std::vector<std::string>{"aaaa"});
  EXPECT_TRUE(q.push_for(c, 0ms));  // 4 + 2 + 3 = 9
}

TEST(BoundedQueue, PushForWaitsTheTimeoutAndLeavesAMoveOnlyItemIntact) {
  BoundedQueue<std::unique_ptr<int>> q(1, 1'000, [](const std::unique_ptr<int>&) { return size_t{1}; });
  auto first = std::make_unique<int>(1);
  ASSERT_TRUE(q.push_for(first, 0ms));
  EXPECT_EQ(first, nullptr);  // moved in
  auto second = std::make_unique<int>(2);
  const auto start = Clock::now();
  EXPECT_FALSE(q.push_for(second, 50ms));
  EXPECT_GE(Clock::now() - start, 45ms);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(*second, 2);
}

TEST(BoundedQueue, OversizedItemEntersAnEmptyQueueOnly) {
  auto q = string_queue(10, 8);
  std::string big(100, 'x');
  ASSERT_TRUE(q.push_for(big, 0ms));
  std::string small = "s";
  EXPECT_FALSE(q.push_for(small, 0ms));  // 101 bytes would exceed the bound
  std::vector<std::string> out;
  ASSERT_EQ(q.pop_batch(out, 10, 0ms), 1u);
  EXPECT_EQ(out[0].size(), 100u);
  std::string big2(50, 'y');
  EXPECT_TRUE(q.push_for(big2, 0ms));
}

TEST(BoundedQueue, PopBatch) {
  auto q = string_queue(100, 1'000'000);
  for (int i = 0; i < 5; ++i) {
    std::string s = std::to_string(i);
    ASSERT_TRUE(q.push_for(s, 0ms));
  }
  std::vector<std::string> out = {"already"};
  EXPECT_EQ(q.pop_batch(out, 3, 0ms), 3u);
  EXPECT_EQ(out, (std::vector<std::string>{"already", "0", "1", "2"}));  // appended, in order
  EXPECT_EQ(q.pop_batch(out, 0, 0ms), 0u);
  EXPECT_EQ(q.pop_batch(out, 10, 0ms), 2u);
  EXPECT_EQ(out.back(), "4");
  EXPECT_EQ(q.size(), 0u);

  const auto start = Clock::now();
  EXPECT_EQ(q.pop_batch(out, 10, 30ms), 0u);
  EXPECT_GE(Clock::now() - start, 25ms);
}

TEST(BoundedQueue, PopWakesABlockedProducer) {
  auto q = string_queue(1, 1'000'000);
  std::string first = "1";
  ASSERT_TRUE(q.push_for(first, 0ms));
  std::atomic<bool> pushed{false};
  std::thread producer([&] {
    std::string second = "2";
    pushed = q.push_for(second, 10s);
  });
  std::this_thread::sleep_for(30ms);
  EXPECT_FALSE(pushed.load());
  std::vector<std::string> out;
  ASSERT_EQ(q.pop_batch(out, 1, 0ms), 1u);
  producer.join();
  EXPECT_TRUE(pushed.load());
  ASSERT_EQ(q.pop_batch(out, 1, 1s), 1u);
  EXPECT_EQ(out, (std::vector<std::string>{"1", "2"}));
}

TEST(BoundedQueue, CloseWakesWaitingConsumerAndProducer) {
  auto empty = string_queue(1, 1'000'000);
  auto full = string_queue(1, 1'000'000);
  std::string x = "x";
  ASSERT_TRUE(full.push_for(x, 0ms));

  std::atomic<size_t> popped{99};
  std::atomic<bool> push_result{true};
  std::string blocked_item = "blocked";
  const auto start = Clock::now();
  std::thread consumer([&] {
    std::vector<std::string> out;
    popped = empty.pop_batch(out, 10, 10s);
  });
  std::thread producer([&] { push_result = full.push_for(blocked_item, 10s); });
  std::this_thread::sleep_for(50ms);
  empty.close();
  full.close();
  consumer.join();
  producer.join();
  EXPECT_LT(Clock::now() - start, 5s);
  EXPECT_EQ(popped.load(), 0u);
  EXPECT_FALSE(push_result.load());
  EXPECT_EQ(blocked_item, "blocked");

  // Closed: pushes fail at once, pops drain what is left.
  std::string late = "late";
  EXPECT_FALSE(full.push_for(late, 1s));
  EXPECT_EQ(late, "late");
  EXPECT_FALSE(full.closed_and_empty());
  std::vector<std::string> out;
  EXPECT_EQ(full.pop_batch(out, 10, 1s), 1u);
  EXPECT_EQ(out, std::vector<std::string>{"x"});
  EXPECT_TRUE(full.closed_and_empty());
  EXPECT_EQ(full.pop_batch(out, 10, 1s), 0u);
  EXPECT_TRUE(empty.closed_and_empty());
}

TEST(BoundedQueue, WakeEndsAWaitingPopOnce) {
  auto queue = string_queue(10, 1'000'000);
  std::atomic<size_t> popped{99};
  const auto start = Clock::now();
  std::thread consumer([&] {
    std::vector<std::string> out;
    popped = queue.pop_batch(out, 10, 10s);
  });
  std::this_thread::sleep_for(50ms);
  queue.wake();
  consumer.join();
  EXPECT_LT(Clock::now() - start, 5s);
  EXPECT_EQ(popped.load(), 0u);
  // A wake with nobody waiting ends the next wait, and only that one.
  queue.wake();
  std::vector<std::string> out;
  auto before = Clock::now();
  EXPECT_EQ(queue.pop_batch(out, 10, 10s), 0u);
  EXPECT_LT(Clock::now() - before, 5s);
  before = Clock::now();
  EXPECT_EQ(queue.pop_batch(out, 10, 100ms), 0u);
  EXPECT_GE(Clock::now() - before, 90ms);
  // Items still come out as before.
  std::string a = "a";
  ASSERT_TRUE(queue.push_for(a, 0ms));
  queue.wake();
  EXPECT_EQ(queue.pop_batch(out, 10, 10s), 1u);
  EXPECT_EQ(out, std::vector<std::string>{"a"});
}

TEST(BoundedQueue, TwoThreadsKeepOrder) {
  constexpr uint64_t kCount = 100'000;
  BoundedQueue<uint64_t> q(64, 64 * 8, [](const uint64_t&) { return sizeof(uint64_t); });
  std::thread producer([&] {
    for (uint64_t i = 0; i < kCount; ++i) {
      uint64_t item = i;
      while (!q.push_for(item, 100ms)) {
      }
    }
    q.close();
  });
  std::vector<uint64_t> received;
  received.reserve(kCount);
  std::vector<uint64_t> batch;
  while (!q.closed_and_empty()) {
    batch.clear();
    q.pop_batch(batch, 37, 100ms);
    received.insert(received.end(), batch.begin(), batch.end());
  }
  producer.join();
  ASSERT_EQ(received.size(), kCount);
  for (uint64_t i = 0; i < kCount; ++i) ASSERT_EQ(received[i], i) << "out of order at " << i;
}

TEST(BoundedQueue, RingGrowsAndWrapsInOrder) {
  // Pushes and pops interleaved so that the ring wraps, then fills it past its initial slots.
  BoundedQueue<uint64_t> q(100'000, 1'000'000, [](const uint64_t&) { return size_t{1}; });
  std::vector<uint64_t> out;
  uint64_t next_in = 0, next_out = 0;
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < 3 + round * 7; ++i) {
      uint64_t item = next_in++;
      ASSERT_TRUE(q.push_for(item, 0ms));
    }
    out.clear();
    q.pop_batch(out, 2 + round * 5, 0ms);
    for (const uint64_t v : out) ASSERT_EQ(v, next_out++);
  }
  out.clear();
  while (q.pop_batch(out, 100'000, 0ms) != 0) {
  }
  for (const uint64_t v : out) ASSERT_EQ(v, next_out++);
  EXPECT_EQ(next_out, next_in);
  EXPECT_EQ(q.size(), 0u);
}

TEST(BoundedQueue, RecycledItemsAreDestroyedByTheNextPush) {
  BoundedQueue<std::shared_ptr<int>> q(10, 1'000, [](const std::shared_ptr<int>&) { return size_t{1}; });
  auto watched = std::make_shared<int>(7);
  const std::weak_ptr<int> alive = watched;
  ASSERT_TRUE(q.push_for(watched, 0ms));
  std::vector<std::shared_ptr<int>> batch;
  ASSERT_EQ(q.pop_batch(batch, 10, 0ms), 1u);
  q.recycle(batch);
  EXPECT_TRUE(batch.empty());
  EXPECT_FALSE(alive.expired());  // held until a producer comes by
  // Only one batch waits: a second one, recycled before a push took the first, is destroyed at once.
  auto second = std::make_shared<int>(9);
  const std::weak_ptr<int> second_alive = second;
  std::vector<std::shared_ptr<int>> batch2{std::move(second)};
  q.recycle(batch2);
  EXPECT_TRUE(batch2.empty());
  EXPECT_TRUE(second_alive.expired());
  EXPECT_FALSE(alive.expired());
  auto other = std::make_shared<int>(8);
  ASSERT_TRUE(q.push_for(other, 0ms));
  EXPECT_TRUE(alive.expired());
  // Once closed, recycling destroys at once (no push will come).
  ASSERT_EQ(q.pop_batch(batch, 10, 0ms), 1u);
  const std::weak_ptr<int> last = batch.front();
  q.close();
  q.recycle(batch);
  EXPECT_TRUE(last.expired());
}

}  // namespace
}  // namespace tidemark
