// Records with Kafka Connect schemas (sink.kafka.schemas.enable), on both databases: every key and value of a
// table of many types, from the initial snapshot and from the log, is read back by Kafka Connect's own
// JsonConverter with schemas.enable=true and must convert to Connect data and back to the same payload; a
// table's records carry one schema whichever path (snapshot or log) they took; the column schemas are the
// ones Debezium documents for those types.

#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "database.hpp"
#include "json_converter.hpp"
#include "process.hpp"

namespace tidemark::test {
namespace {

using nlohmann::json;

class RecordSchemas : public testing::TestWithParam<std::string> {};

// The column schemas of a struct schema's fields, by field name.
std::map<std::string, json> fields_by_name(const json& struct_schema) {
  std::map<std::string, json> out;
  for (const auto& f : struct_schema.at("fields")) out[f.at("field").get<std::string>()] = f;
  return out;
}

const json& field(const json& struct_schema, const std::string& name) {
  for (const auto& f : struct_schema.at("fields"))
    if (f.at("field") == name) return f;
  throw std::runtime_error("no field " + name + " in " + struct_schema.dump());
}

void enable_schemas(Database& db, const std::string& more = "") {
  write_file(db.daemon().config_path(),
             std::regex_replace(read_file(db.daemon().config_path()), std::regex("bootstrap_servers: (.*)\n"),
                                "bootstrap_servers: $1\n    schemas:\n      enable: true\n" + more));
}

void expect_converter_reads_all(const std::vector<ConsumedRecord>& records) {
  const ConverterReport report = read_with_json_converter(records);
  EXPECT_EQ(report.exit_status, 0) << report.output;
  EXPECT_EQ(report.lines.size(), records.size()) << report.output;
  for (const auto& line : report.lines) EXPECT_EQ(line.rfind("ok\t", 0), 0u) << line;
}

TEST_P(RecordSchemas, EveryRecordOfManyTypesReadsBackThroughJsonConverter) {
  const auto db = make_database(GetParam());
  const bool pg = db->kind() == "postgres";
  const std::string t = db->name("typed");
  const std::string mood = db->name("mood");
  std::string row1, row2;
  if (pg) {
    db->exec("CREATE TYPE " + mood + " AS ENUM ('sad', 'ok', 'happy')");
    db->create_table(t, "id BIGINT PRIMARY KEY, c_small SMALLINT NOT NULL, c_int INT, c_big BIGINT, c_num NUMERIC(10,2), "
                        "c_real REAL, c_double DOUBLE PRECISION, c_bool BOOLEAN, c_text TEXT, c_bytea BYTEA, c_date DATE, "
                        "c_time TIME, c_ts TIMESTAMP, c_tstz TIMESTAMPTZ, c_timetz TIMETZ, c_interval INTERVAL, "
                        "c_json JSONB, c_xml XML, c_uuid UUID, c_mood " + mood + ", c_ints INT[], c_texts TEXT[], c_bits BIT(3)");
    row1 = "(1, -32768, 2147483647, -9223372036854775808, -12345678.90, 0.1, 1.7976931348623157e308, true, 'café', "
           "'\\x00ff', '2024-02-29', '23:59:59.999999', '2024-01-01 12:00:00.123456', '2024-01-01 12:00:00+05:30', "
           "'12:00:00+05:30', '1 year 2 mons -3 days 04:05:06.789', '{\"a\": [1, 2.5]}', '<a>x</a>', "
           "'3f2504e0-4f89-11d3-9a0c-0305e82c3301', 'happy', '{1,NULL,3}', '{\"x y\",z}', B'101')";
    row2 = "(2, 7, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
           "NULL, NULL, NULL, NULL)";
  } else {
    db->create_table(t, "id BIGINT PRIMARY KEY, c_tiny TINYINT NOT NULL, c_small SMALLINT UNSIGNED, c_med MEDIUMINT, "
                        "c_int INT UNSIGNED, c_bigu BIGINT UNSIGNED, c_dec DECIMAL(10,2), c_float FLOAT, c_double DOUBLE, "
                        "c_bit1 BIT(1), c_bits BIT(12), c_year YEAR, c_date DATE, c_time TIME(6), c_dt DATETIME(6), "
                        "c_ts TIMESTAMP(6) NULL, c_vc VARCHAR(20), c_blob BLOB, c_enum ENUM('a','b''c'), c_set SET('x','y'), "
                        "c_json JSON, c_uuid UUID");
    row1 = "(1, -128, 65535, -8388608, 4294967295, 18446744073709551615, -12345678.90, 0.1, 5e-324, b'1', b'101010101010', "
           "2155, '2024-02-29', '-838:59:59.000000', '2024-01-01 12:00:00.123456', '2038-01-19 03:14:07.000000', 'café', "
           "x'00ff', 'b''c', 'x,y', '{\"a\": [1, 2.5]}', '123e4567-e89b-12d3-a456-426614174000')";
    row2 = "(2, 7, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
           "NULL, NULL, NULL)";
  }
  db->exec("INSERT INTO " + t + " VALUES " + row1);  // read by the initial snapshot
  db->write_config({t}, "snapshot:\n  initial: when_needed\n");
  enable_schemas(*db);
  ASSERT_TRUE(db->start()) << db->daemon().stderr_text();
  // The snapshot reads row 1 before the log changes it (a delete first would leave nothing to read).
  ASSERT_EQ(db->read_until(db->topic_of(t), 1).size(), 1u) << db->daemon().stderr_text();
  db->exec("INSERT INTO " + t + " VALUES " + row2);
  db->exec("UPDATE " + t + " SET c_small = 8 WHERE id = 2");
  db->exec("DELETE FROM " + t + " WHERE id = 1");
  // r(1), c(2), u(2), d(1) + tombstone.
  const auto records = db->read_until(db->topic_of(t), 5);
  ASSERT_EQ(records.size(), 5u) << db->daemon().stderr_text();
  ASSERT_FALSE(records[4].value.has_value()) << "the delete's tombstone stays a null value";

  expect_converter_reads_all(records);

  std::vector<json> values;
  for (size_t i = 0; i < 4; ++i) values.push_back(json::parse(*records[i].value));
  EXPECT_EQ(values[0]["payload"]["op"], "r");
  EXPECT_EQ(values[1]["payload"]["op"], "c");
  for (const auto& v : values) EXPECT_EQ(v["schema"], values[0]["schema"]) << "one schema for the snapshot and the log";
  const json key = json::parse(*records[0].key);
  const std::string topic = db->topic_of(t);
  EXPECT_EQ(key["schema"], (json{{"type", "struct"},
                                 {"fields", {{{"type", "int64"}, {"optional", false}, {"field", "id"}}}},
                                 {"optional", false},
                                 {"name", topic + ".Key"}}));
  EXPECT_EQ(key["payload"], (json{{"id", 1}}));

  const json& envelope = values[0]["schema"];
  EXPECT_EQ(envelope["name"], topic + ".Envelope");
  EXPECT_EQ(field(envelope, "before")["name"], topic + ".Value");
  EXPECT_EQ(field(envelope, "source")["name"], pg ? "io.debezium.connector.postgresql.Source" : "io.debezium.connector.mysql.Source");
  const auto columns = fields_by_name(field(envelope, "after"));
  const auto type_of = [&](const std::string& c) { return columns.at(c).at("type").get<std::string>(); };
  const auto name_of = [&](const std::string& c) { return columns.at(c).value("name", ""); };
  EXPECT_FALSE(columns.at("id")["optional"].get<bool>());
  if (pg) {
    EXPECT_EQ(type_of("c_small"), "int16");
    EXPECT_TRUE(columns.at("c_small")["optional"].get<bool>())
        << "NOT NULL, but a delete's old image holds only the key under REPLICA IDENTITY DEFAULT";
    EXPECT_TRUE(columns.at("c_int")["optional"].get<bool>());
    EXPECT_EQ(type_of("c_int"), "int32");
    EXPECT_EQ(type_of("c_big"), "int64");
    EXPECT_EQ(type_of("c_num"), "string");
    EXPECT_EQ(type_of("c_real"), "float");
    EXPECT_EQ(type_of("c_double"), "double");
    EXPECT_EQ(type_of("c_bool"), "boolean");
    EXPECT_EQ(type_of("c_bytea"), "bytes");
    EXPECT_EQ(name_of("c_date"), "io.debezium.time.Date");
    EXPECT_EQ(name_of("c_time"), "io.debezium.time.MicroTime");
    EXPECT_EQ(name_of("c_ts"), "io.debezium.time.MicroTimestamp");
    EXPECT_EQ(name_of("c_tstz"), "io.debezium.time.ZonedTimestamp");
    EXPECT_EQ(name_of("c_timetz"), "io.debezium.time.ZonedTime");
    EXPECT_EQ(name_of("c_interval"), "io.debezium.time.Interval");
    EXPECT_EQ(name_of("c_json"), "io.debezium.data.Json");
    EXPECT_EQ(name_of("c_xml"), "io.debezium.data.Xml");
    EXPECT_EQ(name_of("c_uuid"), "io.debezium.data.Uuid");
    EXPECT_EQ(name_of("c_mood"), "io.debezium.data.Enum");
    EXPECT_EQ(columns.at("c_mood")["parameters"], (json{{"allowed", "sad,ok,happy"}}));
    EXPECT_EQ(columns.at("c_ints")["items"], (json{{"type", "int32"}, {"optional", true}}));
    EXPECT_EQ(columns.at("c_texts")["items"], (json{{"type", "string"}, {"optional", true}}));
    EXPECT_EQ(type_of("c_bits"), "string") << "bit strings are sent as their 0/1 text";
  } else {
    EXPECT_EQ(type_of("c_tiny"), "int16");
    EXPECT_FALSE(columns.at("c_tiny")["optional"].get<bool>()) << "NOT NULL";
    EXPECT_EQ(type_of("c_small"), "int32") << "SMALLINT UNSIGNED";
    EXPECT_EQ(type_of("c_med"), "int32");
    EXPECT_EQ(type_of("c_int"), "int64") << "INT UNSIGNED";
    EXPECT_EQ(name_of("c_bigu"), "org.apache.kafka.connect.data.Decimal");
    EXPECT_EQ(type_of("c_dec"), "string");
    EXPECT_EQ(type_of("c_float"), "float");
    EXPECT_EQ(type_of("c_double"), "double");
    EXPECT_EQ(type_of("c_bit1"), "boolean");
    EXPECT_EQ(name_of("c_bits"), "io.debezium.data.Bits");
    EXPECT_EQ(columns.at("c_bits")["parameters"], (json{{"length", "12"}}));
    EXPECT_EQ(name_of("c_year"), "io.debezium.time.Year");
    EXPECT_EQ(name_of("c_date"), "io.debezium.time.Date");
    EXPECT_EQ(name_of("c_time"), "io.debezium.time.MicroTime");
    EXPECT_EQ(name_of("c_dt"), "io.debezium.time.MicroTimestamp");
    EXPECT_EQ(name_of("c_ts"), "io.debezium.time.ZonedTimestamp");
    EXPECT_EQ(type_of("c_vc"), "string");
    EXPECT_EQ(type_of("c_blob"), "bytes");
    EXPECT_EQ(columns.at("c_enum")["parameters"], (json{{"allowed", "a,b'c"}}));
    EXPECT_EQ(name_of("c_set"), "io.debezium.data.EnumSet");
    EXPECT_EQ(name_of("c_json"), "io.debezium.data.Json");
    EXPECT_EQ(name_of("c_uuid"), "io.debezium.data.Uuid");
  }
}

TEST_P(RecordSchemas, FlatRecordsAndTransactionFramesReadBackThroughJsonConverter) {
  const auto db = make_database(GetParam());
  const std::string t = db->name("flatschema");
  db->create_table(t, "id INT PRIMARY KEY, name VARCHAR(20) NOT NULL, amount DECIMAL(12,2)");
  if (db->kind() == "postgres") db->exec("ALTER TABLE " + t + " REPLICA IDENTITY FULL");
  const std::string transactions = db->daemon().name() + ".transaction";
  create_topic(db->bootstrap(), transactions, 1);
  db->write_config({t}, "snapshot:\n  initial: never\n");
  enable_schemas(*db, "    record_shape: flat\n    flat:\n      add_fields: [op, table, source_ts_ms]\n"
                      "      delete_handling: rewrite\n    provide_transaction_metadata: true\n");
  ASSERT_TRUE(db->start()) << db->daemon().stderr_text();
  db->exec("INSERT INTO " + t + " VALUES (1, 'a', 1.50)");
  db->exec("DELETE FROM " + t + " WHERE id = 1");
  // c, d (rewritten) + tombstone; BEGIN/END twice.
  const auto records = db->read_until(db->topic_of(t), 3);
  ASSERT_EQ(records.size(), 3u) << db->daemon().stderr_text();
  const auto frames = db->read_until(transactions, 4);
  ASSERT_EQ(frames.size(), 4u) << db->daemon().stderr_text();
  expect_converter_reads_all(records);
  expect_converter_reads_all(frames);

  const json created = json::parse(*records[0].value);
  EXPECT_EQ(created["payload"], (json{{"id", 1}, {"name", "a"}, {"amount", "1.50"}, {"__op", "c"}, {"__table", t},
                                      {"__source_ts_ms", created["payload"]["__source_ts_ms"]}, {"__deleted", "false"}}));
  EXPECT_EQ(created["schema"]["name"], db->topic_of(t) + ".Value");
  EXPECT_FALSE(field(created["schema"], "name")["optional"].get<bool>());
  EXPECT_EQ(field(created["schema"], "__deleted"), (json{{"type", "string"}, {"optional", true}, {"field", "__deleted"}}));
  EXPECT_EQ(json::parse(*records[1].value)["payload"]["__deleted"], "true");
  EXPECT_EQ(json::parse(*frames[1].value)["schema"]["name"], "io.debezium.connector.common.TransactionMetadataValue");
}

std::string param_name(const testing::TestParamInfo<std::string>& info) { return info.param; }

INSTANTIATE_TEST_SUITE_P(BothDatabases, RecordSchemas, testing::Values("postgres", "mariadb"), param_name);

}  // namespace
}  // namespace tidemark::test
