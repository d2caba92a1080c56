// Configuration loading: defaults, error reporting with places, ${ENV} substitution, secret redaction,
// Kafka property guards, cross-field rules and the example files shipped in config/.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <cctype>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "config/config_loader.hpp"
#include "config/env_substitution.hpp"
#include "config/settings.hpp"
#include "sink/kafka_topics.hpp"  // topic_spec_for: how the loaded groups are applied

namespace tidemark {
namespace {

using KeyLine = std::pair<std::string, int>;

// An environment that is only what the test says it is; records every name looked up.
struct FakeEnv {
  std::map<std::string, std::string> vars;
  std::vector<std::string> looked_up;

  EnvLookup lookup() {
    return [this](const std::string& name) -> std::optional<std::string> {
      looked_up.push_back(name);
      const auto it = vars.find(name);
      if (it == vars.end()) return std::nullopt;
      return it->second;
    };
  }
};

ConfigLoadResult load(std::string_view yaml, FakeEnv& env) { return load_config_text(yaml, "test.yaml", env.lookup()); }

ConfigLoadResult load(std::string_view yaml) {
  FakeEnv env;
  return load(yaml, env);
}

std::set<KeyLine> key_lines(const ConfigLoadResult& r) {
  std::set<KeyLine> out;
  for (const auto& e : r.errors) out.emplace(e.key, e.line);
  return out;
}

const ConfigError* error_for(const ConfigLoadResult& r, const std::string& key) {
  for (const auto& e : r.errors)
    if (e.key == key) return &e;
  return nullptr;
}

const Setting& setting(const std::string& path) {
  const Setting* s = find_setting(path);
  if (s == nullptr) throw std::runtime_error("no setting " + path);
  return *s;
}

constexpr std::string_view kMinimal =
    "name: shop\n"
    "source:\n"
    "  type: generator\n"
    "sink:\n"
    "  type: stdout\n";

TEST(Config, MinimalConfigLoadsWithDefaults) {
  const auto r = load(kMinimal);
  ASSERT_TRUE(r.ok()) << format_errors(r.errors);
  const Config& c = r.config;
  EXPECT_EQ(c.name, "shop");
  EXPECT_EQ(c.source.type, "generator");
  EXPECT_EQ(c.sink.type, "stdout");
  // Derived defaults.
  EXPECT_EQ(c.sink.kafka.topic_prefix, "shop");
  EXPECT_EQ(c.state.path, "/var/lib/tidemark/shop.state.json");
  EXPECT_EQ(c.source.port, 0);  // the generator has no port
  // Plain defaults from the table.
  EXPECT_EQ(c.log_level, "info");
  EXPECT_EQ(c.source.host, "127.0.0.1");
  EXPECT_EQ(c.source.postgres.slot, "tidemark");
  EXPECT_EQ(c.source.postgres.publication, "tidemark");
  EXPECT_EQ(c.source.mysql.server_id, 5400);
  EXPECT_EQ(c.source.generator.tables, 1);
  EXPECT_EQ(c.source.generator.keys, 1000);
  EXPECT_EQ(c.source.generator.transaction_size, 1);
  EXPECT_EQ(c.source.generator.row_bytes, 200);
  EXPECT_EQ(c.sink.kafka.topic_template, "{prefix}.{database}.{table}");
  EXPECT_TRUE(c.sink.kafka.tombstones_on_delete);
  EXPECT_EQ(c.sink.kafka.delivery_timeout_ms, 300000);
  EXPECT_EQ(c.sink.kafka.connect_timeout_ms, 10000);
  EXPECT_EQ(c.sink.kafka.flush_timeout_ms, 30000);
  EXPECT_TRUE(c.sink.kafka.properties.empty());
  EXPECT_EQ(c.state.flush_interval_ms, 1000);
  EXPECT_EQ(c.queue.max_events, 20000);
  EXPECT_EQ(c.queue.max_bytes, int64_t{64} << 20);
}

TEST(Config, ExplicitValuesOverrideDerivedDefaults) {
  const auto r = load(
      "name: shop\n"
      "source:\n"
      "  type: generator\n"
      "sink:\n"
      "  type: stdout\n"
      "  kafka:\n"
      "    topic_prefix: other\n"
      "state:\n"
      "  path: /tmp/x.json\n");
  ASSERT_TRUE(r.ok()) << format_errors(r.errors);
  EXPECT_EQ(r.config.sink.kafka.topic_prefix, "other");
  EXPECT_EQ(r.config.state.path, "/tmp/x.json");
}

TEST(Config, PortDefaultsToTheDatabasesUsualPort) {
  const std::string pg =
      "name: shop\n"
      "source:\n"
      "  type: postgres\n"
      "  user: app\n"
      "  database: shop\n"
      "  tables: [public.orders]\n"
      "sink:\n"
      "  type: stdout\n";
  const auto r_pg = load(pg);
  ASSERT_TRUE(r_pg.ok()) << format_errors(r_pg.errors);
  EXPECT_EQ(r_pg.config.source.port, 5432);
  EXPECT_EQ(r_pg.config.sink.kafka.topic_template, "{prefix}.{schema}.{table}");  // Debezium's PostgreSQL names

  const std::string my =
      "name: shop\n"
      "source:\n"
      "  type: mysql\n"
      "  user: app\n"
      "  tables: [shop.orders]\n"
      "sink:\n"
      "  type: stdout\n";
  const auto r_my = load(my);
  ASSERT_TRUE(r_my.ok()) << format_errors(r_my.errors);
  EXPECT_EQ(r_my.config.source.port, 3306);
  EXPECT_EQ(r_my.config.sink.kafka.topic_template, "{prefix}.{database}.{table}");  // Debezium's MySQL names

  const auto r_explicit = load("name: shop\n"
                                   "source:\n"
                                   "  type: postgres\n"
                                   "  port: 6543\n"
                                   "  user: app\n"
                                   "  database: shop\n"
                                   "  tables: [public.orders]\n"
                                   "sink:\n"
                                   "  type: stdout\n");
  ASSERT_TRUE(r_explicit.ok()) << format_errors(r_explicit.errors);
  EXPECT_EQ(r_explicit.config.source.port, 6543);
}

TEST(Config, UnknownKeyHasLineAndSuggestion) {
  const auto r = load(
      "name: shop\n"                            // 1
      "source:\n"                               // 2
      "  type: generator\n"                     // 3
      "sink:\n"                                 // 4
      "  type: stdout\n"                        // 5
      "  kafka:\n"                              // 6
      "    bootstrap_server: localhost:9092\n"  // 7
  );
  ASSERT_EQ(r.errors.size(), 1u) << format_errors(r.errors);
  const ConfigError& e = r.errors[0];
  EXPECT_EQ(e.key, "sink.kafka.bootstrap_server");
  EXPECT_EQ(e.line, 7);
  EXPECT_EQ(e.column, 5);
  EXPECT_NE(e.message.find("unknown key"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("did you mean sink.kafka.bootstrap_servers?"), std::string::npos) << e.message;
  EXPECT_EQ(e.to_string(), "test.yaml:7:5: sink.kafka.bootstrap_server: " + e.message);
}

TEST(Config, UnknownTopLevelKeySuggestsTheNearestSetting) {
  const auto r = load(
      "name: shop\n"           // 1
      "source:\n"              // 2
      "  type: generator\n"    // 3
      "sink:\n"                // 4
      "  type: stdout\n"       // 5
      "log:\n"                 // 6
      "  levle: debug\n"       // 7
      "zzzzzzzzzzzzzzzz: 1\n"  // 8
  );
  EXPECT_EQ(key_lines(r), (std::set<KeyLine>{{"log.levle", 7}, {"zzzzzzzzzzzzzzzz", 8}})) << format_errors(r.errors);
  const ConfigError* typo = error_for(r, "log.levle");
  ASSERT_NE(typo, nullptr);
  EXPECT_NE(typo->message.find("did you mean log.level?"), std::string::npos) << typo->message;
  const ConfigError* far = error_for(r, "zzzzzzzzzzzzzzzz");
  ASSERT_NE(far, nullptr);
  EXPECT_EQ(far->message.find("did you mean"), std::string::npos) << far->message;
}

TEST(Config, WrongTypesAreReportedWithTheirLines) {
  const auto r = load(
      "name: shop\n"                   // 1
      "source:\n"                      // 2
      "  type: generator\n"            // 3
      "  port: abc\n"                  // 4  string for an integer
      "  host: [a, b]\n"               // 5  list for a scalar
      "  user: {x: 1}\n"               // 6  map for a scalar
      "  tables: orders\n"             // 7  scalar for a list
      "sink:\n"                        // 8
      "  type: stdout\n"               // 9
      "  kafka:\n"                     // 10
      "    tombstones_on_delete: yes please\n"  // 11 not a boolean
  );
  EXPECT_EQ(key_lines(r), (std::set<KeyLine>{{"source.port", 4},
                                             {"source.host", 5},
                                             {"source.user", 6},
                                             {"source.tables", 7},
                                             {"sink.kafka.tombstones_on_delete", 11}}))
      << format_errors(r.errors);
  EXPECT_NE(error_for(r, "source.port")->message.find("expected an integer, found 'abc'"), std::string::npos);
  EXPECT_NE(error_for(r, "source.host")->message.find("found a list"), std::string::npos);
  EXPECT_NE(error_for(r, "source.user")->message.find("found a map"), std::string::npos);
  EXPECT_NE(error_for(r, "source.tables")->message.find("expected a list"), std::string::npos);
  EXPECT_NE(error_for(r, "sink.kafka.tombstones_on_delete")->message.find("true or false"), std::string::npos);
}

TEST(Config, IntegerWithTrailingGarbageIsRejected) {
  const auto r = load(std::string(kMinimal) + "queue:\n  max_events: 12abc\n");
  EXPECT_EQ(key_lines(r), (std::set<KeyLine>{{"queue.max_events", 7}})) << format_errors(r.errors);
}

TEST(Config, OutOfRangeIntegers) {
  const auto r = load(
      "name: shop\n"            // 1
      "source:\n"               // 2
      "  type: generator\n"     // 3
      "  port: 70000\n"         // 4
      "  generator:\n"          // 5
      "    keys: 0\n"           // 6
      "sink:\n"                 // 7
      "  type: stdout\n"        // 8
      "queue:\n"                // 9
      "  max_bytes: 1024\n"     // 10 below 64 KiB
  );
  EXPECT_EQ(key_lines(r), (std::set<KeyLine>{{"source.port", 4}, {"source.generator.keys", 6}, {"queue.max_bytes", 10}}))
      << format_errors(r.errors);
  EXPECT_NE(error_for(r, "source.port")->message.find("must be between 0 and 65535, found 70000"), std::string::npos)
      << error_for(r, "source.port")->message;
  EXPECT_NE(error_for(r, "source.generator.keys")->message.find("found 0"), std::string::npos);

  // The bounds themselves are accepted.
  const auto edge = load(
      "name: shop\nsource:\n  type: generator\n  port: 65535\n  generator:\n    keys: 1\nsink:\n  type: stdout\n");
  EXPECT_TRUE(edge.ok()) << format_errors(edge.errors);
  EXPECT_EQ(edge.config.source.port, 65535);
}

TEST(Config, BadChoice) {
  const auto r = load(
      "name: shop\n"          // 1
      "source:\n"             // 2
      "  type: oracle\n"      // 3
      "sink:\n"               // 4
      "  type: rabbitmq\n"    // 5
      "log:\n"                // 6
      "  level: loud\n"       // 7
  );
  EXPECT_EQ(key_lines(r), (std::set<KeyLine>{{"source.type", 3}, {"sink.type", 5}, {"log.level", 7}}))
      << format_errors(r.errors);
  EXPECT_NE(error_for(r, "sink.type")->message.find("'rabbitmq' is not one of: kafka, stdout"), std::string::npos)
      << error_for(r, "sink.type")->message;
  EXPECT_NE(error_for(r, "source.type")->message.find("generator, postgres, mysql"), std::string::npos);
}

TEST(Config, MissingRequiredKeys) {
  const auto r = load("sink:\n  type: stdout\n");
  EXPECT_EQ(key_lines(r), (std::set<KeyLine>{{"name", 0}, {"source.type", 0}})) << format_errors(r.errors);
  for (const auto& e : r.errors) EXPECT_NE(e.message.find("required"), std::string::npos) << e.message;
  // A missing key has no place: no ":line:col" in its text.
  EXPECT_EQ(error_for(r, "name")->to_string().rfind("test.yaml: name: ", 0), 0u) << error_for(r, "name")->to_string();
}

TEST(Config, EmptyDocumentReportsTheRequiredKeys) {
  const auto r = load("");
  EXPECT_EQ(key_lines(r), (std::set<KeyLine>{{"name", 0}, {"source.type", 0}})) << format_errors(r.errors);
}

TEST(Config, NonMapDocumentIsAnError) {
  const auto r = load("- a\n- b\n");
  ASSERT_FALSE(r.ok());
}

TEST(Config, SeveralErrorsAreAllReportedWithTheirOwnLines) {
  const auto r = load(
      "name: \"bad name!\"\n"   // 1  not a logical name
      "source:\n"               // 2
      "  type: oracle\n"        // 3  bad choice
      "  port: 99999\n"         // 4  out of range
      "  generator:\n"          // 5
      "    keys: lots\n"        // 6  not an integer
      "sink:\n"                 // 7
      "  type: stdout\n"        // 8
      "  kafka:\n"              // 9
      "    topic_prefx: x\n"    // 10 unknown key
      "queue:\n"                // 11
      "  max_events: 0\n"       // 12 out of range
  );
  EXPECT_EQ(key_lines(r), (std::set<KeyLine>{{"name", 1},
                                             {"source.type", 3},
                                             {"source.port", 4},
                                             {"source.generator.keys", 6},
                                             {"sink.kafka.topic_prefx", 10},
                                             {"queue.max_events", 12}}))
      << format_errors(r.errors);
  EXPECT_EQ(r.errors.size(), 6u) << format_errors(r.errors);
  // format_errors prints one line per error.
  const std::string text = format_errors(r.errors);
  EXPECT_EQ(static_cast<size_t>(std::count(text.begin(), text.end(), '\n')), r.errors.size());
}

TEST(Config, YamlSyntaxErrorHasALine) {
  const auto r = load(
      "name: shop\n"            // 1
      "source:\n"               // 2
      "  type: generator\n"     // 3
      "  host: a: b\n"          // 4  a second ':' inside a plain scalar value
      "sink:\n"                 // 5
      "  type: stdout\n");      // 6
  ASSERT_EQ(r.errors.size(), 1u) << format_errors(r.errors);
  EXPECT_EQ(r.errors[0].line, 4) << r.errors[0].to_string();
  EXPECT_NE(r.errors[0].message.find("YAML syntax error"), std::string::npos) << r.errors[0].message;

  const auto unclosed = load(
      "name: shop\n"            // 1
      "source:\n"               // 2
      "  type: generator\n"     // 3
      "  tables: [a, b\n"       // 4  unclosed flow sequence
      "sink:\n"                 // 5
      "  type: stdout\n");      // 6
  ASSERT_EQ(unclosed.errors.size(), 1u) << format_errors(unclosed.errors);
  EXPECT_GE(unclosed.errors[0].line, 4) << unclosed.errors[0].to_string();
  EXPECT_NE(unclosed.errors[0].message.find("YAML syntax error"), std::string::npos);
}

TEST(Config, EnvironmentSubstitution) {
  FakeEnv env;
  env.vars = {{"DB_PASSWORD", "s3cret"}, {"DB_PORT", "6543"}, {"EMPTY", ""}, {"A", "x"}, {"B", "y"}};
  const auto r = load(
      "name: shop\n"
      "source:\n"
      "  type: postgres\n"
      "  password: ${DB_PASSWORD}\n"
      "  port: ${DB_PORT}\n"
      "  host: ${DB_HOST:-db.internal}\n"
      "  database: ${EMPTY:-fallback_db}\n"
      "  user: \"$${NOT_A_VAR}\"\n"
      "  tables: [\"${A}.${B}\", \"pre-${A}-post\"]\n"
      "sink:\n"
      "  type: stdout\n",
      env);
  ASSERT_TRUE(r.ok()) << format_errors(r.errors);
  EXPECT_EQ(r.config.source.password, "s3cret");
  EXPECT_EQ(r.config.source.port, 6543);
  EXPECT_EQ(r.config.source.host, "db.internal");
  EXPECT_EQ(r.config.source.database, "fallback_db");  // set but empty takes the fallback, like the shell's :-
  EXPECT_EQ(r.config.source.user, "${NOT_A_VAR}");
  EXPECT_EQ(r.config.source.tables, (std::vector<std::string>{"x.y", "pre-x-post"}));
  // "$${" is a literal: the variable is never looked up.
  EXPECT_EQ(std::count(env.looked_up.begin(), env.looked_up.end(), "NOT_A_VAR"), 0);

  FakeEnv set_env;
  set_env.vars = {{"DB_HOST", "db.example"}};
  const auto r2 = load(std::string(kMinimal) + "state:\n  path: /x/${DB_HOST:-unused}.json\n", set_env);
  ASSERT_TRUE(r2.ok()) << format_errors(r2.errors);
  EXPECT_EQ(r2.config.state.path, "/x/db.example.json");
}

TEST(Config, UnsetVariableIsAnErrorOnItsLine) {
  const auto r = load(
      "name: shop\n"                 // 1
      "source:\n"                    // 2
      "  type: generator\n"          // 3
      "  password: ${MISSING_PW}\n"  // 4
      "sink:\n"                      // 5
      "  type: stdout\n");           // 6
  EXPECT_EQ(key_lines(r), (std::set<KeyLine>{{"source.password", 4}})) << format_errors(r.errors);
  const std::string& msg = r.errors.at(0).message;
  EXPECT_NE(msg.find("MISSING_PW"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not set"), std::string::npos) << msg;
}

TEST(Config, SubstituteEnvDirectly) {
  FakeEnv env;
  env.vars = {{"X", "1"}, {"Y_2", "two"}};
  const EnvLookup lookup = env.lookup();
  EXPECT_EQ(substitute_env("plain", lookup).value, "plain");
  EXPECT_EQ(substitute_env("${X}${Y_2}", lookup).value, "1two");
  EXPECT_EQ(substitute_env("$X ${X}", lookup).value, "$X 1");
  EXPECT_EQ(substitute_env("$${X}", lookup).value, "${X}");
  EXPECT_EQ(substitute_env("$$${X}", lookup).value, "$${X}");
  EXPECT_EQ(substitute_env("${NOPE:-a:-b}", lookup).value, "a:-b");
  EXPECT_EQ(substitute_env("${NOPE:-}", lookup).value, "");
  EXPECT_FALSE(substitute_env("${X", lookup).error.empty());
  EXPECT_FALSE(substitute_env("${1X}", lookup).error.empty());
  EXPECT_FALSE(substitute_env("${}", lookup).error.empty());
  EXPECT_FALSE(substitute_env("${A-B}", lookup).error.empty());
  EXPECT_FALSE(substitute_env("${NOPE}", lookup).error.empty());
}

TEST(Config, SecretsNeverAppearInDisplayValues) {
  FakeEnv env;
  env.vars = {{"PGPASSWORD", "hunter2-pg"}, {"SASL_PASSWORD", "hunter2-sasl"}};
  const auto r = load(
      "name: shop\n"
      "source:\n"
      "  type: postgres\n"
      "  user: app\n"
      "  password: ${PGPASSWORD}\n"
      "  database: shop\n"
      "  tables: [public.orders]\n"
      "sink:\n"
      "  type: kafka\n"
      "  kafka:\n"
      "    bootstrap_servers: localhost:9092\n"
      "    properties:\n"
      "      security.protocol: SASL_SSL\n"
      "      sasl.username: app\n"
      "      sasl.password: ${SASL_PASSWORD}\n"
      "      ssl.key.password: hunter2-key\n"
      "      sasl.oauthbearer.client.secret: hunter2-oauth\n",
      env);
  ASSERT_TRUE(r.ok()) << format_errors(r.errors);
  // The secrets were loaded (otherwise the redaction checks below would prove nothing).
  EXPECT_EQ(r.config.source.password, "hunter2-pg");
  EXPECT_EQ(r.config.sink.kafka.properties.at("sasl.password"), "hunter2-sasl");
  EXPECT_NE(setting("source.password").render(r.config).find("hunter2-pg"), std::string::npos);

  for (const Setting& s : settings()) {
    const std::string shown = display_value(s, r.config);
    for (const char* secret : {"hunter2-pg", "hunter2-sasl", "hunter2-key", "hunter2-oauth"})
      EXPECT_EQ(shown.find(secret), std::string::npos) << s.path << " shows " << shown;
  }
  EXPECT_TRUE(setting("source.password").secret);
  EXPECT_EQ(display_value(setting("source.password"), r.config), "****");
  const std::string props = display_value(setting("sink.kafka.properties"), r.config);
  EXPECT_NE(props.find("sasl.password: ****"), std::string::npos) << props;
  EXPECT_NE(props.find("ssl.key.password: ****"), std::string::npos) << props;
  // Non-secret entries stay readable.
  EXPECT_NE(props.find("sasl.username: app"), std::string::npos) << props;
  EXPECT_NE(props.find("security.protocol: SASL_SSL"), std::string::npos) << props;
}

TEST(Config, KafkaPropertiesThatBreakDeliveryAreRefused) {
  auto with_props = [](const std::string& props) {
    return load(
        "name: shop\n"                           // 1
        "source:\n"                              // 2
        "  type: generator\n"                    // 3
        "sink:\n"                                // 4
        "  type: kafka\n"                        // 5
        "  kafka:\n"                             // 6
        "    bootstrap_servers: localhost:9092\n"  // 7
        "    properties:\n"                      // 8
        + props);
  };
  const auto idem = with_props("      compression.type: lz4\n      enable.idempotence: \"false\"\n");
  ASSERT_EQ(idem.errors.size(), 1u) << format_errors(idem.errors);
  EXPECT_EQ(idem.errors[0].key, "sink.kafka.properties");
  EXPECT_GE(idem.errors[0].line, 8);
  EXPECT_LE(idem.errors[0].line, 10);
  EXPECT_NE(idem.errors[0].message.find("enable.idempotence=false"), std::string::npos) << idem.errors[0].message;
  EXPECT_NE(idem.errors[0].message.find("enable.idempotence=true"), std::string::npos) << idem.errors[0].message;

  const auto acks1 = with_props("      acks: \"1\"\n");
  ASSERT_EQ(acks1.errors.size(), 1u) << format_errors(acks1.errors);
  EXPECT_EQ(acks1.errors[0].key, "sink.kafka.properties");
  EXPECT_NE(acks1.errors[0].message.find("acks=1"), std::string::npos) << acks1.errors[0].message;

  EXPECT_FALSE(with_props("      acks: \"0\"\n").ok());
  EXPECT_FALSE(with_props("      request.required.acks: \"1\"\n").ok());
  EXPECT_FALSE(with_props("      bootstrap.servers: other:9092\n").ok());
  EXPECT_FALSE(with_props("      partitioner: random\n").ok());
  EXPECT_FALSE(with_props("      message.timeout.ms: \"1000\"\n").ok());  // set through delivery_timeout_ms

  // The safe values are accepted and passed on.
  const auto safe = with_props("      acks: all\n      enable.idempotence: \"true\"\n      linger.ms: \"5\"\n");
  ASSERT_TRUE(safe.ok()) << format_errors(safe.errors);
  EXPECT_EQ(safe.config.sink.kafka.properties.at("linger.ms"), "5");
  EXPECT_TRUE(with_props("      acks: \"-1\"\n").ok());
}

TEST(Config, TopicTemplateIsChecked) {
  const auto unknown = load(std::string(kMinimal) + "  kafka:\n    topic_template: \"{prefix}.{tabel}\"\n");
  EXPECT_EQ(key_lines(unknown), (std::set<KeyLine>{{"sink.kafka.topic_template", 7}})) << format_errors(unknown.errors);
  EXPECT_NE(unknown.errors.at(0).message.find("{tabel}"), std::string::npos) << unknown.errors.at(0).message;
  // Without {prefix} or {table}, every table would share one topic or get an empty name.
  const auto schema_only = load(std::string(kMinimal) + "  kafka:\n    topic_template: \"{schema}\"\n");
  EXPECT_EQ(key_lines(schema_only), (std::set<KeyLine>{{"sink.kafka.topic_template", 7}})) << format_errors(schema_only.errors);
  const auto custom = load(std::string(kMinimal) + "  kafka:\n    topic_template: \"cdc.{table}\"\n");
  ASSERT_TRUE(custom.ok()) << format_errors(custom.errors);
  EXPECT_EQ(custom.config.sink.kafka.topic_template, "cdc.{table}");
}

TEST(Config, KafkaSinkNeedsBootstrapServers) {
  // sink.type defaults to kafka: no sink section at all.
  const auto none = load("name: shop\nsource:\n  type: generator\n");
  EXPECT_EQ(key_lines(none), (std::set<KeyLine>{{"sink.kafka.bootstrap_servers", 0}})) << format_errors(none.errors);
  EXPECT_NE(none.errors.at(0).message.find("kafka"), std::string::npos);

  // With a sink.kafka section the error points at it.
  const auto section = load(
      "name: shop\n"            // 1
      "source:\n"               // 2
      "  type: generator\n"     // 3
      "sink:\n"                 // 4
      "  type: kafka\n"         // 5
      "  kafka:\n"              // 6
      "    topic_prefix: p\n"); // 7
  EXPECT_EQ(key_lines(section), (std::set<KeyLine>{{"sink.kafka.bootstrap_servers", 6}})) << format_errors(section.errors);

  // stdout needs none.
  EXPECT_TRUE(load(kMinimal).ok());
}

TEST(Config, DatabaseSourcesNeedUserDatabaseAndTables) {
  const auto r = load(
      "name: shop\n"            // 1
      "source:\n"               // 2
      "  type: postgres\n"      // 3
      "sink:\n"                 // 4
      "  type: stdout\n");      // 5
  EXPECT_EQ(key_lines(r), (std::set<KeyLine>{{"source.user", 2}, {"source.database", 2}, {"source.tables", 2}}))
      << format_errors(r.errors);
}

TEST(Config, KeyGivenTwice) {
  const auto r = load(
      "name: shop\n"            // 1
      "source:\n"               // 2
      "  type: generator\n"     // 3
      "  host: a\n"             // 4
      "  host: b\n"             // 5
      "sink:\n"                 // 6
      "  type: stdout\n"        // 7
      "name: other\n");         // 8
  EXPECT_EQ(key_lines(r), (std::set<KeyLine>{{"source.host", 5}, {"name", 8}})) << format_errors(r.errors);
  for (const auto& e : r.errors) EXPECT_NE(e.message.find("twice"), std::string::npos) << e.message;
  // The first occurrence is the one that counts.
  EXPECT_EQ(r.config.name, "shop");
  EXPECT_EQ(r.config.source.host, "a");
}

TEST(Config, KeyWithoutValue) {
  const auto r = load(std::string(kMinimal) + "state:\n  path:\n");
  EXPECT_EQ(key_lines(r), (std::set<KeyLine>{{"state.path", 7}})) << format_errors(r.errors);
}

// ---- The example files in config/ ----

// Supplies every variable an example references without a fallback, with a value that suits its name.
// (A hand-written scanner: std::regex trips GCC 12's -Wmaybe-uninitialized in optimized sanitizer builds.)
std::map<std::string, std::string> variables_for(const std::string& text) {
  std::map<std::string, std::string> vars;
  auto name_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t i = text.find("${"); i != std::string::npos; i = text.find("${", i + 2)) {
    if (i > 0 && text[i - 1] == '$') continue;  // "$${" is a literal
    size_t j = i + 2;
    while (j < text.size() && name_char(text[j])) ++j;
    const std::string name = text.substr(i + 2, j - i - 2);
    if (name.empty()) continue;
    if (text.compare(j, 2, ":-") == 0) continue;  // has a fallback: leave it unset so the fallback is used
    std::string upper = name;
    std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    std::string value = "tidemark_example";
    if (upper.find("PORT") != std::string::npos) value = "5432";
    else if (upper.find("SERVER_ID") != std::string::npos) value = "5401";
    else if (upper.find("BOOTSTRAP") != std::string::npos || upper.find("BROKERS") != std::string::npos) value = "localhost:9092";
    else if (upper.find("TIMEOUT") != std::string::npos || upper.find("_MS") != std::string::npos) value = "1000";
    vars[name] = value;
  }
  return vars;
}

TEST(Config, EveryExampleFileLoadsWithoutErrors) {
  const std::filesystem::path dir = std::filesystem::path(TIDEMARK_SOURCE_DIR) / "config";
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const auto ext = entry.path().extension();
    if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml")) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 2u) << "the example configurations are required: expected at least two *.yaml files in "
                              << dir << (ec ? " (" + ec.message() + ")" : std::string());
  for (const auto& file : files) {
    SCOPED_TRACE(file.string());
    std::ifstream in(file);
    std::stringstream buffer;
    buffer << in.rdbuf();
    FakeEnv env;
    env.vars = variables_for(buffer.str());
    const auto r = load_config_file(file.string(), env.lookup());
    EXPECT_TRUE(r.ok()) << format_errors(r.errors);
    EXPECT_FALSE(r.config.name.empty());
    EXPECT_FALSE(r.config.source.type.empty());
  }
}

TEST(Config, MissingFileIsReported) {
  FakeEnv env;
  const auto r = load_config_file("/nonexistent/dir/tidemark.yaml", env.lookup());
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].file, "/nonexistent/dir/tidemark.yaml");
  EXPECT_NE(r.errors[0].message.find("No such file"), std::string::npos) << r.errors[0].message;
}

}  // namespace
}  // namespace tidemark

