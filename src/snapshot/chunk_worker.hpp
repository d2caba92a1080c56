#pragma once
// The chunk side of DBLog, on its own thread and its own database connection: for the table in progress,
// write the low watermark, SELECT the next chunk, hand the rows to the merge stage, write the high
// watermark. Up to snapshot.chunks_in_flight such windows are open at once, each chunk starting after the
// previous one's last key; the worker waits for the oldest only when that many are open. While it reads
// ahead without waiting, each window opens on the previous one's high watermark (one commit per chunk).
// The log reader never waits for it: the rows are in the coordinator before their high watermark can be read.

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <stop_token>
#include <string>

#include "config/config.hpp"
#include "snapshot/backlog_bound.hpp"
#include "snapshot/snapshot_coordinator.hpp"
#include "snapshot/snapshot_reader.hpp"

namespace tidemark::snapshot {

class ChunkWorker {
 public:
  // `backlog` says how many records wait between the source and Kafka's acknowledgement, and how long
  // acknowledgements took (see backlog_bound.hpp).
  ChunkWorker(const Config& config, SnapshotReader& reader, SnapshotCoordinator& coordinator,
              std::function<BacklogReading()> backlog);

  // Reads chunks until `stop`. Returns an error only for what must stop the daemon: a watermark that never
  // comes through the log. Failing requests (unknown table, bad WHERE) are logged, recorded in the state
  // and dropped; lost connections are retried with backoff.
  std::optional<std::string> run(std::stop_token stop);

  // Applies snapshot.max_chunks_per_second, max_backlog_events, target_ack_latency_ms, chunks_in_flight and
  // max_chunk_size of a reloaded configuration.
  void reconfigure(const Config& config);

 private:
  bool connect(std::stop_token stop);
  // Describes the next queued table and makes it current. False when it was refused.
  void start_next_table(const TableRequest& request, std::stop_token stop);
  // The next step for the current table: open one more window when allowed, otherwise wait for the oldest
  // open one to close. A fatal error (the watermarks never come through the log) is returned.
  std::optional<std::string> next_step(const TableProgress& current, std::stop_token stop);
  // Describes the current table when due; false when it cannot be read now (stopped, or refused).
  bool describe_current(const TableRequest& request, const std::stop_token& stop);
  // A window opened and not yet closed by the merge stage.
  struct InFlight {
    uint64_t id;
    int64_t rows;  // the chunk's limit
  };
  // Low watermark, chunk SELECT after `after`, rows to the coordinator, high watermark: the window, or
  // nullopt when the chunk was dropped or failed (then retried or refused). Moves read_after_ on.
  std::optional<InFlight> read_window(const TableProgress& current, const std::optional<KeyText>& after,
                                      const std::stop_token& stop);
  // Waits until the merge stage closes the window at its high watermark.
  std::optional<std::string> await_window(const TableRequest& request, uint64_t id, const std::stop_token& stop);
  // Whether the next window may open on this one's high watermark (see chained_).
  bool may_chain(bool finished);
  // Reads the backlog and moves its bound: true while the records waiting for Kafka and the rows of the open
  // windows are more than the bound allows.
  bool backlog_over_bound();
  // The rows of the next chunk of `request`: its signal's chunk_size, or adapted to the bound (adaptive_chunk_rows).
  int64_t next_chunk_rows(const TableRequest& request) const;
  // The most rows the windows in flight may hold (their chunks' limits).
  uint64_t rows_in_flight() const;
  void refuse(const std::string& table, const std::string& why, bool current);
  std::vector<std::string> surrogate_key(const std::string& table) const;
  std::string fresh_mark();
  bool throttled();

  const std::string pipeline_;
  const int64_t default_chunk_size_;
  const std::chrono::milliseconds watermark_timeout_;
  const std::map<std::string, std::string> surrogate_keys_;
  SnapshotReader& reader_;
  SnapshotCoordinator& coordinator_;
  std::function<BacklogReading()> backlog_;
  BacklogBound backlog_bound_;  // the worker thread's only
  int64_t chunk_rows_;          // the current request's configured chunk size: the bound's floor
  std::atomic<int64_t> max_chunks_per_second_;
  std::atomic<int64_t> max_backlog_events_;
  std::atomic<int64_t> target_ack_latency_ms_;
  std::atomic<int64_t> chunks_in_flight_;
  std::atomic<int64_t> max_chunk_size_;
  // The windows this worker opened and the merge stage has not closed, oldest first; valid while
  // coordinator_.restarts() is still restarts_seen_ (a redo or cancel closes them all).
  std::deque<InFlight> in_flight_;
  uint64_t restarts_seen_ = 0;
  // The window opened on the last high watermark written (its low watermark): read next, before any other.
  // Consecutive windows share a mark this way, so a chunk costs one watermark commit instead of two.
  struct Chained {
    uint64_t id;
    TableId table;
    std::vector<std::string> key_names;
    std::string low;
    std::string high;
  };
  std::optional<Chained> chained_;
  struct ReadCounts {  // of the table being read, by this process; logged when its last chunk is read
    std::string table;
    uint64_t windows = 0;
    uint64_t chained = 0;
    size_t most_in_flight = 0;
    int64_t largest_chunk = 0;
  };
  ReadCounts read_counts_;
  std::optional<KeyText> read_after_;  // where the next window's chunk starts
  bool table_read_ = false;            // the last window opened read the table's last chunk
  uint64_t next_window_id_ = 0;
  std::mt19937_64 random_;
  std::chrono::steady_clock::time_point next_chunk_at_{};
  std::optional<TableLayout> layout_;  // the current table's, described at described_at_
  std::string layout_table_;
  std::chrono::steady_clock::time_point described_at_{};
  std::optional<std::chrono::steady_clock::time_point> first_unseen_chunk_at_;  // first try before any watermark came
  std::string failing_table_;  // consecutive failures of one table's chunk query
  int failures_ = 0;
  bool backlog_logged_ = false;
};

}  // namespace tidemark::snapshot
