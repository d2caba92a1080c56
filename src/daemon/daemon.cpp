#include "daemon/daemon.hpp"

#include <csignal>
#include <ctime>

#include <atomic>
#include <chrono>
#include <thread>

#include <spdlog/spdlog.h>

#include "config/config_loader.hpp"
#include "config/settings.hpp"
#include "core/pipeline_metrics.hpp"
#include "core/position_tracker.hpp"
#include "core/thread_name.hpp"
#include "daemon/http_endpoints.hpp"
#include "daemon/preflight.hpp"
#include "daemon/publish_stage.hpp"
#include "daemon/snapshot_stage.hpp"
#include "daemon/state_persister.hpp"
#include "daemon/systemd_notifier.hpp"
#include "db/leader_lease.hpp"
#include "sink/sink_factory.hpp"

namespace tidemark {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kSignalWait{100};
constexpr std::chrono::seconds kAbortGrace{5};
constexpr std::chrono::milliseconds kProbeInterval{5000};
// A standby asks for the lease, and a leader touches it, this often.
constexpr std::chrono::milliseconds kLeaseInterval{1000};

sigset_t handled_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  return set;
}

// Waits for one of the handled signals for up to `timeout`; 0 when none came.
int wait_for_signal(const sigset_t& set, std::chrono::milliseconds timeout) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  ts.tv_nsec = static_cast<long>(timeout.count() % 1000 * 1'000'000);
  const int sig = sigtimedwait(&set, nullptr, &ts);
  return sig > 0 ? sig : 0;
}

void apply_log_level(const DaemonOptions& options, const Config& config) {
  spdlog::set_level(spdlog::level::from_str(options.log_level_override.value_or(config.log_level)));
}

// The pipeline of one run, from start-up to exit: the source thread feeds the bounded event queue, the
// publish stage drains it into the sink (through the snapshot stage's merge when snapshotting), and the
// main thread waits for signals, persists the committed position and feeds the watchdog.
class Pipeline {
 public:
  Pipeline(const DaemonOptions& options, Config config)
      : options_(options),
        config_(std::move(config)),
        metrics_(config_.name),
        ready_max_lag_ms_(config_.http.ready_max_lag_ms),
        http_(endpoint_handlers()) {}

  int run() {
    const sigset_t signals = handled_signals();
    // Block before any thread starts so that only the main thread's sigtimedwait receives them.
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    std::signal(SIGPIPE, SIG_IGN);

    if (config_.ha.enabled) {
      lease_.emplace(config_);
      if (const auto error = http_.listen(config_.http.listen)) {  // a standby answers /status too
        spdlog::error("{}", *error);
        return kExitStartupError;
      }
      if (!wait_for_lease(signals)) return kExitOk;
    }
    if (!start()) return kExitStartupError;
    if (const auto error = http_.listen(config_.http.listen)) {
      spdlog::error("{}", *error);
      stop();
      return kExitStartupError;
    }
    notifier_.ready();
    spdlog::info("tidemark {} streaming: source {} -> sink {}", config_.name, config_.source.type, config_.sink.type);

    auto last_persist = Clock::now();
    auto last_watchdog = Clock::now();
    int exit_code = kExitOk;
    for (;;) {
      const int sig = wait_for_signal(signals, kSignalWait);
      if (sig == SIGTERM || sig == SIGINT) {
        spdlog::info("received {}: stopping intake, flushing the sink", sig == SIGTERM ? "SIGTERM" : "SIGINT");
        break;
      }
      if (sig == SIGHUP) reload();
      main_beat_ns_ = Clock::now().time_since_epoch().count();
      metrics_.sample(sample());
      if (const auto error = fatal_error()) {
        spdlog::error("stopping after a fatal error: {}", *error);
        exit_code = kExitFatal;
        break;
      }
      if (lease_lost_) {
        // Another instance may lead by now: write nothing more (what is open is abandoned, and replayed by
        // the new leader from the committed state).
        spdlog::error("ha: instance {} lost the lease of pipeline {} (its session on the source ended or the source "
                      "cannot be reached); stopping without writing more",
                      lease_->instance(), config_.name);
        sink_->abort();
        metrics_.set_leader(false);
        exit_code = kExitFatal;
        break;
      }
      const auto now = Clock::now();
      if (now - last_persist >= std::chrono::milliseconds(config_.state.flush_interval_ms)) {
        persist();
        last_persist = now;
      }
      if (const auto interval = notifier_.watchdog_interval(); interval && now - last_watchdog >= *interval / 2) {
        // Only a publisher that is making progress, idle-polling, or waiting on Kafka's backpressure (an
        // outage shorter than delivery_timeout_ms is not a failure) keeps the watchdog quiet.
        const bool beating = now - publish_stage_->last_beat() < *interval;
        if (beating || sink_->waiting_for_room()) notifier_.watchdog();
        last_watchdog = now;
      }
    }
    const int stop_code = stop();
    return exit_code != kExitOk ? exit_code : stop_code;
  }

