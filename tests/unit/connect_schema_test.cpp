// Kafka Connect schemas (sink/connect_schema) against the examples Debezium documents, and the column kinds
// both sources give: the MySQL stream (TABLE_MAP) and snapshot (information_schema) must describe a column
// alike, and PostgreSQL domains, enums and arrays resolve to their base types.

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "sink/connect_schema.hpp"
#include "source/mysql/binlog_constants.hpp"
#include "source/mysql/mysql_column_kinds.hpp"
#include "source/postgres/pg_column_kinds.hpp"

namespace tidemark {
namespace {

using nlohmann::json;

// Debezium's MySQL tutorial table: id INTEGER NOT NULL PRIMARY KEY, first_name/last_name/email VARCHAR(255)
// NOT NULL, described as the binlog would.
TableSchemaPtr customers() {
  auto t = std::make_shared<TableSchema>();
  t->id = TableId{"inventory", "", "customers"};
  t->columns = {"id", "first_name", "last_name", "email"};
  t->key_columns = {0};
  t->complete_old_image = true;
  for (const auto kind : {ColumnKind::Int32, ColumnKind::String, ColumnKind::String, ColumnKind::String}) {
    ColumnInfo info;
    info.kind = kind;
    info.optional = false;
    t->column_info.push_back(info);
  }
  return t;
}

TEST(ConnectSchema, KeyIsDebeziumsDocumentedKeySchema) {
  // From Debezium's MySQL connector documentation, "Change event keys".
  const json documented = json::parse(R"({"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"}],
      "optional":false,"name":"mysql-server-1.inventory.customers.Key"})");
  EXPECT_EQ(json::parse(connect_key_schema(*customers(), "mysql-server-1.inventory.customers")), documented);
}

TEST(ConnectSchema, EnvelopeRowStructsAreDebeziumsDocumentedValueStructs) {
  const json envelope = json::parse(connect_envelope_schema(*customers(), ConnectorKind::MySql, "mysql-server-1.inventory.customers"));
  // From Debezium's MySQL connector documentation, "create event" value schema.
  const json columns = json::parse(R"([{"type":"int32","optional":false,"field":"id"},
      {"type":"string","optional":false,"field":"first_name"},{"type":"string","optional":false,"field":"last_name"},
      {"type":"string","optional":false,"field":"email"}])");
  ASSERT_EQ(envelope["fields"].size(), 6u);
  for (size_t i = 0; i < 2; ++i) {
    const json& row = envelope["fields"][i];
    EXPECT_EQ(row["field"], i == 0 ? "before" : "after");
    EXPECT_EQ(row["type"], "struct");
    EXPECT_EQ(row["optional"], true);
    EXPECT_EQ(row["name"], "mysql-server-1.inventory.customers.Value");
    EXPECT_EQ(row["fields"], columns);
  }
  EXPECT_EQ(envelope["name"], "mysql-server-1.inventory.customers.Envelope");
  EXPECT_EQ(envelope["optional"], false);
  const json& source = envelope["fields"][2];
  EXPECT_EQ(source["name"], "io.debezium.connector.mysql.Source");
  std::vector<std::string> names;
  for (const auto& f : source["fields"]) names.push_back(f["field"]);
  // Exactly the fields the envelope serializer writes, in its order.
  EXPECT_EQ(names, (std::vector<std::string>{"version", "connector", "name", "ts_ms", "snapshot", "db", "table",
                                             "server_id", "gtid", "file", "pos", "row"}));
  EXPECT_EQ(envelope["fields"][3], (json{{"type", "string"}, {"optional", false}, {"field", "op"}}));
  EXPECT_EQ(envelope["fields"][5]["name"], "event.block");
}

TEST(ConnectSchema, KeyOnlyOldImagesMakeNonKeyColumnsOptional) {
  auto t = std::make_shared<TableSchema>(*customers());
  t->complete_old_image = false;  // PostgreSQL, REPLICA IDENTITY DEFAULT
  const json envelope = json::parse(connect_envelope_schema(*t, ConnectorKind::Postgres, "p.public.customers"));
  const json& after = envelope["fields"][1]["fields"];
  EXPECT_EQ(after[0]["optional"], false) << "the key is always in the old image";
  EXPECT_EQ(after[1]["optional"], true);
}

