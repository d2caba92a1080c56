#include "daemon/checks.hpp"

#include "core/position_tracker.hpp"
#include "daemon/state_store.hpp"
#include "sink/kafka_sink.hpp"
#include "snapshot/control_tables.hpp"
#include "source/source_factory.hpp"

namespace tidemark {

std::vector<std::string> check_environment(const Config& config, std::vector<std::string>* warnings) {
  std::vector<std::string> problems;

  const StateStore store(config.state.path);
  const StateLoadResult loaded = store.load();
  if (!loaded.error.empty()) problems.push_back(loaded.error);
  if (loaded.state && (loaded.state->pipeline != config.name || loaded.state->source_type != config.source.type))
    problems.push_back("state file " + config.state.path + " belongs to pipeline '" + loaded.state->pipeline +
                       "', not '" + config.name + "': point state.path at this pipeline's own file");
  if (auto error = store.check_writable()) problems.push_back(*error);

  if (config.sink.type == "kafka") {
    try {
      PositionTracker tracker;
      KafkaSink sink(config.sink.kafka, "tidemark-check-" + config.name, tracker);
      if (auto error = sink.check_connection(std::chrono::milliseconds(config.sink.kafka.connect_timeout_ms)))
        problems.push_back(*error);
    } catch (const std::exception& e) {
      problems.push_back(e.what());
    }
  }

  // With snapshots on, the watermark and signal tables must exist (or be creatable) and be captured.
  // The source checks the control tables too (captured, in the publication) once they exist; tables still
  // to be created at start are reported below instead.
  Config source_config = config;
  if (auto problem = snapshot::control_tables_problem(config)) {
    problems.push_back(*problem);
  } else if (snapshot::snapshots_enabled(config)) {
    const Config with_tables = snapshot::with_control_tables(config);
    const auto reader = make_snapshot_reader(with_tables);
    if (auto error = reader->connect()) {
      problems.push_back("snapshot connection: " + *error);
    } else {
      const std::vector<std::string> missing = reader->prepare(false);
      if (reader->control_tables_exist()) source_config = with_tables;
      if (warnings)
        for (auto& w : reader->signal_table_warnings()) warnings->push_back(std::move(w));
      for (auto p : missing) {
        if (config.snapshot.create_tables && warnings) {
          warnings->push_back("created at start (snapshot.create_tables): " + p);
        } else if (!config.snapshot.create_tables) {
          problems.push_back(std::move(p));
        }
      }
    }
  }

  try {
    const auto source = make_source(source_config);
    for (auto& p : source->check()) problems.push_back(std::move(p));
    if (warnings)
      for (auto& w : source->warnings()) warnings->push_back(std::move(w));
  } catch (const std::exception& e) {
    problems.push_back(e.what());
  }
  return problems;
}

}  // namespace tidemark
