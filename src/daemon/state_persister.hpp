#pragma once
// Persists the pipeline's committed position to the state file, with the snapshot state the merge stage
// stamped on it. Invariant: the source confirms a position to the server (PostgreSQL's flush LSN) only
// after the state file holds it, so a crash never leaves the server ahead of the file. With a database
// sink the target's position table holds it before the tracker commits it, so there is no file.

#include <chrono>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "config/config.hpp"
#include "core/position_tracker.hpp"
#include "daemon/state_store.hpp"
#include "source/source.hpp"

namespace tidemark {

class StatePersister {
 public:
  // `extensions`: what the state file held besides the position (the snapshot state), kept and updated.
  // All references must outlive the persister.
  // Without `write_file` (a database sink, whose target holds the state), it only tells the source.
  StatePersister(const Config& config, PositionTracker& tracker, Source& source, nlohmann::json extensions,
                 bool write_file = true);

  // Writes the committed position if it moved since the last write, then tells the source. False when the
  // file could not be written (logged at most every 30 s; the next call tries again).
  bool persist();

 private:
  using Clock = std::chrono::steady_clock;

  std::string pipeline_;
  std::string source_type_;
  StateStore store_;
  PositionTracker& tracker_;
  Source& source_;
  nlohmann::json extensions_;
  uint64_t persisted_generation_;
  bool write_file_;
  Clock::time_point last_error_log_{};
};

}  // namespace tidemark
