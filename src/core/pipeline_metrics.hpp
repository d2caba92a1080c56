#pragma once
// The pipeline's Prometheus metrics (prometheus-cpp), one registry per run, every series labelled with the
// pipeline's name. The stages that see an event count it here as it happens (changes, deliveries,
// latencies); what is a level (queue depth, connection, snapshot progress) is sampled by the daemon's main
// loop with sample(). Names follow Prometheus conventions: base units, `_total` for counters.
// docs/metrics.md lists them beside Debezium's JMX names. Thread-safe: prometheus-cpp's metrics are atomic.

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "tidemark/change_event.hpp"

namespace tidemark {

// The levels the main loop reads from the stages every tick.
struct PipelineSample {
  uint64_t queue_events = 0;
  uint64_t queue_bytes = 0;
  uint64_t records_in_flight = 0;
  bool source_connected = false;
  uint64_t source_reconnects = 0;  // since start
  int64_t source_log_bytes_behind = -1;  // -1: not known (yet)
  double state_file_age_seconds = 0;
  // Snapshots (absent when the pipeline has no snapshot stage).
  bool snapshots = false;
  bool snapshot_running = false;
  bool snapshot_paused = false;
  uint64_t snapshot_tables_done = 0;   // since the first start (persisted)
  uint64_t snapshot_tables_queued = 0;  // waiting, the current one not included
  std::string snapshot_last_error;
};

class PipelineMetrics {
 public:
  explicit PipelineMetrics(const std::string& pipeline);

  const std::shared_ptr<prometheus::Registry>& registry() const { return registry_; }
  // The Prometheus text exposition of every metric.
  std::string text() const;

  // ---- events (any thread) ----
  // One change of `table` handed to the sink: op c, u, d, r (snapshot read) or t.
  // The per-op counters of one table (created at the first call; the reference stays valid), so that the
  // publisher looks a table up once per run of its events rather than once per event.
  using ChangeCounters = std::array<prometheus::Counter*, 5>;
  const ChangeCounters& change_counters(const TableId& table);
  void count_change(const ChangeCounters& counters, Op op);
  void count_record_sent() { records_sent_.Increment(); }
  void count_record_acknowledged(double latency_seconds);  // produce -> broker acknowledgement
  // The same for a batch (one delivery poll's reports): the histogram's lock taken once, not per record.
  void count_records_acknowledged(std::span<const double> latencies_seconds);
  // The acknowledgements since the previous call, for the snapshot's backlog bound: how many, and the slowest.
  struct Acknowledgements {
    uint64_t count = 0;
    std::optional<std::chrono::microseconds> max_latency;  // nullopt: none came
  };
  Acknowledgements take_acknowledgements();
  void count_delivery_error(const std::string& error_class);  // "transient", "fatal"
  // Changes of `table` (the target's) that a database sink's version column kept out (last writer wins).
  void count_conflicts(const std::string& table, uint64_t n);
  // sink.kafka.exactly_once: a Kafka transaction committed, or aborted (and sent again).
  void count_kafka_transaction(bool committed);
  // ha.enabled: whether this instance holds the pipeline's lease.
  void set_leader(bool leading);
  // A source transaction all of whose records are acknowledged: its commit time in the source (ms since
  // the epoch; 0 when the source gives none).
  void observe_commit(int64_t source_commit_ts_ms);
  // A snapshot chunk emitted at its high watermark.
  void count_snapshot_chunk(const std::string& table, uint64_t rows_emitted, uint64_t rows_dropped);

  // ---- levels (the main loop) ----
  void sample(const PipelineSample& s);

  // Seconds since the last change was handed to the sink (since start when none was).
  double last_event_age_seconds() const;
  // The newest observe_commit() lag, in seconds (0 before the first).
  double behind_source_seconds() const { return behind_source_.Value(); }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& changes_family_;
  prometheus::Counter& records_sent_;
  prometheus::Counter& records_acknowledged_;
  prometheus::Family<prometheus::Counter>& delivery_errors_;
  prometheus::Family<prometheus::Counter>& conflicts_;
  prometheus::Family<prometheus::Counter>& kafka_transactions_;
  prometheus::Family<prometheus::Gauge>& leader_;
  prometheus::Histogram& delivery_latency_;
  // For take_acknowledgements(): `count` more acknowledged, the slowest of them `slowest_seconds`.
  void note_acknowledged(uint64_t count, double slowest_seconds);
  std::atomic<int64_t> max_ack_latency_us_{-1};  // -1: no acknowledgement since take_acknowledgements()
  std::atomic<uint64_t> acks_since_take_{0};
  prometheus::Histogram& commit_to_ack_;
  prometheus::Gauge& behind_source_;
  prometheus::Gauge& last_event_age_;
  prometheus::Gauge& queue_events_;
  prometheus::Gauge& queue_bytes_;
  prometheus::Gauge& in_flight_;
  prometheus::Gauge& source_connected_;
  prometheus::Counter& source_reconnects_;
  prometheus::Gauge& log_bytes_behind_;
  prometheus::Gauge& state_file_age_;
  prometheus::Gauge& snapshot_running_;
  prometheus::Gauge& snapshot_paused_;
  prometheus::Gauge& snapshot_tables_done_;
  prometheus::Gauge& snapshot_tables_remaining_;
  prometheus::Family<prometheus::Gauge>& snapshot_last_error_;
  prometheus::Family<prometheus::Counter>& snapshot_chunks_;
  prometheus::Family<prometheus::Counter>& snapshot_rows_dropped_;

  // The counters of one table, one per op: found once per table, then incremented without a lock.
  mutable std::mutex tables_mutex_;
  std::unordered_map<TableId, ChangeCounters, TableIdHash> tables_;
  std::atomic<int64_t> last_event_ns_;  // steady clock
  uint64_t reconnects_seen_ = 0;        // main loop only
  std::string last_error_shown_;        // main loop only
  prometheus::Gauge* last_error_gauge_ = nullptr;
};

}  // namespace tidemark
