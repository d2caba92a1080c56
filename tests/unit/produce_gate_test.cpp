// ProduceGate: what it lets through to librdkafka and when. A topic's records leave in the order they came,
// each once; a topic with records in flight lets a burst go only after they are all delivered, in releases
// of about its budget; single records on a quiet topic go at once; a full librdkafka queue keeps the rest.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "sink/produce_gate.hpp"

namespace tidemark {
namespace {

using Clock = ProduceGate::Clock;
using Handed = ProduceGate::Handed;

struct Sent {
  TopicIndex topic;
  std::optional<std::string> key;
  std::optional<std::string> value;
  Ticket ticket;
};

// librdkafka as the gate sees it: takes records until `room` runs out.
struct FakeProducer {
  std::vector<Sent> sent;
  size_t room = SIZE_MAX;
  bool fail = false;
  ProduceGate::HandOver hand_over() {
    return [this](const ProduceGate::Record& r) {
      if (fail) return Handed::Failed;
      if (room == 0) return Handed::Full;
      --room;
      sent.push_back(Sent{r.topic, r.key ? std::optional<std::string>(*r.key) : std::nullopt,
                          r.value ? std::optional<std::string>(*r.value) : std::nullopt, r.ticket});
      return Handed::Queued;
    };
  }
};

// Records went out as tickets 1, 2, 3, ...
void expect_tickets_in_order(const FakeProducer& producer) {
  for (size_t i = 0; i < producer.sent.size(); ++i) EXPECT_EQ(producer.sent[i].ticket, i + 1) << "record " << i;
}

ProduceGate::Record record(TopicIndex topic, Ticket ticket, const std::string& value) {
  return ProduceGate::Record{topic, std::string_view("k"), std::string_view(value), ticket};
}

TEST(ProduceGate, HeldRecordsGoWhenNothingIsInFlight) {
  ProduceGate gate(1'000'000);
  FakeProducer producer;
  const auto now = Clock::now();
  const std::string v1 = "one", v2 = "two";
  gate.hold(record(0, 1, v1), now);
  gate.hold(ProduceGate::Record{0, std::nullopt, std::nullopt, 2}, now);  // a tombstone without a key
  gate.hold(record(0, 3, v2), now);
  EXPECT_EQ(gate.held_records(), 3u);
  ASSERT_TRUE(gate.release(producer.hand_over(), now));
  ASSERT_EQ(producer.sent.size(), 3u);
  EXPECT_EQ(producer.sent[0].value, "one");
  EXPECT_EQ(producer.sent[0].key, "k");
  EXPECT_FALSE(producer.sent[1].key.has_value());
  EXPECT_FALSE(producer.sent[1].value.has_value());
  EXPECT_EQ(producer.sent[2].value, "two");
  EXPECT_EQ(gate.held_records(), 0u);
  EXPECT_EQ(gate.held_bytes(), 0u);
  EXPECT_EQ(gate.in_flight(0), 3u);
  EXPECT_EQ(gate.in_flight_bytes(), 8u);
  gate.delivered(0, 1, 4);
  EXPECT_EQ(gate.in_flight_bytes(), 4u);
}

TEST(ProduceGate, SingleRecordsOnAQuietTopicGoAtOnce) {
  ProduceGate gate(1'000'000);
  FakeProducer producer;
  const auto now = Clock::now();
  const std::string v = "x";
  for (Ticket t = 1; t <= 4; ++t) {  // each released while the earlier ones are still in flight
    gate.hold(record(0, t, v), now);
    ASSERT_TRUE(gate.release(producer.hand_over(), now));
    EXPECT_EQ(producer.sent.size(), t);
  }
  EXPECT_EQ(gate.in_flight(0), 4u);
  // The fifth would reach librdkafka's in-flight cap: it waits until the topic has drained.
  gate.hold(record(0, 5, v), now);
  ASSERT_TRUE(gate.release(producer.hand_over(), now));
  EXPECT_EQ(producer.sent.size(), 4u);
  for (Ticket t = 1; t <= 3; ++t) gate.delivered(0, t, 2);
  ASSERT_TRUE(gate.release(producer.hand_over(), now));
  EXPECT_EQ(producer.sent.size(), 5u) << "one in flight and one held stay under the cap";
}

TEST(ProduceGate, ABurstWaitsForTheTopicToDrainAndGoesWhole) {
  ProduceGate gate(1'000'000);
  FakeProducer producer;
  const auto now = Clock::now();
  const std::string v = "row";
  for (Ticket t = 1; t <= 100; ++t) gate.hold(record(0, t, v), now);
  ASSERT_TRUE(gate.release(producer.hand_over(), now));
  EXPECT_EQ(producer.sent.size(), 100u);
  for (Ticket t = 101; t <= 300; ++t) gate.hold(record(0, t, v), now);
  ASSERT_TRUE(gate.release(producer.hand_over(), now));
  EXPECT_EQ(producer.sent.size(), 100u) << "held while the first burst is in flight";
  for (Ticket t = 1; t <= 99; ++t) gate.delivered(0, t, 2);
  ASSERT_TRUE(gate.release(producer.hand_over(), now));
  EXPECT_EQ(producer.sent.size(), 100u) << "one record still in flight";
  gate.delivered(0, 100, 2);
  ASSERT_TRUE(gate.release(producer.hand_over(), now));
  EXPECT_EQ(producer.sent.size(), 300u);
  expect_tickets_in_order(producer);
}

TEST(ProduceGate, TopicsWaitIndependently) {
  ProduceGate gate(1'000'000);
  FakeProducer producer;
  const auto now = Clock::now();
  const std::string v = "v";
  for (Ticket t = 1; t <= 10; ++t) gate.hold(record(0, t, v), now);
  ASSERT_TRUE(gate.release(producer.hand_over(), now));
  for (Ticket t = 11; t <= 20; ++t) gate.hold(record(0, t, v), now);  // topic 0 busy: held
  gate.hold(record(1, 21, v), now);                                    // topic 1 quiet: goes
  ASSERT_TRUE(gate.release(producer.hand_over(), now));
  ASSERT_EQ(producer.sent.size(), 11u);
  EXPECT_EQ(producer.sent.back().ticket, 21u);
  EXPECT_EQ(gate.held_records(), 10u);
}

TEST(ProduceGate, ReleasesAreBoundedByTheBudget) {
  ProduceGate gate(1'000'000);
  gate.set_budget(0, 100);
  FakeProducer producer;
  const auto now = Clock::now();
  const std::string v(29, 'x');  // 30 bytes with the key
  for (Ticket t = 1; t <= 10; ++t) gate.hold(record(0, t, v), now);
  ASSERT_TRUE(gate.release(producer.hand_over(), now));
  EXPECT_EQ(producer.sent.size(), 4u) << "records go until the budget is reached";
  for (Ticket t = 1; t <= 4; ++t) gate.delivered(0, t, 2);
  ASSERT_TRUE(gate.release(producer.hand_over(), now));
  EXPECT_EQ(producer.sent.size(), 8u);
  // A record larger than the budget still goes, alone.
  const std::string big(500, 'b');
  for (Ticket t = 5; t <= 8; ++t) gate.delivered(0, t, 2);
  ASSERT_TRUE(gate.release(producer.hand_over(), now));
  gate.hold(record(0, 11, big), now);
  for (Ticket t = 9; t <= 10; ++t) gate.delivered(0, t, 2);
  ASSERT_TRUE(gate.release(producer.hand_over(), now));
  ASSERT_EQ(producer.sent.size(), 11u);
  EXPECT_EQ(producer.sent.back().value->size(), 500u);
}

TEST(ProduceGate, AFullQueueKeepsTheRestInOrder) {
  ProduceGate gate(1'000'000);
  FakeProducer producer;
  producer.room = 3;
  const auto now = Clock::now();
  const std::string v = "v";
  for (Ticket t = 1; t <= 8; ++t) gate.hold(record(0, t, v), now);
  ASSERT_TRUE(gate.release(producer.hand_over(), now));
  EXPECT_EQ(producer.sent.size(), 3u);
  EXPECT_EQ(gate.held_records(), 5u);
  for (Ticket t = 1; t <= 3; ++t) gate.delivered(0, t, 2);
  producer.room = SIZE_MAX;
  gate.hold(record(0, 9, v), now);
  ASSERT_TRUE(gate.release(producer.hand_over(), now));
  ASSERT_EQ(producer.sent.size(), 9u);
  expect_tickets_in_order(producer);
}

TEST(ProduceGate, AFailedHandOverIsReportedAndNothingIsLostFromTheGate) {
  ProduceGate gate(1'000'000);
  FakeProducer producer;
  producer.fail = true;
  const auto now = Clock::now();
  const std::string v = "v";
  gate.hold(record(0, 1, v), now);
  EXPECT_FALSE(gate.release(producer.hand_over(), now));
  EXPECT_EQ(gate.held_records(), 1u);
  EXPECT_EQ(gate.in_flight(0), 0u);
}

TEST(ProduceGate, ForceLetsEverythingGo) {
  ProduceGate gate(1'000'000);
  gate.set_budget(0, 10);
  FakeProducer producer;
  const auto now = Clock::now();
  const std::string v(50, 'x');
  for (Ticket t = 1; t <= 20; ++t) gate.hold(record(0, t, v), now);
  ASSERT_TRUE(gate.release(producer.hand_over(), now));
  EXPECT_EQ(producer.sent.size(), 1u);
  ASSERT_TRUE(gate.release(producer.hand_over(), now, true));
  EXPECT_EQ(producer.sent.size(), 20u);
}

TEST(ProduceGate, DeliveriesReportTheWaitOfTheirRelease) {
  ProduceGate gate(1'000'000);
  FakeProducer producer;
  const auto t0 = Clock::now();
  const std::string v = "v";
  for (Ticket t = 1; t <= 10; ++t) gate.hold(record(0, t, v), t0);
  ASSERT_TRUE(gate.release(producer.hand_over(), t0 + std::chrono::milliseconds(3)));
  for (Ticket t = 11; t <= 20; ++t) gate.hold(record(0, t, v), t0 + std::chrono::milliseconds(4));
  for (Ticket t = 1; t <= 10; ++t) EXPECT_EQ(gate.delivered(0, t, 2), std::chrono::milliseconds(3));
  ASSERT_TRUE(gate.release(producer.hand_over(), t0 + std::chrono::milliseconds(11)));
  // Delivered out of order across partitions: each still finds its release.
  for (Ticket t = 20; t >= 11; --t) EXPECT_EQ(gate.delivered(0, t, 2), std::chrono::milliseconds(7));
  EXPECT_EQ(gate.in_flight(0), 0u);
}

// A partition for the tests: the key's first byte modulo the count.
ProduceGate::PartitionOf first_byte() {
  return [](TopicIndex, std::string_view key, uint32_t partitions) {
    return static_cast<uint32_t>(static_cast<unsigned char>(key.front())) % partitions;
  };
}

TEST(ProduceGate, AReleaseGoesPartitionByPartitionInTheOrderHeld) {
  ProduceGate gate(1'000'000, first_byte());
  gate.set_partitions(0, 3);
  FakeProducer producer;
  const auto now = Clock::now();
  const std::string keys[] = {"a", "b", "c"};  // partitions 1, 2, 0
  const std::string v = "v";
  for (Ticket t = 1; t <= 9; ++t) gate.hold(ProduceGate::Record{0, keys[(t - 1) % 3], v, t}, now);
  gate.hold(ProduceGate::Record{0, std::nullopt, v, 10}, now);  // keyless: after the keyed ones
  ASSERT_TRUE(gate.release(producer.hand_over(), now));
  std::vector<Ticket> order;
  for (const Sent& s : producer.sent) order.push_back(s.ticket);
  EXPECT_EQ(order, (std::vector<Ticket>{3, 6, 9, 1, 4, 7, 2, 5, 8, 10}));
  // A topic without a partition count keeps the order held.
  for (Ticket t = 11; t <= 13; ++t) gate.hold(ProduceGate::Record{1, keys[(t - 1) % 3], v, t}, now);
  ASSERT_TRUE(gate.release(producer.hand_over(), now));
  EXPECT_EQ(producer.sent[10].ticket, 11u);
  EXPECT_EQ(producer.sent[12].ticket, 13u);
}

TEST(ProduceGate, AReleaseCutShortByAFullQueueGoesOnBeforeLaterRecords) {
  ProduceGate gate(1'000'000, first_byte());
  gate.set_partitions(0, 2);
  FakeProducer producer;
  producer.room = 3;
  const auto now = Clock::now();
  const std::string keys[] = {"a", "b"};  // partitions 1, 0
  const std::string v = "v";
  for (Ticket t = 1; t <= 6; ++t) gate.hold(ProduceGate::Record{0, keys[(t - 1) % 2], v, t}, now);
  ASSERT_TRUE(gate.release(producer.hand_over(), now));
  ASSERT_EQ(producer.sent.size(), 3u);  // 2, 4, 6
  EXPECT_EQ(gate.held_records(), 3u);
  for (Ticket t : {2, 4, 6}) gate.delivered(0, t, 2);
  producer.room = SIZE_MAX;
  gate.hold(ProduceGate::Record{0, keys[0], v, 7}, now);
  gate.hold(ProduceGate::Record{0, keys[1], v, 8}, now);
  ASSERT_TRUE(gate.release(producer.hand_over(), now));
  std::vector<Ticket> order;
  for (const Sent& s : producer.sent) order.push_back(s.ticket);
  // The rest of the first release (1, 3, 5), then the new one ordered by partition (8, 7).
  EXPECT_EQ(order, (std::vector<Ticket>{2, 4, 6, 1, 3, 5, 8, 7}));
  EXPECT_EQ(gate.held_records(), 0u);
  EXPECT_EQ(gate.held_bytes(), 0u);
}

// Random holds, deliveries (in any order within what is in flight) and a queue that is sometimes full:
// every record reaches librdkafka exactly once, per topic and key in the order held (per topic, for the topic
// without a partition count), and the gate never hands a topic records while kInFlightCap or more are in
// flight, except as the whole of what it held.
TEST(ProduceGate, RandomTrafficKeepsOrderAndLosesNothing) {
  std::mt19937_64 random(7);
  ProduceGate gate(200, first_byte());
  gate.set_partitions(0, 3);
  gate.set_partitions(1, 2);
  FakeProducer producer;
  const std::string v(19, 'v'), keyless_v(20, 'v');  // 20 bytes each with or without a key
  const std::string keys[] = {"a", "b", "c", "d", "e"};
  // Topic 2 keeps the order held whatever the key; topics 0 and 1 per key.
  const auto stream = [&](TopicIndex topic, const std::optional<std::string>& key) {
    return std::to_string(topic) + "/" + (topic == 2 ? std::string() : key.value_or("-"));
  };
  std::map<std::string, std::vector<Ticket>> held_order, sent_order;
  std::vector<std::pair<TopicIndex, Ticket>> in_flight;
  Ticket next = 1;
  auto now = Clock::now();
  for (int step = 0; step < 20000; ++step) {
    now += std::chrono::microseconds(10);
    const uint64_t dice = random() % 10;
    if (dice < 5) {
      const TopicIndex topic = random() % 3;
      const size_t k = random() % 6;
      const std::optional<std::string> key = k < 5 ? std::optional(keys[k]) : std::nullopt;
      gate.hold(ProduceGate::Record{topic, key ? std::optional<std::string_view>(*key) : std::nullopt,
                                    key ? v : keyless_v, next},
                now);
      held_order[stream(topic, key)].push_back(next++);
    } else if (dice < 8 && !in_flight.empty()) {
      const size_t at = random() % in_flight.size();
      gate.delivered(in_flight[at].first, in_flight[at].second, 20);
      in_flight.erase(in_flight.begin() + static_cast<std::ptrdiff_t>(at));
    } else {
      producer.room = random() % 4 == 0 ? random() % 5 : SIZE_MAX;
      std::map<TopicIndex, size_t> before;
      for (TopicIndex t = 0; t < 3; ++t) before[t] = gate.in_flight(t);
      const size_t sent_before = producer.sent.size();
      ASSERT_TRUE(gate.release(producer.hand_over(), now));
      for (size_t i = sent_before; i < producer.sent.size(); ++i) {
        const Sent& s = producer.sent[i];
        in_flight.emplace_back(s.topic, s.ticket);
        sent_order[stream(s.topic, s.key)].push_back(s.ticket);
      }
      for (TopicIndex t = 0; t < 3; ++t) {
        const size_t now_in_flight = gate.in_flight(t);
        if (now_in_flight > before[t] && before[t] > 0) {
          EXPECT_LT(now_in_flight, ProduceGate::kInFlightCap);
        }
      }
    }
  }
  producer.room = SIZE_MAX;
  const size_t sent_before = producer.sent.size();
  ASSERT_TRUE(gate.release(producer.hand_over(), now, true));
  for (size_t i = sent_before; i < producer.sent.size(); ++i)
    sent_order[stream(producer.sent[i].topic, producer.sent[i].key)].push_back(producer.sent[i].ticket);
  EXPECT_EQ(sent_order, held_order);
  EXPECT_EQ(gate.held_records(), 0u);
  EXPECT_EQ(gate.held_bytes(), 0u);
  for (size_t i = sent_before; i < producer.sent.size(); ++i) in_flight.emplace_back(producer.sent[i].topic, producer.sent[i].ticket);
  EXPECT_EQ(gate.in_flight_bytes(), 20 * in_flight.size());
  for (const auto& [topic, ticket] : in_flight) gate.delivered(topic, ticket, 20);
  EXPECT_EQ(gate.in_flight_bytes(), 0u);
  for (TopicIndex t = 0; t < 3; ++t) EXPECT_EQ(gate.in_flight(t), 0u);
}

}  // namespace
}  // namespace tidemark
