#pragma once
// A libpq connection: normal (catalog queries, checks) or replication=database (the change stream).

#include <libpq-fe.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"

namespace tidemark::pg {

struct ResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using Result = std::unique_ptr<PGresult, ResultDeleter>;

class Connection {
 public:
  enum class Mode { Normal, Replication };

  // Connects, with TLS as source.tls says; on failure `error()` holds libpq's message (with the setting to
  // change when it is about TLS, see tls_hint) and the connection is not usable.
  Connection(const DatabaseEndpoint& config, const std::string& application_name, Mode mode);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  bool ok() const { return conn_ != nullptr && PQstatus(conn_) == CONNECTION_OK; }
  std::string error() const;
  PGconn* raw() const { return conn_; }
  // "TLSv1.3" when the connection is encrypted, "" when it is plain text.
  std::string tls_protocol() const;

  // Runs one statement with text parameters; nullopt and `last_error()` on failure.
  std::optional<Result> query(const std::string& sql, const std::vector<std::string>& params = {});
  // The same through the extended protocol even without parameters, so the server refuses a second
  // statement in `sql` instead of running it: for SQL that holds text from users (snapshot conditions).
  std::optional<Result> query_one_statement(const std::string& sql, const std::vector<std::string>& params = {});
  // Runs `statements` in one transaction: `begin` (e.g. "BEGIN READ ONLY"), the statements, COMMIT, each one
  // statement through the extended protocol (text parameters), all sent at once in libpq's pipeline mode: one
  // round trip instead of one per statement. Returns the last statement's result; on failure nullopt,
  // `last_error()` names the statement's error, and the transaction is rolled back.
  struct Statement {
    std::string sql;
    std::vector<std::string> params;
  };
  std::optional<Result> query_in_transaction(const std::string& begin, const std::vector<Statement>& statements);
  // Runs `sql` (simple protocol; its last statement a COPY ... FROM STDIN) and sends `rows`, COPY text
  // format, as that COPY's data. False and `last_error()` when a statement or the COPY failed.
  bool copy_in(const std::string& sql, std::string_view rows);
  const std::string& last_error() const { return last_error_; }
  // The SQLSTATE of the last failed query ("" when unknown).
  const std::string& last_sqlstate() const { return last_sqlstate_; }

 private:
  // The simple protocol when `extended` is false (replication commands need it).
  std::optional<Result> run(const std::string& sql, const std::vector<std::string>& params, bool extended);
  // Records a failed result's message and SQLSTATE (libpq's connection error when `result` is null).
  void note_failure(const PGresult* result);

  PGconn* conn_ = nullptr;
  std::string connect_error_;  // set when connecting failed
  std::string last_error_;
  std::string last_sqlstate_;
};

// What to change, naming the setting, for a connection error of libpq that is about TLS or pg_hba's TLS
// rules ("" for other errors): "the server's certificate is not signed by ...: set source.tls.ca to ...".
std::string tls_hint(const DatabaseEndpoint& config, const std::string& libpq_error);

// Quotes an identifier for SQL ("my table" -> "\"my table\"").
std::string quote_identifier(const std::string& name);
// Quotes a string literal for SQL.
std::string quote_literal(const std::string& text);
// An oid from a result's text (catalog queries return oids as text).
uint32_t oid_from_text(const char* text);

}  // namespace tidemark::pg