 private:
  bool start() {
    Preflight checked = run_preflight(config_, PreflightMode::Run);
    for (const auto& w : checked.warnings) spdlog::warn("{}", w);
    for (const auto& p : checked.problems) spdlog::error("{}", p);
    if (!checked.problems.empty()) return false;
    nlohmann::json extensions = nlohmann::json::object();
    if (checked.state) {
      start_position_ = checked.state->position;
      extensions = checked.state->extensions;
    }
    if (config_.source.type == "kafka")
      spdlog::info("state in the target's {}: each partition goes on where it stands there when it is assigned",
                   config_.sink.database.offsets_table);
    else
      spdlog::info("state {}: {}", is_database_sink(config_) ? "in the target's " + config_.sink.database.position_table : config_.state.path,
                   start_position_ ? "resuming after " + start_position_->token : std::string("first start"));
    tracker_ = std::move(checked.tracker);
    tracker_->set_commit_observer([this](int64_t commit_ts_ms) { metrics_.observe_commit(commit_ts_ms); });
    sink_ = std::move(checked.sink);
    sink_->attach_metrics(metrics_);
    source_ = std::move(checked.source);
    persister_.emplace(config_, *tracker_, *source_, std::move(extensions), !is_database_sink(config_));
    if (checked.reader) {
      snapshots_ = SnapshotStage::create(config_, !start_position_, std::move(checked.reader),
                                         std::move(*checked.snapshot_state), [this] {
                                           const PipelineMetrics::Acknowledgements acks = metrics_.take_acknowledgements();
                                           return snapshot::BacklogReading{
                                               static_cast<uint64_t>(queue_ ? queue_->size() : 0) + tracker_->in_flight(),
                                               acks.count, acks.max_latency};
                                         });
      if (!snapshots_) return false;
      snapshots_->merger().set_metrics(&metrics_);
    }

    queue_.emplace(static_cast<size_t>(config_.queue.max_events), static_cast<size_t>(config_.queue.max_bytes),
                   [](const StreamItem& item) { return approximate_bytes(item); });
    if (config_.two_way.enabled()) echo_.emplace(marker_table_in_source(config_), id_map_table_in_source(config_), config_.two_way.peer,
                                                 config_.name);
    publish_stage_.emplace(*queue_, echo_ ? &*echo_ : nullptr, snapshots_ ? &snapshots_->merger() : nullptr, *sink_,
                           std::chrono::milliseconds(config_.sink.kafka.flush_timeout_ms),
                           std::chrono::milliseconds(config_.heartbeat.interval_ms));
    publish_stage_->start();
    source_thread_ = std::jthread([this](std::stop_token stop) {
      name_this_thread("tm-source");
      SourceOutcome outcome = source_->run(start_position_, *queue_, stop);
      if (!outcome.ok) record_fatal(outcome.error);
    });
    if (snapshots_)
      snapshots_->start([this] { return source_->connected() || fatal_error().has_value(); },
                        [this](const std::string& error) { record_fatal(error); });
    if (config_.heartbeat.interval_ms > 0 && !config_.heartbeat.action_query.empty()) {
      action_thread_ = std::jthread([this](std::stop_token stop) {
        name_this_thread("tm-heartbeat");
        run_action_query_loop(std::chrono::milliseconds(config_.heartbeat.interval_ms), config_.heartbeat.action_query, stop);
      });
    }
    // How far the server's log runs ahead of the committed position: a query on the source, so not in
    // the 100 ms sampling of the main loop.
    probe_thread_ = std::jthread([this](std::stop_token stop) {
      name_this_thread("tm-lag-probe");
      run_every(kProbeInterval, stop, [&] {
        const auto behind = source_->log_bytes_behind(tracker_->committed().position);
        log_bytes_behind_ = behind.value_or(-1);
      });
    });
    running_ = true;
    return true;
  }

