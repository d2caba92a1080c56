#include "config/config_loader.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include <unistd.h>

#include <yaml-cpp/yaml.h>

#include "config/settings.hpp"
#include "config/source_kinds.hpp"

namespace tidemark {

std::string ConfigError::to_string() const {
  std::string out = file;
  if (line > 0) out += ":" + std::to_string(line) + ":" + std::to_string(column);
  out += ": ";
  if (!key.empty()) out += key + ": ";
  return out + message;
}

std::string format_errors(const std::vector<ConfigError>& errors) {
  std::string out;
  for (const auto& e : errors) out += e.to_string() + "\n";
  return out;
}

namespace {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string suggestion_for(const std::string& path) {
  const Setting* best = nullptr;
  size_t best_distance = 4;  // further than this is not a typo
  for (const auto& s : settings()) {
    const size_t d = edit_distance(path, s.path);
    if (d < best_distance) {
      best_distance = d;
      best = &s;
    }
  }
  return best ? " (did you mean " + best->path + "?)" : "";
}

bool is_prefix_of_a_setting(const std::string& path) {
  const std::string prefix = path + ".";
  return std::any_of(settings().begin(), settings().end(),
                     [&](const Setting& s) { return s.path.compare(0, prefix.size(), prefix) == 0; });
}

class Loader {
 public:
  Loader(std::string file, const EnvLookup& env) : file_(std::move(file)), env_(env) {}

  ConfigLoadResult load(std::string_view text) {
    for (const auto& s : settings()) s.apply_default(result_.config);
    YAML::Node root;
    try {
      root = YAML::Load(std::string(text));
    } catch (const YAML::ParserException& e) {
      add(e.mark, "", "YAML syntax error: " + e.msg);
      return std::move(result_);
    }
    if (root.IsNull()) {
      add_missing_required();
      return std::move(result_);
    }
    if (!root.IsMap()) {
      add(root.Mark(), "", "the configuration must be a map of keys to values");
      return std::move(result_);
    }
    walk(root, "");
    add_missing_required();
    apply_tls_environment();
    check_cross_field();
    check_tls();
    derive_defaults();
    return std::move(result_);
  }

 private:
  void add(const YAML::Mark& mark, std::string key, std::string message) {
    ConfigError e{file_, mark.is_null() ? 0 : mark.line + 1, mark.is_null() ? 0 : mark.column + 1, std::move(key),
                  std::move(message)};
    result_.errors.push_back(std::move(e));
  }
  void add_unplaced(std::string key, std::string message) {
    result_.errors.push_back(ConfigError{file_, 0, 0, std::move(key), std::move(message)});
  }

  void walk(const YAML::Node& map, const std::string& prefix) {
    for (const auto& entry : map) {
      const std::string name = entry.first.Scalar();
      const std::string path = prefix.empty() ? name : prefix + "." + name;
      const YAML::Node& value = entry.second;
      if (!seen_keys_.insert(path).second) {
        add(entry.first.Mark(), path, "key given twice");
        continue;
      }
      if (const Setting* s = find_setting(path)) {
        if (value.IsNull()) {
          add(entry.first.Mark(), path, "has no value");
          continue;
        }
        if (auto error = s->parse(result_.config, value, env_)) {
          add(value.Mark(), path, *error);
          failed_.insert(path);
        }
        set_.insert(path);
        value_marks_.emplace(path, value.Mark());
      } else if (is_prefix_of_a_setting(path)) {
        if (value.IsMap()) {
          walk(value, path);
        } else if (!value.IsNull()) {
          add(value.Mark(), path, "expected a map of settings");
        }
        parent_marks_.emplace(path, entry.first.Mark());
      } else {
        add(entry.first.Mark(), path, "unknown key" + suggestion_for(path));
      }
    }
  }

  void add_missing_required() {
    for (const auto& s : settings()) {
      if (s.required && !set_.count(s.path)) add_unplaced(s.path, "required setting is missing: " + s.help);
    }
  }

