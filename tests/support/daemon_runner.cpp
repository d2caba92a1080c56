#include "daemon_runner.hpp"

#include <nlohmann/json.hpp>

#include "kafka_client.hpp"

namespace tidemark::test {

DaemonRunner::DaemonRunner(std::string bootstrap, GeneratorSettings generator)
    : bootstrap_(std::move(bootstrap)),
      name_(unique_name("it")),
      config_path_(dir_.file("tidemark.yaml")),
      state_path_(dir_.file("state.json")),
      generator_(generator) {}

void DaemonRunner::write_config(const std::string& sink_yaml, const std::string& log_level,
                                const std::string& source_yaml) {
  std::string yaml = "name: " + name_ + "\n";
  yaml += "log:\n  level: " + log_level + "\n";
  if (!source_yaml.empty()) {
    yaml += source_yaml;
  } else {
    yaml += "source:\n  type: generator\n  generator:\n";
    yaml += "    tables: " + std::to_string(generator_.tables) + "\n";
    yaml += "    keys: " + std::to_string(generator_.keys) + "\n";
    yaml += "    total_events: " + std::to_string(generator_.total_events) + "\n";
    yaml += "    rate_per_second: " + std::to_string(generator_.rate_per_second) + "\n";
    yaml += "    transaction_size: " + std::to_string(generator_.transaction_size) + "\n";
    yaml += "    row_bytes: " + std::to_string(generator_.row_bytes) + "\n";
  }
  if (sink_yaml.empty()) {
    yaml += "sink:\n  type: kafka\n  kafka:\n    bootstrap_servers: " + bootstrap_ + "\n";
  } else {
    yaml += sink_yaml;
  }
  yaml += "state:\n  path: " + state_path_ + "\n  flush_interval_ms: 100\n";
  write_file(config_path_, yaml);
}

void DaemonRunner::start(const std::string& subcommand, const std::vector<std::string>& extra_env) {
  ++runs_;
  process_ = std::make_unique<ChildProcess>(
      std::vector<std::string>{TIDEMARK_BINARY, subcommand, "--config", config_path_}, dir_.file("stdout.log"),
      dir_.file("stderr.log"), false, extra_env);
}

std::optional<int> DaemonRunner::stop(int sig, std::chrono::milliseconds timeout) {
  process_->signal(sig);
  return process_->wait_for_exit(timeout);
}

std::optional<int64_t> DaemonRunner::committed_sequence() const {
  const std::string text = read_file(state_path_);
  if (text.empty()) return std::nullopt;
  const auto doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.contains("position") || doc["position"].is_null()) return std::nullopt;
  const std::string token = doc["position"].get<std::string>();
  return std::stoll(token.substr(token.find(':') + 1));
}

}  // namespace tidemark::test
