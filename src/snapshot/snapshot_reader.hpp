#pragma once
// The per-database part of a DBLog snapshot: an ordinary connection (never the replication one) that
// writes watermarks, reads chunks in key order and writes signal rows. Everything else (the window, the
// state, the signals) is source-neutral and lives in src/snapshot.
//
// All key comparison and ordering happens in the database: the reader passes the last emitted key back as
// the text the database printed for it, so `key > last` means exactly what the database's collation says.

#include <cstdint>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "core/fallible.hpp"
#include "db/row_filter.hpp"
#include "tidemark/change_event.hpp"

namespace tidemark::snapshot {

// A key as text, one entry per key column, in key order; nullopt is NULL. The encoding belongs to the reader
// that produced it (MySQL binary columns are hex) and is stored as it is in the state file.
using KeyText = std::vector<std::optional<std::string>>;

// What a chunk SELECT of a table returns.
struct TableLayout {
  // The table with the columns the SELECT returns, in that order. key_columns are the chunk key's columns
  // (the primary key, or the configured surrogate key), so snapshot records carry the same Kafka key as
  // the log's records.
  TableSchemaPtr schema;
  std::vector<std::string> key_names;  // the chunk key's column names, in key order
};

struct ChunkQuery {
  const TableLayout* layout = nullptr;
  std::string where;              // the request's extra condition ("" = none), SQL of the source database,
                                  // checked by check_row_filter before it is used
  std::optional<KeyText> after;   // exclusive lower bound: the last key already emitted
  std::optional<KeyText> upto;    // inclusive upper bound: the table's maximum key when its snapshot started
  size_t limit = 0;
  std::stop_token stop{};  // a reader that has to wait (PostgreSQL: for running commits) gives up on it
};

struct Chunk {
  std::vector<Row> rows;  // in key order; values exactly as the log decoder produces them for the same row
  KeyText last_key;       // the key of the last row (empty when `rows` is empty)
};

class SnapshotReader {
 public:
  virtual ~SnapshotReader() = default;

  // Connects, or reconnects after a failure; the error names the cause.
  virtual std::optional<std::string> connect() = 0;

  // Makes sure the watermark and signal tables exist with this pipeline's watermark row. Creates what is
  // missing when `create` is set; otherwise returns each problem with the DDL and grants that fix it.
  virtual std::vector<std::string> prepare(bool create) = 0;

  // Who besides the CDC user may write the signal table (and so run snapshots), with the statements that
  // leave it to the roles the operator chooses; empty when nobody else can, as far as the server shows.
  virtual std::vector<std::string> signal_table_warnings() = 0;

  // True when both control tables exist (whatever their rows), so the source must capture them.
  virtual bool control_tables_exist() = 0;

  // The tables the source captures (source.tables resolved against the catalog), without the watermark
  // and signal tables: what an initial snapshot or an "all tables" request covers.
  virtual Fallible<std::vector<TableId>> captured_tables() = 0;

  // Resolves a requested table name ("schema.table", "db.table" or "table"). `surrogate_key` names the
  // key columns to use instead of the primary key (empty: the primary key). Errors: unknown table, not
  // captured, no primary key and no surrogate key, surrogate key columns that do not exist.
  virtual Fallible<TableLayout> describe(const std::string& name, const std::vector<std::string>& surrogate_key) = 0;

  // How the database spells names and strings, for check_row_filter.
  virtual SqlDialect sql_dialect() const = 0;

  // The largest key of the rows matching `where` (nullopt inside: the table has no such row). Also refuses a
  // key with NULLs in any row matching `where` (a key that does not identify its row). Like read_chunk, it
  // runs in a READ ONLY transaction under snapshot.query_timeout_ms and refuses a `where` that
  // check_row_filter refuses.
  virtual Fallible<std::optional<KeyText>> max_key(const TableLayout& layout, const std::string& where) = 0;

  // Updates this pipeline's row of the watermark table to `mark`, committed.
  virtual std::optional<std::string> write_watermark(const std::string& mark) = 0;

  // Reads the next chunk in one short READ COMMITTED, READ ONLY transaction.
  virtual Fallible<Chunk> read_chunk(const ChunkQuery& query) = 0;

  // Ends the reader's server session from another thread (see session_cancel.hpp): the statement running
  // fails, and so does every later one until clear_cancel(); the next query after that connects again.
  virtual void cancel() = 0;
  virtual void clear_cancel() = 0;

  // Inserts a signal row (tidemark snapshot ...), committed.
  virtual std::optional<std::string> insert_signal(const std::string& id, const std::string& type,
                                                   const std::string& data) = 0;
};

}  // namespace tidemark::snapshot