  // Waits as a standby until this instance holds the lease (ha.enabled), then keeps it alive on its own
  // thread. False when told to stop while waiting.
  bool wait_for_lease(const sigset_t& signals) {
    notifier_.ready();  // a standby is up and healthy: systemd must not time its start out
    metrics_.set_leader(false);
    std::string last_note;
    for (;;) {
      std::string error;
      if (lease_->try_acquire(error)) break;
      std::string note;
      if (!error.empty()) {
        note = "ha: " + error + "; trying again";
      } else {
        const auto holder = lease_->holder();
        note = "ha: instance " + lease_->instance() + " is a standby for pipeline " + config_.name + "; " +
               (holder ? *holder : std::string("another instance")) + " leads";
      }
      if (note != last_note) (error.empty() ? spdlog::info("{}", note) : spdlog::warn("{}", note));
      last_note = note;
      notifier_.status("standby");
      if (notifier_.watchdog_interval()) notifier_.watchdog();
      const int sig = wait_for_signal(signals, kLeaseInterval);
      if (sig == SIGTERM || sig == SIGINT) {
        spdlog::info("standby stopped");
        return false;
      }
    }
    spdlog::info("ha: instance {} holds the lease of pipeline {} and leads", lease_->instance(), config_.name);
    leading_ = true;
    metrics_.set_leader(true);
    lease_thread_ = std::jthread([this](std::stop_token stop) {
      name_this_thread("tm-ha-lease");
      run_every(kLeaseInterval, stop, [&] {
        if (!lease_lost_ && !lease_->renew()) lease_lost_ = true;
      });
    });
    return true;
  }

  // heartbeat.action_query at every heartbeat, on the source's own connection for it; a failure is logged
  // and tried again at the next one.
  void run_action_query_loop(std::chrono::milliseconds interval, const std::string& sql, std::stop_token stop) {
    run_every(interval, stop, [&] {
      if (const auto error = source_->run_action_query(sql)) spdlog::warn("{}", *error);
    });
  }

  // Runs `work` now and then every `interval` until `stop` (checked every 100 ms).
  template <typename Work>
  static void run_every(std::chrono::milliseconds interval, const std::stop_token& stop, Work&& work) {
    for (;;) {
      work();
      for (auto waited = std::chrono::milliseconds(0); waited < interval; waited += kSignalWait) {
        if (stop.stop_requested()) return;
        std::this_thread::sleep_for(std::min(kSignalWait, interval));
      }
    }
  }

  void record_fatal(const std::string& error) {
    const std::lock_guard lock(fatal_mutex_);
    if (!fatal_) fatal_ = error;
  }

  std::optional<std::string> fatal_error() {
    if (auto error = sink_->fatal_error()) return error;
    {
      const std::lock_guard lock(fatal_mutex_);
      if (fatal_) return fatal_;
    }
    if (publish_stage_->failed()) return std::string("the sink stopped accepting records");
    return std::nullopt;
  }

  bool persist() {
    const bool ok = persister_->persist();
    if (ok) last_persisted_ns_ = Clock::now().time_since_epoch().count();
    return ok;
  }

  // ---- what the metrics and the HTTP endpoints read (the endpoints call from their own threads) ----
  bool running() const { return running_.load(); }

  PipelineSample sample() const {
    PipelineSample s;
    s.queue_events = queue_->size();
    s.queue_bytes = queue_->bytes();
    s.records_in_flight = tracker_->in_flight();
    s.source_connected = source_->connected();
    s.source_reconnects = source_->reconnects();
    s.source_log_bytes_behind = log_bytes_behind_.load();
    s.state_file_age_seconds = seconds_since(last_persisted_ns_.load());
    if (snapshots_) {
      const snapshot::SnapshotState state = snapshots_->state();
      s.snapshots = true;
      s.snapshot_running = state.current.has_value();
      s.snapshot_paused = state.paused;
      s.snapshot_tables_done = state.tables_done;
      s.snapshot_tables_queued = state.queue.size();
      s.snapshot_last_error = state.last_error;
    }
    return s;
  }

