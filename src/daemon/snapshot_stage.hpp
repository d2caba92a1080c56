#pragma once
// The DBLog snapshot engine of one run, wired together: the coordinator (the snapshot state), the merge
// stage (the windows the publish stage passes every event through) and the chunk worker on its own thread.
// The pipeline owns one when snapshots are configured; the stage names no database (the reader does).

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "config/config.hpp"
#include "snapshot/chunk_worker.hpp"
#include "snapshot/snapshot_coordinator.hpp"
#include "snapshot/snapshot_merger.hpp"
#include "snapshot/snapshot_reader.hpp"
#include "snapshot/snapshot_state.hpp"

namespace tidemark {

class SnapshotStage {
 public:
  // Sets up the stage over the reader and the restored state, queueing the initial snapshot when it is due
  // (snapshot.initial: always, or when_needed on a first start). Nullptr (the reason logged) when the
  // captured tables cannot be listed. `backlog` counts the records between the source and Kafka's
  // acknowledgement. The initial snapshot is queued before the source starts, so the first position
  // persisted (MySQL persists its starting point at once) already carries it.
  static std::unique_ptr<SnapshotStage> create(const Config& config, bool first_start,
                                               std::unique_ptr<snapshot::SnapshotReader> reader,
                                               snapshot::SnapshotState state, std::function<snapshot::BacklogReading()> backlog);
  ~SnapshotStage();
  SnapshotStage(const SnapshotStage&) = delete;
  SnapshotStage& operator=(const SnapshotStage&) = delete;

  snapshot::SnapshotMerger& merger() { return merger_; }
  snapshot::SnapshotState state() const { return coordinator_.state(); }

  // Starts the chunk worker's thread once `log_ready` says the source reads its log (before that, on a
  // first start, a watermark could be written before the slot that would carry it exists); `on_fatal`
  // gets what must stop the daemon.
  void start(std::function<bool()> log_ready, std::function<void(const std::string&)> on_fatal);
  // Stops the chunk worker (cancelling a query in flight) and joins its thread.
  void stop();
  // Applies the live snapshot settings of a reloaded configuration (snapshot.paused, the rate bounds).
  void reconfigure(const Config& config);

 private:
  SnapshotStage(const Config& config, std::unique_ptr<snapshot::SnapshotReader> reader, snapshot::SnapshotState state,
                std::function<snapshot::BacklogReading()> backlog);

  std::unique_ptr<snapshot::SnapshotReader> reader_;
  snapshot::SnapshotCoordinator coordinator_;
  snapshot::SnapshotMerger merger_;
  snapshot::ChunkWorker worker_;
  bool paused_;
  std::jthread thread_;
};

}  // namespace tidemark
