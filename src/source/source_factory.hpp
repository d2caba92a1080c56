#pragma once
// The per-database wiring: the one place that names each database's classes, chosen by the row of
// config/source_kinds.hpp.

#include <memory>

#include "config/config.hpp"
#include "snapshot/snapshot_reader.hpp"
#include "source/kafka/kafka_source.hpp"
#include "source/source.hpp"

namespace tidemark {

// What a source needs from the rest of the pipeline, wired by the daemon.
struct SourceServices {
  kafka::ClaimPartitions claim_partitions;  // source.type kafka: partitions claimed in the sink's target
};

// Throws std::runtime_error (at start-up) when the configured source type is not available.
std::unique_ptr<Source> make_source(const Config& config, SourceServices services = {});

// The snapshot reader of the configured database; nullptr for sources without snapshots.
std::unique_ptr<snapshot::SnapshotReader> make_snapshot_reader(const Config& config);

}  // namespace tidemark
