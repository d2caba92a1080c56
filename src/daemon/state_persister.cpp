#include "daemon/state_persister.hpp"

#include <spdlog/spdlog.h>

namespace tidemark {

namespace {
constexpr std::chrono::seconds kErrorLogEvery{30};
}  // namespace

StatePersister::StatePersister(const Config& config, PositionTracker& tracker, Source& source, nlohmann::json extensions,
                               bool write_file)
    : pipeline_(config.name),
      source_type_(config.source.type),
      store_(config.state.path),
      tracker_(tracker),
      source_(source),
      extensions_(std::move(extensions)),
      persisted_generation_(tracker.committed().generation),
      write_file_(write_file) {}

bool StatePersister::persist() {
  const PositionTracker::Committed committed = tracker_.committed();
  if (committed.generation == persisted_generation_) return true;
  if (!write_file_) {
    persisted_generation_ = committed.generation;
    if (committed.position) source_.on_position_persisted(*committed.position);
    return true;
  }
  if (committed.position && committed.position->snapshot_state) {
    // The snapshot state that belongs to this position (stamped by the merge stage).
    auto snapshot_state = nlohmann::json::parse(*committed.position->snapshot_state, nullptr, false);
    if (!snapshot_state.is_discarded()) extensions_["snapshot"] = std::move(snapshot_state);
  }
  const PersistedState state{pipeline_, source_type_, committed.position, extensions_};
  if (auto error = store_.save(state)) {
    const auto now = Clock::now();
    if (now - last_error_log_ >= kErrorLogEvery) {
      spdlog::error("{}", *error);
      last_error_log_ = now;
    }
    return false;
  }
  persisted_generation_ = committed.generation;
  if (committed.position) source_.on_position_persisted(*committed.position);
  spdlog::debug("persisted position {}", committed.position ? committed.position->token : "(none)");
  return true;
}

}  // namespace tidemark
