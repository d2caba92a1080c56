#pragma once
// Owns the pipeline's threads and its life cycle:
//   source thread --EventQueue--> publisher thread (serialize, produce, poll) --delivery reports-->
//   PositionTracker --main thread, every state.flush_interval_ms--> StateStore --> Source::on_position_persisted
// The main thread also handles signals (SIGTERM/SIGINT stop, SIGHUP reload) and talks to systemd.

#include <optional>
#include <string>

#include "config/config.hpp"

namespace tidemark {

// Exit statuses, documented in the README's operations section.
inline constexpr int kExitOk = 0;
inline constexpr int kExitStartupError = 1;  // bad config, unreachable broker, unusable state file...
inline constexpr int kExitFatal = 2;         // a fatal error while running; systemd restarts the daemon
inline constexpr int kExitUnflushed = 3;     // stopped on request, but Kafka did not acknowledge everything in time

struct DaemonOptions {
  std::string config_path;
  std::optional<std::string> log_level_override;  // --log-level beats log.level
};

// Runs until SIGTERM/SIGINT or a fatal error; returns the exit status.
int run_daemon(const DaemonOptions& options, Config config);

}  // namespace tidemark
