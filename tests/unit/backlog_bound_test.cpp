// The snapshot's backlog bound: additive increase while acknowledgements stay within the target,
// multiplicative decrease when they do not, never more than Kafka acknowledges in twice the target, never
// outside [one chunk, max_backlog_events].

#include <gtest/gtest.h>

#include "snapshot/backlog_bound.hpp"

namespace tidemark::snapshot {
namespace {

using namespace std::chrono_literals;
using Clock = BacklogBound::Clock;

struct Periods {
  BacklogBound bound{1000, 10000, 15ms};
  Clock::time_point now = Clock::now();
  // One whole period: `records` waiting, the slowest acknowledgement, and `acks` acknowledged in it (by
  // default so many that the rate does not bound the backlog); returns the bound after it.
  int64_t period(uint64_t records, std::optional<std::chrono::microseconds> latency, uint64_t acks = 1'000'000) {
    bound.update(BacklogReading{records, acks, latency}, now);
    now += BacklogBound::kPeriod;
    return bound.update(BacklogReading{records, 0, std::nullopt}, now);
  }
};

TEST(BacklogBound, StartsAtOneChunkAndGrowsByAChunkPerFastPeriodUpToTheCeiling) {
  Periods p;
  EXPECT_EQ(p.bound.bound(), 1000);
  EXPECT_EQ(p.period(500, 3ms), 2000);
  EXPECT_EQ(p.period(500, 15ms), 3000) << "the target itself is within";
  for (int i = 0; i < 20; ++i) p.period(500, 1ms);
  EXPECT_EQ(p.bound.bound(), 10000);
}

TEST(BacklogBound, HalvesWhenTheSlowestAcknowledgementIsOverTheTargetButNeverBelowOneChunk) {
  Periods p;
  for (int i = 0; i < 9; ++i) p.period(500, 1ms);
  ASSERT_EQ(p.bound.bound(), 10000);
  EXPECT_EQ(p.period(9000, 40ms), 5000);
  EXPECT_EQ(p.period(9000, 16ms), 2500);
  EXPECT_EQ(p.period(9000, 200ms), 1250);
  EXPECT_EQ(p.period(9000, 200ms), 1000);
  EXPECT_EQ(p.period(9000, 200ms), 1000);
}

TEST(BacklogBound, APeriodWithRecordsWaitingAndNoAcknowledgementIsSlow) {
  Periods p;
  for (int i = 0; i < 3; ++i) p.period(500, 1ms);
  ASSERT_EQ(p.bound.bound(), 4000);
  EXPECT_EQ(p.period(3000, std::nullopt, 0), 2000);
}

TEST(BacklogBound, MovesOncePerPeriodWhateverTheNumberOfReadings) {
  Periods p;
  for (int i = 0; i < 100; ++i) p.bound.update({10, 1'000'000, 1ms}, p.now);
  EXPECT_EQ(p.bound.bound(), 1000);
  EXPECT_EQ(p.period(10, 1ms), 2000);
}

TEST(BacklogBound, IdleItStaysAtOneChunk) {
  Periods p;
  for (int i = 0; i < 5; ++i) p.period(0, std::nullopt, 0);
  EXPECT_EQ(p.bound.bound(), 1000) << "nothing acknowledged: nothing known to drain";
}

TEST(BacklogBound, NeverMoreThanKafkaAcknowledgesInTwiceTheTarget) {
  Periods p;  // target 15 ms
  for (int i = 0; i < 9; ++i) p.period(500, 1ms);
  ASSERT_EQ(p.bound.bound(), 10000);
  // 5000 acknowledgements in 50 ms: 100k/s, 1500 in 15 ms; the rate is smoothed over periods.
  for (int i = 0; i < 20; ++i) p.period(9000, 1ms, 5000);
  EXPECT_EQ(p.bound.bound(), 3000) << "2 x 100k/s x 15 ms, although every acknowledgement was fast";
  for (int i = 0; i < 20; ++i) p.period(900, 1ms, 100);  // 2000/s: 60 records drain in twice the target
  EXPECT_EQ(p.bound.bound(), 1000) << "one chunk is the floor";
}

TEST(BacklogBound, WithoutATargetTheCeilingApplies) {
  BacklogBound bound(1000, 7000, 0ms);
  const auto t0 = Clock::now();
  bound.update({9000, 0, 900ms}, t0);
  EXPECT_EQ(bound.update({9000, 0, 900ms}, t0 + BacklogBound::kPeriod), 7000);
}

TEST(BacklogBound, NewLimitsClampTheBound) {
  Periods p;
  for (int i = 0; i < 9; ++i) p.period(500, 1ms);
  p.bound.set_limits(1000, 4000, 15ms);
  EXPECT_EQ(p.bound.bound(), 4000);
  p.bound.set_limits(8000, 20000, 15ms);
  EXPECT_EQ(p.bound.bound(), 8000) << "one chunk is the floor";
}

TEST(AdaptiveChunkRows, SharesTheBoundAmongTheWindowsWithinTheLimits) {
  EXPECT_EQ(adaptive_chunk_rows(8000, 4, 1024, 4096), 2000);
  EXPECT_EQ(adaptive_chunk_rows(1024, 4, 1024, 4096), 1024) << "never below the configured chunk";
  EXPECT_EQ(adaptive_chunk_rows(20000, 4, 1024, 4096), 4096) << "never above the largest";
  EXPECT_EQ(adaptive_chunk_rows(20000, 1, 1024, 4096), 4096);
  EXPECT_EQ(adaptive_chunk_rows(3000, 0, 1024, 4096), 3000) << "no windows counts as one";
  EXPECT_EQ(adaptive_chunk_rows(20000, 4, 8192, 4096), 8192) << "a largest below the configured chunk: fixed chunks";
}

TEST(AdaptiveChunkRows, FollowsTheBoundAsKafkaSpeedsUpAndSlowsDown) {
  Periods p;  // chunk 1000, bound at most 10000, target 15 ms
  const auto rows = [&] { return adaptive_chunk_rows(p.bound.bound(), 4, 1000, 4000); };
  EXPECT_EQ(rows(), 1000) << "the latency is not known yet";
  for (int i = 0; i < 9; ++i) p.period(500, 1ms);
  EXPECT_EQ(rows(), 2500) << "a bound of 10000 over four windows";
  p.period(9000, 40ms);
  EXPECT_EQ(rows(), 1250) << "a slow acknowledgement halves the bound, and the chunk with it";
  p.period(9000, 40ms);
  p.period(9000, 40ms);
  EXPECT_EQ(rows(), 1000);
}

}  // namespace
}  // namespace tidemark::snapshot
