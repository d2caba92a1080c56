// source.tls.* in the loader (docs/security.md): the default, the modes, the rules between mode and files
// (each error names its key and line), readable files, and PGSSLMODE as the default for postgres sources.
// The connections themselves are tested against real servers in tests/integration/source_tls_test.cpp.

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>

#include "config/config_loader.hpp"

namespace tidemark {
namespace {

// A readable file (this test's own source) and one that does not exist.
const std::string kReadable = std::string(TIDEMARK_SOURCE_DIR) + "/tests/unit/source_tls_config_test.cpp";
const std::string kMissing = std::string(TIDEMARK_SOURCE_DIR) + "/tests/unit/no-such-ca.pem";

ConfigLoadResult load(const std::string& type, const std::string& tls_yaml,
                      const std::map<std::string, std::string>& env = {}) {
  // Line 1 name, 2 source:, 3 type, 4 user, 5 database, 6 tables, 7 tls:, 8... the tls keys in order.
  const std::string yaml = "name: t\nsource:\n  type: " + type + "\n  user: u\n  database: d\n  tables: [a.b]\n" +
                           (tls_yaml.empty() ? "" : "  tls:\n" + tls_yaml) + "sink:\n  type: stdout\n";
  return load_config_text(yaml, "test.yaml", [env](const std::string& name) -> std::optional<std::string> {
    const auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  });
}

// The only error, which must be about `key` at `line` and contain `text`.
void expect_one_error(const ConfigLoadResult& r, const std::string& key, int line, const std::string& text) {
  ASSERT_EQ(r.errors.size(), 1u) << format_errors(r.errors);
  EXPECT_EQ(r.errors[0].key, key) << r.errors[0].to_string();
  EXPECT_EQ(r.errors[0].line, line) << r.errors[0].to_string();
  EXPECT_NE(r.errors[0].message.find(text), std::string::npos) << r.errors[0].to_string();
}

TEST(SourceTlsConfig, DefaultIsPreferWithoutFiles) {
  for (const std::string type : {"postgres", "mysql"}) {
    const auto r = load(type, "");
    ASSERT_TRUE(r.ok()) << format_errors(r.errors);
    EXPECT_EQ(r.config.source.tls.mode, "prefer");
    EXPECT_EQ(r.config.source.tls.ca, "");
    EXPECT_EQ(r.config.source.tls.cert, "");
    EXPECT_EQ(r.config.source.tls.key, "");
  }
}

TEST(SourceTlsConfig, EveryModeAndFileIsRead) {
  const auto r = load("mysql", "    mode: verify-full\n    ca: " + kReadable + "\n    cert: " + kReadable +
                                   "\n    key: " + kReadable + "\n");
  ASSERT_TRUE(r.ok()) << format_errors(r.errors);
  EXPECT_EQ(r.config.source.tls.mode, "verify-full");
  EXPECT_EQ(r.config.source.tls.ca, kReadable);
  EXPECT_EQ(r.config.source.tls.cert, kReadable);
  EXPECT_EQ(r.config.source.tls.key, kReadable);
  for (const std::string mode : {"disable", "prefer", "require"}) EXPECT_TRUE(load("mysql", "    mode: " + mode + "\n").ok()) << mode;
  EXPECT_TRUE(load("postgres", "    mode: verify-ca\n    ca: " + kReadable + "\n").ok());
  EXPECT_TRUE(load("postgres", "    mode: require\n    ca: " + kReadable + "\n").ok()) << "require with a CA verifies the chain";
}

TEST(SourceTlsConfig, UnknownModeNamesTheKeyTheLineAndTheChoices) {
  expect_one_error(load("postgres", "    mode: allow\n"), "source.tls.mode", 8,
                   "'allow' is not one of: disable, prefer, require, verify-ca, verify-full");
}

TEST(SourceTlsConfig, VerifyModesNeedACa) {
  for (const std::string mode : {"verify-ca", "verify-full"})
    expect_one_error(load("mysql", "    mode: " + mode + "\n"), "source.tls.mode", 8,
                     "source.tls.mode is " + mode + ": it verifies the server's certificate, so it needs the CA "
                     "certificate that signed it; set source.tls.ca to that PEM file");
}

TEST(SourceTlsConfig, UnreadableFilesAreNamedWithTheirKeyAndLine) {
  expect_one_error(load("mysql", "    mode: verify-full\n    ca: " + kMissing + "\n"), "source.tls.ca", 9,
                   "cannot read " + kMissing + ": No such file or directory");
  const auto r = load("postgres", "    mode: require\n    cert: " + kMissing + "\n    key: " + kMissing + "\n");
  ASSERT_EQ(r.errors.size(), 2u) << format_errors(r.errors);
  EXPECT_EQ(r.errors[0].key, "source.tls.cert");
  EXPECT_EQ(r.errors[0].line, 9);
  EXPECT_EQ(r.errors[1].key, "source.tls.key");
  EXPECT_EQ(r.errors[1].line, 10);
}

TEST(SourceTlsConfig, CertificateAndKeyGoTogether) {
  expect_one_error(load("mysql", "    mode: require\n    cert: " + kReadable + "\n"), "source.tls.key", 9,
                   "source.tls.cert is set, so source.tls.key must name its private key file");
  expect_one_error(load("postgres", "    key: " + kReadable + "\n"), "source.tls.cert", 8,
                   "source.tls.key is set, so source.tls.cert must name the client certificate file");
}

TEST(SourceTlsConfig, FilesThatWouldBeIgnoredAreErrors) {
  expect_one_error(load("mysql", "    mode: disable\n    ca: " + kReadable + "\n"), "source.tls.ca", 9,
                   "is not used: source.tls.mode is disable (no TLS)");
  expect_one_error(load("postgres", "    mode: prefer\n    ca: " + kReadable + "\n"), "source.tls.ca", 9,
                   "which never verifies the server; set source.tls.mode to verify-full");
}

TEST(SourceTlsConfig, GeneratorSourcesIgnoreTls) {
  const auto r = load_config_text("name: t\nsource:\n  type: generator\n  tls:\n    mode: verify-full\nsink:\n  type: stdout\n",
                                  "test.yaml",
                                  [](const std::string&) { return std::nullopt; });
  EXPECT_TRUE(r.ok()) << format_errors(r.errors);
}

TEST(SourceTlsConfig, PgsslmodeIsThePostgresDefaultAndTheFileWins) {
  EXPECT_EQ(load("postgres", "", {{"PGSSLMODE", "require"}}).config.source.tls.mode, "require");
  EXPECT_EQ(load("postgres", "", {{"PGSSLMODE", ""}}).config.source.tls.mode, "prefer");
  EXPECT_EQ(load("postgres", "    mode: disable\n", {{"PGSSLMODE", "verify-full"}}).config.source.tls.mode, "disable");
  EXPECT_EQ(load("mysql", "", {{"PGSSLMODE", "require"}}).config.source.tls.mode, "prefer") << "libpq's variable";

  const auto allow = load("postgres", "", {{"PGSSLMODE", "allow"}});
  ASSERT_EQ(allow.errors.size(), 1u) << format_errors(allow.errors);
  EXPECT_EQ(allow.errors[0].key, "source.tls.mode");
  EXPECT_NE(allow.errors[0].message.find("PGSSLMODE=allow in the environment (the default of source.tls.mode"),
            std::string::npos) << allow.errors[0].to_string();

  // The rules apply to the mode from the environment too, and say where it came from.
  expect_one_error(load("postgres", "", {{"PGSSLMODE", "verify-full"}}), "source.tls.mode", 2,
                   "PGSSLMODE=verify-full (the default of source.tls.mode): it verifies the server's certificate");
  // ... where libpq's PGSSLROOTCERT is a CA.
  EXPECT_TRUE(load("postgres", "", {{"PGSSLMODE", "verify-full"}, {"PGSSLROOTCERT", kReadable}}).ok());
  EXPECT_FALSE(load("mysql", "    mode: verify-full\n", {{"PGSSLROOTCERT", kReadable}}).ok());
}

}  // namespace
}  // namespace tidemark
