#pragma once
// `tidemark snapshot ...` writes a signal row for the user (the daemon acts on it when it reads it from the
// log, exactly like a row inserted by hand); `tidemark status` prints the snapshot progress the daemon
// persisted in its state file.

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "config/config.hpp"

namespace tidemark {

struct SnapshotCommandOptions {
  std::vector<std::string> tables;  // execute-snapshot of these tables
  std::string where;
  int64_t chunk_size = 0;
  std::vector<std::string> after;  // key range: keys > after ...
  std::vector<std::string> upto;   // ... and <= upto
  bool pause = false;
  bool resume = false;
  bool stop = false;
};

// Returns the exit status: 0 when the signal row was written.
int run_snapshot_command(const Config& config, const SnapshotCommandOptions& options, std::ostream& out, std::ostream& err);

int run_status_command(const Config& config, std::ostream& out, std::ostream& err);

}  // namespace tidemark
