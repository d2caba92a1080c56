#pragma once
// The start-up checks, one path for `tidemark check` and `tidemark run`: the state (file, or a database
// sink's position table), the sink, the snapshot control tables and reader, the source's prerequisites. Every problem is reported at once, each
// naming its fix; `run` starts only when there is none, and keeps what the checks built.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "core/position_tracker.hpp"
#include "daemon/state_store.hpp"
#include "sink/change_sink.hpp"
#include "snapshot/snapshot_reader.hpp"
#include "snapshot/snapshot_state.hpp"
#include "source/source.hpp"

namespace tidemark {

enum class PreflightMode {
  Check,  // changes nothing: tables that snapshot.create_tables would create are warnings
  Run,    // creates the control tables when snapshot.create_tables says so
};

struct Preflight {
  std::vector<std::string> problems;
  std::vector<std::string> warnings;  // recommendations: `check` prints them and still succeeds

  // What the checks built, for the run.
  // The stored state (the state file's, or a database sink's position table's); absent on a first start.
  std::optional<PersistedState> state;
  std::unique_ptr<PositionTracker> tracker;
  std::unique_ptr<ChangeSink> sink;
  std::unique_ptr<snapshot::SnapshotReader> reader;       // connected; null without snapshots
  std::optional<snapshot::SnapshotState> snapshot_state;  // restored from the state file; with snapshots only
  std::unique_ptr<Source> source;
};

Preflight run_preflight(const Config& config, PreflightMode mode);

}  // namespace tidemark
