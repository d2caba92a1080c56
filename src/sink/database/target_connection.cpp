#include "sink/database/target_connection.hpp"

#include <errmsg.h>
#include <mysqld_error.h>

#include <algorithm>
#include <cctype>

#include "db/mysql_connection.hpp"
#include "db/pg_connection.hpp"

namespace tidemark::dbsink {

namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

class PostgresTarget final : public TargetConnection {
 public:
  PostgresTarget(const DatabaseEndpoint& config, std::string application)
      : config_(config), application_(std::move(application)) {}

  Dialect dialect() const override { return Dialect::Postgres; }

  std::optional<TargetError> connect() override {
    conn_ = std::make_unique<pg::Connection>(config_, application_, pg::Connection::Mode::Normal);
    if (!conn_->ok()) return TargetError{TargetErrorKind::Connection, conn_->error()};
    // The literals of sql_values.hpp: a backslash in '...' is itself. No notices: libpq would print them
    // (the temporary tables of COPY are created "if not exists" in every transaction that loads one).
    return execute("SET standard_conforming_strings = on; SET client_min_messages = warning");
  }

  std::optional<TargetError> copy_in(std::string_view script, std::string_view rows) override {
    if (!conn_ || !conn_->ok()) return TargetError{TargetErrorKind::Connection, "not connected"};
    if (conn_->copy_in(std::string(script), rows)) return std::nullopt;
    return last_error();
  }

  std::optional<TargetError> execute(std::string_view script) override {
    if (!conn_ || !conn_->ok()) return TargetError{TargetErrorKind::Connection, "not connected"};
    // The simple protocol runs every statement of the script in one round trip.
    if (conn_->query(std::string(script))) return std::nullopt;
    return last_error();
  }

  std::optional<std::vector<TargetRow>> query(const std::string& sql, TargetError* error) override {
    return run(sql, {}, error);
  }

  std::optional<TargetTable> describe(const std::string& schema, const std::string& table, TargetError* error) override {
    // attgenerated: 's' for stored generated columns, which cannot be written.
    const auto rows = run(
        "SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attgenerated <> '', "
        // indkey is an int2vector, whose subscripts start at 0.
        "CASE WHEN a.attnum = ANY(i.indkey) THEN array_position(i.indkey::int2[], a.attnum) - "
        "array_lower(i.indkey::int2[], 1) + 1 ELSE 0 END, (a.attidentity <> '' OR a.atthasdef) AND a.attgenerated = '' "
        "FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
        "LEFT JOIN pg_index i ON i.indrelid = c.oid AND i.indisprimary "
        "WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped "
        "ORDER BY a.attnum",
        {schema, table}, error);
    if (!rows) return std::nullopt;
    TargetTable out;
    std::vector<std::pair<int, std::string>> key;
    for (const auto& r : *rows) {
      out.columns.push_back(TargetColumn{r[0].value_or(""), lower(r[1].value_or("")), r[2].value_or("f") == "t",
                                         r[4].value_or("f") == "t"});
      if (const int at = std::stoi(r[3].value_or("0")); at > 0) key.emplace_back(at, r[0].value_or(""));
    }
    std::sort(key.begin(), key.end());
    for (auto& [at, name] : key) out.primary_key.push_back(std::move(name));
    return out;
  }

  std::string quote(std::string_view text) override { return pg::quote_literal(std::string(text)); }

 private:
  std::optional<std::vector<TargetRow>> run(const std::string& sql, const std::vector<std::string>& params, TargetError* error) {
    if (!conn_ || !conn_->ok()) {
      if (error) *error = TargetError{TargetErrorKind::Connection, "not connected"};
      return std::nullopt;
    }
    const auto result = conn_->query(sql, params);
    if (!result) {
      if (error) *error = last_error();
      return std::nullopt;
    }
    std::vector<TargetRow> rows;
    PGresult* r = result->get();
    for (int i = 0; i < PQntuples(r); ++i) {
      TargetRow row;
      for (int j = 0; j < PQnfields(r); ++j)
        row.push_back(PQgetisnull(r, i, j) ? std::nullopt : std::optional<std::string>(PQgetvalue(r, i, j)));
      rows.push_back(std::move(row));
    }
    return rows;
  }

