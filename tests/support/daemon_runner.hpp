#pragma once
// Runs the real `tidemark` binary with a generated configuration, for end-to-end tests.

#include <memory>
#include <optional>
#include <string>

#include "process.hpp"

namespace tidemark::test {

struct GeneratorSettings {
  int tables = 1;
  int keys = 100;
  int64_t total_events = 0;
  int64_t rate_per_second = 0;
  int transaction_size = 1;
  int row_bytes = 100;
};

class DaemonRunner {
 public:
  DaemonRunner(std::string bootstrap, GeneratorSettings generator);

  const std::string& name() const { return name_; }  // also the topic prefix
  const std::string& config_path() const { return config_path_; }
  const std::string& state_path() const { return state_path_; }
  GeneratorSettings& generator() { return generator_; }

  // Writes the config file; `extra_yaml` is appended at top level (e.g. "sink:\n  type: stdout\n").
  // `source_yaml` replaces the generator source (e.g. a postgres source block).
  void write_config(const std::string& sink_yaml = "", const std::string& log_level = "info",
                    const std::string& source_yaml = "");
  void start(const std::string& subcommand = "run", const std::vector<std::string>& extra_env = {});
  ChildProcess& process() { return *process_; }
  bool started() const { return process_ != nullptr; }
  std::optional<int> stop(int sig, std::chrono::milliseconds timeout = std::chrono::seconds(60));

  // The committed generator position (the next sequence) from the state file, if any.
  std::optional<int64_t> committed_sequence() const;
  std::string stderr_text() const { return read_file(dir_.file("stderr.log")); }
  std::string stdout_text() const { return read_file(dir_.file("stdout.log")); }
  const TempDir& dir() const { return dir_; }

 private:
  TempDir dir_;
  std::string bootstrap_;
  std::string name_;
  std::string config_path_;
  std::string state_path_;
  GeneratorSettings generator_;
  std::unique_ptr<ChildProcess> process_;
  int runs_ = 0;
};

}  // namespace tidemark::test
