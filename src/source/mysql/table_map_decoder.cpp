// TABLE_MAP and its optional metadata (column names, signedness, charsets, ENUM/SET members, primary
// key, visibility). References: MySQL libbinlogevents rows_event.cpp/.h (Table_map_event);
// MariaDB sql/log_event.cc.

#include <algorithm>

#include "source/mysql/binlog_event_parts.hpp"

namespace tidemark::mysql::detail {

namespace {

// ---------------------------------------------------------------------------------------------------
// TABLE_MAP

enum OptionalMetadata : uint8_t {
  kSignedness = 1,
  kDefaultCharset = 2,
  kColumnCharset = 3,
  kColumnName = 4,
  kSetStrValue = 5,
  kEnumStrValue = 6,
  kGeometryType = 7,
  kSimplePrimaryKey = 8,
  kPrimaryKeyWithPrefix = 9,
  kEnumAndSetDefaultCharset = 10,
  kEnumAndSetColumnCharset = 11,
  kColumnVisibility = 12,
};

// Reads the type metadata of one column (Table_map_event: m_field_metadata) and resolves
// MYSQL_TYPE_STRING's real type.
bool read_column_meta(BinlogCursor& c, ColumnDef& col) {
  switch (col.type) {
    case ColumnType::Float:
    case ColumnType::Double:
    case ColumnType::Blob:
    case ColumnType::TinyBlob:
    case ColumnType::MediumBlob:
    case ColumnType::LongBlob:
    case ColumnType::Geometry:
    case ColumnType::Json:
    case ColumnType::Vector:
    case ColumnType::Timestamp2:
    case ColumnType::DateTime2:
    case ColumnType::Time2: {
      uint8_t m = 0;
      if (!c.read_u8(m, "column metadata")) return false;
      col.meta = m;
      return true;
    }
    case ColumnType::Varchar:
    case ColumnType::VarString:
    case ColumnType::Bit:
      return c.read_u16(col.meta, "column metadata");
    case ColumnType::NewDecimal: {
      uint8_t precision = 0, scale = 0;
      if (!c.read_u8(precision, "decimal precision") || !c.read_u8(scale, "decimal scale")) return false;
      col.meta = static_cast<uint16_t>(precision << 8 | scale);
      return true;
    }
    case ColumnType::String:
    case ColumnType::Enum:
    case ColumnType::Set: {
      uint8_t b0 = 0, b1 = 0;
      if (!c.read_u8(b0, "column metadata") || !c.read_u8(b1, "column metadata")) return false;
      unsigned real = b0;
      unsigned length = b1;
      if ((b0 & 0x30) != 0x30) {  // CHAR longer than 255 bytes: 2 high length bits hide in the type byte
        length = ((static_cast<unsigned>(b0 & 0x30) ^ 0x30) << 4) | b1;
        real = b0 | 0x30;
      }
      if (real == static_cast<unsigned>(ColumnType::Enum) || real == static_cast<unsigned>(ColumnType::Set)) {
        col.type = static_cast<ColumnType>(real);
        col.meta = b1;  // storage bytes
      } else if (real == static_cast<unsigned>(ColumnType::String)) {
        col.type = ColumnType::String;
        col.meta = static_cast<uint16_t>(length);
      } else {
        return c.fail("CHAR column metadata names real type " + std::to_string(real));
      }
      return true;
    }
    case ColumnType::Decimal:
    case ColumnType::Tiny:
    case ColumnType::Short:
    case ColumnType::Long:
    case ColumnType::Null:
    case ColumnType::Timestamp:
    case ColumnType::LongLong:
    case ColumnType::Int24:
    case ColumnType::Date:
    case ColumnType::Time:
    case ColumnType::DateTime:
    case ColumnType::Year:
    case ColumnType::NewDate:
      col.meta = 0;
      return true;
    case ColumnType::TypedArray:
      break;
  }
  return c.fail("unsupported column type " + std::to_string(static_cast<unsigned>(col.type)));
}

bool is_numeric_column(const ColumnDef& col, bool mariadb) {
  switch (col.type) {
    case ColumnType::Tiny:
    case ColumnType::Short:
    case ColumnType::Int24:
    case ColumnType::Long:
    case ColumnType::LongLong:
    case ColumnType::NewDecimal:
    case ColumnType::Float:
    case ColumnType::Double:
      return true;
    case ColumnType::Year:
      return mariadb;  // MariaDB's Field_year is a Field_tiny (unsigned): it gets a signedness bit
    default:
      return false;
  }
}

bool is_character_column(const ColumnDef& col, bool include_geometry) {
  switch (col.type) {
    case ColumnType::String:  // resolved: not ENUM/SET
    case ColumnType::VarString:
    case ColumnType::Varchar:
    case ColumnType::Blob:
    case ColumnType::TinyBlob:
    case ColumnType::MediumBlob:
    case ColumnType::LongBlob:
      return true;
    case ColumnType::Geometry:
      // Both servers count geometry (a BLOB underneath) as a character column with the binary charset
      // (is_character_type in their log_event.cc; MariaDB 10.11 verified on captured bytes).
      return include_geometry;
    default:
      return false;
  }
}

bool is_enum_or_set_column(const ColumnDef& col) {
  return col.type == ColumnType::Enum || col.type == ColumnType::Set;
}

template <typename Pred>
std::vector<size_t> columns_where(const TableMap& table, Pred pred) {
  std::vector<size_t> out;
  for (size_t i = 0; i < table.columns.size(); ++i)
    if (pred(table.columns[i])) out.push_back(i);
  return out;
}

// MSB-first bitmap with one bit per listed column.
bool read_msb_bitmap(BinlogCursor& c, size_t bits, std::vector<bool>& out, const char* what) {
  std::string_view bytes;
  if (!c.read_bytes((bits + 7) / 8, bytes, what)) return false;
  out.resize(bits);
  for (size_t i = 0; i < bits; ++i) out[i] = (static_cast<unsigned char>(bytes[i / 8]) >> (7 - i % 8)) & 1;
  return expect_end(c, what);
}

bool read_default_charset(BinlogCursor& c, TableMap& table, const std::vector<size_t>& cols, const char* what) {
  uint64_t def = 0;
  if (!c.read_packed(def, what)) return false;
  for (size_t i : cols) table.columns[i].collation = static_cast<uint32_t>(def);
  while (!c.at_end()) {
    uint64_t index = 0, collation = 0;
    c.read_packed(index, what);
    c.read_packed(collation, what);
    if (c.failed()) return false;
    if (index >= cols.size()) {
      return c.fail(std::string(what) + ": column index " + std::to_string(index) + " but only " +
                    std::to_string(cols.size()) + " such columns");
    }
    table.columns[cols[index]].collation = static_cast<uint32_t>(collation);
  }
  return true;
}

bool read_column_charsets(BinlogCursor& c, std::vector<uint32_t>& out, const char* what) {
  while (!c.at_end()) {
    uint64_t collation = 0;
    if (!c.read_packed(collation, what)) return false;
    out.push_back(static_cast<uint32_t>(collation));
  }
  return true;
}

bool read_str_values(BinlogCursor& c, TableMap& table, const std::vector<size_t>& cols, const char* what) {
  size_t n = 0;
  while (!c.at_end()) {
    uint64_t count = 0;
    if (!c.read_packed(count, what)) return false;
    if (n >= cols.size()) return c.fail(std::string(what) + ": more value lists than columns of that type (" + std::to_string(cols.size()) + ")");
    if (count > c.remaining()) return c.fail(std::string(what) + ": " + std::to_string(count) + " values cannot fit");
    auto& values = table.columns[cols[n]].enum_values;
    values.clear();
    for (uint64_t k = 0; k < count; ++k) {
      std::string_view v;
      if (!c.read_packed_prefixed(v, what)) return false;
      values.emplace_back(v);
    }
    ++n;
  }
  if (n != cols.size()) {
    return c.fail(std::string(what) + ": " + std::to_string(n) + " value lists for " + std::to_string(cols.size()) + " columns");
  }
  return true;
}

bool apply_optional_metadata(BinlogCursor& c, uint8_t type, TableMap& table, bool mariadb) {
  const size_t n = table.columns.size();
  switch (type) {
    case kSignedness: {
      const auto cols = columns_where(table, [&](const ColumnDef& col) { return is_numeric_column(col, mariadb); });
      std::vector<bool> bits;
      if (!read_msb_bitmap(c, cols.size(), bits, "SIGNEDNESS")) return false;
      for (size_t k = 0; k < cols.size(); ++k) table.columns[cols[k]].is_unsigned = bits[k];
      return true;
    }
    case kDefaultCharset:
      return read_default_charset(c, table, columns_where(table, [](const ColumnDef& col) {
        return is_character_column(col, true);
      }), "DEFAULT_CHARSET");
    case kColumnCharset: {
      std::vector<uint32_t> collations;
      if (!read_column_charsets(c, collations, "COLUMN_CHARSET")) return false;
      auto cols = columns_where(table, [](const ColumnDef& col) { return is_character_column(col, true); });
      if (collations.size() != cols.size()) {
        // A writer that leaves geometry columns out, before giving up.
        auto other = columns_where(table, [](const ColumnDef& col) { return is_character_column(col, false); });
        if (collations.size() != other.size()) {
          return c.fail("COLUMN_CHARSET lists " + std::to_string(collations.size()) + " collations for " +
                        std::to_string(cols.size()) + " character columns");
        }
        cols = std::move(other);
      }
      for (size_t k = 0; k < cols.size(); ++k) table.columns[cols[k]].collation = collations[k];
      return true;
    }
    case kColumnName: {
      size_t k = 0;
      while (!c.at_end()) {
        std::string_view name;
        if (!c.read_packed_prefixed(name, "COLUMN_NAME")) return false;
        if (k >= n) return c.fail("COLUMN_NAME lists more names than the " + std::to_string(n) + " columns");
        table.columns[k++].name = std::string(name);
      }
      if (k != n) return c.fail("COLUMN_NAME lists " + std::to_string(k) + " names for " + std::to_string(n) + " columns");
      table.has_column_names = true;
      return true;
    }
    case kSetStrValue:
      return read_str_values(c, table, columns_where(table, [](const ColumnDef& col) { return col.type == ColumnType::Set; }),
                             "SET_STR_VALUE");
    case kEnumStrValue:
      return read_str_values(c, table, columns_where(table, [](const ColumnDef& col) { return col.type == ColumnType::Enum; }),
                             "ENUM_STR_VALUE");
    case kGeometryType: {
      const auto cols = columns_where(table, [](const ColumnDef& col) { return col.type == ColumnType::Geometry; });
      size_t k = 0;
      while (!c.at_end()) {
        uint64_t g = 0;
        if (!c.read_packed(g, "GEOMETRY_TYPE")) return false;
        if (k >= cols.size()) return c.fail("GEOMETRY_TYPE lists more types than the " + std::to_string(cols.size()) + " geometry columns");
        table.columns[cols[k++]].geometry_type = static_cast<uint32_t>(g);
      }
      if (k != cols.size()) return c.fail("GEOMETRY_TYPE lists " + std::to_string(k) + " types for " + std::to_string(cols.size()) + " geometry columns");
      return true;
    }
    case kSimplePrimaryKey:
    case kPrimaryKeyWithPrefix: {
      const char* what = type == kSimplePrimaryKey ? "SIMPLE_PRIMARY_KEY" : "PRIMARY_KEY_WITH_PREFIX";
      table.primary_key.clear();
      table.primary_key_prefixes.clear();
      while (!c.at_end()) {
        uint64_t index = 0, prefix = 0;
        c.read_packed(index, what);
        if (type == kPrimaryKeyWithPrefix) c.read_packed(prefix, what);
        if (c.failed()) return false;
        if (index >= n) return c.fail(std::string(what) + ": column index " + std::to_string(index) + " of " + std::to_string(n) + " columns");
        table.primary_key.push_back(static_cast<size_t>(index));
        table.primary_key_prefixes.push_back(static_cast<uint32_t>(prefix));
      }
      table.has_primary_key_metadata = true;
      return true;
    }
    case kEnumAndSetDefaultCharset:
      return read_default_charset(c, table, columns_where(table, is_enum_or_set_column), "ENUM_AND_SET_DEFAULT_CHARSET");
    case kEnumAndSetColumnCharset: {
      std::vector<uint32_t> collations;
      if (!read_column_charsets(c, collations, "ENUM_AND_SET_COLUMN_CHARSET")) return false;
      const auto cols = columns_where(table, is_enum_or_set_column);
      if (collations.size() != cols.size()) {
        return c.fail("ENUM_AND_SET_COLUMN_CHARSET lists " + std::to_string(collations.size()) + " collations for " +
                      std::to_string(cols.size()) + " ENUM/SET columns");
      }
      for (size_t k = 0; k < cols.size(); ++k) table.columns[cols[k]].collation = collations[k];
      return true;
    }
    case kColumnVisibility: {
      std::vector<bool> bits;
      if (!read_msb_bitmap(c, n, bits, "COLUMN_VISIBILITY")) return false;
      for (size_t k = 0; k < n; ++k) table.columns[k].visible = bits[k];
      return true;
    }
    default:
      c.read_rest();  // a field type of a newer server: optional metadata is TLV so readers can skip it
      return true;
  }
}

}  // namespace

bool read_table_id(BinlogCursor& c, uint8_t post_header_length, uint64_t& out) {
  if (post_header_length == 6) {  // MySQL 5.1.0-5.1.15: 4-byte table id
    uint32_t id = 0;
    if (!c.read_u32(id, "table id")) return false;
    out = id;
    return true;
  }
  return c.read_u48(out, "table id");
}

Result decode_table_map(const RawEvent& raw, const BinlogFormat& format) {
  const uint8_t t = raw.header.type;
  BinlogCursor c(raw.body, kEventHeaderLength);
  TableMapEvent e;
  TableMap& table = e.table;
  uint8_t post = format.post_header_length(raw.type());
  if (post == 0) post = 8;
  read_table_id(c, post, table.table_id);
  c.read_u16(table.flags, "flags");
  if (post > 8) c.skip(post - 8u, "post-header extension");
  std::string_view db, name;
  uint8_t nul1 = 1, nul2 = 1;
  c.read_u8_prefixed(db, "database name");
  c.read_u8(nul1, "database name terminator");
  c.read_u8_prefixed(name, "table name");
  c.read_u8(nul2, "table name terminator");
  if (c.failed()) return c.error(t);
  if (nul1 != 0 || nul2 != 0) {
    c.fail("database or table name is not followed by a NUL byte");
    return c.error(t);
  }
  table.database = std::string(db);
  table.table = std::string(name);
  uint64_t n = 0;
  if (!c.read_packed(n, "column count")) return c.error(t);
  if (n == 0 || n > kMaxColumns) {
    c.fail("column count " + std::to_string(n) + " is out of range");
    return c.error(t);
  }
  std::string_view types;
  if (!c.read_bytes(n, types, "column types")) return c.error(t);
  table.columns.resize(n);
  for (size_t i = 0; i < n; ++i) table.columns[i].type = static_cast<ColumnType>(static_cast<uint8_t>(types[i]));
  uint64_t meta_len = 0;
  if (!c.read_packed(meta_len, "metadata length")) return c.error(t);
  const size_t meta_offset = c.offset();
  std::string_view meta;
  if (!c.read_bytes(meta_len, meta, "column metadata")) return c.error(t);
  {
    BinlogCursor m(meta, meta_offset);
    for (size_t i = 0; i < n; ++i) {
      if (!read_column_meta(m, table.columns[i])) {
        m.prefix_failure("column " + std::to_string(i + 1) + " (" +
                         std::string(column_type_name(table.columns[i].type)) + "): ");
        return m.error(t);
      }
    }
    if (!expect_end(m, "the column metadata")) return m.error(t);
  }
  std::string_view nulls;
  if (!c.read_bytes((n + 7) / 8, nulls, "NULL bitmap")) return c.error(t);
  for (size_t i = 0; i < n; ++i) table.columns[i].nullable = (static_cast<unsigned char>(nulls[i / 8]) >> (i % 8)) & 1;
  // Optional metadata (binlog_row_metadata): type, packed length, value.
  while (!c.at_end()) {
    uint8_t type = 0;
    uint64_t len = 0;
    c.read_u8(type, "optional metadata type");
    c.read_packed(len, "optional metadata length");
    if (c.failed()) return c.error(t);
    const size_t value_offset = c.offset();
    std::string_view value;
    if (!c.read_bytes(len, value, "optional metadata value")) return c.error(t);
    BinlogCursor v(value, value_offset);
    if (!apply_optional_metadata(v, type, table, format.mariadb)) {
      v.prefix_failure("optional metadata " + std::to_string(type) + ": ");
      return v.error(t);
    }
  }
  return BinlogEvent{std::move(e)};
}

}  // namespace tidemark::mysql::detail
