#pragma once
// The catalog's view of a table (information_schema), for what TABLE_MAP cannot say: column names,
// primary key, ENUM/SET members and charsets when the server logs binlog_row_metadata=MINIMAL or NO_LOG,
// and the declared type of columns the binlog logs as plain binary strings (MariaDB's UUID, INET4, INET6).
//
// Limit: the catalog describes the table *now*, not at the binlog position being read. After a DDL
// (which invalidates the cache) events logged before the DDL but read after it would be described by the
// new definition; without column names in the binlog apply_catalog refuses a column-count mismatch instead
// of guessing. With binlog_row_metadata=FULL names, key, signedness, charsets and members come from the
// binlog itself, and catalog columns are matched to them by name.

#include <optional>
#include <string>
#include <vector>

#include "source/mysql/table_map.hpp"

namespace tidemark::mysql {

class MySqlConnection;

struct CatalogColumn {
  std::string name;
  std::string data_type;    // information_schema DATA_TYPE, lower case: "int", "enum", "uuid", "inet6", ...
  std::string column_type;  // COLUMN_TYPE: "int(10) unsigned", "enum('a','b')", ...
  uint32_t collation = 0;   // collation id; 0 for non-character columns
  bool json = false;        // MariaDB's JSON: LONGTEXT with a CHECK (json_valid(`column`)) constraint
  bool nullable = true;     // IS_NULLABLE
};

struct CatalogTable {
  std::vector<CatalogColumn> columns;     // in ordinal order
  std::vector<std::string> primary_key;   // column names in key order
};

class TableSchemaLoader {
 public:
  virtual ~TableSchemaLoader() = default;
  // nullopt with `error` when the catalog cannot be read or the table does not exist.
  virtual std::optional<CatalogTable> load(const std::string& database, const std::string& table, std::string& error) = 0;
};

// Reads information_schema through a connection.
class InformationSchemaLoader final : public TableSchemaLoader {
 public:
  explicit InformationSchemaLoader(MySqlConnection& connection) : connection_(connection) {}
  std::optional<CatalogTable> load(const std::string& database, const std::string& table, std::string& error) override;

 private:
  MySqlConnection& connection_;
};

// The members of "enum('a','b''c')" / "set(...)" COLUMN_TYPE text, unescaped.
std::vector<std::string> parse_enum_members(const std::string& column_type);

// Fills what `map` lacks from `catalog`: names, key, signedness, charsets and members when the binlog
// carried no metadata for them, and the extended type of UUID/INET4/INET6 columns (matched by name when
// the binlog names its columns). Returns an error when the binlog has no column names and the catalog does
// not match its column count.
std::optional<std::string> apply_catalog(TableMap& map, const CatalogTable& catalog);

}  // namespace tidemark::mysql