  static double seconds_since(int64_t steady_ns) {
    return std::chrono::duration<double>(Clock::now().time_since_epoch() - Clock::duration(steady_ns)).count();
  }

  HttpHandlers endpoint_handlers() {
    HttpHandlers h;
    h.metrics = [this] { return metrics_.text(); };
    h.alive = [this] {
      if (!running()) return false;
      // The main loop ticks every 100 ms; the publisher beats while it makes progress or idles, and waits
      // on Kafka's backpressure without beating (the watchdog's rule).
      const bool main_loop = seconds_since(main_beat_ns_.load()) < 10;
      const bool publisher = Clock::now() - publish_stage_->last_beat() < std::chrono::seconds(30) || sink_->waiting_for_room();
      return main_loop && publisher;
    };
    h.not_ready = [this] {
      std::vector<std::string> reasons;
      if (!running()) return std::vector<std::string>{"the pipeline is starting or stopping"};
      if (!source_->connected()) reasons.push_back("the source is not connected (retrying with backoff: see the log)");
      if (auto error = sink_->fatal_error()) reasons.push_back("the sink failed: " + *error);
      const int64_t bound = ready_max_lag_ms_.load();
      const double behind = metrics_.behind_source_seconds();
      if (bound > 0 && behind * 1000 > static_cast<double>(bound))
        reasons.push_back("behind the source by " + std::to_string(std::llround(behind * 1000)) +
                          " ms (http.ready_max_lag_ms " + std::to_string(bound) + ")");
      return reasons;
    };
    h.status = [this] { return status_json(); };
    return h;
  }

  // ha.enabled: this instance's role, and who leads when it is a standby.
  nlohmann::json ha_json() const {
    if (!lease_) return nullptr;
    nlohmann::json out = {{"instance", lease_->instance()}, {"role", leading_ ? "leader" : "standby"}};
    if (!leading_) {
      LeaderLease probe(config_);
      const auto holder = probe.holder();
      out["leader"] = holder ? nlohmann::json(*holder) : nlohmann::json(nullptr);
    }
    return out;
  }

  nlohmann::json status_json() const {
    if (!running()) return {{"pipeline", config_.name}, {"running", false}, {"ha", ha_json()}};
    const auto committed = tracker_->committed();
    const PipelineSample s = sample();
    nlohmann::json out = {
        {"pipeline", config_.name},
        {"running", true},
        {"position", committed.position ? nlohmann::json(committed.position->token) : nlohmann::json(nullptr)},
        {"source", {{"type", config_.source.type}, {"connected", s.source_connected}, {"reconnects", s.source_reconnects},
                    {"log_bytes_behind", s.source_log_bytes_behind}}},
        {"sink", {{"type", config_.sink.type}, {"failed", sink_->fatal_error() ? nlohmann::json(*sink_->fatal_error()) : nlohmann::json(false)}}},
        {"queue", {{"events", s.queue_events}, {"bytes", s.queue_bytes}}},
        {"records_in_flight", s.records_in_flight},
        {"behind_source_seconds", metrics_.behind_source_seconds()},
        {"last_event_age_seconds", metrics_.last_event_age_seconds()},
        {"state_file", {{"path", config_.state.path}, {"age_seconds", s.state_file_age_seconds}}},
    };
    out["snapshots"] = snapshots_ ? snapshot::to_json(snapshots_->state()) : nlohmann::json(nullptr);
    out["ha"] = ha_json();
    if (config_.sink.type == "kafka" && config_.sink.kafka.exactly_once)
      out["exactly_once"] = {{"transactional_id", config_.sink.kafka.transactional_id},
                             {"state_topic", config_.sink.kafka.state_topic}};
    return out;
  }

