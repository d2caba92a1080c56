#include "daemon/snapshot_commands.hpp"

#include "db/leader_lease.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include <nlohmann/json.hpp>

#include "core/text_excerpt.hpp"
#include "daemon/state_store.hpp"
#include "snapshot/control_tables.hpp"
#include "snapshot/signal.hpp"
#include "source/source_factory.hpp"

namespace tidemark {

namespace {

using snapshot::KeyText;

std::string signal_id() {
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch());
  std::random_device random;
  return "cli-" + std::to_string(now.count()) + "-" + std::to_string(random() % 100000);
}

std::optional<KeyText> key_of(const std::vector<std::string>& parts) {
  if (parts.empty()) return std::nullopt;
  KeyText key;
  for (const auto& p : parts) key.emplace_back(p);
  return key;
}

std::string key_text(const std::optional<KeyText>& key) {
  if (!key) return "-";
  std::string out = "(";
  for (size_t i = 0; i < key->size(); ++i) out += (i ? ", " : "") + ((*key)[i] ? *(*key)[i] : std::string("NULL"));
  return out + ")";
}

// A single integer key: how far `last` is between `first` and `max`, for the time-left estimate.
std::optional<double> progress_fraction(const snapshot::TableProgress& c) {
  if (!c.first_key || !c.last_key || !c.max_key || c.max_key->size() != 1 || c.last_key->size() != 1) return std::nullopt;
  try {
    const double first = std::stod(c.first_key->at(0).value_or(""));
    const double last = std::stod(c.last_key->at(0).value_or(""));
    const double max = std::stod(c.max_key->at(0).value_or(""));
    if (max <= first) return std::nullopt;
    return std::clamp((last - first) / (max - first), 0.0, 1.0);
  } catch (const std::exception&) {
    return std::nullopt;  // not a number: no estimate
  }
}

}  // namespace

int run_snapshot_command(const Config& config, const SnapshotCommandOptions& options, std::ostream& out, std::ostream& err) {
  if (!snapshot::snapshots_enabled(config)) {
    err << "snapshots need a postgres or mysql source and snapshot.enabled: true\n";
    return 1;
  }
  const int actions = (options.tables.empty() ? 0 : 1) + options.pause + options.resume + options.stop;
  if (actions != 1 && !(options.stop && !options.tables.empty() && actions == 2)) {
    err << "give one of --table, --pause, --resume, --stop (--stop --table T stops one table)\n";
    return 1;
  }
  std::string type;
  std::string data;
  if (options.stop) {
    type = "stop-snapshot";
    nlohmann::json tables = nlohmann::json::array();
    for (const auto& t : options.tables) tables.push_back(t);
    data = options.tables.empty() ? nlohmann::json{{"pipeline", config.name}}.dump()
                                  : nlohmann::json{{"tables", tables}, {"pipeline", config.name}}.dump();
  } else if (options.pause) {
    type = "pause-snapshot";
    data = nlohmann::json{{"pipeline", config.name}}.dump();
  } else if (options.resume) {
    type = "resume-snapshot";
    data = nlohmann::json{{"pipeline", config.name}}.dump();
  } else {
    type = "execute-snapshot";
    nlohmann::json tables = nlohmann::json::array();
    for (const auto& t : options.tables) {
      snapshot::TableRequest r;
      r.table = t;
      r.where = options.where;
      r.after = key_of(options.after);
      r.upto = key_of(options.upto);
      r.chunk_size = options.chunk_size;
      tables.push_back(nlohmann::json::parse(snapshot::execute_snapshot_data(r)).at("tables").at(0));
    }
    data = nlohmann::json{{"tables", tables}, {"pipeline", config.name}}.dump();
  }
  const auto reader = make_snapshot_reader(snapshot::with_control_tables(config));
  if (auto error = reader->connect()) {
    err << "cannot connect: " << *error << "\n";
    return 1;
  }
  const std::string id = signal_id();
  if (auto error = reader->insert_signal(id, type, data)) {
    err << "cannot write the signal row: " << *error << "\n";
    return 1;
  }
  out << "signal " << id << " written: " << type << (data.empty() ? "" : " " + data) << "\n";
  return 0;
}

int run_status_command(const Config& config, std::ostream& out, std::ostream& err) {
  const StateLoadResult loaded = StateStore(config.state.path).load();
  if (!loaded.error.empty()) {
    err << loaded.error << "\n";
    return 1;
  }
  if (config.ha.enabled) {
    LeaderLease lease(config);
    const auto holder = lease.holder();
    out << "leader: " << (holder ? *holder : std::string("none (no instance holds the lease, or the source cannot be asked)"))
        << "\n";
  }
  if (!loaded.state) {
    out << "pipeline " << config.name << ": no state yet (" << config.state.path << " does not exist)\n";
    return 0;
  }
  out << "pipeline " << config.name << "\n";
  out << "position: " << (loaded.state->position ? loaded.state->position->token : "(none)") << "\n";
  if (!loaded.state->extensions.contains("snapshot")) {
    out << "snapshots: none requested\n";
    return 0;
  }
  auto parsed = snapshot::snapshot_state_from_json(loaded.state->extensions["snapshot"]);
  if (!parsed.ok()) {
    err << parsed.error << "\n";
    return 1;
  }
  const snapshot::SnapshotState& s = *parsed.value;
  out << "snapshots: " << (s.paused ? "paused" : s.idle() ? "idle" : "running") << "; " << s.tables_done
      << " table(s) done, " << s.rows_done << " rows\n";
  if (s.current) {
    const auto& c = *s.current;
    const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch()).count();
    const double elapsed_s = std::max<double>(0.001, static_cast<double>(now - c.started_ms) / 1000.0);
    out << "current: " << c.request.table << (c.request.where.empty() ? "" : " where " + excerpt(c.request.where)) << "\n";
    out << "  rows " << c.rows << ", chunks " << c.chunks << ", " << std::llround(static_cast<double>(c.rows) / elapsed_s)
        << " rows/s\n";
    out << "  last key " << key_text(c.last_key) << ", max key " << key_text(c.max_key) << "\n";
    if (const auto f = progress_fraction(c); f && *f > 0) {
      out << "  about " << std::llround(*f * 100) << "% done, " << std::llround(elapsed_s * (1 - *f) / *f)
          << " s left\n";
    } else {
      out << "  time left: unknown (needs a single numeric key)\n";
    }
  }
  // Long queues and conditions are summarized: the state file may hold up to 10,000 queued tables.
  size_t shown = 0;
  for (const auto& r : s.queue) {
    if (++shown > 20) {
      out << "queued: ... and " << s.queue.size() - 20 << " more\n";
      break;
    }
    out << "queued: " << excerpt(r.table, 100) << (r.where.empty() ? "" : " where " + excerpt(r.where)) << "\n";
  }
  if (!s.last_error.empty()) out << "last error: " << excerpt(s.last_error, 1000) << "\n";
  return 0;
}

}  // namespace tidemark
