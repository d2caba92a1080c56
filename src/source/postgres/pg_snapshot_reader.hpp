#pragma once
// The PostgreSQL side of DBLog snapshots (snapshot/snapshot_reader.hpp): an ordinary libpq connection that
// writes watermarks and signals and reads chunks. The connection pins the same session settings as the
// replication connection, and values are parsed by the log decoder's own text parser with the column types
// from the catalog, so a chunk row equals, Value for Value, the row pgoutput delivers for the same stored row.

#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "snapshot/session_cancel.hpp"
#include "snapshot/snapshot_reader.hpp"
#include "db/pg_connection.hpp"
#include "source/postgres/pg_value_parser.hpp"

namespace tidemark::pg {

class PgSnapshotReader final : public snapshot::SnapshotReader {
 public:
  explicit PgSnapshotReader(const Config& config);
  ~PgSnapshotReader() override;
  PgSnapshotReader(const PgSnapshotReader&) = delete;
  PgSnapshotReader& operator=(const PgSnapshotReader&) = delete;

  std::optional<std::string> connect() override;
  std::vector<std::string> prepare(bool create) override;
  bool control_tables_exist() override;
  std::vector<std::string> signal_table_warnings() override;
  Fallible<std::vector<TableId>> captured_tables() override;
  // Columns: exactly what pgoutput sends (attnum order, no dropped or generated columns, the publication's
  // column list if it has one). key_columns and key_names are the chunk key in key order (the primary key's
  // index order: the ORDER BY that the index serves). The log's schema (relation_cache) lists the same
  // primary-key columns in key order under REPLICA IDENTITY FULL but in column order otherwise, so the two
  // differ in order only for a primary key declared out of column order.
  Fallible<snapshot::TableLayout> describe(const std::string& name,
                                                     const std::vector<std::string>& surrogate_key) override;
  SqlDialect sql_dialect() const override { return {'"', true, false}; }
  Fallible<std::optional<snapshot::KeyText>> max_key(const snapshot::TableLayout& layout,
                                                               const std::string& where) override;
  std::optional<std::string> write_watermark(const std::string& mark) override;
  Fallible<snapshot::Chunk> read_chunk(const snapshot::ChunkQuery& query) override;
  std::optional<std::string> insert_signal(const std::string& id, const std::string& type,
                                           const std::string& data) override;
  // pg_terminate_backend from a second, short-lived connection (the same role may end its own sessions).
  void cancel() override;
  void clear_cancel() override { cancel_.clear(); }

 private:
  // BEGIN ... READ ONLY with SET LOCAL statement_timeout: what a user's condition runs in.
  std::optional<std::string> begin_read_only(const char* isolation);
  static std::string begin_read_only_sql(const char* isolation);
  std::string statement_timeout_sql() const;
  // Waits until every transaction committed in the log is visible (see the .cpp).
  std::optional<std::string> wait_for_finished_commits(const std::stop_token& stop);

  struct QualifiedName {
    std::string schema;
    std::string table;
    std::string text() const { return schema + "." + table; }
    std::string sql() const { return quote_identifier(schema) + "." + quote_identifier(table); }
  };

  // One column as pgoutput describes it (the Relation message's type OID and typmod).
  struct Column {
    std::string name;
    uint32_t type_oid = 0;
    int32_t typmod = -1;
    std::string cast_type;  // format_type without typmod: the cast of a key bound
    bool not_null = false;
  };

  // The relation's OID and replica identity, or nullopt (with `error`) when there is no such table.
  struct Relation {
    uint32_t oid = 0;
    char replica_identity = 'd';
  };

  static QualifiedName split(const std::string& name);
  // Connects again when the connection is down or was ended by cancel(); the error, or a cancel.
  std::optional<std::string> ensure_connected();
  std::optional<Relation> find_relation(const QualifiedName& name, std::string& error);
  std::optional<std::vector<Column>> load_columns(uint32_t relation_oid, std::string& error);
  // The layout's columns with their current catalog types, in the layout's order.
  std::optional<std::vector<Column>> layout_columns(const snapshot::TableLayout& layout, std::string& error);
  bool is_own_table(const QualifiedName& name) const;
  void check_table(const QualifiedName& name, const std::string& what, const std::string& ddl,
                   const std::vector<std::string>& needed_columns, const std::string& privileges, bool create,
                   std::vector<std::string>& problems);
  std::string grant_sql(const QualifiedName& name, const std::string& privileges) const;

  Config config_;
  std::string application_name_;
  QualifiedName watermark_;
  QualifiedName signal_;
  std::optional<Connection> conn_;
  snapshot::SessionCancel cancel_;  // knows conn_'s backend pid
  PgTypeRegistry types_;  // enums, domains and arrays of those, registered as pgoutput's Type messages would be
  // The catalog columns of the layout the last chunk was read with, and the column types its result reported.
  struct ChunkColumns {
    TableSchemaPtr schema;
    std::vector<Column> columns;
    std::vector<Oid> result_types;
  };
  std::optional<ChunkColumns> chunk_columns_;
};

}  // namespace tidemark::pg