  YAML::Mark mark_of(const std::string& path) const {
    // Errors about a key that is present point at it; otherwise nowhere.
    if (const auto it = parent_marks_.find(path); it != parent_marks_.end()) return it->second;
    return YAML::Mark::null_mark();
  }

  void check_cross_field() {
    const Config& c = result_.config;
    // A key that failed to load keeps its default; checks that depend on it would only add confusion.
    const bool sink_known = !failed_.count("sink.type");
    const bool source_known = !failed_.count("source.type");
    if (sink_known && c.sink.type == "kafka" && c.sink.kafka.bootstrap_servers.empty())
      add(mark_of("sink.kafka"), "sink.kafka.bootstrap_servers", "required when sink.type is kafka");
    if (sink_known && c.sink.kafka.exactly_once && c.sink.type != "kafka")
      add(value_mark("sink.kafka.exactly_once"), "sink.kafka.exactly_once",
          "needs sink.type kafka (a database sink is exactly-once by itself: its position commits with the rows)");
    if (sink_known && (c.sink.type == "postgres" || c.sink.type == "mysql")) {
      const std::string what = "required when sink.type is " + c.sink.type;
      if (c.sink.database.user.empty()) add(mark_of("sink.database"), "sink.database.user", what);
      if (c.sink.database.database.empty()) add(mark_of("sink.database"), "sink.database.database", what);
      const SourceTlsConfig& tls = c.sink.database.tls;
      const std::pair<const char*, const std::string*> files[] = {
          {"sink.database.tls.ca", &tls.ca}, {"sink.database.tls.cert", &tls.cert}, {"sink.database.tls.key", &tls.key}};
      for (const auto& [key, value] : files)
        if (!value->empty() && !failed_.count(key) && ::access(value->c_str(), R_OK) != 0)
          add(value_mark(key), key, "cannot read " + *value + ": " + std::strerror(errno) + "; give the path of a readable PEM file");
      if (tls.verifies() && tls.ca.empty())
        add(value_mark("sink.database.tls.mode"), "sink.database.tls.mode",
            "is " + tls.mode + ", which verifies the target's certificate: set sink.database.tls.ca to the CA that signed it");
    }
    if (source_known && c.source.type == "kafka") {
      if (c.source.kafka.bootstrap_servers.empty())
        add(mark_of("source"), "source.kafka.bootstrap_servers", "required for a kafka source");
      if (c.source.kafka.topics.empty()) add(mark_of("source"), "source.kafka.topics", "list the topics to apply");
      if (sink_known && c.sink.type != "postgres" && c.sink.type != "mysql")
        add(mark_of("source"), "source.type", "kafka needs a database sink (sink.type postgres or mysql): it applies topics to a database");
    }
    if (c.two_way.enabled() && !failed_.count("two_way.peer")) {
      const YAML::Mark at = value_mark("two_way.peer");
      const bool database_sink = c.sink.type == "postgres" || c.sink.type == "mysql";
      if (c.two_way.peer == c.name)
        add(at, "two_way.peer", "names this pipeline itself: name the pipeline that runs the other way");
      if (sink_known && !database_sink)
        add(at, "two_way.peer", "needs a database sink (sink.type postgres or mysql): two-way sync applies changes into a database");
      if (source_known && !describe_source(c.source).is_database)
        add(at, "two_way.peer", "needs a database source (postgres or mysql)");
    }
    if (!c.two_way.winner.empty() && !failed_.count("two_way.winner")) {
      const YAML::Mark at = value_mark("two_way.winner");
      if (c.two_way.winner != c.name && c.two_way.winner != c.two_way.peer)
        add(at, "two_way.winner", "'" + c.two_way.winner + "' is neither this pipeline ('" + c.name + "') nor two_way.peer" +
                                      (c.two_way.peer.empty() ? " (not set)" : " ('" + c.two_way.peer + "')"));
      for (const auto& m : c.sink.database.tables)
        if (!m.version.empty())
          add(at, "two_way.winner", "and the version of the mapping at line " + std::to_string(m.line) +
                                        " both decide conflicts: keep one");
    }
    const SourceDescriptor& kind = describe_source(c.source);
    if (c.ha.enabled && source_known && !kind.is_database)
      add(value_mark("ha.enabled"), "ha.enabled",
          "needs a database source (postgres or mysql), which holds the lease; a kafka source scales by its consumer group");
    if (source_known && kind.is_database) {
      if (c.source.user.empty()) add(mark_of("source"), "source.user", "required for a " + c.source.type + " source");
      if (kind.requires_database && c.source.database.empty())
        add(mark_of("source"), "source.database", "required for a " + c.source.type + " source");
      if (c.source.tables.empty())
        add(mark_of("source"), "source.tables", "list at least one table to capture");
    }
  }