  TargetError last_error() const {
    const std::string& state = conn_->last_sqlstate();
    // Class 08: connection exceptions; 57P01-03: the server shutting down or not accepting connections.
    const bool lost = PQstatus(conn_->raw()) != CONNECTION_OK || state.rfind("08", 0) == 0 || state == "57P01" ||
                      state == "57P02" || state == "57P03";
    if (lost) return {TargetErrorKind::Connection, conn_->last_error()};
    // 40001 serialization failure, 40P01 deadlock, 55P03 lock not available.
    if (state == "40001" || state == "40P01" || state == "55P03") return {TargetErrorKind::Conflict, conn_->last_error()};
    return {TargetErrorKind::Fatal, conn_->last_error() + (state.empty() ? "" : " (SQLSTATE " + state + ")"),
            state == "23505"};
  }

  const DatabaseEndpoint& config_;
  std::string application_;
  std::unique_ptr<pg::Connection> conn_;
};

class MySqlTarget final : public TargetConnection {
 public:
  explicit MySqlTarget(const DatabaseEndpoint& config) : config_(config) {}

  Dialect dialect() const override { return Dialect::MySql; }

  std::optional<TargetError> connect() override {
    // A long read timeout: a large transaction's COMMIT may take a while on a busy target.
    conn_ = std::make_unique<mysql::MySqlConnection>(config_, 600);
    if (!conn_->ok()) return TargetError{TargetErrorKind::Connection, conn_->error()};
    if (mysql_set_server_option(conn_->raw(), MYSQL_OPTION_MULTI_STATEMENTS_ON) != 0) return last_error();
    // Strict: a value that does not fit is an error, never truncated. NO_AUTO_VALUE_ON_ZERO: a key 0 is
    // written as 0, not replaced by the next AUTO_INCREMENT value. No NO_BACKSLASH_ESCAPES (sql_values.hpp).
    if (auto error = execute("SET SESSION sql_mode = 'STRICT_ALL_TABLES,ERROR_FOR_DIVISION_BY_ZERO,"
                             "NO_ZERO_IN_DATE,NO_ENGINE_SUBSTITUTION,NO_AUTO_VALUE_ON_ZERO'"))
      return error;
    return std::nullopt;
  }

  std::optional<TargetError> execute(std::string_view script) override {
    if (!conn_ || !conn_->ok()) return TargetError{TargetErrorKind::Connection, "not connected"};
    MYSQL* m = conn_->raw();
    if (mysql_real_query(m, script.data(), static_cast<unsigned long>(script.size())) != 0) return last_error();
    // Every statement's result must be read before the connection takes another; an error ends the script.
    for (;;) {
      if (MYSQL_RES* result = mysql_store_result(m)) mysql_free_result(result);
      else if (mysql_field_count(m) != 0) return last_error();
      const int next = mysql_next_result(m);
      if (next > 0) return last_error();
      if (next < 0) return std::nullopt;
    }
  }

  std::optional<std::vector<TargetRow>> query(const std::string& sql, TargetError* error) override {
    if (!conn_ || !conn_->ok()) {
      if (error) *error = TargetError{TargetErrorKind::Connection, "not connected"};
      return std::nullopt;
    }
    auto rows = conn_->query(sql);
    if (!rows) {
      if (error) *error = last_error();
      return std::nullopt;
    }
    return std::vector<TargetRow>(rows->begin(), rows->end());
  }

