#include "source/mysql/table_schema_loader.hpp"

#include <algorithm>
#include <iterator>

#include "source/mysql/binlog_constants.hpp"
#include "db/mysql_connection.hpp"

namespace tidemark::mysql {

std::optional<CatalogTable> InformationSchemaLoader::load(const std::string& database, const std::string& table,
                                                          std::string& error) {
  const std::string where = "TABLE_SCHEMA = " + connection_.quote(database) + " AND TABLE_NAME = " + connection_.quote(table);
  auto columns = connection_.query(
      "SELECT c.COLUMN_NAME, LOWER(c.DATA_TYPE), c.COLUMN_TYPE, COALESCE(co.ID, 0), c.IS_NULLABLE "
      "FROM information_schema.COLUMNS c LEFT JOIN information_schema.COLLATIONS co ON co.COLLATION_NAME = c.COLLATION_NAME "
      "WHERE c." + where + " ORDER BY c.ORDINAL_POSITION");
  if (!columns) {
    error = "cannot read information_schema.COLUMNS: " + connection_.error();
    return std::nullopt;
  }
  if (columns->empty()) {
    error = "table " + database + "." + table + " is not in information_schema (dropped, or no SELECT privilege on it)";
    return std::nullopt;
  }
  CatalogTable result;
  for (const auto& row : *columns) {
    CatalogColumn c;
    c.name = row[0].value_or("");
    c.data_type = row[1].value_or("");
    c.column_type = row[2].value_or("");
    c.collation = static_cast<uint32_t>(std::stoul(row[3].value_or("0")));
    c.nullable = row[4].value_or("YES") == "YES";
    // Byte strings have no COLLATION_NAME in information_schema; without TABLE_MAP charsets
    // (binlog_row_metadata=NO_LOG) they would otherwise be read as UTF-8 text.
    static constexpr const char* kByteStrings[] = {"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"};
    if (c.collation == 0 && std::find(std::begin(kByteStrings), std::end(kByteStrings), c.data_type) != std::end(kByteStrings))
      c.collation = kBinaryCollation;
    result.columns.push_back(std::move(c));
  }
  // MariaDB's JSON type is LONGTEXT plus a json_valid() check; MySQL's DATA_TYPE says "json".
  if (auto checks = connection_.query("SELECT CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = " +
                                      connection_.quote(database) + " AND TABLE_NAME = " + connection_.quote(table))) {
    for (const auto& row : *checks) {
      const std::string clause = row[0].value_or("");
      for (CatalogColumn& c : result.columns)
        if (clause == "json_valid(`" + c.name + "`)") c.json = true;
    }
  }
  for (CatalogColumn& c : result.columns)
    if (c.data_type == "json") c.json = true;
  auto key = connection_.query("SELECT COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE WHERE CONSTRAINT_NAME = 'PRIMARY' AND " +
                               where + " ORDER BY ORDINAL_POSITION");
  if (!key) {
    error = "cannot read information_schema.KEY_COLUMN_USAGE: " + connection_.error();
    return std::nullopt;
  }
  for (const auto& row : *key) result.primary_key.push_back(row[0].value_or(""));
  return result;
}

std::vector<std::string> parse_enum_members(const std::string& column_type) {
  std::vector<std::string> members;
  const size_t open = column_type.find('(');
  if (open == std::string::npos) return members;
  size_t i = open + 1;
  while (i < column_type.size() && column_type[i] == '\'') {
    std::string member;
    ++i;
    while (i < column_type.size()) {
      if (column_type[i] == '\'') {
        if (i + 1 < column_type.size() && column_type[i + 1] == '\'') {
          member.push_back('\'');
          i += 2;
          continue;
        }
        ++i;
        break;
      }
      if (column_type[i] == '\\' && i + 1 < column_type.size()) ++i;
      member.push_back(column_type[i++]);
    }
    members.push_back(std::move(member));
    if (i < column_type.size() && column_type[i] == ',') ++i;
  }
  return members;
}

namespace {

bool is_numeric(ColumnType t) {
  switch (t) {
    case ColumnType::Tiny: case ColumnType::Short: case ColumnType::Int24: case ColumnType::Long:
    case ColumnType::LongLong: case ColumnType::NewDecimal: case ColumnType::Float: case ColumnType::Double:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::optional<std::string> apply_catalog(TableMap& map, const CatalogTable& catalog) {
  const bool from_catalog = !map.has_column_names;
  // With FULL metadata the binlog names its columns: a catalog that changed since (an ADD/DROP COLUMN
  // logged after these events) is matched by name, never by position.
  if (from_catalog && catalog.columns.size() != map.columns.size()) {
    return "table " + map.database + "." + map.table + " has " + std::to_string(map.columns.size()) +
           " columns in the binlog but " + std::to_string(catalog.columns.size()) +
           " in information_schema: its definition changed after these events were logged, and the binlog does not "
           "carry column names (binlog_row_metadata is not FULL). Set binlog_row_metadata=FULL on the server; events "
           "logged before that cannot be described reliably: resume from a later position and re-snapshot the table";
  }
  for (size_t i = 0; i < map.columns.size(); ++i) {
    ColumnDef& column = map.columns[i];
    const CatalogColumn* found = nullptr;
    if (from_catalog || (i < catalog.columns.size() && catalog.columns[i].name == column.name)) {
      found = &catalog.columns[i];
    } else {
      const auto it = std::find_if(catalog.columns.begin(), catalog.columns.end(),
                                   [&](const CatalogColumn& c) { return c.name == column.name; });
      if (it == catalog.columns.end()) continue;  // dropped since: the binlog alone describes it
      found = &*it;
    }
    const CatalogColumn& cat = *found;
    if (from_catalog) {
      column.name = cat.name;
      if (is_numeric(column.type)) column.is_unsigned = cat.column_type.find("unsigned") != std::string::npos;
      if (column.collation == 0) column.collation = cat.collation;
      if ((column.type == ColumnType::Enum || column.type == ColumnType::Set) && column.enum_values.empty())
        column.enum_values = parse_enum_members(cat.column_type);
    }
    if (column.name != cat.name) continue;  // FULL metadata disagrees with the catalog: trust the binlog
    if (cat.data_type == "uuid") column.extended = ExtendedType::Uuid;
    else if (cat.data_type == "inet4") column.extended = ExtendedType::Inet4;
    else if (cat.data_type == "inet6") column.extended = ExtendedType::Inet6;
    else if (cat.json && column.type != ColumnType::Json) column.extended = ExtendedType::Json;
  }
  if (!map.has_primary_key_metadata) {
    map.primary_key.clear();
    for (const std::string& name : catalog.primary_key) {
      const auto it = std::find_if(map.columns.begin(), map.columns.end(), [&](const ColumnDef& c) { return c.name == name; });
      if (it != map.columns.end()) map.primary_key.push_back(static_cast<size_t>(it - map.columns.begin()));
    }
  }
  return std::nullopt;
}

}  // namespace tidemark::mysql