namespace tidemark {
namespace {

// SIGHUP copies exactly the reloadable settings from the new file (Setting::copy), and nothing else.
TEST(Config, CopyingTheReloadableSettingsMovesThemAndOnlyThem) {
  const auto before = load(
      "name: shop\n"
      "source:\n"
      "  type: generator\n"
      "sink:\n"
      "  type: stdout\n");
  const auto after = load(
      "name: shop\n"
      "log:\n"
      "  level: debug\n"
      "source:\n"
      "  type: generator\n"
      "  generator:\n"
      "    rate_per_second: 77\n"
      "    keys: 5\n"
      "sink:\n"
      "  type: stdout\n"
      "state:\n"
      "  flush_interval_ms: 250\n"
      "  path: /tmp/elsewhere.json\n"
      "snapshot:\n"
      "  paused: true\n"
      "  max_chunks_per_second: 9\n"
      "  max_backlog_events: 99\n"
      "  chunks_in_flight: 2\n");
  ASSERT_TRUE(before.ok()) << format_errors(before.errors);
  ASSERT_TRUE(after.ok()) << format_errors(after.errors);
  Config live = before.config;
  size_t changed_live = 0, changed_restart = 0;
  for (const Setting& s : settings()) {
    if (s.render(before.config) != s.render(after.config)) ++(s.reloadable ? changed_live : changed_restart);
    if (s.reloadable) s.copy(live, after.config);
  }
  EXPECT_EQ(changed_live, 7u) << "the test changes every reloadable setting";
  EXPECT_GE(changed_restart, 2u);
  for (const Setting& s : settings()) {
    const Config& expected = s.reloadable ? after.config : before.config;
    EXPECT_EQ(s.render(live), s.render(expected)) << s.path;
  }
}

TEST(Config, TopicCreationGroupsLoadAndEachBadGroupNamesItsLine) {
  const auto r = load(
      "name: shop\nsource:\n  type: generator\nsink:\n  type: kafka\n  kafka:\n    bootstrap_servers: k:9092\n"
      "    topic_creation:\n"                       // 8
      "      enabled: true\n"                       // 9
      "      partitions: 6\n"                       // 10
      "      config:\n"                             // 11
      "        cleanup.policy: compact\n"           // 12
      "      groups:\n"                             // 13
      "        - include: 'shop\\..*\\.orders'\n"   // 14
      "          exclude: 'shop\\.tmp\\..*'\n"      // 15
      "          partitions: 12\n"                  // 16
      "          config:\n"                         // 17
      "            retention.ms: '86400000'\n");    // 18
  ASSERT_TRUE(r.ok()) << format_errors(r.errors);
  const auto& creation = r.config.sink.kafka.topic_creation;
  EXPECT_TRUE(creation.enabled);
  ASSERT_EQ(creation.groups.size(), 1u);
  EXPECT_EQ(creation.groups[0].include, "shop\\..*\\.orders");
  EXPECT_EQ(creation.groups[0].spec.partitions, 12);
  EXPECT_EQ(creation.groups[0].spec.replication_factor, -1);

  // The group's settings over the defaults; a name outside every group gets the defaults.
  const TopicSpec orders = topic_spec_for(creation, "shop.public.orders");
  EXPECT_EQ(orders.partitions, 12);
  EXPECT_EQ(orders.config, (std::map<std::string, std::string>{{"cleanup.policy", "compact"}, {"retention.ms", "86400000"}}));
  EXPECT_EQ(topic_spec_for(creation, "shop.public.orders_archive").partitions, 6) << "include matches the whole name";
  EXPECT_EQ(topic_spec_for(creation, "shop.tmp.orders").partitions, 6) << "excluded";
  EXPECT_EQ(topic_spec_for(creation, "shop.public.customers").config.size(), 1u);

  const auto bad = load(
      "name: shop\nsource:\n  type: generator\nsink:\n  type: kafka\n  kafka:\n    bootstrap_servers: k:9092\n"
      "    topic_creation:\n"          // 8
      "      partitions: 0\n"          // 9
      "      groups:\n"                // 10
      "        - partitions: 3\n");    // 11 no include
  EXPECT_EQ(key_lines(bad), (std::set<KeyLine>{{"sink.kafka.topic_creation.partitions", 9},
                                               {"sink.kafka.topic_creation.groups", 11}}))
      << format_errors(bad.errors);
  EXPECT_NE(error_for(bad, "sink.kafka.topic_creation.partitions")->message.find("must be -1 (the broker's default) or between 1"),
            std::string::npos);
  EXPECT_NE(error_for(bad, "sink.kafka.topic_creation.groups")->message.find("group at line 11: include: required"),
            std::string::npos)
      << error_for(bad, "sink.kafka.topic_creation.groups")->message;

  for (const auto& [group, expected] : std::vector<std::pair<std::string, std::string>>{
           {"        - include: '(unclosed'\n", "is not a regular expression"},
           {"        - include: x\n          partitons: 3\n", "partitons: unknown key"},
           {"        - include: x\n          replication_factor: -2\n", "replication_factor: must be -1"},
       }) {
    const auto r2 = load("name: shop\nsource:\n  type: generator\nsink:\n  type: kafka\n  kafka:\n    bootstrap_servers: k:9092\n"
                         "    topic_creation:\n      groups:\n" + group);
    const ConfigError* e = error_for(r2, "sink.kafka.topic_creation.groups");
    ASSERT_NE(e, nullptr) << group;
    EXPECT_NE(e->message.find(expected), std::string::npos) << e->message;
  }
}

}  // namespace
}  // namespace tidemark

