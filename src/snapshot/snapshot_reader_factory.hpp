#pragma once

#include <memory>

#include "config/config.hpp"
#include "snapshot/snapshot_reader.hpp"

namespace tidemark::snapshot {

// The reader of the configured database (postgres or mysql); nullptr for sources without snapshots.
std::unique_ptr<SnapshotReader> make_snapshot_reader(const Config& config);

}  // namespace tidemark::snapshot