TEST(ConnectSchema, FlatValueAddsOptionalFieldsAfterTheColumns) {
  FlatFields fields;
  fields.op = true;
  fields.source_ts_ms = true;
  fields.deleted = true;
  const json flat = json::parse(connect_flat_schema(*customers(), fields, "shop.inventory.customers"));
  EXPECT_EQ(flat["name"], "shop.inventory.customers.Value");
  EXPECT_EQ(flat["optional"], false);
  ASSERT_EQ(flat["fields"].size(), 7u);
  EXPECT_EQ(flat["fields"][4], (json{{"type", "string"}, {"optional", true}, {"field", "__op"}}));
  EXPECT_EQ(flat["fields"][5], (json{{"type", "int64"}, {"optional", true}, {"field", "__source_ts_ms"}}));
  EXPECT_EQ(flat["fields"][6], (json{{"type", "string"}, {"optional", true}, {"field", "__deleted"}}));
}

TEST(ConnectSchema, SemanticTypesCarryNameVersionAndParameters) {
  auto t = std::make_shared<TableSchema>();
  t->id = TableId{"db", "", "t"};
  t->columns = {"e", "b", "u", "a"};
  t->complete_old_image = true;
  ColumnInfo e{ColumnKind::Enum, ColumnKind::Unknown, true, 0, {"x", "y,z", "a\\b"}};
  ColumnInfo b{ColumnKind::Bits, ColumnKind::Unknown, false, 12, {}};
  ColumnInfo u{ColumnKind::UInt64, ColumnKind::Unknown, true, 0, {}};
  ColumnInfo a{ColumnKind::Array, ColumnKind::Date, true, 0, {}};
  t->column_info = {e, b, u, a};
  const json after = json::parse(connect_envelope_schema(*t, ConnectorKind::MySql, "x"))["fields"][1]["fields"];
  EXPECT_EQ(after[0], json::parse(R"({"type":"string","optional":true,"name":"io.debezium.data.Enum","version":1,
      "parameters":{"allowed":"x,y\\,z,a\\\\b"},"field":"e"})"));
  EXPECT_EQ(after[1], json::parse(R"({"type":"bytes","optional":false,"name":"io.debezium.data.Bits","version":1,
      "parameters":{"length":"12"},"field":"b"})"));
  EXPECT_EQ(after[2], json::parse(R"({"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal",
      "version":1,"parameters":{"scale":"0","connect.decimal.precision":"20"},"field":"u"})"));
  EXPECT_EQ(after[3], json::parse(R"({"type":"array","items":{"type":"int32","optional":true,"name":"io.debezium.time.Date",
      "version":1},"optional":true,"field":"a"})"));
}

// One column as TABLE_MAP describes it and as information_schema does.
struct MySqlColumn {
  const char* what;
  mysql::ColumnDef binlog;
  mysql::CatalogColumn catalog;
};

mysql::ColumnDef def(mysql::ColumnType type, uint16_t meta = 0, bool is_unsigned = false, uint32_t collation = 45) {
  mysql::ColumnDef c;
  c.type = type;
  c.meta = meta;
  c.is_unsigned = is_unsigned;
  c.collation = collation;
  return c;
}

mysql::CatalogColumn cat(const char* data_type, const char* column_type, uint32_t collation = 45) {
  mysql::CatalogColumn c;
  c.data_type = data_type;
  c.column_type = column_type;
  c.collation = collation;
  return c;
}

