#include "daemon/snapshot_stage.hpp"

#include <chrono>
#include <thread>

#include <spdlog/spdlog.h>

#include "core/thread_name.hpp"
#include "sink/database/table_plan.hpp"
#include "snapshot/control_tables.hpp"
#include "config/two_way_tables.hpp"

namespace tidemark {

std::unique_ptr<SnapshotStage> SnapshotStage::create(const Config& config, bool first_start,
                                                     std::unique_ptr<snapshot::SnapshotReader> reader,
                                                     snapshot::SnapshotState state, std::function<snapshot::BacklogReading()> backlog) {
  if (config.snapshot.paused) state.paused = true;
  const std::string& initial = config.snapshot.initial;
  if (initial == "always" || (initial == "when_needed" && first_start)) {
    auto tables = reader->captured_tables();
    if (!tables.ok()) {
      spdlog::error("initial snapshot: cannot list the captured tables: {}", tables.error);
      return nullptr;
    }
    if (config.two_way.enabled()) {  // the marker table is the pipelines' own, like the signal table
      const std::string marker = marker_table_in_source(config);
      std::erase_if(*tables.value, [&](const TableId& t) { return dbsink::mapped_name(t) == marker; });
    }
    // A database sink translating references loads the referenced tables first.
    dbsink::order_referenced_first(*tables.value, config.sink.database.tables);
    snapshot::queue_tables(state, *tables.value);
    spdlog::info("initial snapshot ({}): {} table(s) queued", initial, tables.value->size());
  }
  if (!state.idle())
    spdlog::info("snapshot state restored: {} table(s) queued{}{}", state.queue.size(),
                 state.current ? ", continuing " + state.current->request.table : std::string(),
                 state.paused ? " (paused)" : "");
  return std::unique_ptr<SnapshotStage>(new SnapshotStage(config, std::move(reader), std::move(state), std::move(backlog)));
}

SnapshotStage::SnapshotStage(const Config& config, std::unique_ptr<snapshot::SnapshotReader> reader,
                             snapshot::SnapshotState state, std::function<snapshot::BacklogReading()> backlog)
    : reader_(std::move(reader)),
      coordinator_(std::move(state)),
      merger_(config.name, snapshot::control_tables(config), coordinator_),
      worker_(config, *reader_, coordinator_, std::move(backlog)),
      paused_(config.snapshot.paused) {}

SnapshotStage::~SnapshotStage() { stop(); }

void SnapshotStage::start(std::function<bool()> log_ready, std::function<void(const std::string&)> on_fatal) {
  thread_ = std::jthread([this, log_ready = std::move(log_ready), on_fatal = std::move(on_fatal)](std::stop_token stop) {
    name_this_thread("tm-snapshot");
    while (!log_ready()) {
      if (stop.stop_requested()) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (auto fatal = worker_.run(stop)) on_fatal("snapshot: " + *fatal);
  });
}

void SnapshotStage::stop() {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  thread_.join();
}

void SnapshotStage::reconfigure(const Config& config) {
  if (config.snapshot.paused != paused_) {
    paused_ = config.snapshot.paused;
    coordinator_.update([paused = paused_](snapshot::SnapshotState& s) { s.paused = paused; });
    spdlog::info("SIGHUP: snapshots {}", paused_ ? "paused" : "resumed");
  }
  worker_.reconfigure(config);
}

}  // namespace tidemark
