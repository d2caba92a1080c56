#include "db/pg_connection.hpp"

#include <algorithm>

#include "config/source_kinds.hpp"

namespace tidemark::pg {

namespace {

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

std::string trimmed(std::string message) {
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  return message;
}

}  // namespace

namespace {

// The hint with the source's key names; tls_hint renames them for the endpoint.
std::string source_tls_hint(const DatabaseEndpoint& config, const std::string& error) {
  const SourceTlsConfig& tls = config.tls;
  const std::string mode = "source.tls.mode is " + tls.mode;
  const std::string ca = tls.ca.empty() ? "PGSSLROOTCERT (source.tls.ca is empty)" : "source.tls.ca (" + tls.ca + ")";
  if (contains(error, "server does not support SSL"))
    return "the server does not offer TLS but " + mode + ": turn TLS on in the server (ssl = on with ssl_cert_file " +
           "and ssl_key_file in postgresql.conf), or set source.tls.mode to prefer or disable to connect without it";
  if (contains(error, "does not match host name") || contains(error, "could not get server's host name"))
    return mode + ", which checks that the server's certificate names source.host (" + config.host +
           "): set source.host to a name or address the certificate lists, or use source.tls.mode verify-ca to " +
           "verify the certificate without the host name";
  if (contains(error, "certificate verify failed"))
    return "the server's certificate is not signed by the CA in " + ca +
           ": set source.tls.ca to the certificate of the CA that issued the server's certificate (ssl_cert_file)";
  if (contains(error, "root certificate file"))
    return mode + " verifies the server with the CA in " + ca + ", which cannot be read: set source.tls.ca to a " +
           "readable PEM file";
  if (contains(error, "no pg_hba.conf entry") && contains(error, "no encryption"))
    return "pg_hba.conf accepts this user only over TLS (hostssl lines) and " + mode +
           ": set source.tls.mode to verify-full (or require)";
  if (contains(error, "no pg_hba.conf entry") && contains(error, "SSL encryption"))
    return "pg_hba.conf accepts this user only without TLS (hostnossl lines) and " + mode +
           ": add a hostssl line for it to pg_hba.conf, or set source.tls.mode to disable";
  if (contains(error, "requires a valid client certificate") || contains(error, "certificate authentication failed"))
    return "pg_hba.conf asks this user for a client certificate (clientcert or cert), so set source.tls.cert and "
           "source.tls.key to a certificate signed by the server's ssl_ca_file (clientcert=verify-full and cert "
           "auth also want the user name as its CN)";
  if (contains(error, "alert unknown ca") || contains(error, "alert bad certificate") ||
      contains(error, "alert certificate required"))
    return "the server refused the client certificate in source.tls.cert: it must be signed by the server's ssl_ca_file";
  if (contains(error, "certificate file") || contains(error, "private key"))
    return "the client certificate or key cannot be used: check source.tls.cert and source.tls.key (PEM, matching, "
           "the key unencrypted and not readable by others)";
  if (contains(error, "SSL error") || contains(error, "SSL SYSCALL error"))
    return "the TLS handshake failed (" + mode + "): check the server's TLS settings and source.tls.ca, "
           "source.tls.cert and source.tls.key";
  return "";
}

}  // namespace

std::string tls_hint(const DatabaseEndpoint& config, const std::string& error) {
  return rename_settings(source_tls_hint(config, error), config.settings);
}

Connection::Connection(const DatabaseEndpoint& config, const std::string& application_name, Mode mode) {
  const std::string port = std::to_string(source_port(config));
  // The text forms pg_value_parser reads: ISO dates, UTC, the 'postgres' interval style, C money.
  static constexpr const char* kSessionOptions =
      "-c TimeZone=UTC -c DateStyle=ISO,YMD -c IntervalStyle=postgres -c lc_monetary=C -c extra_float_digits=1";
  std::vector<const char*> keys = {"host", "port", "user", "dbname", "application_name", "connect_timeout",
                                   "client_encoding", "options"};
  std::vector<const char*> values = {config.host.c_str(), port.c_str(), config.user.c_str(), config.database.c_str(),
                                     application_name.c_str(), "10", "UTF8", kSessionOptions};
  if (!config.password.empty()) {
    keys.push_back("password");
    values.push_back(config.password.c_str());
  }
  if (mode == Mode::Replication) {
    keys.push_back("replication");
    values.push_back("database");
  }
  // Always explicit, so PGSSLMODE cannot override the file (the loader made it the default instead). Empty
  // files are not passed: libpq then uses PGSSLROOTCERT/PGSSLCERT/PGSSLKEY or ~/.postgresql/, its defaults.
  // prefer does not verify, so it gets no CA (libpq would verify with one and fall back to plain text when
  // that fails).
  const SourceTlsConfig& tls = config.tls;
  keys.push_back("sslmode");
  values.push_back(tls.mode.empty() ? "prefer" : tls.mode.c_str());
  const std::pair<const char*, const std::string*> files[] = {
      {"sslrootcert", &tls.ca}, {"sslcert", &tls.cert}, {"sslkey", &tls.key}};
  for (const auto& [key, value] : files) {
    if (value->empty() || (key == std::string_view("sslrootcert") && tls.mode == "prefer")) continue;
    keys.push_back(key);
    values.push_back(value->c_str());
  }
  keys.push_back(nullptr);
  values.push_back(nullptr);
  conn_ = PQconnectdbParams(keys.data(), values.data(), 0);
  if (!ok()) {
    connect_error_ = conn_ ? trimmed(PQerrorMessage(conn_)) : "out of memory";
    if (const std::string hint = tls_hint(config, connect_error_); !hint.empty()) connect_error_ += ": " + hint;
  }
}

std::string Connection::tls_protocol() const {
  if (!conn_ || !PQsslInUse(conn_)) return "";
  const char* protocol = PQsslAttribute(conn_, "protocol");
  return protocol ? protocol : "TLS";
}

Connection::~Connection() {
  if (conn_) PQfinish(conn_);
}

std::string Connection::error() const {
  if (!connect_error_.empty()) return connect_error_;
  if (!conn_) return "out of memory";
  return trimmed(PQerrorMessage(conn_));
}

std::optional<Result> Connection::query(const std::string& sql, const std::vector<std::string>& params) {
  return run(sql, params, !params.empty());
}

std::optional<Result> Connection::query_one_statement(const std::string& sql, const std::vector<std::string>& params) {
  return run(sql, params, true);
}

namespace {
// libpq's view of text parameters; valid while `params` lives.
std::vector<const char*> param_pointers(const std::vector<std::string>& params) {
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const auto& p : params) values.push_back(p.c_str());
  return values;
}
}  // namespace

