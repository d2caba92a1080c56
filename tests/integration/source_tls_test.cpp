// TLS to the source databases (issue #15, finding 5; docs/security.md) through the real tidemark binary,
// against real servers with TLS on: a CA, server and client certificates made with openssl at test time,
// throwaway PostgreSQL clusters (ssl = on, pg_hba.conf with hostssl lines only) and throwaway MariaDB servers
// (--ssl-ca/--ssl-cert/--ssl-key, accounts with REQUIRE SSL and REQUIRE X509). Every scenario runs on both
// databases. Each test makes the servers it needs (once per process, shared by the tests that follow).
//
// On every TLS server: tm_tls (password pw) may connect only over TLS (PostgreSQL: hostssl; MariaDB:
// REQUIRE SSL); tm_cert also needs a client certificate (clientcert=verify-full, CN tm_cert; REQUIRE X509).
// Both may read tls_items (PostgreSQL: in publication tls_pub) and replicate.

#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "daemon_runner.hpp"
#include "mariadb_server.hpp"
#include "mysql_client.hpp"
#include "pg_client.hpp"
#include "pg_cluster.hpp"
#include "process.hpp"

namespace tidemark::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// ---- Certificates ----

// A CA, a second CA that signed nothing of ours, a server certificate for localhost and 127.0.0.1, one for
// another name only (db.example.test), and a client certificate with CN tm_cert; all signed by the CA.
struct Certificates {
  TempDir dir;
  std::string ca = dir.file("ca.crt");
  std::string other_ca = dir.file("other-ca.crt");
  std::string server_cert = dir.file("server.crt");
  std::string server_key = dir.file("server.key");
  std::string other_name_cert = dir.file("other-name.crt");
  std::string other_name_key = dir.file("other-name.key");
  std::string client_cert = dir.file("client.crt");
  std::string client_key = dir.file("client.key");

