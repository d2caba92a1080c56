#include "daemon/preflight.hpp"

#include <algorithm>
#include <exception>

#include "config/source_kinds.hpp"
#include "sink/database/database_sink.hpp"
#include "sink/database/conflict_log.hpp"
#include "sink/database/id_map.hpp"
#include "sink/database/kafka_offsets.hpp"
#include "sink/database/marker_table.hpp"
#include "sink/database/mapping_check.hpp"
#include "sink/exactly_once_sink.hpp"
#include "sink/kafka_sink.hpp"
#include "sink/record_sink.hpp"
#include "sink/sink_factory.hpp"
#include "sink/state_topic_reader.hpp"
#include "snapshot/control_tables.hpp"
#include "config/two_way_tables.hpp"
#include "source/source_factory.hpp"
#include "source/table_patterns.hpp"

namespace tidemark {

namespace {

void check_state(const Config& config, Preflight& out) {
  const StateStore store(config.state.path);
  StateLoadResult loaded = store.load();
  if (!loaded.error.empty()) {
    out.problems.push_back(loaded.error);
  } else if (loaded.state &&
             (loaded.state->pipeline != config.name || loaded.state->source_type != config.source.type)) {
    out.problems.push_back("state file " + config.state.path + " belongs to pipeline '" + loaded.state->pipeline +
                           "' (" + loaded.state->source_type + " source), not '" + config.name + "' (" +
                           config.source.type + " source): point state.path at this pipeline's own file");
  } else {
    out.state = std::move(loaded.state);
  }
  if (auto error = store.check_writable()) out.problems.push_back(*error);
  out.tracker = std::make_unique<PositionTracker>(out.state ? out.state->position : std::nullopt);
}

void check_sink(const Config& config, Preflight& out) {
  try {
    auto messages = make_message_sink(config, *out.tracker);
    if (auto* kafka = dynamic_cast<KafkaSink*>(messages.get())) {
      if (auto error = kafka->check_connection(std::chrono::milliseconds(config.sink.kafka.connect_timeout_ms)))
        out.problems.push_back(*error);
    }
    out.sink = std::make_unique<RecordSink>(publisher_options(config), std::move(messages), *out.tracker);
  } catch (const std::exception& e) {
    out.problems.push_back(e.what());
  }
}

// sink.kafka.exactly_once: the state topic holds the state, read with read_committed after
// init_transactions has fenced any earlier instance. The state file is then a cache, read only when the
// topic has no state of this pipeline yet (a pipeline switching to exactly-once goes on where it stood).
void check_exactly_once_sink(const Config& config, PreflightMode mode, Preflight& out) {
  const KafkaSinkConfig& k = config.sink.kafka;
  const std::chrono::milliseconds timeout(k.connect_timeout_ms);
  std::unique_ptr<KafkaSink> kafka;
  try {
    kafka = std::make_unique<KafkaSink>(k, "tidemark-" + config.name, *out.tracker);
  } catch (const std::exception& e) {
    out.problems.push_back(e.what());
    return;
  }
  if (auto error = kafka->check_connection(timeout)) {
    out.problems.push_back(*error);
    return;
  }
  // `check` must not fence a running instance; its read waits at most for that instance's next commit.
  if (mode == PreflightMode::Run) {
    if (auto error = kafka->init_transactions(timeout)) {
      out.problems.push_back(*error);
      return;
    }
  }
  StateTopicRead read = read_state_topic(k, config.name, timeout);
  if (!read.error.empty()) {
    out.problems.push_back("sink.kafka.exactly_once: " + read.error);
    return;
  }
  std::optional<PartialTransaction> partial;
  if (read.state) {
    if (read.state->source_type != config.source.type) {
      out.problems.push_back("sink.kafka.exactly_once: the state topic " + k.state_topic + " holds a position of a " +
                             read.state->source_type + " source for pipeline '" + config.name + "', not of a " +
                             config.source.type + " source: give this pipeline another name, or another sink.kafka.state_topic");
      return;
    }
    out.state = PersistedState{config.name, config.source.type, read.state->position, read.state->extensions};
    partial = read.state->partial;
  } else if (out.state) {
    out.warnings.push_back("sink.kafka.exactly_once: the state topic " + k.state_topic +
                           " holds no state of this pipeline yet; going on from the state file " + config.state.path);
  }
  if (mode == PreflightMode::Check) return;
  out.tracker = std::make_unique<PositionTracker>(out.state ? out.state->position : std::nullopt);
  kafka->bind_tracker(*out.tracker);
  int64_t transaction_timeout_ms = 60000;  // librdkafka's default
  if (const auto it = k.properties.find("transaction.timeout.ms"); it != k.properties.end())
    transaction_timeout_ms = std::stoll(it->second);
  ExactlyOnceOptions options{config.name,
                             config.source.type,
                             k.state_topic,
                             std::chrono::milliseconds(k.transaction_interval_ms),
                             static_cast<size_t>(k.transaction_max_bytes),
                             std::chrono::milliseconds(transaction_timeout_ms / 2),
                             out.state ? out.state->position : std::nullopt,
                             out.state ? out.state->extensions : nlohmann::json::object(),
                             partial};
  auto sink = std::make_unique<ExactlyOnceSink>(publisher_options(config), std::move(kafka), *out.tracker, std::move(options));
  if (auto error = sink->fatal_error()) out.problems.push_back(*error);
  out.sink = std::move(sink);
}

// sink.database.tables against both catalogs: each mapped table captured, existing on both sides, its
// columns there.
void check_mappings(const Config& config, dbsink::TargetConnection& target, Preflight& out) {
  // Records from Kafka name their tables themselves: a mapping is checked against the target with the
  // first record of its table.
  if (!describe_source(config.source).is_database) return;
  for (const auto& mapping : config.sink.database.tables)
    if (!table_selected(config.source.tables, mapping.source))
      out.problems.push_back("sink.database.tables (line " + std::to_string(mapping.line) + "): source " + mapping.source +
                             " is not captured: add it to source.tables");
  auto source = dbsink::make_target_connection(config.source, "tidemark-" + config.name + "-check");
  if (source->connect()) return;  // the source's own checks report it
  for (auto& problem : dbsink::check_mappings(config, *source, target)) out.problems.push_back(std::move(problem));
}

// One of the sink's own tables that a pipeline needs: created at start when missing (noted), or the problem
// with both fixes.
template <typename Table>
void ensure_own_table(const Table& table, const std::string& what, dbsink::TargetConnection& target, PreflightMode mode,
                      Preflight& out) {
  bool exists = false;
  if (auto failed = table.ensure(target, mode == PreflightMode::Run, exists))
    out.problems.push_back("sink.database: cannot create the " + what + " " + table.label() + ": " + failed->message +
                           "; grant CREATE on it to sink.database.user, or create it:\n  " + table.create_statement());
  else if (!exists)
    out.warnings.push_back("created at start: the " + what + " " + table.label());
}

// A database sink: the target holds the state (its position table, created when missing), so no state
// file is read or written.
void check_database_sink(const Config& config, PreflightMode mode, Preflight& out) {
  auto target = dbsink::make_target_connection(config.sink.database, "tidemark-" + config.name);
  std::optional<dbsink::AppliedPosition> applied;
  const dbsink::ApplyPositionTable table(config.sink.database, config.name);
  const std::optional<dbsink::TargetError> unreachable = target->connect();
  if (unreachable) {
    out.problems.push_back("sink.database: cannot connect to the target database: " + unreachable->message);
  } else {
    bool exists = false;
    dbsink::TargetError read_error;
    if (auto failed = table.ensure(*target, mode == PreflightMode::Run, exists)) {
      out.problems.push_back("sink.database: cannot create the position table " + table.label() + ": " +
                             failed->message + "; grant CREATE on it to sink.database.user, or create it:\n  " +
                             table.create_statement(*target));
    } else if (!exists) {
      out.warnings.push_back("created at start: the position table " + table.label());
    } else if (!(applied = table.read(*target, &read_error))) {
      out.problems.push_back("sink.database: cannot read the position table " + table.label() + ": " + read_error.message);
    } else if (applied->position && applied->source_type != config.source.type) {
      out.problems.push_back("sink.database: the position table " + table.label() + " holds a position of a " +
                             applied->source_type + " source for pipeline '" + config.name + "', not of a " +
                             config.source.type + " source: give this pipeline another name, or delete its row");
    } else if (applied->position) {
      out.state = PersistedState{config.name, config.source.type, applied->position, applied->extensions};
    }
  }
  if (!unreachable && config.source.type == "kafka")
    ensure_own_table(dbsink::KafkaOffsetsTable(config.sink.database, kafka_group_id(config)), "offsets table", *target,
                     mode, out);
  const auto& mappings = config.sink.database.tables;
  const bool id_map_needed = std::any_of(mappings.begin(), mappings.end(),
                                         [](const TableMapping& m) { return m.generated_key || !m.references.empty(); });
  if (!unreachable && id_map_needed)
    ensure_own_table(dbsink::IdMapTable(config.sink.database, config.name), "id map table", *target, mode, out);
  const bool versioned = std::any_of(mappings.begin(), mappings.end(), [](const TableMapping& m) { return !m.version.empty(); });
  if (!unreachable && (versioned || config.two_way.loses()))
    ensure_own_table(dbsink::ConflictLog(config.sink.database, config.name), "conflict table", *target, mode, out);
  if (!unreachable && !mappings.empty()) check_mappings(config, *target, out);
  if (!unreachable && config.two_way.enabled()) {
    const bool pg = target->dialect() == dbsink::Dialect::Postgres;
    const dbsink::MarkerTable marker(target->dialect(), pg ? config.sink.database.schema : config.sink.database.database,
                                     config.two_way.marker_table);
    bool exists = false;
    if (auto failed = marker.ensure(*target, mode == PreflightMode::Run, config.name, exists))
      out.problems.push_back("two_way: cannot create the marker table " + marker.label() + " in the target: " +
                             failed->message + "; grant CREATE (and INSERT, UPDATE on it) to sink.database.user, or "
                             "create it:\n  " + marker.create_statement());
    else if (!exists)
      out.warnings.push_back("created at start: the marker table " + marker.label() + " in the target");
  }
  out.tracker = std::make_unique<PositionTracker>(out.state ? out.state->position : std::nullopt);
  out.sink = std::make_unique<dbsink::DatabaseSink>(config, *out.tracker, std::move(target),
                                                     out.state ? out.state->extensions : nlohmann::json::object());
}

// With snapshots on, the watermark and signal tables must exist (or be created now) and be captured; the
// source checks them too (captured, in the publication) once they exist. Returns the configuration the
// source runs with: the control tables added once they exist.
Config check_snapshots(const Config& config, PreflightMode mode, Preflight& out) {
  if (!snapshot::snapshots_enabled(config)) return config;
  if (auto problem = snapshot::control_tables_problem(config)) {
    out.problems.push_back(*problem);
    return config;
  }
  if (out.state && out.state->extensions.contains("snapshot")) {
    auto restored = snapshot::snapshot_state_from_json(out.state->extensions["snapshot"]);
    if (!restored.ok())
      out.problems.push_back((is_database_sink(config) ? "the position table of sink.database" : "state file " + config.state.path) +
                             ": " + restored.error + "; fix or delete it");
    else
      out.snapshot_state = std::move(*restored.value);
  }
  if (!out.snapshot_state) out.snapshot_state.emplace();
  const Config with_tables = snapshot::with_control_tables(config);
  out.reader = make_snapshot_reader(with_tables);
  if (auto error = out.reader->connect()) {
    out.problems.push_back("snapshot connection: " + *error);
    return mode == PreflightMode::Run ? with_tables : config;
  }
  const bool create = mode == PreflightMode::Run && config.snapshot.create_tables;
  for (auto& p : out.reader->prepare(create)) {
    if (mode == PreflightMode::Check && config.snapshot.create_tables)
      out.warnings.push_back("created at start (snapshot.create_tables): " + p);
    else
      out.problems.push_back(std::move(p));
  }
  for (auto& w : out.reader->signal_table_warnings()) out.warnings.push_back(std::move(w));
  return mode == PreflightMode::Run || out.reader->control_tables_exist() ? with_tables : config;
}

// two_way.winner naming the peer: this pipeline compares old row images, which the source must log in full.
// `tables`: the captured tables as configured (not the pipeline's own control tables).
void check_old_images(const Config& config, const std::vector<std::string>& tables, dbsink::TargetConnection& source,
                      Preflight& out) {
  if (!config.two_way.loses()) return;
  dbsink::TargetError error;
  if (source.dialect() == dbsink::Dialect::MySql) {
    const auto rows = source.query("SELECT @@binlog_row_image", &error);
    if (rows && !rows->empty() && !rows->front().empty() && rows->front()[0] && *rows->front()[0] != "FULL")
      out.problems.push_back("two_way.winner: this pipeline loses conflicts and compares old row images, but the source "
                             "logs binlog_row_image=" + *rows->front()[0] + ": set binlog_row_image=FULL");
    return;
  }
  std::string listed;
  for (const auto& t : tables)
    if (t.find_first_of("*?") == std::string::npos) listed += (listed.empty() ? "" : ", ") + source.quote(t);
  if (listed.empty()) return;
  const auto rows = source.query(
      "SELECT n.nspname || '.' || c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
      "WHERE c.relkind IN ('r', 'p') AND c.relreplident <> 'f' AND n.nspname || '.' || c.relname IN (" + listed + ")",
      &error);
  if (!rows) return;  // the source's own checks report a connection problem
  for (const auto& row : *rows)
    if (!row.empty() && row[0])
      out.problems.push_back("two_way.winner: this pipeline loses conflicts and compares old row images, but " + *row[0] +
                             " logs only its key: ALTER TABLE " + *row[0] + " REPLICA IDENTITY FULL");
}

// Two-way sync: the source database's marker table (which the peer's sink updates) exists, created when
// missing, and is captured, so the echo filter sees the peer's marks. Returns the configuration the source
// runs with.
// `user_tables`: source.tables as configured.
Config check_two_way_source(const Config& config, const std::vector<std::string>& user_tables, PreflightMode mode,
                            Preflight& out) {
  if (!config.two_way.enabled()) return config;
  const std::string name = marker_table_in_source(config);
  auto source = dbsink::make_target_connection(config.source, "tidemark-" + config.name + "-check");
  if (source->connect()) return config;  // the source's own checks report it
  check_old_images(config, user_tables, *source, out);
  const size_t dot = name.find('.');
  const dbsink::MarkerTable marker(source->dialect(), name.substr(0, dot), name.substr(dot + 1));
  bool exists = false;
  if (auto failed = marker.ensure(*source, mode == PreflightMode::Run, config.two_way.peer, exists)) {
    out.problems.push_back("two_way: cannot create the marker table " + marker.label() + " in the source: " +
                           failed->message + "; create it (the peer pipeline's sink writes it):\n  " + marker.create_statement());
    return config;
  }
  if (!exists) out.warnings.push_back("created at start: the marker table " + marker.label() + " in the source");
  Config with_marker = config;
  // `tidemark check` creates nothing: the source checks only the tables that are there.
  if (exists) with_marker.source.tables.push_back(name);
  // Keys generated on this side: the peer's id map entries (the rows created on its side) come through the
  // log, so that their keys are known here too.
  const auto& mappings = config.sink.database.tables;
  if (std::none_of(mappings.begin(), mappings.end(), [](const TableMapping& m) { return m.generated_key; })) return with_marker;
  const std::string map_name = id_map_table_in_source(config);
  const size_t map_dot = map_name.find('.');
  const dbsink::IdMapTable peer_map(source->dialect(), map_name.substr(0, map_dot), map_name.substr(map_dot + 1),
                                    config.two_way.peer);
  if (auto failed = peer_map.ensure(*source, mode == PreflightMode::Run, exists)) {
    out.problems.push_back("two_way: cannot create the id map table " + peer_map.label() + " in the source: " +
                           failed->message + "; create it (the peer pipeline's sink writes it):\n  " +
                           peer_map.create_statement());
    return with_marker;
  }
  if (!exists) out.warnings.push_back("created at start: the id map table " + peer_map.label() + " in the source");
  if (exists) with_marker.source.tables.push_back(map_name);
  return with_marker;
}

// source.type kafka: a member claims its partitions in the target's offsets table, on a connection of its
// own (the claim runs on the source's thread, in a rebalance).
kafka::ClaimPartitions claims_in_target(const Config& config) {
  struct Claims {
    DatabaseSinkConfig settings;  // the connection refers to it
    dbsink::KafkaOffsetsTable table;
    std::unique_ptr<dbsink::TargetConnection> target;
    bool connected = false;
  };
  auto claims = std::make_shared<Claims>(
      Claims{config.sink.database, dbsink::KafkaOffsetsTable(config.sink.database, kafka_group_id(config)), nullptr});
  claims->target = dbsink::make_target_connection(claims->settings, "tidemark-" + config.name + "-claims");
  return [claims](const std::vector<std::string>& partitions, const std::string& owner, const kafka::StartOf& start_of) {
    if (!claims->connected) {
      if (auto failed = claims->target->connect())
        return Fallible<std::map<std::string, int64_t>>::failure("cannot connect to the target database: " + failed->message);
      claims->connected = true;
    }
    auto claimed = claims->table.claim(*claims->target, partitions, owner, start_of);
    if (!claimed.ok()) claims->connected = false;  // the next attempt starts on a fresh connection
    return claimed;
  };
}

void check_source(const Config& source_config, PreflightMode mode, Preflight& out) {
  try {
    SourceServices services;
    if (source_config.source.type == "kafka" && is_database_sink(source_config))
      services.claim_partitions = claims_in_target(source_config);
    out.source = make_source(source_config, std::move(services));
    for (auto& p : out.source->check()) out.problems.push_back(std::move(p));
    // A running source logs its own warnings when it starts streaming.
    if (mode == PreflightMode::Check)
      for (auto& w : out.source->warnings()) out.warnings.push_back(std::move(w));
  } catch (const std::exception& e) {
    out.problems.push_back(e.what());
  }
}

}  // namespace

Preflight run_preflight(const Config& config, PreflightMode mode) {
  Preflight out;
  if (is_database_sink(config)) {
    check_database_sink(config, mode, out);
  } else {
    check_state(config, out);
    if (config.sink.type == "kafka" && config.sink.kafka.exactly_once)
      check_exactly_once_sink(config, mode, out);
    else
      check_sink(config, out);
  }
  const Config source_config = check_two_way_source(check_snapshots(config, mode, out), config.source.tables, mode, out);
  check_source(source_config, mode, out);
  return out;
}

}  // namespace tidemark