  std::optional<TargetTable> describe(const std::string& database, const std::string& table, TargetError* error) override {
    const auto rows = query(
        // A generation expression marks generated columns (EXTRA says DEFAULT_GENERATED for plain defaults).
        "SELECT c.COLUMN_NAME, c.COLUMN_TYPE, COALESCE(c.GENERATION_EXPRESSION, '') <> '', COALESCE(s.SEQ_IN_INDEX, 0), "
        "c.EXTRA LIKE '%auto_increment%' "
        "FROM information_schema.COLUMNS c LEFT JOIN information_schema.STATISTICS s ON s.TABLE_SCHEMA = c.TABLE_SCHEMA "
        "AND s.TABLE_NAME = c.TABLE_NAME AND s.COLUMN_NAME = c.COLUMN_NAME AND s.INDEX_NAME = 'PRIMARY' "
        "WHERE c.TABLE_SCHEMA = " + quote(database) + " AND c.TABLE_NAME = " + quote(table) +
        " ORDER BY c.ORDINAL_POSITION",
        error);
    if (!rows) return std::nullopt;
    TargetTable out;
    std::vector<std::pair<int, std::string>> key;
    for (const auto& r : *rows) {
      out.columns.push_back(TargetColumn{r[0].value_or(""), lower(r[1].value_or("")), r[2].value_or("0") == "1",
                                         r[4].value_or("0") == "1"});
      if (const int at = std::stoi(r[3].value_or("0")); at > 0) key.emplace_back(at, r[0].value_or(""));
    }
    std::sort(key.begin(), key.end());
    for (auto& [at, name] : key) out.primary_key.push_back(std::move(name));
    return out;
  }

  std::string quote(std::string_view text) override { return conn_ ? conn_->quote(text) : "''"; }

 private:
  TargetError last_error() const {
    const unsigned code = conn_->error_code();
    std::string message = conn_->error() + " (error " + std::to_string(code) + ")";
    switch (code) {
      case CR_SERVER_GONE_ERROR:
      case CR_SERVER_LOST:
      case CR_CONNECTION_ERROR:
      case CR_CONN_HOST_ERROR:
      case ER_SERVER_SHUTDOWN:
      case ER_CONNECTION_KILLED:
      case ER_QUERY_INTERRUPTED:
        return {TargetErrorKind::Connection, std::move(message)};
      case ER_LOCK_DEADLOCK:
      case ER_LOCK_WAIT_TIMEOUT:
        return {TargetErrorKind::Conflict, std::move(message)};
      default:
        return {TargetErrorKind::Fatal, std::move(message)};
    }
  }

  const DatabaseEndpoint& config_;
  std::unique_ptr<mysql::MySqlConnection> conn_;
};

}  // namespace

std::optional<TargetError> TargetConnection::copy_in(std::string_view, std::string_view) {
  return TargetError{TargetErrorKind::Fatal, "internal: this target has no COPY"};
}

std::optional<TargetError> ensure_table(TargetConnection& target, const std::string& schema_or_database,
                                        const std::string& table, const std::string& create_sql, bool create, bool& exists) {
  TargetError error;
  const auto described = target.describe(schema_or_database, table, &error);
  if (!described) return error;
  exists = !described->columns.empty();
  if (exists || !create) return std::nullopt;
  if (auto failed = target.execute(create_sql)) return failed;
  exists = true;
  return std::nullopt;
}

OwnTable::OwnTable(Dialect table_dialect, std::string table_space, std::string table_name)
    : dialect(table_dialect),
      space(std::move(table_space)),
      name(std::move(table_name)),
      quoted(qualified_identifier(dialect, space, name)),
      label(space + "." + name) {}

OwnTable::OwnTable(const DatabaseSinkConfig& config, std::string table_name)
    : OwnTable(config.type == "postgres" ? Dialect::Postgres : Dialect::MySql,
               config.type == "postgres" ? config.schema : config.database, std::move(table_name)) {}

std::optional<TargetError> OwnTable::ensure(TargetConnection& target, const std::string& create_sql, bool create,
                                            bool& exists) const {
  return ensure_table(target, space, name, create_sql, create, exists);
}

std::unique_ptr<TargetConnection> make_target_connection(const DatabaseEndpoint& config, const std::string& application) {
  if (config.type == "postgres") return std::make_unique<PostgresTarget>(config, application);
  return std::make_unique<MySqlTarget>(config);
}

}  // namespace tidemark::dbsink