  Certificates() {
    static constexpr const char* kScript = R"(set -eu
cd "$1"
ca() {  # name CN
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj "/CN=$2" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
    -keyout "$1.key" -out "$1.crt"
}
leaf() {  # name CN extension-line
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=$2" -keyout "$1.key" -out "$1.csr"
  printf 'basicConstraints=CA:FALSE\n%s\n' "$3" >"$1.ext"
  openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile "$1.ext" -out "$1.crt"
}
ca ca 'Tidemark test CA'
ca other-ca 'Another CA'
leaf server localhost 'subjectAltName=DNS:localhost,IP:127.0.0.1'
leaf other-name db.example.test 'subjectAltName=DNS:db.example.test'
leaf client tm_cert 'extendedKeyUsage=clientAuth'
chmod 0644 ./*.crt
chmod 0600 ./*.key
)";
    const std::string log = dir.file("openssl.log");
    ChildProcess openssl({"/bin/sh", "-c", kScript, "sh", dir.path()}, log, log + ".err");
    const auto status = openssl.wait_for_exit(60s);
    if (status != 0) throw std::runtime_error("making the test certificates failed:\n" + read_file(log + ".err"));
    // PostgreSQL runs as the postgres OS user when we are root: it must reach the directory and own its key.
    if (::chmod(dir.path().c_str(), 0711) != 0) throw std::runtime_error("chmod " + dir.path() + " failed");
    if (::geteuid() == 0) {
      const passwd* pg = ::getpwnam("postgres");
      if (!pg) throw std::runtime_error("no postgres OS user");
      for (const auto& key : {server_key, other_name_key})
        if (::chown(key.c_str(), pg->pw_uid, pg->pw_gid) != 0) throw std::runtime_error("chown " + key + " failed");
    }
  }
};

// ---- The servers ----

enum class Db { Postgres, MariaDb };
enum class Variant {
  Tls,        // TLS with the certificate for localhost and 127.0.0.1; TLS-only accounts
  OtherName,  // TLS with the certificate for db.example.test only
  Plain,      // no TLS at all; tm_tls and tm_cert are ordinary accounts
};

std::string db_name(Db db) { return db == Db::Postgres ? "Postgres" : "MariaDb"; }

// What a test writes into source.tls; empty fields are left out (an empty mode leaves out the key).
struct Tls {
  std::string mode;
  std::string ca{};
  std::string cert{};
  std::string key{};
};

class Server {
 public:
  virtual ~Server() = default;
  virtual std::string port() const = 0;
  // The source section for `user` (password pw) capturing tls_items; `name` keeps slots apart.
  virtual std::string source_yaml(const std::string& user, const std::string& name, const std::string& host) const = 0;
  virtual void insert_row(int id, const std::string& v) = 0;
  // What the daemon logs once it streams, after which changes are captured.
  virtual std::string streaming_log() const = 0;
};

class PostgresServer final : public Server {
 public:
  PostgresServer(const Certificates& certs, Variant variant) : cluster_(settings(certs, variant), hba(variant)) {
    pg_exec(cluster_.target(true),
            "CREATE ROLE tm_tls LOGIN REPLICATION PASSWORD 'pw'; CREATE ROLE tm_cert LOGIN REPLICATION PASSWORD 'pw'; "
            "CREATE TABLE tls_items (id int PRIMARY KEY, v text); GRANT SELECT ON tls_items TO tm_tls, tm_cert; "
            "CREATE PUBLICATION tls_pub FOR TABLE tls_items");
  }
  std::string port() const override { return cluster_.port(); }
  std::string source_yaml(const std::string& user, const std::string& name, const std::string& host) const override {
    return "source:\n  type: postgres\n  host: " + host + "\n  port: " + port() + "\n  user: " + user +
           "\n  password: pw\n  database: tidemark_test\n  tables: [public.tls_items]\n  postgres:\n    slot: " + slot(name) +
           "\n    publication: tls_pub\n    status_interval_ms: 1000\n";
  }
  void insert_row(int id, const std::string& v) override {
    pg_exec(cluster_.target(true), "INSERT INTO tls_items VALUES (" + std::to_string(id) + ", '" + v + "')");
  }
  std::string streaming_log() const override { return "postgres: streaming slot"; }

 private:
  static std::string slot(const std::string& name) {
    std::string s = "tls_" + name;
    for (char& c : s)
      if (c == '-') c = '_';
    return s;
  }
  static std::vector<std::string> settings(const Certificates& c, Variant variant) {
    if (variant == Variant::Plain) return {};
    const bool other = variant == Variant::OtherName;
    return {"ssl = on", "ssl_cert_file = '" + (other ? c.other_name_cert : c.server_cert) + "'",
            "ssl_key_file = '" + (other ? c.other_name_key : c.server_key) + "'", "ssl_ca_file = '" + c.ca + "'"};
  }
  static std::string hba(Variant variant) {
    if (variant == Variant::Plain) return "";  // initdb's: host lines, scram-sha-256
    return "local all all trust\n"
           "local replication all trust\n"
           "hostssl all tm_cert 127.0.0.1/32 scram-sha-256 clientcert=verify-full\n"
           "hostssl replication tm_cert 127.0.0.1/32 scram-sha-256 clientcert=verify-full\n"
           "hostssl all all 127.0.0.1/32 scram-sha-256\n"
           "hostssl replication all 127.0.0.1/32 scram-sha-256\n";
  }
  ThrowawayPostgres cluster_;
};

class MariaDbServer final : public Server {
 public:
  MariaDbServer(const Certificates& certs, Variant variant) : server_(args(certs, variant)) {
    const std::string tls_only = variant == Variant::Plain ? "" : " REQUIRE SSL";
    const std::string cert_only = variant == Variant::Plain ? "" : " REQUIRE X509";
    const std::string grants = "REPLICATION SLAVE, BINLOG MONITOR, SELECT ON *.* TO ";
    // The first binlog of a fresh server opens with a GTID_LIST event the decoder refuses (see
    // mysql_prerequisites_test): stream from a second file.
    mysql_exec(server_.target(true),
               "CREATE USER tm_tls@'%' IDENTIFIED BY 'pw'" + tls_only + "; GRANT " + grants + "tm_tls@'%'; " +
                   "CREATE USER tm_cert@'%' IDENTIFIED BY 'pw'" + cert_only + "; GRANT " + grants + "tm_cert@'%'; " +
                   "CREATE TABLE tidemark_test.tls_items (id INT PRIMARY KEY, v VARCHAR(40)); FLUSH BINARY LOGS");
  }
  std::string port() const override { return server_.port(); }
  std::string source_yaml(const std::string& user, const std::string& name, const std::string& host) const override {
    return "source:\n  type: mysql\n  host: " + host + "\n  port: " + port() + "\n  user: " + user +
           "\n  password: pw\n  database: tidemark_test\n  tables: [tidemark_test.tls_items]\n  mysql:\n    server_id: " +
           std::to_string(20000 + std::hash<std::string>{}(name) % 100000) + "\n";
  }
  void insert_row(int id, const std::string& v) override {
    mysql_exec(server_.target(true), "INSERT INTO tidemark_test.tls_items VALUES (" + std::to_string(id) + ", '" + v + "')");
  }
  std::string streaming_log() const override { return "mysql: streaming the binlog"; }

 private:
  static std::vector<std::string> args(const Certificates& c, Variant variant) {
    if (variant == Variant::Plain) return {};
    const bool other = variant == Variant::OtherName;
    return {"--ssl-ca=" + c.ca, "--ssl-cert=" + (other ? c.other_name_cert : c.server_cert),
            "--ssl-key=" + (other ? c.other_name_key : c.server_key)};
  }
  ThrowawayMariaDb server_;
};

// ---- Running tidemark ----

struct Outcome {
  std::optional<int> status;
  std::string output;  // stdout and stderr
};

size_t count_of(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

class SourceTlsBase : public ::testing::Test {
 protected:
  static void TearDownTestSuite() {
    servers_.clear();
    certs_.reset();
  }

  // The server of `db` in `variant`, made on first use; nullptr (and a failure) when it did not start.
  Server* server(Db db, Variant variant) {
    const auto key = std::make_pair(db, variant);
    if (const auto it = servers_.find(key); it != servers_.end()) return it->second.get();
    try {
      if (!certs_) certs_ = std::make_unique<Certificates>();
      std::unique_ptr<Server> made;
      if (db == Db::Postgres) made = std::make_unique<PostgresServer>(*certs_, variant);
      else made = std::make_unique<MariaDbServer>(*certs_, variant);
      return (servers_[key] = std::move(made)).get();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "the " << db_name(db) << " server did not start: " << e.what();
      return nullptr;
    }
  }
  const Certificates& certs() const { return *certs_; }

  // A daemon (stdout sink, no snapshots) for `user` on `s` with `tls`.
  std::unique_ptr<DaemonRunner> daemon(Server& s, const std::string& user, const Tls& tls,
                                       const std::string& host = "127.0.0.1") {
    auto d = std::make_unique<DaemonRunner>("", GeneratorSettings{});
    std::string yaml = s.source_yaml(user, d->name(), host);
    if (!tls.mode.empty() || !tls.ca.empty() || !tls.cert.empty() || !tls.key.empty()) {
      yaml += "  tls:\n";
      if (!tls.mode.empty()) yaml += "    mode: " + tls.mode + "\n";
      if (!tls.ca.empty()) yaml += "    ca: " + tls.ca + "\n";
      if (!tls.cert.empty()) yaml += "    cert: " + tls.cert + "\n";
      if (!tls.key.empty()) yaml += "    key: " + tls.key + "\n";
    }
    d->write_config("sink:\n  type: stdout\n", "info", yaml + "snapshot:\n  enabled: false\n");
    return d;
  }

  static Outcome run_to_end(DaemonRunner& d, const std::string& command, const std::vector<std::string>& env = {}) {
    d.start(command, env);
    Outcome o;
    o.status = d.process().wait_for_exit(60s);
    o.output = d.stdout_text() + d.stderr_text();
    return o;
  }

  // `check` passes; its output names no problem and has no warning about plain text.
  static void expect_check_passes(DaemonRunner& d, const std::vector<std::string>& env = {}) {
    const Outcome check = run_to_end(d, "check", env);
    EXPECT_EQ(check.status, 0) << check.output;
    EXPECT_EQ(check.output.find("problem"), std::string::npos) << check.output;
    EXPECT_EQ(check.output.find("not encrypted"), std::string::npos) << check.output;
  }

  // `check` fails with one problem holding every one of `parts`; `run` stops at once with the same error
  // (a startup error, not retrying) and streams nothing.
  static void expect_refused(DaemonRunner& d, const std::vector<std::string>& parts,
                             const std::vector<std::string>& env = {}) {
    const Outcome check = run_to_end(d, "check", env);
    EXPECT_EQ(check.status, 1) << check.output;
    EXPECT_NE(check.output.find("\n1 problem(s) found\n"), std::string::npos) << check.output;
    for (const auto& part : parts) EXPECT_NE(check.output.find(part), std::string::npos) << "missing: " << part << "\nin:\n" << check.output;
    const auto started = Clock::now();
    const Outcome run = run_to_end(d, "run", env);
    EXPECT_EQ(run.status, 1) << run.output;
    EXPECT_LT(Clock::now() - started, 20s) << run.output;
    for (const auto& part : parts) EXPECT_GE(count_of(run.output, part), 1u) << "missing: " << part << "\nin:\n" << run.output;
    EXPECT_EQ(d.stdout_text(), "") << "nothing was streamed";
  }

  static inline std::unique_ptr<Certificates> certs_;
  static inline std::map<std::pair<Db, Variant>, std::unique_ptr<Server>> servers_;
};

class SourceTls : public SourceTlsBase, public ::testing::WithParamInterface<Db> {};

// verify-full with a client certificate: `check` passes, `run` streams a change over TLS (tm_cert can connect
// only with TLS and the certificate, so every connection of the daemon had both).
TEST_P(SourceTls, VerifyFullWithClientCertificateStreamsAChange) {
  Server* s = server(GetParam(), Variant::Tls);
  ASSERT_NE(s, nullptr);
  const Tls tls{"verify-full", certs().ca, certs().client_cert, certs().client_key};
  auto d = daemon(*s, "tm_cert", tls);
  expect_check_passes(*d);

  d->start("run");
  ASSERT_TRUE(wait_until([&] { return d->stderr_text().find(s->streaming_log()) != std::string::npos; }, 30s))
      << d->stderr_text();
  s->insert_row(1, "over-tls");
  EXPECT_TRUE(wait_until([&] { return d->stdout_text().find("\"over-tls\"") != std::string::npos; }, 30s))
      << "stdout:\n" << d->stdout_text() << "\nstderr:\n" << d->stderr_text();
  EXPECT_EQ(d->stop(SIGTERM), 0) << d->stderr_text();
  EXPECT_NE(d->stderr_text().find("connected over TLSv1."), std::string::npos) << d->stderr_text();
  EXPECT_NE(d->stderr_text().find("(source.tls.mode verify-full)"), std::string::npos) << d->stderr_text();
}

TEST_P(SourceTls, AccountThatNeedsAClientCertificateWithoutOneNamesTlsCert) {
  Server* s = server(GetParam(), Variant::Tls);
  ASSERT_NE(s, nullptr);
  auto d = daemon(*s, "tm_cert", Tls{"verify-full", certs().ca});
  expect_refused(*d, {"cannot connect", "as tm_cert", "set source.tls.cert and source.tls.key"});
}

// A TLS-only account (PostgreSQL: hostssl lines only; MariaDB: REQUIRE SSL) connects with prefer, require
// and verify-ca: the default mode uses TLS when the server offers it, on MariaDB too.
TEST_P(SourceTls, TlsOnlyAccountConnectsWithPreferRequireAndVerifyCa) {
  Server* s = server(GetParam(), Variant::Tls);
  ASSERT_NE(s, nullptr);
  for (const Tls& tls : {Tls{""}, Tls{"prefer"}, Tls{"require"}, Tls{"verify-ca", certs().ca}}) {
    SCOPED_TRACE("source.tls.mode '" + tls.mode + "'");
    auto d = daemon(*s, "tm_tls", tls);
    expect_check_passes(*d);
  }
}

TEST_P(SourceTls, TlsOnlyAccountWithDisableFailsNamingTlsMode) {
  Server* s = server(GetParam(), Variant::Tls);
  ASSERT_NE(s, nullptr);
  auto d = daemon(*s, "tm_tls", Tls{"disable"});
  const std::string hint = GetParam() == Db::Postgres
                               ? "pg_hba.conf accepts this user only over TLS (hostssl lines) and source.tls.mode is disable"
                               : "an account that needs TLS (REQUIRE SSL or X509) while source.tls.mode is disable";
  expect_refused(*d, {"cannot connect", hint, "set source.tls.mode to verify-full (or require)"});
}

TEST_P(SourceTls, WrongCaFailsNamingTlsCa) {
  Server* s = server(GetParam(), Variant::Tls);
  ASSERT_NE(s, nullptr);
  for (const std::string& mode : std::vector<std::string>{"verify-ca", "verify-full", "require"}) {
    SCOPED_TRACE("source.tls.mode " + mode);
    auto d = daemon(*s, "tm_tls", Tls{mode, certs().other_ca});
    expect_refused(*d, {"cannot connect", "source.tls.ca (" + certs().other_ca + ")",
                        "set source.tls.ca to the certificate of the CA that issued the server's certificate"});
  }
}

// The server's certificate names db.example.test only: verify-full refuses 127.0.0.1 naming source.host,
// verify-ca (the chain only) and require connect.
TEST_P(SourceTls, VerifyFullChecksTheHostNameAndVerifyCaDoesNot) {
  Server* s = server(GetParam(), Variant::OtherName);
  ASSERT_NE(s, nullptr);
  auto full = daemon(*s, "tm_tls", Tls{"verify-full", certs().ca});
  expect_refused(*full, {"cannot connect", "source.tls.mode is verify-full, which checks that the server's certificate "
                                           "names source.host (127.0.0.1)", "use source.tls.mode verify-ca"});
  auto ca_only = daemon(*s, "tm_tls", Tls{"verify-ca", certs().ca});
  expect_check_passes(*ca_only);
}

TEST_P(SourceTls, RequireAgainstAServerWithoutTlsFailsNamingTlsMode) {
  Server* s = server(GetParam(), Variant::Plain);
  ASSERT_NE(s, nullptr);
  for (const Tls& tls : {Tls{"require"}, Tls{"verify-ca", certs().ca}, Tls{"verify-full", certs().ca}}) {
    SCOPED_TRACE("source.tls.mode " + tls.mode);
    auto d = daemon(*s, "tm_tls", tls);
    expect_refused(*d, {"cannot connect", "the server does not offer TLS", "source.tls.mode is " + tls.mode,
                        "or set source.tls.mode to prefer or disable"});
  }
}

// prefer falls back to plain text, and says so; disable is a choice and says nothing.
TEST_P(SourceTls, PreferAgainstAServerWithoutTlsWarnsThatTheConnectionIsNotEncrypted) {
  Server* s = server(GetParam(), Variant::Plain);
  ASSERT_NE(s, nullptr);
  auto d = daemon(*s, "tm_tls", Tls{"prefer"});
  const Outcome check = run_to_end(*d, "check");
  EXPECT_EQ(check.status, 0) << check.output;
  EXPECT_NE(check.output.find("warning: the connection to "), std::string::npos) << check.output;
  EXPECT_NE(check.output.find("is not encrypted: the server offers no TLS and source.tls.mode is prefer"),
            std::string::npos) << check.output;
  auto plain = daemon(*s, "tm_tls", Tls{"disable"});
  expect_check_passes(*plain);
}

INSTANTIATE_TEST_SUITE_P(BothDatabases, SourceTls, ::testing::Values(Db::Postgres, Db::MariaDb),
                         [](const ::testing::TestParamInfo<Db>& param_info) { return db_name(param_info.param); });

// libpq's PGSSLMODE is the default of source.tls.mode for a postgres source (as for psql and pg_recvlogical);
// a mode in the file wins over it.
class PostgresSourceTls : public SourceTlsBase {};

TEST_F(PostgresSourceTls, PgsslmodeIsTheDefaultAndTheFileWins) {
  Server* s = server(Db::Postgres, Variant::Tls);
  ASSERT_NE(s, nullptr);
  auto from_env = daemon(*s, "tm_tls", Tls{""});
  expect_refused(*from_env, {"hostssl lines", "source.tls.mode is disable"}, {"PGSSLMODE=disable"});
  auto in_file = daemon(*s, "tm_tls", Tls{"require"});
  expect_check_passes(*in_file, {"PGSSLMODE=disable"});
  auto verify = daemon(*s, "tm_tls", Tls{"", certs().ca});  // PGSSLMODE=verify-full makes the CA legal
  expect_check_passes(*verify, {"PGSSLMODE=verify-full"});
}

}  // namespace
}  // namespace tidemark::test
