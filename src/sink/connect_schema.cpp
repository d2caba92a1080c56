#include "sink/connect_schema.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace tidemark {

namespace {

using Doc = nlohmann::ordered_json;  // ordered: members in JsonConverter's order

// JsonConverter's member order: type, fields/items, optional, name, version, parameters, default, field.
Doc primitive(std::string_view type, bool optional, std::string_view field = {}) {
  Doc s{{"type", type}, {"optional", optional}};
  if (!field.empty()) s["field"] = field;
  return s;
}

Doc named(std::string_view type, bool optional, std::string_view name, Doc parameters = nullptr) {
  Doc s{{"type", type}, {"optional", optional}, {"name", name}, {"version", 1}};
  if (!parameters.is_null()) s["parameters"] = std::move(parameters);
  return s;
}

// Debezium's `allowed` parameter: the members joined by ',', with '\' and ',' inside a member escaped by '\'.
std::string joined(const std::vector<std::string>& members) {
  std::string out;
  for (size_t i = 0; i < members.size(); ++i) {
    if (i) out += ',';
    for (const char c : members[i]) {
      if (c == '\\' || c == ',') out += '\\';
      out += c;
    }
  }
  return out;
}

// The schema of one value of `kind`, as the envelope serializer renders that kind's values.
Doc value_schema(ColumnKind kind, const ColumnInfo& info, bool optional) {
  switch (kind) {
    case ColumnKind::Boolean: return primitive("boolean", optional);
    case ColumnKind::Int16: return primitive("int16", optional);
    case ColumnKind::Int32: return primitive("int32", optional);
    case ColumnKind::Int64: return primitive("int64", optional);
    case ColumnKind::UInt64:  // written as a JSON number, which JsonConverter reads into a Decimal
      return {{"type", "bytes"}, {"optional", optional}, {"name", "org.apache.kafka.connect.data.Decimal"},
              {"version", 1}, {"parameters", {{"scale", "0"}, {"connect.decimal.precision", "20"}}}};
    case ColumnKind::Float32: return primitive("float", optional);
    case ColumnKind::Float64: return primitive("double", optional);
    case ColumnKind::Bytes: return primitive("bytes", optional);
    case ColumnKind::Date: return named("int32", optional, "io.debezium.time.Date");
    case ColumnKind::Time: return named("int64", optional, "io.debezium.time.MicroTime");
    case ColumnKind::Timestamp: return named("int64", optional, "io.debezium.time.MicroTimestamp");
    case ColumnKind::TimestampTz: return named("string", optional, "io.debezium.time.ZonedTimestamp");
    case ColumnKind::TimeTz: return named("string", optional, "io.debezium.time.ZonedTime");
    case ColumnKind::Interval: return named("string", optional, "io.debezium.time.Interval");
    case ColumnKind::Year: return named("int32", optional, "io.debezium.time.Year");
    case ColumnKind::Json: return named("string", optional, "io.debezium.data.Json");
    case ColumnKind::Xml: return named("string", optional, "io.debezium.data.Xml");
    case ColumnKind::Uuid: return named("string", optional, "io.debezium.data.Uuid");
    case ColumnKind::Enum: return named("string", optional, "io.debezium.data.Enum", {{"allowed", joined(info.members)}});
    case ColumnKind::EnumSet:
      return named("string", optional, "io.debezium.data.EnumSet", {{"allowed", joined(info.members)}});
    case ColumnKind::Bits:
      return named("bytes", optional, "io.debezium.data.Bits", {{"length", std::to_string(info.length)}});
    case ColumnKind::Array: {
      Doc s{{"type", "array"}, {"items", value_schema(info.element, info, true)}, {"optional", optional}};
      return s;
    }
    case ColumnKind::Decimal:  // decimal.handling.mode=string
    case ColumnKind::String:
    case ColumnKind::Unknown: return primitive("string", optional);
  }
  return primitive("string", optional);
}

Doc column_field(const TableSchema& table, size_t index) {
  const ColumnInfo info = index < table.column_info.size() ? table.column_info[index] : ColumnInfo{};
  // An old image that may hold the key only (PostgreSQL's REPLICA IDENTITY DEFAULT) has NULL in the other
  // columns, so they are optional even when NOT NULL. (Debezium fills in made-up values such as 0 or "".)
  const bool key = std::find(table.key_columns.begin(), table.key_columns.end(), index) != table.key_columns.end();
  const bool optional = info.optional || (!table.complete_old_image && !key);
  Doc s = value_schema(info.kind, info, optional);
  s["field"] = table.columns[index];
  return s;
}

Doc row_struct(const TableSchema& table, std::string_view record_name, std::string_view field) {
  Doc fields = Doc::array();
  for (size_t i = 0; i < table.columns.size(); ++i) fields.push_back(column_field(table, i));
  Doc s{{"type", "struct"}, {"fields", std::move(fields)}, {"optional", true},
         {"name", std::string(record_name) + ".Value"}};
  if (!field.empty()) s["field"] = field;
  return s;
}

// The `source` block's fields as the envelope serializer writes them, with Debezium's types.
Doc source_struct(ConnectorKind connector) {
  Doc fields = Doc::array({
      primitive("string", false, "version"),
      primitive("string", false, "connector"),
      primitive("string", false, "name"),
      primitive("int64", false, "ts_ms"),
      Doc{{"type", "string"}, {"optional", true}, {"name", "io.debezium.data.Enum"}, {"version", 1},
           {"parameters", {{"allowed", "true,last,false,incremental"}}}, {"default", "false"}, {"field", "snapshot"}},
      primitive("string", false, "db"),
  });
  std::string name;
  switch (connector) {
    case ConnectorKind::Postgres:
      name = "io.debezium.connector.postgresql.Source";
      fields.push_back(primitive("string", false, "schema"));
      fields.push_back(primitive("string", false, "table"));
      fields.push_back(primitive("int64", true, "txId"));
      fields.push_back(primitive("int64", true, "lsn"));
      fields.push_back(primitive("int64", true, "commit_lsn"));
      break;
    case ConnectorKind::MySql:
      name = "io.debezium.connector.mysql.Source";
      fields.push_back(primitive("string", true, "table"));
      fields.push_back(primitive("int64", false, "server_id"));
      fields.push_back(primitive("string", true, "gtid"));
      fields.push_back(primitive("string", false, "file"));
      fields.push_back(primitive("int64", false, "pos"));
      fields.push_back(primitive("int32", false, "row"));
      break;
    case ConnectorKind::Generator:
      name = "io.tidemark.connector.generator.Source";
      fields.push_back(primitive("string", true, "table"));
      fields.push_back(primitive("int64", true, "sequence"));
      break;
  }
  return Doc{{"type", "struct"}, {"fields", std::move(fields)}, {"optional", false}, {"name", name}, {"field", "source"}};
}

Doc transaction_block_struct() {
  return Doc{{"type", "struct"},
              {"fields", Doc::array({primitive("string", false, "id"), primitive("int64", false, "total_order"),
                                      primitive("int64", false, "data_collection_order")})},
              {"optional", true},
              {"name", "event.block"},
              {"version", 1},
              {"field", "transaction"}};
}

}  // namespace

