// tidemark: run the daemon, check a configuration, print the version.

#include <iostream>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "config/config_loader.hpp"
#include "config/settings_reference.hpp"
#include "config/secret_exposure.hpp"
#include "daemon/binlog_dump_command.hpp"
#include "daemon/preflight.hpp"
#include "daemon/daemon.hpp"
#include "daemon/http_endpoints.hpp"
#include "daemon/snapshot_commands.hpp"
#include "tidemark/version.hpp"

namespace {

// Logs go to stderr: stdout belongs to the stdout sink.
void set_up_logging() {
  auto logger = spdlog::stderr_color_mt("tidemark");
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  spdlog::set_default_logger(logger);
}

std::optional<tidemark::Config> load_or_report(const std::string& path) {
  tidemark::ConfigLoadResult loaded = tidemark::load_config_file(path, tidemark::process_environment());
  if (!loaded.ok()) {
    std::cerr << tidemark::format_errors(loaded.errors);
    return std::nullopt;
  }
  return std::move(loaded.config);
}

}  // namespace

int main(int argc, char** argv) {
  set_up_logging();
  CLI::App app{"Tidemark: change data capture from MySQL/MariaDB and PostgreSQL logs to Kafka"};
  app.set_version_flag("--version", std::string("tidemark ") + tidemark::kVersion);
  app.require_subcommand(1);
  std::string log_level;
  app.add_option("--log-level", log_level, "Log verbosity; overrides log.level")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));

  std::string config_path;
  CLI::App* run = app.add_subcommand("run", "Stream changes until SIGTERM");
  run->add_option("-c,--config", config_path, "YAML configuration file")->required();
  CLI::App* check = app.add_subcommand("check", "Validate the configuration and check the environment");
  check->add_option("-c,--config", config_path, "YAML configuration file")->required();

  tidemark::SnapshotCommandOptions snapshot_options;
  CLI::App* snapshot = app.add_subcommand("snapshot", "Ask the running daemon for a snapshot (writes a signal row)");
  snapshot->add_option("-c,--config", config_path, "YAML configuration file")->required();
  snapshot->add_option("-t,--table", snapshot_options.tables, "Table to snapshot (repeatable): schema.table or db.table");
  snapshot->add_option("--where", snapshot_options.where, "Only rows matching this SQL condition");
  snapshot->add_option("--chunk-size", snapshot_options.chunk_size, "Rows per chunk")->check(CLI::PositiveNumber);
  snapshot->add_option("--after", snapshot_options.after, "Key range: keys greater than this (one value per key column)");
  snapshot->add_option("--upto", snapshot_options.upto, "Key range: keys up to and including this");
  snapshot->add_flag("--pause", snapshot_options.pause, "Pause reading chunks (the log keeps streaming)");
  snapshot->add_flag("--resume", snapshot_options.resume, "Resume reading chunks");
  snapshot->add_flag("--stop", snapshot_options.stop, "Drop the queued and running snapshots (or, with --table, that table's)");
  CLI::App* status = app.add_subcommand("status", "Print the committed position and the snapshot progress");
  status->add_option("-c,--config", config_path, "YAML configuration file")->required();
  bool live_status = false;
  status->add_flag("--live", live_status, "Ask the running daemon (its /status endpoint on http.listen) instead of the state file");

  CLI::App* reference = app.add_subcommand("config-reference", "Print every configuration key as Markdown");

  tidemark::BinlogDumpOptions dump_options;
  CLI::App* binlog_dump = app.add_subcommand("binlog-dump", "Decode a MySQL/MariaDB binlog file; print its events as JSON lines");
  binlog_dump->add_option("file", dump_options.path, "Binlog file (e.g. mysql-bin.000001)")->required();
  binlog_dump->add_flag("--hex", dump_options.hex, "Also print each event's bytes as hex");
  binlog_dump->add_flag("--changes", dump_options.changes,
                        "Print the change records the daemon would publish (through its own change builder; the tables "
                        "need binlog_row_metadata=FULL)");

  CLI11_PARSE(app, argc, argv);
  if (reference->parsed()) {
    std::cout << tidemark::settings_reference_markdown();
    return 0;
  }
  if (binlog_dump->parsed()) return tidemark::run_binlog_dump(dump_options, std::cout, std::cerr);
  if (!log_level.empty()) spdlog::set_level(spdlog::level::from_str(log_level));

  const std::optional<tidemark::Config> config = load_or_report(config_path);
  if (check->parsed()) {
    if (!config) {
      std::cout << "configuration " << config_path << ": errors above\n";
      return 1;
    }
    tidemark::Preflight checked = tidemark::run_preflight(*config, tidemark::PreflightMode::Check);
    std::vector<std::string>& warnings = checked.warnings;
    const std::vector<std::string>& problems = checked.problems;
    if (auto exposed = tidemark::inline_secret_warning(config_path)) warnings.push_back(*exposed);
    for (const auto& w : warnings) std::cout << "warning: " << w << "\n";
    for (const auto& p : problems) std::cout << "problem: " << p << "\n";
    std::cout << (problems.empty() ? "ok: " + config_path + " is valid and its environment is ready\n"
                                   : std::to_string(problems.size()) + " problem(s) found\n");
    return problems.empty() ? 0 : 1;
  }
  if (!config) return tidemark::kExitStartupError;
  if (snapshot->parsed()) return tidemark::run_snapshot_command(*config, snapshot_options, std::cout, std::cerr);
  if (status->parsed() && live_status) {
    const tidemark::EndpointAnswer answer = tidemark::get_endpoint(config->http.listen, "/status");
    if (!answer.ok) {
      std::cerr << answer.error << "\n";
      return 1;
    }
    std::cout << answer.body;
    return 0;
  }
  if (status->parsed()) return tidemark::run_status_command(*config, std::cout, std::cerr);
  tidemark::DaemonOptions options{config_path, log_level.empty() ? std::nullopt : std::optional(log_level)};
  return tidemark::run_daemon(options, *config);
}
