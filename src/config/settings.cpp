#include "config/settings.hpp"

#include <algorithm>
#include <charconv>
#include <regex>

#include "config/source_kinds.hpp"

namespace tidemark {

namespace {

using Error = std::optional<std::string>;
template <typename T>
using Validator = std::function<Error(const T&)>;

// ---- Scalar decoding (after ${ENV} substitution) ----

Error read_scalar(const YAML::Node& node, const EnvLookup& env, std::string& out) {
  if (!node.IsScalar()) return "expected a single value, found a " + std::string(node.IsSequence() ? "list" : "map");
  SubstitutionResult r = substitute_env(node.Scalar(), env);
  if (!r.error.empty()) return r.error;
  out = std::move(r.value);
  return std::nullopt;
}

Error decode(const YAML::Node& node, const EnvLookup& env, std::string& out) { return read_scalar(node, env, out); }

Error decode(const YAML::Node& node, const EnvLookup& env, int64_t& out) {
  std::string text;
  if (auto e = read_scalar(node, env, text)) return e;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec != std::errc{} || end != text.data() + text.size()) return "expected an integer, found '" + text + "'";
  return std::nullopt;
}

Error decode(const YAML::Node& node, const EnvLookup& env, bool& out) {
  std::string text;
  if (auto e = read_scalar(node, env, text)) return e;
  if (text == "true" || text == "True" || text == "TRUE") {
    out = true;
  } else if (text == "false" || text == "False" || text == "FALSE") {
    out = false;
  } else {
    return "expected true or false, found '" + text + "'";
  }
  return std::nullopt;
}

Error decode(const YAML::Node& node, const EnvLookup& env, std::vector<std::string>& out) {
  if (!node.IsSequence()) return std::string("expected a list");
  out.clear();
  for (const auto& item : node) {
    std::string value;
    if (auto e = read_scalar(item, env, value)) return "list item at line " + std::to_string(item.Mark().line + 1) + ": " + *e;
    out.push_back(std::move(value));
  }
  return std::nullopt;
}

Error decode(const YAML::Node& node, const EnvLookup& env, std::map<std::string, std::string>& out) {
  if (!node.IsMap()) return std::string("expected a map of names to values");
  out.clear();
  for (const auto& item : node) {
    std::string value;
    if (auto e = read_scalar(item.second, env, value)) return "'" + item.first.Scalar() + "': " + *e;
    out[item.first.Scalar()] = std::move(value);
  }
  return std::nullopt;
}

Error flat_fields(const std::vector<std::string>& fields) {
  static const std::vector<std::string> known = {"op", "table", "db", "schema", "source_ts_ms", "ts_ms"};
  for (const auto& f : fields)
    if (std::find(known.begin(), known.end(), f) == known.end())
      return "'" + f + "' is not one of: op, table, db, schema, source_ts_ms, ts_ms";
  return std::nullopt;
}

// -1 (the broker decides) or a value in [lo, hi].
Validator<int64_t> minus_one_or(int64_t lo, int64_t hi) {
  return [lo, hi](const int64_t& v) -> Error {
    if (v != -1 && (v < lo || v > hi))
      return "must be -1 (the broker's default) or between " + std::to_string(lo) + " and " + std::to_string(hi) + ", found " + std::to_string(v);
    return std::nullopt;
  };
}

// A list of topic creation groups: each a map of include, exclude, partitions, replication_factor, config.
Error decode(const YAML::Node& node, const EnvLookup& env, std::vector<TopicCreationGroup>& out) {
  if (!node.IsSequence()) return std::string("expected a list of groups (maps with include, partitions, replication_factor, config)");
  out.clear();
  for (const auto& item : node) {
    const std::string where = "group at line " + std::to_string(item.Mark().line + 1) + ": ";
    if (!item.IsMap()) return where + "expected a map";
    TopicCreationGroup group;
    for (const auto& field : item) {
      const std::string key = field.first.Scalar();
      Error e;
      if (key == "include") {
        e = read_scalar(field.second, env, group.include);
      } else if (key == "exclude") {
        e = read_scalar(field.second, env, group.exclude);
      } else if (key == "partitions") {
        e = decode(field.second, env, group.spec.partitions);
        if (!e) e = minus_one_or(1, 100000)(group.spec.partitions);
      } else if (key == "replication_factor") {
        e = decode(field.second, env, group.spec.replication_factor);
        if (!e) e = minus_one_or(1, 1000)(group.spec.replication_factor);
      } else if (key == "config") {
        e = decode(field.second, env, group.spec.config);
      } else {
        e = "unknown key (a group has include, exclude, partitions, replication_factor, config)";
      }
      if (e) return where + key + ": " + *e;
    }
    if (group.include.empty()) return where + "include: required (a regular expression over topic names)";
    for (const auto* pattern : {&group.include, &group.exclude}) {
      if (pattern->empty()) continue;
      try {
        std::regex check(*pattern);
      } catch (const std::regex_error& error) {
        return where + "'" + *pattern + "' is not a regular expression: " + error.what();
      }
    }
    out.push_back(std::move(group));
  }
  return std::nullopt;
}

// A map of names to scalars, each handed to `take` in the file's order; the first error, naming its key.
template <typename Take>
Error read_pairs(const YAML::Node& node, const EnvLookup& env, const char* not_a_map, Take take) {
  if (!node.IsMap()) return std::string(not_a_map);
  for (const auto& pair : node) {
    std::string value;
    Error e = read_scalar(pair.second, env, value);
    if (!e) e = take(pair.first.Scalar(), std::move(value));
    if (e) return "'" + pair.first.Scalar() + "': " + *e;
  }
  return std::nullopt;
}

// A list of table mappings: each a map of source, target, where and columns (target column -> source
// column or expression).
Error decode(const YAML::Node& node, const EnvLookup& env, std::vector<TableMapping>& out) {
  if (!node.IsSequence()) return std::string("expected a list of table mappings (maps with source, target, where, columns)");
  out.clear();
  for (const auto& item : node) {
    const std::string where = "mapping at line " + std::to_string(item.Mark().line + 1) + ": ";
    if (!item.IsMap()) return where + "expected a map";
    TableMapping mapping;
    mapping.line = item.Mark().line + 1;
    for (const auto& field : item) {
      const std::string key = field.first.Scalar();
      Error e;
      if (key == "source") {
        e = read_scalar(field.second, env, mapping.source);
      } else if (key == "target") {
        e = read_scalar(field.second, env, mapping.target);
      } else if (key == "where") {
        e = read_scalar(field.second, env, mapping.where);
      } else if (key == "columns") {
        e = read_pairs(field.second, env, "expected a map of target columns to a source column or an SQL expression",
                       [&](const std::string& column, std::string value) -> Error {
                         if (value.empty())
                           return "empty; give a source column or an SQL expression (leave a column out to drop it)";
                         mapping.columns.emplace_back(column, std::move(value));
                         return std::nullopt;
                       });
      } else if (key == "version") {
        e = read_scalar(field.second, env, mapping.version);
      } else if (key == "generated_key") {
        if (!field.second.IsScalar() || (field.second.Scalar() != "true" && field.second.Scalar() != "false"))
          e = "expected true or false";
        else
          mapping.generated_key = field.second.Scalar() == "true";
      } else if (key == "references") {
        e = read_pairs(field.second, env, "expected a map of target columns to the mapped source table their value is a key of",
                       [&](const std::string& column, std::string value) -> Error {
                         if (value.find('.') == std::string::npos)
                           return "name the referenced source table as schema.table or database.table";
                         mapping.references[column] = std::move(value);
                         return std::nullopt;
                       });
      } else {
        e = "unknown key (a mapping has source, target, where, columns, generated_key, references, version)";
      }
      if (e) return where + key + ": " + *e;
    }
    if (mapping.source.empty()) return where + "source: required (a captured table, as source.tables names it)";
    if (mapping.generated_key && !mapping.where.empty())
      return where + "where: not supported together with generated_key (the id map would keep rows that left the filter)";
    for (const auto& other : out)
      if (other.source == mapping.source) return where + "source: " + mapping.source + " is mapped twice (also at line " + std::to_string(other.line) + ")";
    out.push_back(std::move(mapping));
  }
  for (const auto& mapping : out)
    for (const auto& [column, referenced] : mapping.references) {
      const std::string& table = referenced;  // a lambda may not capture a structured binding (clang 14)
      const bool mapped = std::any_of(out.begin(), out.end(),
                                      [&](const TableMapping& m) { return m.source == table && m.generated_key; });
      if (!mapped)
        return "mapping at line " + std::to_string(mapping.line) + ": references: " + column + ": " + table +
               " has no mapping with generated_key: true in this list (only those tables have id map entries)";
    }
  return std::nullopt;
}

std::string render_value(const std::string& v) { return v; }
std::string render_value(int64_t v) { return std::to_string(v); }
std::string render_value(bool v) { return v ? "true" : "false"; }
std::string render_value(const std::vector<std::string>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i];
  return out + "]";
}
std::string render_value(const std::map<std::string, std::string>& v) {
  std::string out = "{";
  bool first = true;
  for (const auto& [k, val] : v) {
    out += (first ? "" : ", ") + k + ": " + val;
    first = false;
  }
  return out + "}";
}

