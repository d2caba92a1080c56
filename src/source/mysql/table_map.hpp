#pragma once
// A table as TABLE_MAP describes it: what the row decoder needs to decode row images (types and their
// metadata) and what events need (names, key). With binlog_row_metadata=FULL every field comes from the
// event's optional metadata; with MINIMAL, names, key, charsets and ENUM/SET values come from
// information_schema (see table_schema_loader).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "source/mysql/binlog_constants.hpp"

namespace tidemark::mysql {

// A type TABLE_MAP cannot express: the server logs these as fixed-size binary strings (MYSQL_TYPE_STRING,
// binary collation); the column's declared type (information_schema DATA_TYPE) says how to render them.
// Json: MariaDB's JSON (an alias of LONGTEXT with a json_valid check; logged as a BLOB-type text column):
// the row decoder gives Json instead of a string.
enum class ExtendedType : uint8_t { None, Uuid, Inet4, Inet6, Json };

struct ColumnDef {
  // The type as it is stored in row images. For MYSQL_TYPE_STRING the real type (ENUM, SET or STRING) is
  // already resolved from the metadata, and `meta` holds the length in bytes.
  ColumnType type = ColumnType::Null;
  // Type metadata from TABLE_MAP, meaning per type: FLOAT/DOUBLE/BLOB/GEOMETRY/JSON: length-prefix size
  // in bytes; VARCHAR/VAR_STRING: max length in bytes; STRING/ENUM/SET: length or storage bytes;
  // NEWDECIMAL: precision << 8 | scale; BIT: bytes << 8 | bits; TIME2/DATETIME2/TIMESTAMP2: fractional
  // digits (0..6).
  uint16_t meta = 0;
  bool nullable = true;
  bool is_unsigned = false;  // numeric columns
  std::string name;          // empty when neither metadata nor information_schema gave one
  uint32_t collation = 0;    // character columns: collation id (0 = unknown); kBinaryCollation = binary
  std::vector<std::string> enum_values;  // ENUM and SET members, in definition order
  uint32_t geometry_type = 0;
  ExtendedType extended = ExtendedType::None;
  bool visible = true;  // COLUMN_VISIBILITY (MySQL 8.0.23+ invisible columns); true when not logged
  bool operator==(const ColumnDef&) const = default;
};

struct TableMap {
  uint64_t table_id = 0;
  uint16_t flags = 0;
  std::string database;
  std::string table;
  std::vector<ColumnDef> columns;     // every column of the table, in definition order
  std::vector<size_t> primary_key;    // column indexes in key order; empty when unknown or no key
  // Parallel to primary_key: the key prefix length in characters (PRIMARY_KEY_WITH_PREFIX), 0 = the
  // whole column. Empty when primary_key is empty.
  std::vector<uint32_t> primary_key_prefixes;
  bool has_column_names = false;      // names came from optional metadata (binlog_row_metadata=FULL)
  bool has_primary_key_metadata = false;
  bool operator==(const TableMap&) const = default;
};

}  // namespace tidemark::mysql