namespace tidemark {
namespace {

TEST(Config, DatabaseSinkMappingsLoadInFileOrderAndBadOnesNameTheirLine) {
  const auto r = load(
      "name: shop\nsource:\n  type: generator\nsink:\n  type: postgres\n  database:\n    user: app\n    database: crm\n"
      "    tables:\n"                                                     // 9
      "      - source: shop.legacy_customers\n"                           // 10
      "        target: crm.modern_customers\n"
      "        where: \":status <> 'deleted'\"\n"
      "        columns:\n"
      "          customer_id: id\n"
      "          full_name: \"concat(:first_name, ' ', :last_name)\"\n"
      "          source_system: \"'legacy'\"\n");
  ASSERT_TRUE(r.ok()) << format_errors(r.errors);
  const auto& db = r.config.sink.database;
  EXPECT_EQ(db.type, "postgres");
  EXPECT_EQ(db.port, 5432);
  EXPECT_EQ(db.settings, "sink.database");
  ASSERT_EQ(db.tables.size(), 1u);
  EXPECT_EQ(db.tables[0].line, 10);
  EXPECT_EQ(db.tables[0].target, "crm.modern_customers");
  ASSERT_EQ(db.tables[0].columns.size(), 3u);
  EXPECT_EQ(db.tables[0].columns[0], (std::pair<std::string, std::string>{"customer_id", "id"}));
  EXPECT_EQ(db.tables[0].columns[2].second, "'legacy'");

  const auto bad = load(
      "name: shop\nsource:\n  type: generator\nsink:\n  type: mysql\n  database:\n"
      "    tables:\n"                          // 7
      "      - target: x\n"                    // 8: no source
      "      - source: a.b\n"                  // 9
      "        colums: {}\n");                 // 10: misspelled
  EXPECT_FALSE(bad.ok());
  const auto mapping = error_for(bad, "sink.database.tables");
  ASSERT_TRUE(mapping);
  EXPECT_NE(mapping->message.find("mapping at line 8: source: required"), std::string::npos) << mapping->message;
  EXPECT_TRUE(error_for(bad, "sink.database.user")) << format_errors(bad.errors);
  EXPECT_TRUE(error_for(bad, "sink.database.database")) << format_errors(bad.errors);
}

TEST(Config, IdMappingOptionsLoadAndReferencesMustNameAGeneratedKeyMapping) {
  const auto r = load(
      "name: shop\nsource:\n  type: generator\nsink:\n  type: postgres\n  database:\n    user: app\n    database: crm\n"
      "    tables:\n"
      "      - source: shop.customers\n        generated_key: true\n"
      "      - source: shop.orders\n        references:\n          customer_id: shop.customers\n");
  ASSERT_TRUE(r.ok()) << format_errors(r.errors);
  const auto& tables = r.config.sink.database.tables;
  ASSERT_EQ(tables.size(), 2u);
  EXPECT_TRUE(tables[0].generated_key);
  EXPECT_FALSE(tables[1].generated_key);
  EXPECT_EQ(tables[1].references.at("customer_id"), "shop.customers");
  EXPECT_EQ(r.config.sink.database.id_map_table, "tidemark_id_map");

  const auto not_generated = load(
      "name: shop\nsource:\n  type: generator\nsink:\n  type: postgres\n  database:\n    user: app\n    database: crm\n"
      "    tables:\n"
      "      - source: shop.customers\n"
      "      - source: shop.orders\n        references:\n          customer_id: shop.customers\n");  // line 11
  const auto error = error_for(not_generated, "sink.database.tables");
  ASSERT_TRUE(error) << format_errors(not_generated.errors);
  EXPECT_NE(error->message.find("mapping at line 11: references: customer_id: shop.customers has no mapping with "
                                "generated_key"), std::string::npos) << error->message;

  const auto with_where = load(
      "name: shop\nsource:\n  type: generator\nsink:\n  type: postgres\n  database:\n    user: app\n    database: crm\n"
      "    tables:\n      - source: shop.customers\n        generated_key: true\n        where: \":id > 0\"\n");
  const auto refused = error_for(with_where, "sink.database.tables");
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->message.find("not supported together with generated_key"), std::string::npos) << refused->message;
}

TEST(Config, TwoWayWinnerIsOneOfThePairAndExcludesVersionColumns) {
  const std::string head =
      "name: modern_to_legacy\nsource:\n  type: postgres\n  user: u\n  database: crm\n  tables: [public.customers]\n"
      "sink:\n  type: mysql\n  database:\n    user: app\n    database: shop\n";
  const auto ok = load(head + "two_way:\n  peer: legacy_to_modern\n  winner: legacy_to_modern\n");
  ASSERT_TRUE(ok.ok()) << format_errors(ok.errors);
  EXPECT_TRUE(ok.config.two_way.loses());
  const auto wins = load(head + "two_way:\n  peer: legacy_to_modern\n  winner: modern_to_legacy\n");
  ASSERT_TRUE(wins.ok()) << format_errors(wins.errors);
  EXPECT_FALSE(wins.config.two_way.loses());

  const auto stranger = load(head + "two_way:\n  peer: legacy_to_modern\n  winner: someone_else\n");
  const auto error = error_for(stranger, "two_way.winner");
  ASSERT_TRUE(error) << format_errors(stranger.errors);
  EXPECT_NE(error->message.find("neither this pipeline"), std::string::npos) << error->message;
  EXPECT_EQ(error->line, 14);

  const auto both = load(
      "name: modern_to_legacy\nsource:\n  type: postgres\n  user: u\n  database: crm\n  tables: [public.customers]\n"
      "sink:\n  type: mysql\n  database:\n    user: app\n    database: shop\n    tables:\n"
      "      - source: public.customers\n        version: version\n"  // line 13
      "two_way:\n  peer: legacy_to_modern\n  winner: legacy_to_modern\n");
  const auto conflict = error_for(both, "two_way.winner");
  ASSERT_TRUE(conflict) << format_errors(both.errors);
  EXPECT_NE(conflict->message.find("version of the mapping at line 13 both decide conflicts"), std::string::npos)
      << conflict->message;
}

TEST(Config, TwoWayNeedsADatabaseSinkAndAnotherPipeline) {
  const auto ok = load(
      "name: legacy_to_modern\nsource:\n  type: mysql\n  user: u\n  database: shop\n  tables: [shop.customers]\n"
      "sink:\n  type: postgres\n  database:\n    user: app\n    database: crm\ntwo_way:\n  peer: modern_to_legacy\n");
  ASSERT_TRUE(ok.ok()) << format_errors(ok.errors);
  EXPECT_EQ(ok.config.two_way.peer, "modern_to_legacy");
  EXPECT_EQ(ok.config.two_way.marker_table, "tidemark_marker");

  const auto self = load(
      "name: loop\nsource:\n  type: mysql\n  user: u\n  database: shop\n  tables: [shop.customers]\n"
      "sink:\n  type: kafka\n  kafka:\n    bootstrap_servers: k:9092\ntwo_way:\n  peer: loop\n");
  const auto error = error_for(self, "two_way.peer");
  ASSERT_TRUE(error) << format_errors(self.errors);
  EXPECT_NE(error->message.find("names this pipeline itself"), std::string::npos) << error->message;
  EXPECT_EQ(error->line, 12);
  bool needs_database_sink = false;
  for (const auto& e : self.errors) needs_database_sink |= e.message.find("needs a database sink") != std::string::npos;
  EXPECT_TRUE(needs_database_sink) << format_errors(self.errors);
}

}  // namespace
}  // namespace tidemark