std::string render_value(const std::vector<TopicCreationGroup>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    const auto& g = v[i];
    out += (i ? ", " : "") + std::string("{include: ") + g.include + (g.exclude.empty() ? "" : ", exclude: " + g.exclude) +
           ", partitions: " + std::to_string(g.spec.partitions) +
           ", replication_factor: " + std::to_string(g.spec.replication_factor) + ", config: " + render_value(g.spec.config) + "}";
  }
  return out + "]";
}

std::string render_value(const std::vector<TableMapping>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    const auto& m = v[i];
    out += (i ? ", " : "") + std::string("{source: ") + m.source + (m.target.empty() ? "" : ", target: " + m.target) +
           (m.where.empty() ? "" : ", where: " + m.where);
    if (!m.columns.empty()) {
      out += ", columns: {";
      for (size_t c = 0; c < m.columns.size(); ++c) out += (c ? ", " : "") + m.columns[c].first + ": " + m.columns[c].second;
      out += "}";
    }
    if (m.generated_key) out += ", generated_key: true";
    if (!m.version.empty()) out += ", version: " + m.version;
    if (!m.references.empty()) out += ", references: " + render_value(m.references);
    out += "}";
  }
  return out + "]";
}

template <typename T>
std::string display_text(const T& v) {
  return render_value(v);
}

// librdkafka properties that hold credentials: passwords, secrets, inline private keys, OAuth configs.
bool is_sensitive_property(const std::string& key) {
  return key.find("password") != std::string::npos || key.find("secret") != std::string::npos ||
         key == "ssl.key.pem" || key == "sasl.oauthbearer.config" || key == "sasl.jaas.config";
}

// Map values that hold credentials are redacted.
std::string display_text(const std::map<std::string, std::string>& v) {
  std::map<std::string, std::string> shown = v;
  for (auto& [key, value] : shown)
    if (is_sensitive_property(key)) value = "****";
  return render_value(shown);
}

template <typename T>
SettingType type_of() {
  if constexpr (std::is_same_v<T, std::string>) return SettingType::String;
  if constexpr (std::is_same_v<T, int64_t>) return SettingType::Integer;
  if constexpr (std::is_same_v<T, bool>) return SettingType::Boolean;
  if constexpr (std::is_same_v<T, std::vector<std::string>>) return SettingType::StringList;
  if constexpr (std::is_same_v<T, std::map<std::string, std::string>>) return SettingType::StringMap;
  if constexpr (std::is_same_v<T, std::vector<TopicCreationGroup>>) return SettingType::MapList;
  if constexpr (std::is_same_v<T, std::vector<TableMapping>>) return SettingType::MapList;
}

// A property<T>: binds a key path to a field of Config through `access`.
template <typename T, typename Access>
class Property {
 public:
  Property(std::string path, Access access, std::string help) : access_(access) {
    s_.path = std::move(path);
    s_.type = type_of<T>();
    s_.help = std::move(help);
  }
  Property& byDefault(T value) {
    default_ = std::move(value);
    s_.default_text = render_value(*default_);
    return *this;
  }
  Property& required() {
    s_.required = true;
    return *this;
  }
  Property& secret() {
    s_.secret = true;
    return *this;
  }
  Property& reloadable() {
    s_.reloadable = true;
    return *this;
  }
  Property& validate(Validator<T> v) {
    validator_ = std::move(v);
    return *this;
  }
  Property& choices(std::vector<std::string> allowed) {
    s_.type = SettingType::Choice;
    s_.choices = allowed;
    validator_ = [allowed](const T& value) -> Error {
      for (const auto& a : allowed)
        if (a == value) return std::nullopt;
      std::string list;
      for (size_t i = 0; i < allowed.size(); ++i) list += (i ? ", " : "") + allowed[i];
      return "'" + value + "' is not one of: " + list;
    };
    return *this;
  }
  operator Setting() const {  // NOLINT(google-explicit-constructor): the table reads as a list of properties
    Setting s = s_;
    Access access = access_;
    Validator<T> validator = validator_;
    s.parse = [access, validator](Config& c, const YAML::Node& node, const EnvLookup& env) -> Error {
      T value{};
      if (auto e = decode(node, env, value)) return e;
      if (validator) {
        if (auto e = validator(value)) return e;
      }
      access(c) = std::move(value);
      return std::nullopt;
    };
    std::optional<T> def = default_;
    s.apply_default = [access, def](Config& c) {
      if (def) access(c) = *def;
    };
    // Config is only read here; the accessor is written for the mutable case.
    s.render = [access](const Config& c) { return render_value(access(const_cast<Config&>(c))); };
    s.display = [access](const Config& c) { return display_text(access(const_cast<Config&>(c))); };
    s.copy = [access](Config& to, const Config& from) { access(to) = access(const_cast<Config&>(from)); };
    return s;
  }