TEST(MySqlColumnKinds, TheBinlogAndTheCatalogDescribeEveryTypeAlike) {
  using mysql::ColumnType;
  const uint32_t binary = mysql::kBinaryCollation;
  mysql::ColumnDef e = def(ColumnType::Enum);
  e.enum_values = {"a", "b'c"};
  mysql::ColumnDef json_maria = def(ColumnType::Blob, 4);
  json_maria.extended = mysql::ExtendedType::Json;
  mysql::CatalogColumn json_cat = cat("longtext", "longtext");
  json_cat.json = true;
  mysql::ColumnDef uuid = def(ColumnType::String, 16, false, binary);
  uuid.extended = mysql::ExtendedType::Uuid;
  const std::vector<MySqlColumn> columns = {
      {"tinyint", def(ColumnType::Tiny), cat("tinyint", "tinyint(4)")},
      {"tinyint unsigned", def(ColumnType::Tiny, 0, true), cat("tinyint", "tinyint(3) unsigned")},
      {"smallint unsigned", def(ColumnType::Short, 0, true), cat("smallint", "smallint(5) unsigned")},
      {"mediumint", def(ColumnType::Int24), cat("mediumint", "mediumint(9)")},
      {"int", def(ColumnType::Long), cat("int", "int(11)")},
      {"int unsigned", def(ColumnType::Long, 0, true), cat("int", "int(10) unsigned")},
      {"bigint", def(ColumnType::LongLong), cat("bigint", "bigint(20)")},
      {"bigint unsigned", def(ColumnType::LongLong, 0, true), cat("bigint", "bigint(20) unsigned")},
      {"float", def(ColumnType::Float, 4), cat("float", "float")},
      {"double", def(ColumnType::Double, 8), cat("double", "double")},
      {"decimal", def(ColumnType::NewDecimal, 10 << 8 | 2), cat("decimal", "decimal(10,2)")},
      {"bit(1)", def(ColumnType::Bit, 1), cat("bit", "bit(1)")},
      {"bit(12)", def(ColumnType::Bit, 1 << 8 | 4), cat("bit", "bit(12)")},
      {"year", def(ColumnType::Year), cat("year", "year(4)")},
      {"date", def(ColumnType::Date), cat("date", "date")},
      {"time", def(ColumnType::Time2, 6), cat("time", "time(6)")},
      {"datetime", def(ColumnType::DateTime2, 6), cat("datetime", "datetime(6)")},
      {"timestamp", def(ColumnType::Timestamp2, 6), cat("timestamp", "timestamp(6)")},
      {"varchar", def(ColumnType::Varchar, 80), cat("varchar", "varchar(20)")},
      {"varbinary", def(ColumnType::Varchar, 20, false, binary), cat("varbinary", "varbinary(20)", binary)},
      {"blob", def(ColumnType::Blob, 2, false, binary), cat("blob", "blob", binary)},
      {"text", def(ColumnType::Blob, 2), cat("text", "text")},
      {"enum", e, cat("enum", "enum('a','b''c')")},
      {"json (MariaDB)", json_maria, json_cat},
      {"json (MySQL)", def(ColumnType::Json, 4), cat("json", "json")},
      {"uuid", uuid, cat("uuid", "uuid", binary)},
      {"geometry", def(ColumnType::Geometry, 4), cat("point", "point", binary)},
  };
  for (const auto& c : columns) {
    const ColumnInfo from_binlog = mysql::column_info(c.binlog);
    EXPECT_EQ(from_binlog, mysql::column_info(c.catalog)) << c.what;
    EXPECT_NE(from_binlog.kind, ColumnKind::Unknown) << c.what;
  }
  EXPECT_EQ(mysql::column_info(def(ColumnType::Short, 0, true)).kind, ColumnKind::Int32);
  EXPECT_EQ(mysql::column_info(def(ColumnType::LongLong, 0, true)).kind, ColumnKind::UInt64);
  EXPECT_EQ(mysql::column_info(def(ColumnType::Bit, 1 << 8 | 4)).length, 12u);
  EXPECT_EQ(mysql::column_info(e).members, (std::vector<std::string>{"a", "b'c"}));
}

TEST(PgColumnKinds, DomainsEnumsAndArraysResolve) {
  pg::PgTypeRegistry types;
  ASSERT_TRUE(types.add({16390, 'E', 0, 0, "mood", {"sad", "ok"}}));
  ASSERT_TRUE(types.add({16391, 'A', 16390, 0, "_mood", {}}));
  ASSERT_TRUE(types.add({16400, 'N', 0, pg::oid::kInt4, "posint", {}}));
  ASSERT_TRUE(types.add({16401, 'N', 0, 16400, "posint2", {}}));
  ASSERT_TRUE(types.add({16402, 'A', 16401, 0, "_posint2", {}}));
  EXPECT_EQ(pg::pg_column_info(pg::oid::kInt2, types, true).kind, ColumnKind::Int16);
  EXPECT_FALSE(pg::pg_column_info(pg::oid::kInt2, types, true).optional);
  EXPECT_TRUE(pg::pg_column_info(pg::oid::kInt2, types, false).optional);
  EXPECT_EQ(pg::pg_column_info(pg::oid::kTimeTz, types, false).kind, ColumnKind::TimeTz);
  EXPECT_EQ(pg::pg_column_info(16401, types, false).kind, ColumnKind::Int32) << "a domain over a domain over int4";
  const ColumnInfo mood = pg::pg_column_info(16390, types, false);
  EXPECT_EQ(mood.kind, ColumnKind::Enum);
  EXPECT_EQ(mood.members, (std::vector<std::string>{"sad", "ok"}));
  const ColumnInfo moods = pg::pg_column_info(16391, types, false);
  EXPECT_EQ(moods.kind, ColumnKind::Array);
  EXPECT_EQ(moods.element, ColumnKind::Enum);
  EXPECT_EQ(pg::pg_column_info(16402, types, false).element, ColumnKind::Int32);
  EXPECT_EQ(pg::pg_column_info(pg::oid::kTimestampArray, types, false).element, ColumnKind::Timestamp);
  EXPECT_EQ(pg::pg_column_info(99999, types, false).kind, ColumnKind::String) << "an unknown type is sent as text";
}

}  // namespace
}  // namespace tidemark
