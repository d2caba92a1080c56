#pragma once
// One connection to the sink's target database, PostgreSQL or MySQL/MariaDB, behind one interface: a
// script of statements in one round trip, small catalog queries, and errors sorted once into what the
// sink retries (a lost connection, a deadlock) and what stops it.

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "sink/database/sql_values.hpp"

namespace tidemark::dbsink {

enum class TargetErrorKind {
  Connection,  // the connection is gone or refused: reconnect with backoff, then find out what committed
  Conflict,    // deadlock, lock wait timeout, serialization failure: roll back and run the transaction again
  Fatal,       // anything else (a constraint, a value the column cannot hold, a missing table): stop
};

struct TargetError {
  TargetErrorKind kind = TargetErrorKind::Fatal;
  std::string message;
  bool duplicate_key = false;  // a unique key the rows would have duplicated (PostgreSQL 23505)
};

// A column of a target table as the target's catalog describes it.
struct TargetColumn {
  std::string name;
  std::string type;  // lower case: format_type() (postgres) or COLUMN_TYPE (mysql)
  bool generated = false;  // computed by the target (GENERATED ALWAYS): never written
  // The target fills it in when an INSERT leaves it out: PostgreSQL identity or a default (serial,
  // gen_random_uuid()); MySQL AUTO_INCREMENT (what LAST_INSERT_ID() returns).
  bool fills_itself = false;
};

struct TargetTable {
  std::vector<TargetColumn> columns;    // in the table's order; empty when the table does not exist
  std::vector<std::string> primary_key;  // in key order; empty without a primary key
};

// A result row of a catalog query; NULL as nullopt.
using TargetRow = std::vector<std::optional<std::string>>;

class TargetConnection {
 public:
  virtual ~TargetConnection() = default;

  virtual Dialect dialect() const = 0;
  // (Re)connects and sets the session the sink relies on (UTF-8, UTC; on MySQL strict mode and multiple
  // statements per round trip). Returns the error, naming the setting to fix.
  virtual std::optional<TargetError> connect() = 0;
  // Runs `script` (statements separated by ';') in one round trip; stops at the first failing statement.
  virtual std::optional<TargetError> execute(std::string_view script) = 0;
  // PostgreSQL: runs `script`, whose last statement is a COPY ... FROM STDIN, with `rows` (COPY text format)
  // as its data; two round trips. Other targets have no COPY: an error.
  virtual std::optional<TargetError> copy_in(std::string_view script, std::string_view rows);
  // Runs one query; its rows.
  virtual std::optional<std::vector<TargetRow>> query(const std::string& sql, TargetError* error) = 0;
  // The table's columns and primary key; no columns when it does not exist.
  virtual std::optional<TargetTable> describe(const std::string& schema_or_database, const std::string& table,
                                              TargetError* error) = 0;
  // A string literal for this connection.
  virtual std::string quote(std::string_view text) = 0;
};

// Makes sure the sink's own table `schema_or_database`.`table` exists: runs `create_sql` when it is missing
// and `create`; `exists` says whether it is there afterwards.
std::optional<TargetError> ensure_table(TargetConnection& target, const std::string& schema_or_database,
                                        const std::string& table, const std::string& create_sql, bool create, bool& exists);

// Where one of the sink's own tables (position, offsets, id map, conflicts, marker) lives, named for SQL and
// for messages.
struct OwnTable {
  OwnTable(Dialect dialect, std::string space, std::string name);
  // `name` in the sink's target: sink.database.schema (PostgreSQL) or sink.database.database (MySQL).
  OwnTable(const DatabaseSinkConfig& config, std::string name);

  // ensure_table for this table.
  std::optional<TargetError> ensure(TargetConnection& target, const std::string& create_sql, bool create, bool& exists) const;

  Dialect dialect;
  std::string space;   // the schema (PostgreSQL) or database (MySQL)
  std::string name;
  std::string quoted;  // qualified and quoted
  std::string label;   // space.name
};

// A connection to `config` (the sink's target, or the source for catalog checks); `application` names it.
std::unique_ptr<TargetConnection> make_target_connection(const DatabaseEndpoint& config, const std::string& application);

}  // namespace tidemark::dbsink