 private:
  Setting s_;
  Access access_;
  std::optional<T> default_;
  Validator<T> validator_;
};

template <typename T, typename Access>
Property<T, Access> property(std::string path, Access access, std::string help) {
  return Property<T, Access>(std::move(path), access, std::move(help));
}

// ---- Validators ----

Validator<int64_t> in_range(int64_t lo, int64_t hi) {
  return [lo, hi](const int64_t& v) -> Error {
    if (v < lo || v > hi) return "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", found " + std::to_string(v);
    return std::nullopt;
  };
}

Error logical_name(const std::string& v) {
  const bool ok = !v.empty() && std::all_of(v.begin(), v.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
  });
  if (!ok) return "'" + v + "' must be non-empty and use only letters, digits, '_', '.' and '-' (it names Kafka topics)";
  return std::nullopt;
}

Error logical_name_or_empty(const std::string& v) { return v.empty() ? std::nullopt : logical_name(v); }

// host:port with a port in 1..65535 (IPv6 hosts in brackets), or empty.
Error listen_address(const std::string& v) {
  if (v.empty()) return std::nullopt;
  const size_t colon = v.rfind(':');
  const std::string host = colon == std::string::npos ? "" : v.substr(0, colon);
  const std::string port = colon == std::string::npos ? "" : v.substr(colon + 1);
  int64_t number = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), number);
  if (host.empty() || port.empty() || ec != std::errc{} || end != port.data() + port.size() || number < 1 || number > 65535)
    return "'" + v + "' is not host:port (for example 127.0.0.1:9464)";
  return std::nullopt;
}

