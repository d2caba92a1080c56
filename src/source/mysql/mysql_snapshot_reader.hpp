#pragma once
// The MySQL/MariaDB part of DBLog snapshots (see snapshot/snapshot_reader.hpp for the contract): its own
// ordinary connection, the watermark and signal tables, and chunk SELECTs whose values are exactly what
// the binlog decoder produces for the same rows (result_value_parser).
//
// Keys as text (KeyText): integers, DECIMAL, YEAR as digits; FLOAT/DOUBLE as the exact double with an
// exponent; ENUM as its index and SET as its bits (both compare and sort by number); byte strings and BIT
// as hex, written back as X'..'; everything else (text, temporal values, UUID, INET) as the text the
// server prints, written back quoted. Chunk bounds use the expanded OR form, `(k1 > a) OR (k1 = a AND
// k2 > b)`, because MySQL does not use an index for a row constructor comparison.

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "snapshot/session_cancel.hpp"
#include "snapshot/snapshot_reader.hpp"
#include "source/mysql/table_schema_loader.hpp"

namespace tidemark::mysql {

class MySqlConnection;

class MySqlSnapshotReader final : public snapshot::SnapshotReader {
 public:
  explicit MySqlSnapshotReader(const Config& config);
  ~MySqlSnapshotReader() override;
  MySqlSnapshotReader(const MySqlSnapshotReader&) = delete;
  MySqlSnapshotReader& operator=(const MySqlSnapshotReader&) = delete;

  std::optional<std::string> connect() override;
  std::vector<std::string> prepare(bool create) override;
  bool control_tables_exist() override;
  std::vector<std::string> signal_table_warnings() override;
  Fallible<std::vector<TableId>> captured_tables() override;
  Fallible<snapshot::TableLayout> describe(const std::string& name,
                                                     const std::vector<std::string>& surrogate_key) override;
  SqlDialect sql_dialect() const override { return {'`', false, true}; }
  Fallible<std::optional<snapshot::KeyText>> max_key(const snapshot::TableLayout& layout,
                                                               const std::string& where) override;
  std::optional<std::string> write_watermark(const std::string& mark) override;
  Fallible<snapshot::Chunk> read_chunk(const snapshot::ChunkQuery& query) override;
  std::optional<std::string> insert_signal(const std::string& id, const std::string& type,
                                           const std::string& data) override;
  // KILL CONNECTION from a second, short-lived connection.
  void cancel() override;
  void clear_cancel() override { cancel_.clear(); }

 private:
  struct Table {  // a control table: database and name
    std::string database, name;
    std::string sql() const;  // `db`.`table`
  };
  struct Described {  // what a chunk SELECT needs beyond the layout
    CatalogTable catalog;
  };
  struct Rows;  // a binary-protocol result: values, key texts

  std::optional<std::string> ensure_connected();
  void drop_connection();
  std::string failure(const std::string& what);  // the connection's error; drops a broken connection
  Table resolve(const std::string& name, const std::string& fallback) const;
  std::vector<std::string> prepare_table(const Table& table, const std::string& ddl,
                                         const std::vector<std::string>& columns, bool create, const std::string& grants);
  std::optional<std::string> select(const std::string& sql, const snapshot::TableLayout& layout,
                                    const CatalogTable& catalog, bool whole_rows, Rows& out);
  const CatalogTable* catalog_of(const snapshot::TableLayout& layout, std::string& error);
  std::optional<std::string> key_bound(const snapshot::TableLayout& layout, const CatalogTable& catalog,
                                       const snapshot::KeyText& key, bool upper, std::string& out);
  std::string account();

  Config config_;
  Table watermark_, signal_;
  std::unique_ptr<MySqlConnection> connection_;
  // MariaDB: a chunk is one statement, read-only by SET STATEMENT, instead of three round trips.
  bool set_statement_ = false;
  snapshot::SessionCancel cancel_;  // knows connection_'s server id, for KILL CONNECTION
  std::map<std::string, Described> described_;  // by "db.table"
};

}  // namespace tidemark::mysql