std::optional<Result> Connection::run(const std::string& sql, const std::vector<std::string>& params, bool extended) {
  const std::vector<const char*> values = param_pointers(params);
  Result result(!extended ? PQexec(conn_, sql.c_str())
                               : PQexecParams(conn_, sql.c_str(), static_cast<int>(params.size()), nullptr,
                                              values.data(), nullptr, nullptr, 0));
  const ExecStatusType status = result ? PQresultStatus(result.get()) : PGRES_FATAL_ERROR;
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_COPY_BOTH) {
    last_error_.clear();
    last_sqlstate_.clear();
    return result;
  }
  note_failure(result.get());
  return std::nullopt;
}

std::optional<Result> Connection::query_in_transaction(const std::string& begin, const std::vector<Statement>& statements) {
  if (PQenterPipelineMode(conn_) != 1) {
    note_failure(nullptr);
    return std::nullopt;
  }
  std::vector<Statement> all;
  all.reserve(statements.size() + 2);
  all.push_back({begin, {}});
  all.insert(all.end(), statements.begin(), statements.end());
  all.push_back({"COMMIT", {}});
  bool sent = true;
  for (const auto& statement : all) {
    const std::vector<const char*> values = param_pointers(statement.params);
    sent = PQsendQueryParams(conn_, statement.sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(),
                             nullptr, nullptr, 0) == 1;
    if (!sent) break;
  }
  sent = sent && PQpipelineSync(conn_) == 1;
  if (!sent) note_failure(nullptr);
  // Every statement's results, each ended by a null, then the sync point; after a failure the server
  // skips the rest of the pipeline (PGRES_PIPELINE_ABORTED) up to the sync.
  std::optional<Result> last;
  bool failed = !sent;
  bool failure_noted = !sent;
  for (size_t i = 0; sent && i < all.size(); ++i) {
    while (PGresult* raw = PQgetResult(conn_)) {
      Result result(raw);
      const ExecStatusType status = PQresultStatus(raw);
      if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) {
        if (i + 2 == all.size()) last = std::move(result);  // the last statement before COMMIT
        continue;
      }
      failed = true;
      if (!failure_noted && status != PGRES_PIPELINE_ABORTED) {
        note_failure(raw);
        failure_noted = true;
      }
    }
    if (PQstatus(conn_) != CONNECTION_OK) break;  // the session ended (a cancelled snapshot): no more results
  }
  if (sent && PQstatus(conn_) == CONNECTION_OK) {
    while (PGresult* raw = PQgetResult(conn_)) {  // the sync point
      const bool synced = PQresultStatus(raw) == PGRES_PIPELINE_SYNC;
      PQclear(raw);
      if (synced) break;
    }
  }
  if (PQstatus(conn_) == CONNECTION_OK) PQexitPipelineMode(conn_);
  if (!failed && last) {
    last_error_.clear();
    last_sqlstate_.clear();
    return last;
  }
  if (!failure_noted) note_failure(nullptr);
  if (PQstatus(conn_) == CONNECTION_OK && PQtransactionStatus(conn_) != PQTRANS_IDLE) PQclear(PQexec(conn_, "ROLLBACK"));
  return std::nullopt;
}