// PostgreSQL's rule for replication slot names.
Error slot_name(const std::string& v) {
  const bool ok = !v.empty() && v.size() <= 63 && std::all_of(v.begin(), v.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
  if (!ok) return "'" + v + "' must be 1 to 63 lower-case letters, digits or '_' (PostgreSQL's rule for slot names)";
  return std::nullopt;
}

Error topic_template(const std::string& v) {
  for (size_t open = v.find('{'); open != std::string::npos; open = v.find('{', open + 1)) {
    const size_t close = v.find('}', open);
    if (close == std::string::npos) return std::string("unterminated placeholder: a '{' without its '}'");
    const std::string name = v.substr(open + 1, close - open - 1);
    if (name != "prefix" && name != "database" && name != "schema" && name != "table")
      return "unknown placeholder {" + name + "}; use {prefix}, {database}, {schema} or {table}";
  }
  if (v.empty()) return std::nullopt;  // the source's default
  if (v.find("{prefix}") == std::string::npos && v.find("{table}") == std::string::npos)
    return std::string("must contain {prefix} or {table}, so that no table gets an empty topic name");
  return std::nullopt;
}

// Settings that would break per-key order or acknowledged delivery are refused, not silently applied.
Error kafka_properties(const std::map<std::string, std::string>& props) {
  static const std::map<std::string, std::string> pinned = {
      {"enable.idempotence", "true"}, {"acks", "all"}, {"request.required.acks", "all"}};
  for (const auto& [key, value] : props) {
    if (const auto it = pinned.find(key); it != pinned.end() && value != it->second && !(it->second == "all" && value == "-1"))
      return key + "=" + value + " would allow lost or reordered records; Tidemark requires " + key + "=" + it->second;
    if (key == "bootstrap.servers") return std::string("set bootstrap.servers through sink.kafka.bootstrap_servers");
    if (key == "message.timeout.ms" || key == "delivery.timeout.ms")
      return key + " is set through sink.kafka.delivery_timeout_ms";
    if (key == "partitioner") return std::string("the partitioner is fixed to murmur2_random so that keys land where Java clients put them");
    if (key == "transactional.id") return std::string("set transactional.id through sink.kafka.transactional_id");
  }
  return std::nullopt;
}

std::vector<Setting> build_table() {
  // clang-format off
  return {
    property<std::string>("name", [](Config& c) -> auto& { return c.name; },
      "Logical name of this pipeline: the default topic prefix and source.name in every event.")
      .required().validate(logical_name),
    property<std::string>("log.level", [](Config& c) -> auto& { return c.log_level; },
      "Log verbosity.")
      .byDefault("info").choices({"trace", "debug", "info", "warn", "error"}).reloadable(),

    property<std::string>("source.type", [](Config& c) -> auto& { return c.source.type; },
      "Which database log to read: postgres, mysql (MySQL and MariaDB), kafka (topics of change records, applied to a "
      "database sink), or generator (synthetic changes for demos and benchmarks).")
      .required().choices(source_type_names()),
    property<std::string>("source.host", [](Config& c) -> auto& { return c.source.host; },
      "Database host.").byDefault("127.0.0.1"),
    property<int64_t>("source.port", [](Config& c) -> auto& { return c.source.port; },
      "Database port; 0 means the usual port (5432 for postgres, 3306 for mysql).")
      .byDefault(0).validate(in_range(0, 65535)),
    property<std::string>("source.user", [](Config& c) -> auto& { return c.source.user; },
      "Database user.").byDefault(""),
    property<std::string>("source.password", [](Config& c) -> auto& { return c.source.password; },
      "Database password; use ${ENV_VAR} to keep it out of the file.").byDefault("").secret(),
    property<std::string>("source.database", [](Config& c) -> auto& { return c.source.database; },
      "Database to connect to.").byDefault(""),
    property<std::vector<std::string>>("source.tables", [](Config& c) -> auto& { return c.source.tables; },
      "Tables to capture, as schema.table (postgres) or database.table (mysql); '*' matches any run of characters.")
      .byDefault({}),
    property<std::string>("source.tls.mode", [](Config& c) -> auto& { return c.source.tls.mode; },
      "TLS to the database: disable (plain text), prefer (TLS when the server offers it, unverified; plain text "
      "otherwise), require (TLS, unverified), verify-ca (TLS, server certificate signed by source.tls.ca), "
      "verify-full (verify-ca and the certificate names source.host). For postgres, PGSSLMODE from the environment "
      "is the default when the file does not set this key. See docs/security.md.")
      .byDefault("prefer").choices({"disable", "prefer", "require", "verify-ca", "verify-full"}),
    property<std::string>("source.tls.ca", [](Config& c) -> auto& { return c.source.tls.ca; },
      "CA certificate file (PEM) that signed the server's certificate; required by verify-ca and verify-full "
      "(postgres: or PGSSLROOTCERT); with require it verifies the chain too.").byDefault(""),
    property<std::string>("source.tls.cert", [](Config& c) -> auto& { return c.source.tls.cert; },
      "Client certificate file (PEM), for servers that ask for one (pg_hba clientcert, REQUIRE X509); needs source.tls.key.")
      .byDefault(""),
    property<std::string>("source.tls.key", [](Config& c) -> auto& { return c.source.tls.key; },
      "Private key file (PEM, unencrypted) of source.tls.cert.").byDefault(""),
    property<std::string>("source.postgres.slot", [](Config& c) -> auto& { return c.source.postgres.slot; },
      "Logical replication slot (pgoutput).").byDefault("tidemark").validate(slot_name),
    property<std::string>("source.postgres.publication", [](Config& c) -> auto& { return c.source.postgres.publication; },
      "Publication naming the captured tables.").byDefault("tidemark").validate(logical_name),
    property<bool>("source.postgres.create_publication", [](Config& c) -> auto& { return c.source.postgres.create_publication; },
      "Create the publication, or add the captured tables to it, when needed (needs ownership of the tables). "
      "Off: a missing publication or table is an error that prints the SQL to run.").byDefault(false),
    property<int64_t>("source.postgres.status_interval_ms", [](Config& c) -> auto& { return c.source.postgres.status_interval_ms; },
      "How often to send standby status updates (received and flushed LSN); keep it well below the server's wal_sender_timeout.")
      .byDefault(10000).validate(in_range(100, 3600000)),
    property<std::string>("source.kafka.bootstrap_servers", [](Config& c) -> auto& { return c.source.kafka.bootstrap_servers; },
      "source.type kafka: the brokers to read from, host:port[,host:port...].").byDefault(""),
    property<std::vector<std::string>>("source.kafka.topics", [](Config& c) -> auto& { return c.source.kafka.topics; },
      "source.type kafka: the topics of change records to apply (Tidemark's or Debezium's JSON, with or without the "
      "schema/payload wrapper). Each partition is applied in order; the offsets are kept in the target's position "
      "table, in the same transaction as the rows.").byDefault({}),
    property<std::string>("source.kafka.group_id", [](Config& c) -> auto& { return c.source.kafka.group_id; },
      "source.type kafka: the consumer group this process joins. Its members share the topics' partitions and the "
      "rows of the target's offsets table (what a restart reads); the applied offsets are also committed to the group, "
      "for lag monitoring. Empty: the pipeline's name.").byDefault(""),
    property<std::string>("source.kafka.start", [](Config& c) -> auto& { return c.source.kafka.start; },
      "source.type kafka: where a first start reads each partition from: earliest or latest.")
      .byDefault("earliest").choices({"earliest", "latest"}),
    property<std::map<std::string, std::string>>("source.kafka.properties", [](Config& c) -> auto& { return c.source.kafka.properties; },
      "source.type kafka: librdkafka consumer properties, passed as they are (security.protocol, sasl.*, ssl.*).")
      .byDefault({}),
    property<int64_t>("source.mysql.server_id", [](Config& c) -> auto& { return c.source.mysql.server_id; },
      "Replica server id; must differ from every server and replica in the topology.")
      .byDefault(5400).validate(in_range(1, 4294967295LL)),
    property<int64_t>("source.generator.tables", [](Config& c) -> auto& { return c.source.generator.tables; },
      "Number of synthetic tables (t0, t1, ...).").byDefault(1).validate(in_range(1, 1000)),
    property<int64_t>("source.generator.keys", [](Config& c) -> auto& { return c.source.generator.keys; },
      "Distinct keys per table; each key cycles through insert, update, delete.").byDefault(1000).validate(in_range(1, 1'000'000'000)),
    property<int64_t>("source.generator.rate_per_second", [](Config& c) -> auto& { return c.source.generator.rate_per_second; },
      "Changes per second; 0 means as fast as Kafka takes them.").byDefault(0).validate(in_range(0, 100'000'000)).reloadable(),
    property<int64_t>("source.generator.total_events", [](Config& c) -> auto& { return c.source.generator.total_events; },
      "Stop producing after this many changes in all; 0 means never.").byDefault(0).validate(in_range(0, INT64_MAX)),
    property<int64_t>("source.generator.row_bytes", [](Config& c) -> auto& { return c.source.generator.row_bytes; },
      "Size of the synthetic payload column.").byDefault(200).validate(in_range(0, 10'000'000)),
    property<int64_t>("source.generator.transaction_size", [](Config& c) -> auto& { return c.source.generator.transaction_size; },
      "Changes per synthetic transaction; the position advances at transaction ends.").byDefault(1).validate(in_range(1, 1'000'000)),

    property<std::string>("sink.type", [](Config& c) -> auto& { return c.sink.type; },
      "Where events go: kafka, postgres or mysql (MySQL and MariaDB: the changes applied to that database, see "
      "sink.database), or stdout (JSON lines, for debugging).")
      .byDefault("kafka").choices({"kafka", "stdout", "postgres", "mysql"}),
    property<std::string>("sink.database.host", [](Config& c) -> auto& { return c.sink.database.host; },
      "Target database host (sink.type postgres or mysql).").byDefault("127.0.0.1"),
    property<int64_t>("sink.database.port", [](Config& c) -> auto& { return c.sink.database.port; },
      "Target database port; 0 means the usual port (5432 for postgres, 3306 for mysql).")
      .byDefault(0).validate(in_range(0, 65535)),
    property<std::string>("sink.database.user", [](Config& c) -> auto& { return c.sink.database.user; },
      "Target database user: needs SELECT, INSERT, UPDATE, DELETE on the target tables, and CREATE for the position "
      "table the first time (docs/apply.md).").byDefault(""),
    property<std::string>("sink.database.password", [](Config& c) -> auto& { return c.sink.database.password; },
      "Target database password; use ${ENV_VAR} to keep it out of the file.").byDefault("").secret(),
    property<std::string>("sink.database.database", [](Config& c) -> auto& { return c.sink.database.database; },
      "Target database (mysql: where the target tables and the position table are).").byDefault(""),
    property<std::string>("sink.database.schema", [](Config& c) -> auto& { return c.sink.database.schema; },
      "postgres target: the schema of the target tables and of the position table.").byDefault("public"),
    property<std::string>("sink.database.tls.mode", [](Config& c) -> auto& { return c.sink.database.tls.mode; },
      "TLS to the target database, as source.tls.mode.")
      .byDefault("prefer").choices({"disable", "prefer", "require", "verify-ca", "verify-full"}),
    property<std::string>("sink.database.tls.ca", [](Config& c) -> auto& { return c.sink.database.tls.ca; },
      "CA certificate file (PEM) of the target's server certificate, as source.tls.ca.").byDefault(""),
    property<std::string>("sink.database.tls.cert", [](Config& c) -> auto& { return c.sink.database.tls.cert; },
      "Client certificate file (PEM) for the target, as source.tls.cert.").byDefault(""),
    property<std::string>("sink.database.tls.key", [](Config& c) -> auto& { return c.sink.database.tls.key; },
      "Private key file (PEM, unencrypted) of sink.database.tls.cert.").byDefault(""),
    property<int64_t>("sink.database.batch_max_events", [](Config& c) -> auto& { return c.sink.database.batch_max_events; },
      "Changes applied in one target transaction, at most: consecutive source transactions share a target transaction "
      "up to this many changes, and one is never split (a larger source transaction is applied whole). 1: one target "
      "transaction per source transaction.")
      .byDefault(5000).validate(in_range(1, 10'000'000)),
    property<std::string>("sink.database.truncate", [](Config& c) -> auto& { return c.sink.database.truncate; },
      "A TRUNCATE in the source: apply (truncate the target table too) or ignore.")
      .byDefault("apply").choices({"apply", "ignore"}),
    property<std::string>("sink.database.position_table", [](Config& c) -> auto& { return c.sink.database.position_table; },
      "Table in the target holding each pipeline's applied source position and snapshot state, written in the same "
      "transaction as the changes it covers (exactly-once); created when missing.")
      .byDefault("tidemark_apply_position").validate(logical_name),
    property<std::string>("sink.database.offsets_table", [](Config& c) -> auto& { return c.sink.database.offsets_table; },
      "With source.type kafka: table in the target holding, per consumer group, the next offset of every partition and "
      "the member that owns it, written in the same transaction as the rows (exactly-once); created when missing.")
      .byDefault("tidemark_apply_offsets").validate(logical_name),
    property<std::string>("sink.database.id_map_table", [](Config& c) -> auto& { return c.sink.database.id_map_table; },
      "Table in the target pairing source keys with the keys the target generated, for mappings with generated_key; "
      "written in the same transaction as the rows, read to translate references; created when a mapping needs it.")
      .byDefault("tidemark_id_map").validate(logical_name),
    property<std::string>("sink.database.conflict_table", [](Config& c) -> auto& { return c.sink.database.conflict_table; },
      "Table in the target logging each change that a mapping's version column kept out because the target's row was as "
      "new or newer (a conflict): pipeline, target table, key, kept and incoming version; written in the same "
      "transaction, counted in tidemark_conflicts_total and logged with the key; created when a mapping has a version.")
      .byDefault("tidemark_conflict").validate(logical_name),
    property<std::vector<TableMapping>>("sink.database.tables", [](Config& c) -> auto& { return c.sink.database.tables; },
      "How source tables are written into the target: a list of maps with source (a captured table, as in "
      "source.tables), target (the target table: name, schema.name or database.name; default the source's name), where "
      "(a condition over the source row, in the target's SQL: rows for which it is not true are kept out of the target, "
      "and leave it when an update makes it false) and columns (target column: a source column to copy, or an SQL "
      "expression the target evaluates over the source row, naming source values as :column, e.g. "
      "full_name: \"concat(:first_name, ' ', :last_name)\", source: \"'legacy'\"; only the listed columns are written), "
      "generated_key (true: the target generates its one-column key, the id map pairs it with the source key) and "
      "references (target column: the mapped source table whose key it holds, translated through the id map) and "
      "version (a written target column, a version number or updated_at: a row overwrites the target's only when "
      "newer, and updates never recreate deleted rows; the conflict policy of two-way sync). Tables not listed go to the target table of the same name, column by column. Checked against both databases at "
      "start (docs/apply.md).")
      .byDefault({}),
    property<int64_t>("sink.database.retry_max_ms", [](Config& c) -> auto& { return c.sink.database.retry_max_ms; },
      "How long a lost or refused target connection is retried, with backoff, before the daemon stops with status 2; "
      "nothing is lost either way (the transaction in progress is applied again).")
      .byDefault(300000).validate(in_range(0, 86'400'000)),
    property<std::string>("sink.kafka.bootstrap_servers", [](Config& c) -> auto& { return c.sink.kafka.bootstrap_servers; },
      "Kafka bootstrap servers, host:port[,host:port...]. Required when sink.type is kafka.").byDefault(""),
    property<std::string>("sink.kafka.topic_prefix", [](Config& c) -> auto& { return c.sink.kafka.topic_prefix; },
      "Prefix of every topic name; defaults to `name`.").byDefault(""),
    property<std::string>("sink.kafka.topic_template", [](Config& c) -> auto& { return c.sink.kafka.topic_template; },
      "Topic of a table; placeholders {prefix}, {database}, {schema}, {table}. Empty means Debezium's names: "
      "{prefix}.{schema}.{table} for postgres, {prefix}.{database}.{table} otherwise.")
      .byDefault("").validate(topic_template),
    property<bool>("sink.kafka.tombstones_on_delete", [](Config& c) -> auto& { return c.sink.kafka.tombstones_on_delete; },
      "After each delete, also send a record with the key and a null value, so log compaction drops the key.")
      .byDefault(true),
    property<int64_t>("sink.kafka.delivery_timeout_ms", [](Config& c) -> auto& { return c.sink.kafka.delivery_timeout_ms; },
      "How long a record may wait for Kafka (broker down included) before the daemon gives up and exits non-zero; 0 means forever.")
      .byDefault(300000).validate(in_range(0, INT32_MAX)),
    property<int64_t>("sink.kafka.connect_timeout_ms", [](Config& c) -> auto& { return c.sink.kafka.connect_timeout_ms; },
      "How long start-up and `tidemark check` wait for the first answer from the brokers.")
      .byDefault(10000).validate(in_range(100, 600000)),
    property<int64_t>("sink.kafka.flush_timeout_ms", [](Config& c) -> auto& { return c.sink.kafka.flush_timeout_ms; },
      "On shutdown, how long to wait for Kafka to acknowledge what was sent.")
      .byDefault(30000).validate(in_range(0, 3600000)),
    property<int64_t>("sink.kafka.topic_creation_wait_ms", [](Config& c) -> auto& { return c.sink.kafka.topic_creation_wait_ms; },
      "How long the first record of a topic that does not exist yet waits for the brokers to create it "
      "(auto.create.topics.enable, the broker's default) before that is a fatal error; a broker that says it does not "
      "create topics is a fatal error at once. 0: a missing topic is fatal at once.")
      .byDefault(30000).validate(in_range(0, 600000)),
    property<std::string>("sink.kafka.record_shape", [](Config& c) -> auto& { return c.sink.kafka.record_shape; },
      "envelope: Debezium's change event (before, after, source, op, ts_ms, transaction). flat: the row's columns at "
      "the top level, as Debezium's ExtractNewRecordState transform gives them (after for creates, updates and "
      "snapshot reads; deletes as sink.kafka.flat.delete_handling says; truncates are not sent).")
      .byDefault("envelope").choices({"envelope", "flat"}),
    property<std::vector<std::string>>("sink.kafka.flat.add_fields", [](Config& c) -> auto& { return c.sink.kafka.flat_add_fields; },
      "Fields a flat record gets beside the columns, each as __<name> (ExtractNewRecordState's add.fields): op, table, "
      "db, schema, source_ts_ms (commit time in the source), ts_ms (when Tidemark processed it).")
      .byDefault({}).validate(flat_fields),
    property<std::string>("sink.kafka.flat.delete_handling", [](Config& c) -> auto& { return c.sink.kafka.flat_delete_handling; },
      "A delete in flat records (ExtractNewRecordState's delete.tombstone.handling.mode): drop (nothing), tombstone "
      "(the key with a null value only), rewrite (the old row with __deleted: \"true\", every other record gets "
      "__deleted: \"false\"; followed by a tombstone when sink.kafka.tombstones_on_delete).")
      .byDefault("tombstone").choices({"drop", "tombstone", "rewrite"}),
    property<bool>("sink.kafka.schemas.enable", [](Config& c) -> auto& { return c.sink.kafka.schemas_enable; },
      "Write every key and value as {\"schema\": ..., \"payload\": ...}, as Kafka Connect's JsonConverter does with "
      "schemas.enable=true: the schema describes each column (int32, io.debezium.time.MicroTimestamp, ...) so that "
      "consumers that expect Debezium's schemas can read the records. Larger records; off by default.")
      .byDefault(false),
    property<bool>("sink.kafka.provide_transaction_metadata", [](Config& c) -> auto& { return c.sink.kafka.provide_transaction_metadata; },
      "Debezium's transaction metadata: every change's envelope gets a transaction block (id, total_order, "
      "data_collection_order), and each source transaction a BEGIN and an END record (event_count, data_collections) "
      "on sink.kafka.transaction_topic, so consumers can put transactions back together across partitions.")
      .byDefault(false),
    property<std::string>("sink.kafka.transaction_topic", [](Config& c) -> auto& { return c.sink.kafka.transaction_topic; },
      "Topic of the BEGIN and END records; empty: <topic prefix>.transaction (Debezium's name).")
      .byDefault(""),
    property<bool>("sink.kafka.topic_creation.enabled", [](Config& c) -> auto& { return c.sink.kafka.topic_creation.enabled; },
      "Create a missing topic through the Admin API (as Kafka Connect's topic.creation.*) before its first record, "
      "with the partitions, replication factor and configs below; existing topics are left alone. The producer then "
      "never lets a broker auto-create a topic with the broker's defaults.")
      .byDefault(false),
    property<int64_t>("sink.kafka.topic_creation.partitions", [](Config& c) -> auto& { return c.sink.kafka.topic_creation.defaults.partitions; },
      "Partitions of a created topic; -1: the broker's num.partitions.")
      .byDefault(-1).validate(minus_one_or(1, 100000)),
    property<int64_t>("sink.kafka.topic_creation.replication_factor", [](Config& c) -> auto& { return c.sink.kafka.topic_creation.defaults.replication_factor; },
      "Replication factor of a created topic; -1: the broker's default.replication.factor.")
      .byDefault(-1).validate(minus_one_or(1, 1000)),
    property<std::map<std::string, std::string>>("sink.kafka.topic_creation.config", [](Config& c) -> auto& { return c.sink.kafka.topic_creation.defaults.config; },
      "Topic configs of a created topic, e.g. cleanup.policy: compact, retention.ms: 604800000.")
      .byDefault({}),
    property<std::vector<TopicCreationGroup>>("sink.kafka.topic_creation.groups", [](Config& c) -> auto& { return c.sink.kafka.topic_creation.groups; },
      "Topics with their own settings: a list of maps with include (a regular expression the whole topic name matches), "
      "exclude (optional), partitions, replication_factor and config; the first group that matches wins, and what a "
      "group leaves out comes from the settings above (its config is merged over theirs).")
      .byDefault({}),
    property<std::map<std::string, std::string>>("sink.kafka.properties", [](Config& c) -> auto& { return c.sink.kafka.properties; },
      "Extra librdkafka producer properties (compression.type, linger.ms, security.protocol, sasl.*...). Tidemark's own "
      "defaults, which these override: linger.ms 1 (librdkafka's is 5: a change that comes alone waits that long; 5 "
      "saves some CPU of the daemon and the broker at moderate rates) and queue.buffering.max.kbytes 32768. Records wait "
      "in front of librdkafka while their topic has a batch in flight (at most 8 x batch.size, within "
      "queue.buffering.max.kbytes and .messages; not with exactly_once). Credentials "
      "(keys containing 'password' or 'secret', ssl.key.pem, sasl.oauthbearer.config) are never logged.")
      .byDefault({}).validate(kafka_properties),

    property<bool>("sink.kafka.exactly_once", [](Config& c) -> auto& { return c.sink.kafka.exactly_once; },
      "Exactly-once delivery (docs/exactly-once.md): records of whole source transactions are committed in Kafka "
      "transactions together with the pipeline state (position and snapshot state) in sink.kafka.state_topic, which is "
      "read back at start; consumers must read with isolation.level=read_committed. Only with sink.type kafka.")
      .byDefault(false),
    property<std::string>("sink.kafka.transactional_id", [](Config& c) -> auto& { return c.sink.kafka.transactional_id; },
      "The producer's transactional.id with sink.kafka.exactly_once; empty: tidemark-<name>. A second instance with the "
      "same id fences the first (its writes stop counting), so give every pipeline its own.")
      .byDefault(""),
    property<std::string>("sink.kafka.state_topic", [](Config& c) -> auto& { return c.sink.kafka.state_topic; },
      "With sink.kafka.exactly_once: the compacted topic holding each pipeline's state under its name as the key; "
      "empty: <topic prefix>.tidemark.state. Created with cleanup.policy=compact and one partition when missing.")
      .byDefault(""),
    property<int64_t>("sink.kafka.transaction_interval_ms", [](Config& c) -> auto& { return c.sink.kafka.transaction_interval_ms; },
      "With sink.kafka.exactly_once: a Kafka transaction is committed at the first source-transaction end after it has "
      "been open this long (consumers reading committed records see changes after about this much more delay). While the "
      "source is ahead of Kafka (catching up a backlog), ten times this, so that commits do not slow the catch-up.")
      .byDefault(100).validate(in_range(1, 600000)),
    property<int64_t>("sink.kafka.transaction_max_bytes", [](Config& c) -> auto& { return c.sink.kafka.transaction_max_bytes; },
      "With sink.kafka.exactly_once: a Kafka transaction is committed at the first source-transaction end after its "
      "records reach this many bytes. A single source transaction larger than this (or open longer than half of "
      "transaction.timeout.ms) is split across Kafka transactions; the state then counts its changes already committed, "
      "and a restart passes over exactly those.")
      .byDefault(16 * 1024 * 1024).validate(in_range(65536, int64_t{1} << 32)),

    property<bool>("ha.enabled", [](Config& c) -> auto& { return c.ha.enabled; },
      "Run as one of several instances of this pipeline (the same configuration on other machines): the one that holds "
      "the pipeline's lease, a lock on the source database (PostgreSQL advisory lock, MySQL GET_LOCK), runs it; the "
      "others wait as standbys and take over when the leader dies or stops answering. Use with "
      "sink.kafka.exactly_once, whose fencing keeps an old leader from writing after a takeover.")
      .byDefault(false),
    property<int64_t>("ha.lease_timeout_ms", [](Config& c) -> auto& { return c.ha.lease_timeout_ms; },
      "How long a leader that stopped answering (paused, cut off) keeps the lease: the source database closes its idle "
      "lease session after this (idle_session_timeout, wait_timeout). A leader that dies loses it at once.")
      .byDefault(5000).validate(in_range(2000, 600000)),
    property<std::string>("ha.instance", [](Config& c) -> auto& { return c.ha.instance; },
      "This instance's name in status and logs; empty: <hostname> pid <pid>.")
      .byDefault(""),

    property<std::string>("state.path", [](Config& c) -> auto& { return c.state.path; },
      "File holding the committed source position (written with fsync and an atomic rename). Defaults to /var/lib/tidemark/<name>.state.json.")
      .byDefault(""),
    property<int64_t>("state.flush_interval_ms", [](Config& c) -> auto& { return c.state.flush_interval_ms; },
      "How often the acknowledged position is written to the state file.")
      .byDefault(1000).validate(in_range(10, 600000)).reloadable(),

    property<int64_t>("queue.max_events", [](Config& c) -> auto& { return c.queue.max_events; },
      "Bound of the queue between the source and the sink, in events.").byDefault(20000).validate(in_range(1, 10'000'000)),
    property<int64_t>("queue.max_bytes", [](Config& c) -> auto& { return c.queue.max_bytes; },
      "Bound of the queue between the source and the sink, in bytes.").byDefault(64LL << 20).validate(in_range(1 << 16, 1LL << 40)),

    property<std::string>("two_way.peer", [](Config& c) -> auto& { return c.two_way.peer; },
      "Two-way sync: the name of the pipeline that applies changes into this pipeline's source database (the one "
      "running the other way). This pipeline's database sink then marks every transaction it applies, and its source "
      "drops every transaction the peer marked, so no change comes back (docs/apply.md). Empty: one way.")
      .byDefault("").validate(logical_name_or_empty),
    property<std::string>("two_way.marker_table", [](Config& c) -> auto& { return c.two_way.marker_table; },
      "Two-way sync: the table, in both databases, in which each database sink marks the transactions it applies "
      "(one row per pipeline, updated first in each); created when missing. In the default schema (PostgreSQL) or "
      "source.database / sink.database.database (MySQL).")
      .byDefault("tidemark_marker").validate(logical_name),
    property<std::string>("two_way.winner", [](Config& c) -> auto& { return c.two_way.winner; },
      "Two-way sync without version columns: the pipeline (this one or two_way.peer; both files name the same one) "
      "whose source side always wins conflicts. The other pipeline's inserts keep a row that exists, and its updates "
      "and deletes apply only where the target still holds the values the source row had before (the columns the "
      "change touches; a delete: all copied columns), so it needs old row images (PostgreSQL REPLICA IDENTITY FULL, "
      "MySQL binlog_row_image=FULL). Empty: mappings' version columns decide (last writer wins).")
      .byDefault("").validate(logical_name_or_empty),
    property<int64_t>("heartbeat.interval_ms", [](Config& c) -> auto& { return c.heartbeat.interval_ms; },
      "Every this many milliseconds, a heartbeat record on the topic <heartbeat.topic_prefix>.<topic prefix> "
      "(key {\"serverName\": prefix}, value {\"ts_ms\": now}, as Debezium's), so consumers can tell an idle pipeline "
      "from a dead one; and heartbeat.action_query, when set, runs on the source. 0: none.")
      .byDefault(0).validate(in_range(0, 86'400'000)),
    property<std::string>("heartbeat.topic_prefix", [](Config& c) -> auto& { return c.heartbeat.topic_prefix; },
      "The heartbeat topic's prefix (Debezium's topic.heartbeat.prefix).")
      .byDefault("__debezium-heartbeat").validate(logical_name),
    property<std::string>("heartbeat.action_query", [](Config& c) -> auto& { return c.heartbeat.action_query; },
      "SQL run on the source, as source.user, at every heartbeat (Debezium's heartbeat.action.query), e.g. an UPDATE "
      "of a one-row table in the publication, so that a PostgreSQL slot on a database whose captured tables are "
      "idle still confirms progress. One statement; its errors are logged and retried at the next heartbeat.")
      .byDefault(""),
    property<std::string>("http.listen", [](Config& c) -> auto& { return c.http.listen; },
      "Address of the HTTP endpoints /metrics (Prometheus), /healthz, /readyz and /status, as host:port "
      "(127.0.0.1:9464; 0.0.0.0:9464 for every interface: the endpoints have no authentication). Empty: none.")
      .byDefault("").validate(listen_address).reloadable(),
    property<int64_t>("http.ready_max_lag_ms", [](Config& c) -> auto& { return c.http.ready_max_lag_ms; },
      "/readyz fails while the newest acknowledged transaction was committed in the source longer ago than "
      "this when it was acknowledged (tidemark_behind_source_seconds). 0: lag does not count.")
      .byDefault(0).validate(in_range(0, 86'400'000)).reloadable(),

    property<bool>("snapshot.enabled", [](Config& c) -> auto& { return c.snapshot.enabled; },
      "DBLog snapshots beside the log (postgres and mysql sources): needs the signal and watermark tables.").byDefault(true),
    property<std::string>("snapshot.initial", [](Config& c) -> auto& { return c.snapshot.initial; },
      "Snapshot every captured table on start: when_needed (first start, no stored position), always (every start), never.")
      .byDefault("when_needed").choices({"when_needed", "always", "never"}),
    property<int64_t>("snapshot.chunk_size", [](Config& c) -> auto& { return c.snapshot.chunk_size; },
      "Rows per chunk SELECT: the first chunk's and the least (see snapshot.max_chunk_size; a signal may ask for another, "
      "fixed size). With a database sink the default is 8192 (sink.type postgres) or 4096 (mysql).").byDefault(1024).validate(in_range(1, 1'000'000)),
    property<std::string>("snapshot.signal_table", [](Config& c) -> auto& { return c.snapshot.signal_table; },
      "Table whose inserted rows control snapshots (execute-snapshot, stop-snapshot, pause-snapshot, resume-snapshot); "
      "'table' lives in schema public (postgres) or in source.database (mysql; without it, the database of the first "
      "source.tables entry), or name it 'schema.table'.")
      .byDefault("tidemark_signal"),
    property<std::string>("snapshot.watermark_table", [](Config& c) -> auto& { return c.snapshot.watermark_table; },
      "Table holding one row per pipeline, updated to a fresh UUID before and after each chunk.")
      .byDefault("tidemark_watermark"),
    property<bool>("snapshot.create_tables", [](Config& c) -> auto& { return c.snapshot.create_tables; },
      "Create the signal and watermark tables when missing. Off: `tidemark check` prints the DDL and grants to run.")
      .byDefault(true),
    property<bool>("snapshot.paused", [](Config& c) -> auto& { return c.snapshot.paused; },
      "Pause chunk reading (the log keeps streaming); applied on SIGHUP and kept across restarts like the pause signal.")
      .byDefault(false).reloadable(),
    property<int64_t>("snapshot.max_chunks_per_second", [](Config& c) -> auto& { return c.snapshot.max_chunks_per_second; },
      "Upper bound on chunks read per second; 0 means no bound.").byDefault(0).validate(in_range(0, 1'000'000)).reloadable(),
    property<int64_t>("snapshot.max_backlog_events", [](Config& c) -> auto& { return c.snapshot.max_backlog_events; },
      "Upper bound on the records a snapshot keeps waiting in the queue or for Kafka (a chunk's records wait ahead of "
      "the log's changes), counting the rows read into open windows. Within it the bound adapts to "
      "snapshot.target_ack_latency_ms.")
      .byDefault(20000).validate(in_range(1, 100'000'000)).reloadable(),
    property<int64_t>("snapshot.target_ack_latency_ms", [](Config& c) -> auto& { return c.snapshot.target_ack_latency_ms; },
      "Acknowledgement latency (produce -> Kafka ack) the snapshot keeps the log's records within: every 50 ms the bound "
      "on waiting records grows by one chunk while the slowest acknowledgement stayed within this, and halves when it did "
      "not (never below one chunk). 0: the fixed bound snapshot.max_backlog_events. With a database sink the acknowledgement "
      "is the target's commit, and the default is 500.")
      .byDefault(15).validate(in_range(0, 600'000)).reloadable(),
    property<int64_t>("snapshot.chunks_in_flight", [](Config& c) -> auto& { return c.snapshot.chunks_in_flight; },
      "Chunks read ahead: the worker writes the next chunk's watermarks and reads its rows while earlier chunks' high "
      "watermarks travel through the log and their rows drain to Kafka (each chunk keeps its own DBLog window, opened "
      "on the previous one's high watermark when read without a pause; see docs/snapshots.md). 1: one chunk at a time. "
      "Their rows are held in memory until emitted.")
      .byDefault(4).validate(in_range(1, 64)).reloadable(),
    property<int64_t>("snapshot.max_chunk_size", [](Config& c) -> auto& { return c.snapshot.max_chunk_size; },
      "Largest chunk: each table starts at snapshot.chunk_size rows per chunk, and while snapshot.target_ack_latency_ms "
      "holds, a chunk reads the backlog bound divided by snapshot.chunks_in_flight rows, up to this (fewer, larger chunks "
      "when Kafka keeps up: each chunk costs a watermark commit and a query). At or below chunk_size, with "
      "target_ack_latency_ms 0, or for a signal that names its chunk_size: chunks of a fixed size. With a database sink "
      "the default is snapshot.chunk_size.")
      .byDefault(4096).validate(in_range(1, 1'000'000)).reloadable(),
    property<int64_t>("snapshot.watermark_timeout_ms", [](Config& c) -> auto& { return c.snapshot.watermark_timeout_ms; },
      "A watermark written but not seen in the log within this time stops the daemon (the watermark table is not captured).")
      .byDefault(120000).validate(in_range(1000, 86'400'000)),
    property<int64_t>("snapshot.query_timeout_ms", [](Config& c) -> auto& { return c.snapshot.query_timeout_ms; },
      "Statement timeout of each chunk and key query (they run read-only with it); a chunk that hits it is retried, then "
      "its request refused. Shutdown and stop-snapshot cancel a query in flight regardless.")
      .byDefault(60000).validate(in_range(100, 86'400'000)),
    property<std::map<std::string, std::string>>("snapshot.surrogate_keys", [](Config& c) -> auto& { return c.snapshot.surrogate_keys; },
      "Chunk key of tables without a primary key: 'schema.table': 'col1,col2' (unique, no NULLs). A table with neither is refused.")
      .byDefault({}),
  };
  // clang-format on
}

}  // namespace

const std::vector<Setting>& settings() {
  static const std::vector<Setting> table = build_table();  // immutable after first use
  return table;
}

const Setting* find_setting(std::string_view path) {
  for (const auto& s : settings())
    if (s.path == path) return &s;
  return nullptr;
}

std::string display_value(const Setting& setting, const Config& config) {
  if (setting.secret) return "****";
  return setting.display(config);
}

}  // namespace tidemark
