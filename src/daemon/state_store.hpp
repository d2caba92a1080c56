#pragma once
// The state that survives a restart: the committed source position (and, later, the snapshot state),
// written to one JSON file with write, fsync and an atomic rename, so a crash leaves either the old or the
// new file, never a torn one.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "tidemark/change_event.hpp"

namespace tidemark {

struct PersistedState {
  std::string pipeline;     // config `name`; a state file of another pipeline is refused
  std::string source_type;  // config `source.type`
  std::optional<SourcePosition> position;
  nlohmann::json extensions = nlohmann::json::object();  // the other stages' state: "snapshot" (snapshot_state.hpp)
};

struct StateLoadResult {
  std::optional<PersistedState> state;  // absent on first start (no file)
  std::string error;                    // set when a file exists but cannot be used
};

class StateStore {
 public:
  explicit StateStore(std::string path);

  StateLoadResult load() const;
  // Returns an error naming the cause and the fix; the previous file is then still intact.
  std::optional<std::string> save(const PersistedState& state) const;
  // Checks that the directory exists and a file can be created in it (for `tidemark check`).
  std::optional<std::string> check_writable() const;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace tidemark
