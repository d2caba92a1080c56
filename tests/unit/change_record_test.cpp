// Kafka records read back into changes: Debezium's and Tidemark's envelope with and without the
// schema/payload wrapper, semantic types, tombstones, and records that are not changes.

#include <gtest/gtest.h>

#include "source/kafka/change_record.hpp"
#include "core/partition_position.hpp"
#include "sink/database/kafka_offsets.hpp"

namespace tidemark::kafka {
namespace {

// A Debezium MySQL record with schemas: DECIMAL(10,2) as base64 bytes (precise mode), DATETIME(3) as
// milliseconds, a TIMESTAMP as ZonedTimestamp, a DATE, a BLOB.
constexpr const char* kWrapped = R"({
  "schema": {"type": "struct", "fields": [
    {"field": "before", "type": "struct", "optional": true, "fields": [
      {"field": "id", "type": "int32", "optional": false},
      {"field": "price", "type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "parameters": {"scale": "2"}},
      {"field": "placed", "type": "int64", "name": "io.debezium.time.Timestamp"},
      {"field": "seen", "type": "string", "name": "io.debezium.time.ZonedTimestamp"},
      {"field": "day", "type": "int32", "name": "io.debezium.time.Date"},
      {"field": "blob", "type": "bytes"}]},
    {"field": "after", "type": "struct", "optional": true, "fields": [
      {"field": "id", "type": "int32", "optional": false},
      {"field": "price", "type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "parameters": {"scale": "2"}},
      {"field": "placed", "type": "int64", "name": "io.debezium.time.Timestamp"},
      {"field": "seen", "type": "string", "name": "io.debezium.time.ZonedTimestamp"},
      {"field": "day", "type": "int32", "name": "io.debezium.time.Date"},
      {"field": "blob", "type": "bytes"}]}]},
  "payload": {"before": null,
              "after": {"id": 7, "price": "/zg=", "placed": 1704067200123, "seen": "2024-01-01T01:00:00.5+01:00",
                        "day": 19723, "blob": "AAH+/w=="},
              "source": {"connector": "mysql", "db": "shop", "table": "orders", "ts_ms": 1704067200000},
              "op": "c", "ts_ms": 1704067200999}})";

TEST(ChangeRecord, AWrappedDebeziumRecordIsTypedByItsSchema) {
  ChangeRecordDecoder decoder;
  const DecodedRecord r = decoder.decode(R"({"schema": {"type": "struct"}, "payload": {"id": 7}})", kWrapped);
  ASSERT_EQ(r.error, "");
  ASSERT_FALSE(r.skip);
  const ChangeEvent& e = r.event;
  EXPECT_EQ(e.op, Op::Create);
  EXPECT_EQ(e.table->id.database, "shop");
  EXPECT_EQ(e.table->id.table, "orders");
  EXPECT_EQ(e.table->columns, (std::vector<std::string>{"id", "price", "placed", "seen", "day", "blob"}));
  EXPECT_EQ(e.table->key_columns, (std::vector<size_t>{0}));
  EXPECT_EQ(e.source.commit_ts_ms, 1704067200000);
  ASSERT_TRUE(e.after);
  const Row& row = *e.after;
  EXPECT_EQ(row[0], Value(int64_t{7}));
  EXPECT_EQ(row[1], Value(Decimal{"-2.00"}));  // 0xff38 = -200, scale 2
  EXPECT_EQ(row[2], Value(Timestamp{1704067200123000}));
  EXPECT_EQ(row[3], Value(TimestampTz{1704067200500000}));  // 01:00:00.5 at +01:00
  EXPECT_EQ(row[4], Value(Date{19723}));
  EXPECT_EQ(row[5], Value(Bytes{std::string("\x00\x01\xfe\xff", 4)}));
  EXPECT_EQ(e.table->column_info[1].kind, ColumnKind::Decimal);
  EXPECT_EQ(e.table->column_info[3].kind, ColumnKind::TimestampTz);
}

TEST(ChangeRecord, WithoutSchemasValuesKeepTheirJsonTypesAndPostgresTablesTheirSchema) {
  ChangeRecordDecoder decoder;
  const DecodedRecord r = decoder.decode(
      R"({"id": 3})",
      R"({"before": {"id": 3, "name": "old", "tags": null}, "after": {"id": 4, "name": "new", "tags": {"a": [1]}},
          "source": {"connector": "postgresql", "db": "app", "schema": "public", "table": "t"}, "op": "u"})");
  ASSERT_EQ(r.error, "");
  const ChangeEvent& e = r.event;
  EXPECT_EQ(e.op, Op::Update);
  EXPECT_EQ(e.table->id.schema, "public");
  EXPECT_TRUE(e.table->column_info.empty());
  EXPECT_EQ((*e.before)[1], Value(std::string("old")));
  EXPECT_EQ((*e.after)[0], Value(int64_t{4}));
  EXPECT_EQ((*e.after)[2], Value(Json{R"({"a":[1]})"}));
}

TEST(ChangeRecord, TombstonesHeartbeatsAndMessagesAreSkippedFlatRecordsRefused) {
  ChangeRecordDecoder decoder;
  EXPECT_TRUE(decoder.decode(R"({"id": 1})", "").skip);
  EXPECT_TRUE(decoder.decode(R"({"serverName": "shop"})", R"({"ts_ms": 1704067200000})").skip);
  EXPECT_TRUE(decoder.decode("", R"({"op": "m", "source": {"db": "a"}, "message": {"prefix": "x"}})").skip);
  const DecodedRecord flat = decoder.decode(R"({"id": 1})", R"({"id": 1, "name": "x", "__deleted": "false"})");
  EXPECT_NE(flat.error.find("flattened"), std::string::npos) << flat.error;
  EXPECT_NE(decoder.decode("", "not json").error.find("not a JSON object"), std::string::npos);
  EXPECT_NE(decoder.decode("", R"({"op": "c", "after": {"id": 1}, "source": {"db": "a"}})").error.find("source.table"),
            std::string::npos);
}

TEST(ChangeRecord, TheSameTableKeepsOneSchemaObject) {
  ChangeRecordDecoder decoder;
  const auto record = [&](int id) {
    return decoder.decode(R"({"id": 1})", R"({"after": {"id": )" + std::to_string(id) +
                                              R"(, "v": null}, "source": {"db": "a", "table": "t"}, "op": "c"})");
  };
  const DecodedRecord a = record(1);
  const DecodedRecord b = record(2);
  EXPECT_EQ(a.event.table.get(), b.event.table.get());  // the sink keeps its plan
}

TEST(KafkaOffsets, TheTokenRoundTripsReadsTheEarlierFormAndRefusesOtherPositions) {
  const PartitionPosition offsets{{"shop.orders/0", {42, "host-1-ab#1"}}, {"shop.orders/1", {-2, "host-1-ab#2"}}};
  EXPECT_EQ(parse_partition_position(partition_position_token(offsets)), offsets);
  const PartitionPosition earlier{{"shop.orders/0", {42, ""}}, {"shop.orders/1", {7, ""}}};
  EXPECT_EQ(parse_partition_position(R"({"shop.orders/0": 42, "shop.orders/1": 7})"), earlier);
  EXPECT_FALSE(parse_partition_position("mysql-bin.000001:4"));
  EXPECT_FALSE(parse_partition_position(R"({"no-partition": 1})"));
  EXPECT_FALSE(parse_partition_position(R"({"t/0": [1]})"));
}

TEST(KafkaOffsets, PartitionNamesSplitAtTheirLastSlash) {
  EXPECT_EQ(dbsink::split_partition_name("shop.orders/12"), std::make_pair(std::string("shop.orders"), 12));
  EXPECT_FALSE(dbsink::split_partition_name("shop.orders"));
  EXPECT_FALSE(dbsink::split_partition_name("shop.orders/x"));
  EXPECT_FALSE(dbsink::split_partition_name("/3"));
  EXPECT_FALSE(dbsink::split_partition_name("t/-1"));
}

}  // namespace
}  // namespace tidemark::kafka
