#pragma once
// Flow control in front of librdkafka: a topic's records wait here while its earlier records are in
// flight, and then go to librdkafka together, as full batches.
//
// Why: an idempotent librdkafka producer (2.x) sends a partition's next ProduceRequest only while fewer than
// five of that partition's messages are in flight (RD_KAFKA_IDEMP_MAX_INFLIGHT), and while a batch that is
// ready waits for that, its broker thread wakes at once, again and again: poll() with no timeout about
// 150,000 times a second until the answer comes, a fifth of a core on a busy snapshot. Records that wait here
// instead give librdkafka no ready batch it may not send.
//
// Rules, per topic (in_flight = records handed over, not yet reported delivered):
//   - records are held in the order they come; a release hands them over partition by partition (by the
//     producer's partitioner), each partition's records in the order held, so that a partition's share
//     reaches librdkafka in one piece, well within linger.ms (a topic with one partition, or an unknown
//     count, keeps the order held);
//   - nothing in flight: everything held goes, up to the topic's budget in bytes (the sink sets half of
//     partitions x batch.size: at most one batch per partition, also where keys spread unevenly);
//   - some in flight: the held records go only when in_flight + held stays under the in-flight cap, so
//     single changes on a quiet topic go at once, while a burst waits for the topic to drain and then
//     goes as full batches instead of a trickle of small ones;
//   - a release librdkafka could not take whole (queue full) goes on under the same rules, before any later
//     record of its topic;
//   - `force` (flush, shutdown) lets everything go.
// Invariant: records of one topic and partition (records of one key, and keyless ones) reach the hand-over
// function in hold() order, each exactly once.
//
// Single-threaded: the sink's thread holds, releases and reports deliveries (librdkafka serves delivery
// reports inside rd_kafka_poll, on the caller's thread).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/position_tracker.hpp"
#include "sink/message_sink.hpp"

namespace tidemark {

class ProduceGate {
 public:
  using Clock = std::chrono::steady_clock;

  struct Record {
    TopicIndex topic;
    std::optional<std::string_view> key;
    std::optional<std::string_view> value;
    Ticket ticket;
  };
  enum class Handed {
    Queued,  // librdkafka took it
    Full,    // librdkafka's queue is full (or a transient error): try again after the next poll
    Failed,  // fatal: the sink has failed
  };
  using HandOver = std::function<Handed(const Record&)>;
  // The partition the producer will put a keyed record in, given the topic's partition count.
  using PartitionOf = std::function<uint32_t(TopicIndex topic, std::string_view key, uint32_t partitions)>;

  static constexpr size_t kInFlightCap = 5;  // librdkafka's RD_KAFKA_IDEMP_MAX_INFLIGHT

  // `default_budget`: bytes a release may hand over for a topic without a budget of its own.
  explicit ProduceGate(size_t default_budget, PartitionOf partition_of = {})
      : default_budget_(default_budget), partition_of_(std::move(partition_of)) {}

  // Bytes one release hands over for `topic` (at least one record goes whatever its size).
  void set_budget(TopicIndex topic, size_t bytes);
  // The topic's partition count, for ordering releases (0 or 1: records go in the order held).
  void set_partitions(TopicIndex topic, uint32_t partitions);

  void hold(const Record& record, Clock::time_point now);

  // Hands over what the rules let through, topic by topic. False when hand_over failed fatally.
  bool release(const HandOver& hand_over, Clock::time_point now, bool force = false);

  // A record of `topic` (`bytes` of key and value) was delivered. Returns how long it waited here: the
  // oldest record's wait in its release (the acknowledgement latency librdkafka reports starts at the
  // hand-over).
  std::chrono::microseconds delivered(TopicIndex topic, Ticket ticket, size_t bytes);

  size_t held_records() const { return held_records_; }
  size_t held_bytes() const { return held_bytes_; }
  size_t in_flight_bytes() const { return in_flight_bytes_; }  // handed over, not yet delivered
  size_t in_flight(TopicIndex topic) const { return topic < topics_.size() ? topics_[topic].in_flight : 0; }

 private:
  struct Held {
    size_t at;            // in Topic::bytes
    int64_t key_size;     // -1: no key
    int64_t value_size;   // -1: null value
    Ticket ticket;
    Clock::time_point since;
  };
  struct Release {
    Ticket first;
    Ticket last;
    size_t undelivered;
    std::chrono::microseconds waited;
  };
  struct Topic {
    std::string bytes;  // keys and values of the held records
    std::vector<Held> held;
    size_t next = 0;  // the first held record not in a release
    // The current release: indices into `held`, in hand-over order; those from `handed` on are still held.
    std::vector<uint32_t> release;
    size_t handed = 0;
    size_t in_flight = 0;
    std::optional<size_t> budget;
    uint32_t partitions = 0;
    std::vector<uint32_t> partition_of;  // scratch for ordering a release
    std::deque<Release> releases;        // in ticket order
    size_t held_count() const { return held.size() - next + release.size() - handed; }
  };

  Topic& topic(TopicIndex index);
  // False when hand_over failed fatally.
  bool release_topic(TopicIndex index, const HandOver& hand_over, Clock::time_point now, bool force);
  // Puts held records from t.next on into a new release, up to `budget` bytes.
  void start_release(TopicIndex index, Topic& t, size_t budget, Clock::time_point now);
  // Hands over the current release; false when hand_over failed fatally.
  bool hand_release(TopicIndex index, Topic& t, const HandOver& hand_over);
  void compact(Topic& t);

  size_t default_budget_;
  PartitionOf partition_of_;
  std::vector<Topic> topics_;
  std::vector<TopicIndex> waiting_;  // topics holding records
  size_t held_records_ = 0;
  size_t held_bytes_ = 0;
  size_t in_flight_bytes_ = 0;
};

}  // namespace tidemark