namespace tidemark {
namespace {

TEST(ExactlyOnceConfig, DerivesTheTransactionalIdAndStateTopicFromTheName) {
  const auto r = load(
      "name: shop\n"
      "source:\n  type: generator\n"
      "sink:\n  type: kafka\n  kafka:\n    bootstrap_servers: k:9092\n    topic_prefix: prod\n    exactly_once: true\n");
  ASSERT_TRUE(r.ok()) << format_errors(r.errors);
  EXPECT_EQ(r.config.sink.kafka.transactional_id, "tidemark-shop");
  EXPECT_EQ(r.config.sink.kafka.state_topic, "prod.tidemark.state");
  EXPECT_EQ(r.config.sink.kafka.transaction_interval_ms, 100);
  // Records are acknowledged at each commit: the snapshot's latency target allows for that.
  EXPECT_GE(r.config.snapshot.target_ack_latency_ms, 300);
}

TEST(Config, ChunksGrowWithKafkaAndKeepTheirSizeWithADatabaseSinkUnlessAsked) {
  const std::string source = "name: shop\nsource:\n  type: generator\n";
  const auto kafka = load(source + "sink:\n  type: kafka\n  kafka:\n    bootstrap_servers: k:9092\n");
  ASSERT_TRUE(kafka.ok()) << format_errors(kafka.errors);
  EXPECT_EQ(kafka.config.snapshot.chunk_size, 1024);
  EXPECT_EQ(kafka.config.snapshot.max_chunk_size, 4096);
  const std::string target = "sink:\n  type: postgres\n  database:\n    user: app\n    database: crm\n";
  const auto database = load(source + target);
  ASSERT_TRUE(database.ok()) << format_errors(database.errors);
  EXPECT_EQ(database.config.snapshot.chunk_size, 8192);
  EXPECT_EQ(database.config.snapshot.max_chunk_size, 8192) << "target transactions are sized by the chunk";
  const auto asked = load(source + target + "snapshot:\n  chunk_size: 1000\n  max_chunk_size: 3000\n");
  ASSERT_TRUE(asked.ok()) << format_errors(asked.errors);
  EXPECT_EQ(asked.config.snapshot.chunk_size, 1000);
  EXPECT_EQ(asked.config.snapshot.max_chunk_size, 3000);
}

TEST(ExactlyOnceConfig, NeedsAKafkaSinkAndKeepsTransactionalIdOutOfProperties) {
  const auto r = load(
      "name: shop\n"
      "source:\n  type: generator\n"
      "sink:\n  type: stdout\n  kafka:\n    exactly_once: true\n    properties:\n      transactional.id: x\n");
  ASSERT_FALSE(r.ok());
  const ConfigError* once = error_for(r, "sink.kafka.exactly_once");
  ASSERT_NE(once, nullptr) << format_errors(r.errors);
  EXPECT_EQ(once->line, 7);
  EXPECT_NE(once->message.find("sink.type kafka"), std::string::npos) << once->message;
  const ConfigError* props = error_for(r, "sink.kafka.properties");
  ASSERT_NE(props, nullptr) << format_errors(r.errors);
  EXPECT_NE(props->message.find("sink.kafka.transactional_id"), std::string::npos) << props->message;
}

TEST(HaConfig, NeedsADatabaseSource) {
  const auto r = load(
      "name: shop\n"
      "source:\n  type: generator\n"
      "sink:\n  type: stdout\n"
      "ha:\n  enabled: true\n  lease_timeout_ms: 1000\n");
  ASSERT_FALSE(r.ok());
  ASSERT_NE(error_for(r, "ha.enabled"), nullptr) << format_errors(r.errors);
  EXPECT_EQ(error_for(r, "ha.enabled")->line, 7);
  EXPECT_NE(error_for(r, "ha.lease_timeout_ms"), nullptr) << "below the 2000 ms minimum: " << format_errors(r.errors);
}

}  // namespace
}  // namespace tidemark