  // Where a key's value is, else its nearest parent map (source.tls, then source), else nowhere.
  YAML::Mark value_mark(const std::string& path) const {
    if (const auto it = value_marks_.find(path); it != value_marks_.end()) return it->second;
    for (std::string parent = path; parent.find('.') != std::string::npos;) {
      parent.erase(parent.rfind('.'));
      if (const YAML::Mark m = mark_of(parent); !m.is_null()) return m;
    }
    return YAML::Mark::null_mark();
  }

  // PostgreSQL: like psql and pg_recvlogical, PGSSLMODE is the default of source.tls.mode; the file wins.
  void apply_tls_environment() {
    Config& c = result_.config;
    const std::string variable(describe_source(c.source).tls_mode_env);
    if (variable.empty() || set_.count("source.tls.mode")) return;
    const std::optional<std::string> mode = env_(variable);
    if (!mode || mode->empty()) return;
    const Setting* s = find_setting("source.tls.mode");
    if (std::find(s->choices.begin(), s->choices.end(), *mode) == s->choices.end()) {
      std::string list;
      for (size_t i = 0; i < s->choices.size(); ++i) list += (i ? ", " : "") + s->choices[i];
      add_unplaced("source.tls.mode", variable + "=" + *mode + " in the environment (the default of source.tls.mode " +
                                          "for a " + c.source.type + " source) is not one of: " + list +
                                          "; set source.tls.mode in the file or change " + variable);
      failed_.insert("source.tls.mode");
      return;
    }
    c.source.tls.mode = *mode;
    tls_mode_from_env_ = true;
  }

  void check_tls() {
    const Config& c = result_.config;
    const SourceDescriptor& kind = describe_source(c.source);
    if (!kind.is_database) return;
    const SourceTlsConfig& tls = c.source.tls;
    const std::pair<const char*, const std::string*> files[] = {
        {"source.tls.ca", &tls.ca}, {"source.tls.cert", &tls.cert}, {"source.tls.key", &tls.key}};
    for (const auto& [key, value] : files) {
      if (value->empty() || failed_.count(key)) continue;
      if (::access(value->c_str(), R_OK) != 0)
        add(value_mark(key), key, "cannot read " + *value + ": " + std::strerror(errno) +
                                      "; give the path of a readable PEM file (relative paths start in the daemon's " +
                                      "working directory)");
    }
    if (failed_.count("source.tls.mode")) return;
    const std::string mode_name = tls_mode_from_env_ ? std::string(kind.tls_mode_env) + "=" + tls.mode + " (the default of source.tls.mode)"
                                                     : "source.tls.mode is " + tls.mode;
    if (tls.mode == "disable") {
      for (const auto& [key, value] : files)
        if (!value->empty())
          add(value_mark(key), key, "is not used: " + mode_name + " (no TLS); remove it, or choose a TLS mode " +
                                        "(verify-full to verify the server)");
      return;
    }
    if (tls.mode == "prefer" && !tls.ca.empty())
      add(value_mark("source.tls.ca"), "source.tls.ca",
          "is not used: " + mode_name + ", which never verifies the server; set source.tls.mode to verify-full " +
              "(or verify-ca) to verify the server's certificate with this CA, or remove source.tls.ca");
    const bool ca_from_env = !kind.tls_ca_env.empty() && env_(std::string(kind.tls_ca_env)).value_or("") != "";
    if (tls.verifies() && tls.ca.empty() && !ca_from_env)
      add(value_mark("source.tls.mode"), "source.tls.mode",
          mode_name + ": it verifies the server's certificate, so it needs the CA certificate that signed it; set " +
              "source.tls.ca to that PEM file");
    if (!tls.cert.empty() && tls.key.empty() && !failed_.count("source.tls.cert"))
      add(value_mark("source.tls.cert"), "source.tls.key",
          "missing: source.tls.cert is set, so source.tls.key must name its private key file");
    if (tls.cert.empty() && !tls.key.empty() && !failed_.count("source.tls.key"))
      add(value_mark("source.tls.key"), "source.tls.cert",
          "missing: source.tls.key is set, so source.tls.cert must name the client certificate file it belongs to");
  }

