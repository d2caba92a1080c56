// GeneratorSource: the deterministic event sequence, its positions, and run() from a stored position.

#include <gtest/gtest.h>

#include <chrono>
#include <limits>
#include <map>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "source/generator/generator_source.hpp"

namespace tidemark {
namespace {

using namespace std::chrono_literals;

Config generator_config(int64_t tables, int64_t keys, int64_t transaction_size, int64_t total = 0) {
  Config c;
  c.name = "gen";
  c.source.type = "generator";
  c.source.generator.tables = tables;
  c.source.generator.keys = keys;
  c.source.generator.transaction_size = transaction_size;
  c.source.generator.total_events = total;
  c.source.generator.row_bytes = 10;
  c.source.generator.rate_per_second = 0;
  return c;
}

bool same_event(const ChangeEvent& a, const ChangeEvent& b) {
  return a.table->id == b.table->id && a.table->columns == b.table->columns &&
         a.table->key_columns == b.table->key_columns && a.op == b.op && a.before == b.before && a.after == b.after &&
         a.source.connector == b.source.connector && a.source.sequence == b.source.sequence;
}

int64_t int_at(const Row& row, size_t i) { return std::get<int64_t>(row.at(i).v); }

TEST(Generator, EventAtIsDeterministic) {
  const Config c = generator_config(3, 5, 2);
  const GeneratorSource a(c);
  const GeneratorSource b(c);
  for (uint64_t n = 0; n < 200; ++n) {
    ASSERT_TRUE(same_event(a.event_at(n), b.event_at(n))) << n;
    ASSERT_TRUE(same_event(a.event_at(n), a.event_at(n))) << n;
  }
  // Random access agrees with sequential access.
  EXPECT_TRUE(same_event(a.event_at(137), b.event_at(137)));
}

TEST(Generator, EventShape) {
  const GeneratorSource g(generator_config(3, 5, 1));
  const ChangeEvent e = g.event_at(7);  // table 7 % 3 = 1, key (7 / 3) % 5 = 2
  EXPECT_EQ(e.table->id, (TableId{"generator", "", "t1"}));
  EXPECT_EQ(e.table->columns, (std::vector<std::string>{"id", "version", "payload", "updated_at"}));
  EXPECT_EQ(e.table->key_columns, std::vector<size_t>{0});
  EXPECT_EQ(e.source.connector, ConnectorKind::Generator);
  EXPECT_EQ(e.source.sequence, 7u);
  ASSERT_TRUE(e.after.has_value());
  EXPECT_EQ(int_at(*e.after, 0), 2);
  EXPECT_EQ(int_at(*e.after, 1), 7);  // version = n
  EXPECT_EQ(std::get<std::string>(e.after->at(2).v), "abcdefghij");
  EXPECT_EQ(std::get<TimestampTz>(e.after->at(3).v).micros, 7000);
  EXPECT_FALSE(e.resume_position.has_value());  // event_at has no position; run() adds them
}

TEST(Generator, EachKeyCyclesCreateUpdateDeleteAndUpdatesSeeThePreviousImage) {
  constexpr int64_t kTables = 3, kKeys = 4;
  const GeneratorSource g(generator_config(kTables, kKeys, 1));
  std::map<std::pair<std::string, int64_t>, std::vector<Op>> ops;
  std::map<std::pair<std::string, int64_t>, std::optional<Row>> live;  // the row as a consumer sees it
  const uint64_t count = kTables * kKeys * 9;  // three full cycles of every key
  for (uint64_t n = 0; n < count; ++n) {
    const ChangeEvent e = g.event_at(n);
    ASSERT_EQ(e.table->id.table, "t" + std::to_string(n % kTables)) << n;
    const Row* image = e.key_image();
    ASSERT_NE(image, nullptr);
    const int64_t key = int_at(*image, 0);
    ASSERT_EQ(key, static_cast<int64_t>((n / kTables) % kKeys)) << n;
    const auto id = std::make_pair(e.table->id.table, key);
    ops[id].push_back(e.op);
    std::optional<Row>& current = live[id];
    switch (e.op) {
      case Op::Create:
        ASSERT_FALSE(current.has_value()) << "create of a live row at " << n;
        ASSERT_FALSE(e.before.has_value());
        current = e.after;
        break;
      case Op::Update:
        ASSERT_TRUE(current.has_value()) << "update of a missing row at " << n;
        ASSERT_TRUE(e.before.has_value());
        ASSERT_EQ(*e.before, *current) << "before image of update " << n;
        ASSERT_GT(int_at(*e.after, 1), int_at(*e.before, 1));
        current = e.after;
        break;
      case Op::Delete:
        ASSERT_TRUE(current.has_value()) << "delete of a missing row at " << n;
        ASSERT_EQ(*e.before, *current) << "before image of delete " << n;
        ASSERT_FALSE(e.after.has_value());
        current.reset();
        break;
      default:
        FAIL() << "unexpected op at " << n;
    }
    if (e.after) {
      ASSERT_EQ(int_at(*e.after, 1), static_cast<int64_t>(n));
    }
  }
  const std::vector<Op> cycle = {Op::Create, Op::Update, Op::Delete, Op::Create, Op::Update,
                                 Op::Delete, Op::Create, Op::Update, Op::Delete};
  ASSERT_EQ(ops.size(), static_cast<size_t>(kTables * kKeys));
  for (const auto& [id, seen] : ops) EXPECT_EQ(seen, cycle) << id.first << " key " << id.second;
}

TEST(Generator, PositionsRoundTrip) {
  for (const uint64_t n : {uint64_t{0}, uint64_t{1}, uint64_t{41}, uint64_t{1'000'000'007},
                           std::numeric_limits<uint64_t>::max() - 1}) {
    const SourcePosition p = GeneratorSource::position_after(n);
    EXPECT_EQ(p.token, "seq:" + std::to_string(n + 1));
    EXPECT_EQ(GeneratorSource::parse_position(p), n + 1);
  }
  EXPECT_EQ(GeneratorSource::parse_position(SourcePosition{"seq:0"}), 0u);
}

TEST(Generator, BadPositionTokensAreRejected) {
  for (const std::string bad : {"", "seq", "seq:", "seq:abc", "seq:12x", "seq: 1", "seq:-1", "seq:+1", "SEQ:1",
                                "lsn:1", "1", "seq:1 ", "seq:99999999999999999999999", "xseq:1"}) {
    EXPECT_EQ(GeneratorSource::parse_position(SourcePosition{bad}), std::nullopt) << "'" << bad << "'";
  }
}

TEST(Generator, RunFromAStoredPositionPlacesPositionsAtTransactionEnds) {
  constexpr int64_t kTotal = 14;
  GeneratorSource g(generator_config(2, 3, 3, kTotal));
  EventQueue queue(1000, size_t{1} << 30, [](const StreamItem& item) { return approximate_bytes(item); });
  SourceOutcome outcome;
  const std::optional<SourcePosition> start = SourcePosition{"seq:6"};  // committed after event 5
  std::jthread runner([&](std::stop_token stop) { outcome = g.run(start, queue, stop); });

  std::vector<StreamItem> items;
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (items.size() < static_cast<size_t>(kTotal - 6) && std::chrono::steady_clock::now() < deadline)
    queue.pop_batch(items, 100, 50ms);
  // It stops producing at total_events: nothing more arrives.
  std::this_thread::sleep_for(150ms);
  queue.pop_batch(items, 100, 0ms);
  runner.request_stop();
  runner.join();
  EXPECT_TRUE(outcome.ok) << outcome.error;

  ASSERT_EQ(items.size(), static_cast<size_t>(kTotal - 6));
  for (size_t i = 0; i < items.size(); ++i) {
    const uint64_t n = 6 + i;
    SCOPED_TRACE("event " + std::to_string(n));
    ASSERT_TRUE(std::holds_alternative<ChangeEvent>(items[i]));
    const auto& e = std::get<ChangeEvent>(items[i]);
    EXPECT_EQ(e.source.sequence, n);
    EXPECT_TRUE(same_event(e, g.event_at(n)));
    EXPECT_GT(e.source.commit_ts_ms, 0);
    // Transactions of three: events 6-8, 9-11, then 12-13 cut short by total_events.
    const bool transaction_end = n == 8 || n == 11 || n == 13;
    ASSERT_EQ(e.resume_position.has_value(), transaction_end);
    if (transaction_end) {
      EXPECT_EQ(e.resume_position->token, "seq:" + std::to_string(n + 1));
      EXPECT_EQ(GeneratorSource::parse_position(*e.resume_position), n + 1);
    }
  }
}

TEST(Generator, RunWithAForeignPositionFails) {
  GeneratorSource g(generator_config(1, 10, 1, 5));
  EventQueue queue(10, 1 << 20, [](const StreamItem& item) { return approximate_bytes(item); });
  std::stop_source stop;
  const SourceOutcome outcome = g.run(SourcePosition{"lsn:0/1"}, queue, stop.get_token());
  EXPECT_FALSE(outcome.ok);
  EXPECT_NE(outcome.error.find("lsn:0/1"), std::string::npos) << outcome.error;
  EXPECT_EQ(queue.size(), 0u);
}

TEST(Generator, RunStopsWhenAskedWhileTheQueueIsFull) {
  GeneratorSource g(generator_config(1, 10, 1));
  EventQueue queue(4, 1 << 20, [](const StreamItem& item) { return approximate_bytes(item); });
  SourceOutcome outcome;
  std::jthread runner([&](std::stop_token stop) { outcome = g.run(std::nullopt, queue, stop); });
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (queue.size() < 4 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(5ms);
  EXPECT_EQ(queue.size(), 4u);
  const auto start = std::chrono::steady_clock::now();
  runner.request_stop();
  runner.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_TRUE(outcome.ok);
  // From the beginning: events 0.. in order, every one a transaction end.
  std::vector<StreamItem> items;
  queue.pop_batch(items, 10, 0ms);
  ASSERT_EQ(items.size(), 4u);
  for (size_t i = 0; i < items.size(); ++i) {
    const auto& e = std::get<ChangeEvent>(items[i]);
    EXPECT_EQ(e.source.sequence, i);
    ASSERT_TRUE(e.resume_position.has_value());
    EXPECT_EQ(e.resume_position->token, "seq:" + std::to_string(i + 1));
  }
}

}  // namespace
}  // namespace tidemark