std::string connect_key_schema(const TableSchema& table, std::string_view record_name) {
  Doc fields = Doc::array();
  for (const size_t index : table.key_columns) fields.push_back(column_field(table, index));
  return Doc{{"type", "struct"}, {"fields", std::move(fields)}, {"optional", false},
              {"name", std::string(record_name) + ".Key"}}
      .dump();
}

std::string connect_envelope_schema(const TableSchema& table, ConnectorKind connector, std::string_view record_name) {
  Doc fields = Doc::array({
      row_struct(table, record_name, "before"),
      row_struct(table, record_name, "after"),
      source_struct(connector),
      primitive("string", false, "op"),
      primitive("int64", true, "ts_ms"),
      transaction_block_struct(),
  });
  return Doc{{"type", "struct"}, {"fields", std::move(fields)}, {"optional", false},
              {"name", std::string(record_name) + ".Envelope"}, {"version", 1}}
      .dump();
}

std::string connect_flat_schema(const TableSchema& table, const FlatFields& flat, std::string_view record_name) {
  Doc s = row_struct(table, record_name, {});
  s["optional"] = false;
  Doc& fields = s["fields"];
  if (flat.op) fields.push_back(primitive("string", true, "__op"));
  if (flat.table) fields.push_back(primitive("string", true, "__table"));
  if (flat.db) fields.push_back(primitive("string", true, "__db"));
  if (flat.schema) fields.push_back(primitive("string", true, "__schema"));
  if (flat.source_ts_ms) fields.push_back(primitive("int64", true, "__source_ts_ms"));
  if (flat.ts_ms) fields.push_back(primitive("int64", true, "__ts_ms"));
  if (flat.deleted) fields.push_back(primitive("string", true, "__deleted"));
  return s.dump();
}

std::string connect_heartbeat_key_schema() {
  return Doc{{"type", "struct"}, {"fields", Doc::array({primitive("string", false, "serverName")})},
              {"optional", false}, {"name", "io.debezium.connector.common.ServerNameKey"}}
      .dump();
}

std::string connect_heartbeat_value_schema() {
  return Doc{{"type", "struct"}, {"fields", Doc::array({primitive("int64", false, "ts_ms")})}, {"optional", false},
              {"name", "io.debezium.connector.common.Heartbeat"}}
      .dump();
}

std::string connect_transaction_key_schema() {
  return Doc{{"type", "struct"}, {"fields", Doc::array({primitive("string", false, "id")})}, {"optional", false},
              {"name", "io.debezium.connector.common.TransactionMetadataKey"}, {"version", 1}}
      .dump();
}

std::string connect_transaction_value_schema() {
  const Doc collection{{"type", "struct"},
                        {"fields", Doc::array({primitive("string", false, "data_collection"),
                                                primitive("int64", false, "event_count")})},
                        {"optional", false},
                        {"name", "event.collection"},
                        {"version", 1}};
  const Doc fields = Doc::array({
      primitive("string", false, "status"),
      primitive("string", false, "id"),
      primitive("int64", false, "ts_ms"),
      primitive("int64", true, "event_count"),
      Doc{{"type", "array"}, {"items", collection}, {"optional", true}, {"field", "data_collections"}},
  });
  return Doc{{"type", "struct"}, {"fields", fields}, {"optional", false},
              {"name", "io.debezium.connector.common.TransactionMetadataValue"}, {"version", 1}}
      .dump();
}

}  // namespace tidemark
