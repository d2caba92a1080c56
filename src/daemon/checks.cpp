#include "daemon/checks.hpp"

#include "daemon/position_tracker.hpp"
#include "daemon/state_store.hpp"
#include "sink/kafka_sink.hpp"
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

  try {
    const auto source = make_source(config);
    for (auto& p : source->check()) problems.push_back(std::move(p));
    if (warnings)
      for (auto& w : source->warnings()) warnings->push_back(std::move(w));
  } catch (const std::exception& e) {
    problems.push_back(e.what());
  }
  return problems;
}

}  // namespace tidemark
