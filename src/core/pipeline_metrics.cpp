#include "core/pipeline_metrics.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

#include <prometheus/text_serializer.h>

namespace tidemark {

namespace {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;

int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Delivery within a broker round trip up to a stalled broker; commit lag from a quiet machine's
// milliseconds to minutes behind.
const prometheus::Histogram::BucketBoundaries kLatencyBuckets = {0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1,
                                                                 0.25,  0.5,   1,     2.5,  5,    10,   30, 60};

size_t op_index(Op op) {
  switch (op) {
    case Op::Create: return 0;
    case Op::Update: return 1;
    case Op::Delete: return 2;
    case Op::Read: return 3;
    case Op::Truncate: return 4;
  }
  return 0;
}

constexpr std::array<const char*, 5> kOps = {"c", "u", "d", "r", "t"};

}  // namespace

PipelineMetrics::PipelineMetrics(const std::string& pipeline)
    : registry_(std::make_shared<prometheus::Registry>()),
      changes_family_(BuildCounter()
                          .Name("tidemark_changes_total")
                          .Help("Changes handed to the sink, by table and op (c create, u update, d delete, r snapshot read, t truncate)")
                          .Labels({{"pipeline", pipeline}})
                          .Register(*registry_)),
      records_sent_(BuildCounter()
                        .Name("tidemark_records_sent_total")
                        .Help("Records given to the sink (tombstones and the two halves of a key change included)")
                        .Labels({{"pipeline", pipeline}})
                        .Register(*registry_)
                        .Add({})),
      records_acknowledged_(BuildCounter()
                                .Name("tidemark_records_acknowledged_total")
                                .Help("Records the sink acknowledged durably (Kafka: acks=all)")
                                .Labels({{"pipeline", pipeline}})
                                .Register(*registry_)
                                .Add({})),
      delivery_errors_(BuildCounter()
                           .Name("tidemark_delivery_errors_total")
                           .Help("Sink errors by class: transient (retried by the producer) or fatal (the daemon exits 2)")
                           .Labels({{"pipeline", pipeline}})
                           .Register(*registry_)),
      conflicts_(BuildCounter()
                     .Name("tidemark_conflicts_total")
                     .Help("Database sink: changes a mapping's version column kept out because the target's row was as "
                           "new or newer, by target table (logged in sink.database.conflict_table)")
                     .Labels({{"pipeline", pipeline}})
                     .Register(*registry_)),
      kafka_transactions_(BuildCounter()
                              .Name("tidemark_kafka_transactions_total")
                              .Help("sink.kafka.exactly_once: Kafka transactions by outcome: committed, or aborted (their "
                                    "records sent again in the next one)")
                              .Labels({{"pipeline", pipeline}})
                              .Register(*registry_)),
      leader_(BuildGauge()
                  .Name("tidemark_ha_leader")
                  .Help("ha.enabled: 1 while this instance holds the pipeline's lease and runs it, 0 while it waits as a standby")
                  .Labels({{"pipeline", pipeline}})
                  .Register(*registry_)),
      delivery_latency_(BuildHistogram()
                            .Name("tidemark_delivery_latency_seconds")
                            .Help("From handing a record to the producer to the broker's acknowledgement")
                            .Labels({{"pipeline", pipeline}})
                            .Register(*registry_)
                            .Add({}, kLatencyBuckets)),
      commit_to_ack_(BuildHistogram()
                         .Name("tidemark_commit_to_ack_seconds")
                         .Help("From a transaction's commit in the source to the acknowledgement of its last record "
                               "(MySQL/MariaDB commit times have whole seconds)")
                         .Labels({{"pipeline", pipeline}})
                         .Register(*registry_)
                         .Add({}, kLatencyBuckets)),
      behind_source_(BuildGauge()
                         .Name("tidemark_behind_source_seconds")
                         .Help("Commit-to-acknowledgement lag of the newest acknowledged transaction (Debezium's MilliSecondsBehindSource)")
                         .Labels({{"pipeline", pipeline}})
                         .Register(*registry_)
                         .Add({})),
      last_event_age_(BuildGauge()
                          .Name("tidemark_last_event_age_seconds")
                          .Help("Seconds since the last change was handed to the sink (since start when none was)")
                          .Labels({{"pipeline", pipeline}})
                          .Register(*registry_)
                          .Add({})),
      queue_events_(BuildGauge()
                        .Name("tidemark_queue_events")
                        .Help("Events in the queue between the source and the sink")
                        .Labels({{"pipeline", pipeline}})
                        .Register(*registry_)
                        .Add({})),
      queue_bytes_(BuildGauge()
                       .Name("tidemark_queue_bytes")
                       .Help("Approximate bytes of the events in the queue between the source and the sink")
                       .Labels({{"pipeline", pipeline}})
                       .Register(*registry_)
                       .Add({})),
      in_flight_(BuildGauge()
                     .Name("tidemark_records_in_flight")
                     .Help("Records sent and not yet acknowledged, or acknowledged behind one that is not")
                     .Labels({{"pipeline", pipeline}})
                     .Register(*registry_)
                     .Add({})),
      source_connected_(BuildGauge()
                            .Name("tidemark_source_connected")
                            .Help("1 while the source's replication session is up")
                            .Labels({{"pipeline", pipeline}})
                            .Register(*registry_)
                            .Add({})),
      source_reconnects_(BuildCounter()
                             .Name("tidemark_source_reconnects_total")
                             .Help("Replication sessions lost and retried with backoff")
                             .Labels({{"pipeline", pipeline}})
                             .Register(*registry_)
                             .Add({})),
      log_bytes_behind_(BuildGauge()
                            .Name("tidemark_source_log_bytes_behind")
                            .Help("Bytes of the server's log past the committed position: PostgreSQL the WAL the slot "
                                  "retains past its confirmed flush LSN, MySQL/MariaDB the binlog bytes after it; "
                                  "-1 until known (asked every 5 s)")
                            .Labels({{"pipeline", pipeline}})
                            .Register(*registry_)
                            .Add({})),
      state_file_age_(BuildGauge()
                          .Name("tidemark_state_file_age_seconds")
                          .Help("Seconds since the state file was last known to hold the committed position (grows while writes fail)")
                          .Labels({{"pipeline", pipeline}})
                          .Register(*registry_)
                          .Add({})),
      snapshot_running_(BuildGauge()
                            .Name("tidemark_snapshot_running")
                            .Help("1 while a table is being snapshotted")
                            .Labels({{"pipeline", pipeline}})
                            .Register(*registry_)
                            .Add({})),
      snapshot_paused_(BuildGauge()
                           .Name("tidemark_snapshot_paused")
                           .Help("1 while snapshots are paused (signal, snapshot.paused or tidemark snapshot pause)")
                           .Labels({{"pipeline", pipeline}})
                           .Register(*registry_)
                           .Add({})),
      snapshot_tables_done_(BuildGauge()
                                .Name("tidemark_snapshot_tables_done")
                                .Help("Tables snapshotted since the pipeline's first start (kept in the state)")
                                .Labels({{"pipeline", pipeline}})
                                .Register(*registry_)
                                .Add({})),
      snapshot_tables_remaining_(BuildGauge()
                                     .Name("tidemark_snapshot_tables_remaining")
                                     .Help("Tables queued or in progress (Debezium's RemainingTableCount)")
                                     .Labels({{"pipeline", pipeline}})
                                     .Register(*registry_)
                                     .Add({})),
      snapshot_last_error_(BuildGauge()
                               .Name("tidemark_snapshot_last_error_info")
                               .Help("1, with the message of the last refused or failed snapshot request as a label")
                               .Labels({{"pipeline", pipeline}})
                               .Register(*registry_)),
      snapshot_chunks_(BuildCounter()
                           .Name("tidemark_snapshot_chunks_total")
                           .Help("Snapshot chunks emitted at their high watermark, by table")
                           .Labels({{"pipeline", pipeline}})
                           .Register(*registry_)),
      snapshot_rows_dropped_(BuildCounter()
                                 .Name("tidemark_snapshot_rows_dropped_total")
                                 .Help("Chunk rows dropped because the log changed them inside the window, by table")
                                 .Labels({{"pipeline", pipeline}})
                                 .Register(*registry_)),
      last_event_ns_(steady_ns()) {}

std::string PipelineMetrics::text() const { return prometheus::TextSerializer().Serialize(registry_->Collect()); }

const PipelineMetrics::ChangeCounters& PipelineMetrics::change_counters(const TableId& table) {
  const std::lock_guard lock(tables_mutex_);
  auto it = tables_.find(table);
  if (it == tables_.end()) {
    ChangeCounters made{};
    const std::string name = table.to_string();
    for (size_t i = 0; i < kOps.size(); ++i) made[i] = &changes_family_.Add({{"table", name}, {"op", kOps[i]}});
    it = tables_.emplace(table, made).first;
  }
  return it->second;
}

void PipelineMetrics::count_change(const ChangeCounters& counters, Op op) {
  last_event_ns_.store(steady_ns(), std::memory_order_relaxed);
  counters[op_index(op)]->Increment();
}

void PipelineMetrics::count_record_acknowledged(double latency_seconds) {
  records_acknowledged_.Increment();
  delivery_latency_.Observe(latency_seconds);
  note_acknowledged(1, latency_seconds);
}

void PipelineMetrics::count_records_acknowledged(std::span<const double> latencies_seconds) {
  if (latencies_seconds.empty()) return;
  double sum = 0;
  double slowest = 0;
  std::vector<double> increments(kLatencyBuckets.size() + 1, 0.0);  // the last: +Inf
  for (const double latency : latencies_seconds) {
    // Prometheus' buckets are "less than or equal": the first boundary not below the value.
    const auto bucket = std::lower_bound(kLatencyBuckets.begin(), kLatencyBuckets.end(), latency) - kLatencyBuckets.begin();
    increments[static_cast<size_t>(bucket)] += 1;
    sum += latency;
    slowest = std::max(slowest, latency);
  }
  delivery_latency_.ObserveMultiple(increments, sum);
  records_acknowledged_.Increment(static_cast<double>(latencies_seconds.size()));
  note_acknowledged(latencies_seconds.size(), slowest);
}

void PipelineMetrics::note_acknowledged(uint64_t count, double slowest_seconds) {
  acks_since_take_.fetch_add(count, std::memory_order_relaxed);
  const auto us = static_cast<int64_t>(slowest_seconds * 1e6);
  int64_t seen = max_ack_latency_us_.load(std::memory_order_relaxed);
  while (us > seen && !max_ack_latency_us_.compare_exchange_weak(seen, us, std::memory_order_relaxed)) {
  }
}

PipelineMetrics::Acknowledgements PipelineMetrics::take_acknowledgements() {
  Acknowledgements taken;
  taken.count = acks_since_take_.exchange(0, std::memory_order_relaxed);
  if (const int64_t us = max_ack_latency_us_.exchange(-1, std::memory_order_relaxed); us >= 0)
    taken.max_latency = std::chrono::microseconds(us);
  return taken;
}

void PipelineMetrics::count_delivery_error(const std::string& error_class) {
  delivery_errors_.Add({{"class", error_class}}).Increment();
}

void PipelineMetrics::count_conflicts(const std::string& table, uint64_t n) {
  conflicts_.Add({{"table", table}}).Increment(static_cast<double>(n));
}

void PipelineMetrics::count_kafka_transaction(bool committed) {
  kafka_transactions_.Add({{"outcome", committed ? "committed" : "aborted"}}).Increment();
}

void PipelineMetrics::set_leader(bool leading) { leader_.Add({}).Set(leading ? 1 : 0); }

void PipelineMetrics::observe_commit(int64_t source_commit_ts_ms) {
  if (source_commit_ts_ms <= 0) return;
  const int64_t now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  // A source clock ahead of ours is no lag.
  const double lag = static_cast<double>(std::max<int64_t>(0, now_ms - source_commit_ts_ms)) / 1000.0;
  commit_to_ack_.Observe(lag);
  behind_source_.Set(lag);
}

void PipelineMetrics::count_snapshot_chunk(const std::string& table, uint64_t rows_emitted, uint64_t rows_dropped) {
  (void)rows_emitted;  // counted as op "r" changes
  snapshot_chunks_.Add({{"table", table}}).Increment();
  snapshot_rows_dropped_.Add({{"table", table}}).Increment(static_cast<double>(rows_dropped));
}

double PipelineMetrics::last_event_age_seconds() const {
  return static_cast<double>(steady_ns() - last_event_ns_.load(std::memory_order_relaxed)) / 1e9;
}

void PipelineMetrics::sample(const PipelineSample& s) {
  last_event_age_.Set(last_event_age_seconds());
  queue_events_.Set(static_cast<double>(s.queue_events));
  queue_bytes_.Set(static_cast<double>(s.queue_bytes));
  in_flight_.Set(static_cast<double>(s.records_in_flight));
  source_connected_.Set(s.source_connected ? 1 : 0);
  if (s.source_reconnects > reconnects_seen_) {
    source_reconnects_.Increment(static_cast<double>(s.source_reconnects - reconnects_seen_));
    reconnects_seen_ = s.source_reconnects;
  }
  state_file_age_.Set(s.state_file_age_seconds);
  log_bytes_behind_.Set(static_cast<double>(s.source_log_bytes_behind));
  if (!s.snapshots) return;
  snapshot_running_.Set(s.snapshot_running ? 1 : 0);
  snapshot_paused_.Set(s.snapshot_paused ? 1 : 0);
  snapshot_tables_done_.Set(static_cast<double>(s.snapshot_tables_done));
  snapshot_tables_remaining_.Set(static_cast<double>(s.snapshot_tables_queued + (s.snapshot_running ? 1 : 0)));
  if (s.snapshot_last_error != last_error_shown_) {
    if (last_error_gauge_) snapshot_last_error_.Remove(last_error_gauge_);
    last_error_gauge_ = nullptr;
    if (!s.snapshot_last_error.empty()) {
      last_error_gauge_ = &snapshot_last_error_.Add({{"message", s.snapshot_last_error.substr(0, 200)}});
      last_error_gauge_->Set(1);
    }
    last_error_shown_ = s.snapshot_last_error;
  }
}

}  // namespace tidemark