  void derive_defaults() {
    Config& c = result_.config;
    if (c.sink.kafka.topic_prefix.empty()) c.sink.kafka.topic_prefix = c.name;
    if (c.sink.kafka.topic_template.empty())
      c.sink.kafka.topic_template = describe_source(c.source).topic_template;
    if (c.state.path.empty()) c.state.path = "/var/lib/tidemark/" + c.name + ".state.json";
    if (c.sink.kafka.transactional_id.empty()) c.sink.kafka.transactional_id = "tidemark-" + c.name;
    if (c.sink.kafka.state_topic.empty()) c.sink.kafka.state_topic = c.sink.kafka.topic_prefix + ".tidemark.state";
    // Records are acknowledged when their Kafka transaction commits, every transaction_interval_ms: a
    // Kafka-latency target would hold the snapshot to one small chunk per commit.
    if (c.sink.type == "kafka" && c.sink.kafka.exactly_once && !set_.count("snapshot.target_ack_latency_ms"))
      c.snapshot.target_ack_latency_ms = std::max<int64_t>(kDatabaseSinkAckLatencyMs, 3 * c.sink.kafka.transaction_interval_ms);
    c.source.port = source_port(c.source);
    if (c.sink.type == "postgres" || c.sink.type == "mysql") {
      c.sink.database.type = c.sink.type;
      c.sink.database.port = source_port(c.sink.database);
      // A target transaction of thousands of rows takes tens of milliseconds to commit: Kafka's latency
      // target would hold a snapshot to one small chunk at a time, each waiting for the last one's commit.
      if (!set_.count("snapshot.target_ack_latency_ms")) c.snapshot.target_ack_latency_ms = kDatabaseSinkAckLatencyMs;
      if (!set_.count("snapshot.chunk_size"))
        c.snapshot.chunk_size = c.sink.type == "postgres" ? kPostgresSinkChunkSize : kDatabaseSinkChunkSize;
      // The target's transactions are sized by the chunk (docs/apply.md): fixed unless asked for.
      if (!set_.count("snapshot.max_chunk_size")) c.snapshot.max_chunk_size = c.snapshot.chunk_size;
    }
  }

  std::string file_;
  const EnvLookup& env_;
  ConfigLoadResult result_;
  std::set<std::string> set_;
  std::set<std::string> failed_;
  std::set<std::string> seen_keys_;
  std::map<std::string, YAML::Mark> parent_marks_;
  std::map<std::string, YAML::Mark> value_marks_;
  bool tls_mode_from_env_ = false;
};

}  // namespace

ConfigLoadResult load_config_text(std::string_view yaml, const std::string& file_name, const EnvLookup& env) {
  return Loader(file_name, env).load(yaml);
}

ConfigLoadResult load_config_file(const std::string& path, const EnvLookup& env) {
  std::ifstream in(path);
  if (!in) {
    ConfigLoadResult r;
    r.errors.push_back(ConfigError{path, 0, 0, "", "cannot read the configuration file: " + std::string(std::strerror(errno))});
    return r;
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  return load_config_text(buffer.str(), path, env);
}

}  // namespace tidemark