  void reload() {
    notifier_.reloading();
    ConfigLoadResult loaded = load_config_file(options_.config_path, process_environment());
    if (!loaded.ok()) {
      spdlog::error("SIGHUP: the new configuration has errors; keeping the running one:\n{}", format_errors(loaded.errors));
      notifier_.ready();
      return;
    }
    const Config& next = loaded.config;
    bool applied = false;
    // Only reloadable settings move into the running config (from the settings table, so none is
    // forgotten); the rest waits for a restart.
    for (const Setting& s : settings()) {
      if (s.render(config_) == s.render(next)) continue;
      if (s.reloadable) {
        spdlog::info("SIGHUP: {} changed to {}", s.path, display_value(s, next));
        s.copy(config_, next);
        applied = true;
      } else {
        spdlog::warn("SIGHUP: {} changed, which needs a restart to take effect", s.path);
      }
    }
    // The stages that hold live settings read them again.
    if (snapshots_) snapshots_->reconfigure(config_);
    apply_log_level(options_, config_);
    source_->reconfigure(config_);
    ready_max_lag_ms_ = config_.http.ready_max_lag_ms;
    if (const auto error = http_.listen(config_.http.listen)) spdlog::error("SIGHUP: {}", *error);
    if (!applied) spdlog::info("SIGHUP: configuration reloaded, nothing to apply live");
    notifier_.ready();
  }

  int stop() {
    running_ = false;
    lease_thread_.request_stop();
    notifier_.stopping();
    if (snapshots_) snapshots_->stop();
    action_thread_.request_stop();
    probe_thread_.request_stop();
    if (action_thread_.joinable()) action_thread_.join();
    if (probe_thread_.joinable()) probe_thread_.join();
    source_thread_.request_stop();
    source_thread_.join();
    queue_->close();
    // The publisher drains the queue and flushes within flush_timeout_ms; a broker that stays down can
    // hold a send in backpressure, so abort it after that plus a grace period.
    const auto deadline = Clock::now() + std::chrono::milliseconds(config_.sink.kafka.flush_timeout_ms) + kAbortGrace;
    while (!publish_stage_->done() && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (!publish_stage_->done()) {
      spdlog::warn("the sink did not take the remaining changes in time; abandoning them (they are replayed on restart)");
      sink_->abort();
    }
    publish_stage_->join();
    const bool persisted = persist();
    const auto committed = tracker_->committed();
    spdlog::info("stopped; committed position {}", committed.position ? committed.position->token : "(none)");
    if (lease_thread_.joinable()) lease_thread_.join();
    if (!persisted) return kExitFatal;
    return publish_stage_->flushed() && !publish_stage_->failed() ? kExitOk : kExitUnflushed;
  }

  const DaemonOptions& options_;
  Config config_;
  SystemdNotifier notifier_;
  std::optional<SourcePosition> start_position_;
  std::unique_ptr<PositionTracker> tracker_;
  std::unique_ptr<ChangeSink> sink_;
  std::unique_ptr<Source> source_;
  std::optional<StatePersister> persister_;
  std::unique_ptr<SnapshotStage> snapshots_;
  std::optional<EchoFilter> echo_;
  std::optional<EventQueue> queue_;
  std::optional<PublishStage> publish_stage_;
  std::jthread source_thread_;
  std::jthread action_thread_;  // heartbeat.action_query
  std::jthread probe_thread_;   // the source's log bytes behind the committed position
  std::optional<LeaderLease> lease_;  // ha.enabled
  std::atomic<bool> leading_{false};
  std::atomic<bool> lease_lost_{false};
  std::jthread lease_thread_;  // keeps the lease alive while leading
  std::atomic<int64_t> log_bytes_behind_{-1};
  std::mutex fatal_mutex_;
  std::optional<std::string> fatal_;  // what a stage reported that must stop the daemon
  PipelineMetrics metrics_;
  std::atomic<bool> running_{false};  // every stage is up: the endpoints may read them
  std::atomic<int64_t> ready_max_lag_ms_;
  std::atomic<int64_t> main_beat_ns_{Clock::now().time_since_epoch().count()};
  std::atomic<int64_t> last_persisted_ns_{Clock::now().time_since_epoch().count()};
  HttpEndpoints http_;  // last: stopped (its threads joined) before the stages it reads are destroyed
};

}  // namespace

int run_daemon(const DaemonOptions& options, Config config) {
  apply_log_level(options, config);
  Pipeline pipeline(options, std::move(config));
  return pipeline.run();
}

}  // namespace tidemark