void Connection::note_failure(const PGresult* result) {
  last_error_ = result ? PQresultErrorMessage(result) : error();
  if (last_error_.empty()) last_error_ = error();
  while (!last_error_.empty() && (last_error_.back() == '\n' || last_error_.back() == ' ')) last_error_.pop_back();
  const char* state = result ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  last_sqlstate_ = state ? state : "";
}

bool Connection::copy_in(const std::string& sql, std::string_view rows) {
  // PQexec runs the statements before the COPY and returns at it, the server then waiting for the rows.
  Result started(PQexec(conn_, sql.c_str()));
  if (!started || PQresultStatus(started.get()) != PGRES_COPY_IN) {
    note_failure(started.get());
    // A script without a COPY would leave results unread; nothing to send then.
    while (PGresult* rest = PQgetResult(conn_)) PQclear(rest);
    return false;
  }
  constexpr size_t kPiece = 1 << 20;
  bool sent = true;
  for (size_t at = 0; sent && at < rows.size(); at += kPiece) {
    const size_t n = std::min(kPiece, rows.size() - at);
    sent = PQputCopyData(conn_, rows.data() + at, static_cast<int>(n)) == 1;
  }
  if (PQputCopyEnd(conn_, sent ? nullptr : "the rows could not be sent") != 1) {
    note_failure(nullptr);
    return false;
  }
  // The COPY's own result, then the end of the query.
  Result failed;
  while (PGresult* r = PQgetResult(conn_)) {
    Result result(r);
    if (PQresultStatus(r) != PGRES_COMMAND_OK && !failed) failed = std::move(result);
  }
  if (failed) {
    note_failure(failed.get());
    return false;
  }
  if (PQstatus(conn_) != CONNECTION_OK) {
    note_failure(nullptr);
    return false;
  }
  last_error_.clear();
  last_sqlstate_.clear();
  return true;
}

std::string quote_identifier(const std::string& name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string quote_literal(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') out += '\'';
    out += c;
  }
  return out + "'";
}

uint32_t oid_from_text(const char* text) { return static_cast<uint32_t>(std::stoul(text)); }

}  // namespace tidemark::pg
