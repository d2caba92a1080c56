#include "source/kafka/change_record.hpp"

#include <cmath>
#include <cstdlib>
#include <map>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/civil_time.hpp"

namespace tidemark::kafka {

namespace {

using nlohmann::json;

constexpr std::string_view kUnavailable = "__debezium_unavailable_value";

std::optional<std::string> base64_decode(std::string_view in) {
  static constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  uint32_t buffer = 0;
  int bits = 0;
  for (const char c : in) {
    if (c == '=') break;
    const size_t at = kAlphabet.find(c);
    if (at == std::string_view::npos) return std::nullopt;
    buffer = (buffer << 6) | static_cast<uint32_t>(at);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buffer >> bits) & 0xFF);
    }
  }
  return out;
}

// A big-endian two's complement integer (Connect's Decimal) as decimal digits with `scale` places.
std::string decimal_text(const std::string& bytes, int scale) {
  std::vector<uint8_t> magnitude(bytes.begin(), bytes.end());
  const bool negative = !magnitude.empty() && (magnitude[0] & 0x80);
  if (negative) {  // two's complement: invert and add one
    for (auto& b : magnitude) b = static_cast<uint8_t>(~b);
    for (size_t i = magnitude.size(); i-- > 0;)
      if (++magnitude[i] != 0) break;
  }
  std::string digits;
  while (std::any_of(magnitude.begin(), magnitude.end(), [](uint8_t b) { return b != 0; })) {
    unsigned remainder = 0;
    for (auto& b : magnitude) {
      const unsigned current = remainder * 256 + b;
      b = static_cast<uint8_t>(current / 10);
      remainder = current % 10;
    }
    digits.insert(digits.begin(), static_cast<char>('0' + remainder));
  }
  if (digits.empty()) digits = "0";
  if (scale > 0) {
    if (digits.size() <= static_cast<size_t>(scale)) digits.insert(0, static_cast<size_t>(scale) - digits.size() + 1, '0');
    digits.insert(digits.size() - static_cast<size_t>(scale), 1, '.');
  }
  return negative ? "-" + digits : digits;
}

// "2024-01-01T00:00:00.123456Z", "+10000-01-01T00:00:00Z", "2024-01-01T01:00:00+01:00": microseconds UTC.
std::optional<int64_t> parse_zoned(const std::string& text) {
  if (text == "infinity") return kTimestampInfinity;
  if (text == "-infinity") return std::numeric_limits<int64_t>::min();
  const char* p = text.c_str();
  char* end = nullptr;
  const long long year = std::strtoll(p, &end, 10);
  unsigned month = 0, day = 0, hour = 0, minute = 0, second = 0;
  int consumed = 0;
  if (end == p || std::sscanf(end, "-%2u-%2uT%2u:%2u:%2u%n", &month, &day, &hour, &minute, &second, &consumed) != 5)
    return std::nullopt;
  p = end + consumed;
  int64_t micros = 0;
  if (*p == '.') {
    int64_t scale = 100000;
    for (++p; *p >= '0' && *p <= '9'; ++p, scale /= 10) micros += (*p - '0') * scale;
  }
  int64_t offset_seconds = 0;
  if (*p == '+' || *p == '-') {
    unsigned oh = 0, om = 0;
    if (std::sscanf(p + 1, "%2u:%2u", &oh, &om) < 1) return std::nullopt;
    offset_seconds = (*p == '-' ? -1 : 1) * static_cast<int64_t>(oh * 3600 + om * 60);
  } else if (*p != 'Z') {
    return std::nullopt;
  }
  const int64_t days = days_from_civil(year, month, day);
  return ((days * 86400 + hour * 3600 + minute * 60 + second) - offset_seconds) * 1'000'000 + micros;
}

// A value without a schema: what its JSON type says.
Value untyped(const json& v, ColumnInfo& info) {
  if (v.is_null()) return Null{};
  if (v.is_boolean()) {
    info.kind = ColumnKind::Boolean;
    return v.get<bool>();
  }
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    info.kind = ColumnKind::UInt64;
    return v.get<uint64_t>();
  }
  if (v.is_number_integer()) {
    info.kind = ColumnKind::Int64;
    return v.get<int64_t>();
  }
  if (v.is_number_float()) {
    info.kind = ColumnKind::Float64;
    return v.get<double>();
  }
  if (v.is_string()) {
    if (v.get_ref<const std::string&>() == kUnavailable) return Unavailable{};
    info.kind = ColumnKind::String;
    return v.get<std::string>();
  }
  info.kind = ColumnKind::Json;
  return Json{v.dump()};
}

// A value as its Connect field schema says; an error sentence in `error` when it does not fit.
Value typed(const json& v, const json& schema, ColumnInfo& info, std::string& error) {
  if (v.is_null()) return Null{};
  if (v.is_string() && v.get_ref<const std::string&>() == kUnavailable) return Unavailable{};
  const std::string type = schema.value("type", "");
  const std::string name = schema.value("name", "");
  const auto integer = [&]() -> int64_t {
    if (!v.is_number_integer()) error = "expected an integer for " + (name.empty() ? type : name) + ", found " + v.dump();
    return v.is_number_integer() ? v.get<int64_t>() : 0;
  };
  if (name == "io.debezium.time.Date") {
    info.kind = ColumnKind::Date;
    return Date{static_cast<int32_t>(integer())};
  }
  if (name == "io.debezium.time.Time" || name == "io.debezium.time.MicroTime" || name == "io.debezium.time.NanoTime") {
    info.kind = ColumnKind::Time;
    const int64_t n = integer();
    return Time{name == "io.debezium.time.Time" ? n * 1000 : name == "io.debezium.time.NanoTime" ? n / 1000 : n};
  }
  if (name == "io.debezium.time.Timestamp" || name == "io.debezium.time.MicroTimestamp" ||
      name == "io.debezium.time.NanoTimestamp") {
    info.kind = ColumnKind::Timestamp;
    const int64_t n = integer();
    if (n == std::numeric_limits<int64_t>::max() || n == std::numeric_limits<int64_t>::min()) return Timestamp{n};
    return Timestamp{name == "io.debezium.time.Timestamp" ? n * 1000 : name == "io.debezium.time.NanoTimestamp" ? n / 1000 : n};
  }
  if (name == "io.debezium.time.ZonedTimestamp") {
    info.kind = ColumnKind::TimestampTz;
    const auto micros = v.is_string() ? parse_zoned(v.get<std::string>()) : std::nullopt;
    if (!micros) error = "not an ISO-8601 timestamp: " + v.dump();
    return TimestampTz{micros.value_or(0)};
  }
  if (name == "io.debezium.data.Json") {
    info.kind = ColumnKind::Json;
    return Json{v.is_string() ? v.get<std::string>() : v.dump()};
  }
  if (name == "io.debezium.data.Uuid") {
    info.kind = ColumnKind::Uuid;
    Uuid u{};
    if (!v.is_string() || !parse_uuid(v.get<std::string>(), u)) error = "not a UUID: " + v.dump();
    return u;
  }
  if (name == "org.apache.kafka.connect.data.Decimal") {
    info.kind = ColumnKind::Decimal;
    if (v.is_number()) return Decimal{v.dump()};
    const auto bytes = v.is_string() ? base64_decode(v.get<std::string>()) : std::nullopt;
    if (!bytes) {
      error = "not a Connect decimal: " + v.dump();
      return Null{};
    }
    const auto& parameters = schema.value("parameters", json::object());
    const std::string scale = parameters.is_object() ? parameters.value("scale", "0") : "0";
    return Decimal{decimal_text(*bytes, std::atoi(scale.c_str()))};
  }
  if (type == "bytes") {
    const bool bits = name == "io.debezium.data.Bits";
    info.kind = bits ? ColumnKind::Bits : ColumnKind::Bytes;
    if (bits) {
      const auto& parameters = schema.value("parameters", json::object());
      if (parameters.is_object()) info.length = static_cast<uint32_t>(std::atoi(parameters.value("length", "0").c_str()));
    }
    const auto bytes = v.is_string() ? base64_decode(v.get<std::string>()) : std::nullopt;
    if (!bytes) error = "not base64: " + v.dump();
    return Bytes{bytes.value_or("")};
  }
  if (type == "array") {
    info.kind = ColumnKind::Array;
    Array out;
    ColumnInfo element;
    if (!v.is_array()) {
      error = "expected an array, found " + v.dump();
      return Null{};
    }
    for (const auto& item : v) out.items.push_back(typed(item, schema.value("items", json::object()), element, error));
    info.element = element.kind;
    return out;
  }
  if (type == "int8" || type == "int16" || type == "int32" || type == "int64") {
    info.kind = type == "int16" || type == "int8" ? ColumnKind::Int16 : type == "int32" ? ColumnKind::Int32 : ColumnKind::Int64;
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      info.kind = ColumnKind::UInt64;
      return v.get<uint64_t>();
    }
    return integer();
  }
  if (type == "float" || type == "double" || type == "float32" || type == "float64") {
    info.kind = type == "float" || type == "float32" ? ColumnKind::Float32 : ColumnKind::Float64;
    if (v.is_number()) return v.get<double>();
    const std::string text = v.is_string() ? v.get<std::string>() : "";
    if (text == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (text == "Infinity") return std::numeric_limits<double>::infinity();
    if (text == "-Infinity") return -std::numeric_limits<double>::infinity();
    error = "expected a number, found " + v.dump();
    return Null{};
  }
  if (type == "boolean") {
    info.kind = ColumnKind::Boolean;
    if (!v.is_boolean()) error = "expected true or false, found " + v.dump();
    return v.is_boolean() && v.get<bool>();
  }
  if (type == "string") {
    info.kind = name == "io.debezium.data.Enum" ? ColumnKind::Enum : ColumnKind::String;
    return v.is_string() ? v.get<std::string>() : v.dump();
  }
  return untyped(v, info);
}

// A column's kind from its Connect field schema, whatever its value (NULL included), so that the table's
// description stays the same from record to record.
ColumnInfo describe(const json& schema) {
  ColumnInfo info;
  const std::string type = schema.value("type", "");
  static const std::map<std::string, ColumnKind> kNamed = {
      {"io.debezium.time.Date", ColumnKind::Date},
      {"io.debezium.time.Time", ColumnKind::Time},
      {"io.debezium.time.MicroTime", ColumnKind::Time},
      {"io.debezium.time.NanoTime", ColumnKind::Time},
      {"io.debezium.time.Timestamp", ColumnKind::Timestamp},
      {"io.debezium.time.MicroTimestamp", ColumnKind::Timestamp},
      {"io.debezium.time.NanoTimestamp", ColumnKind::Timestamp},
      {"io.debezium.time.ZonedTimestamp", ColumnKind::TimestampTz},
      {"io.debezium.data.Json", ColumnKind::Json},
      {"io.debezium.data.Uuid", ColumnKind::Uuid},
      {"io.debezium.data.Enum", ColumnKind::Enum},
      {"io.debezium.data.Bits", ColumnKind::Bits},
      {"org.apache.kafka.connect.data.Decimal", ColumnKind::Decimal},
  };
  static const std::map<std::string, ColumnKind> kTyped = {
      {"int8", ColumnKind::Int16},    {"int16", ColumnKind::Int16},     {"int32", ColumnKind::Int32},
      {"int64", ColumnKind::Int64},   {"float", ColumnKind::Float32},   {"float32", ColumnKind::Float32},
      {"double", ColumnKind::Float64}, {"float64", ColumnKind::Float64}, {"boolean", ColumnKind::Boolean},
      {"string", ColumnKind::String}, {"bytes", ColumnKind::Bytes},     {"array", ColumnKind::Array},
  };
  if (const auto named = kNamed.find(schema.value("name", "")); named != kNamed.end()) info.kind = named->second;
  else if (const auto typed_kind = kTyped.find(type); typed_kind != kTyped.end()) info.kind = typed_kind->second;
  if (info.kind == ColumnKind::Bits) {
    const auto& parameters = schema.value("parameters", json::object());
    if (parameters.is_object()) info.length = static_cast<uint32_t>(std::atoi(parameters.value("length", "0").c_str()));
  }
  if (info.kind == ColumnKind::Array) info.element = describe(schema.value("items", json::object())).kind;
  info.optional = schema.value("optional", true);
  return info;
}

// The fields of the before/after struct in an envelope schema; null when there is none.
const json* image_fields(const json& schema) {
  if (!schema.is_object() || !schema.contains("fields")) return nullptr;
  for (const char* image : {"after", "before"})
    for (const auto& field : schema["fields"])
      if (field.value("field", "") == image && field.contains("fields")) return &field["fields"];
  return nullptr;
}

}  // namespace

TableSchemaPtr ChangeRecordDecoder::schema_for(TableSchema fresh) {
  const std::string key = fresh.id.database + "." + fresh.id.schema + "." + fresh.id.table;
  auto& kept = schemas_[key];
  if (kept && kept->columns == fresh.columns && kept->key_columns == fresh.key_columns &&
      kept->column_info == fresh.column_info)
    return kept;
  kept = std::make_shared<const TableSchema>(std::move(fresh));
  return kept;
}

DecodedRecord ChangeRecordDecoder::decode(std::string_view key, std::string_view value) {
  DecodedRecord out;
  if (value.empty()) {
    out.skip = true;  // a tombstone
    return out;
  }
  json parsed = json::parse(value, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    out.error = "the value is not a JSON object";
    return out;
  }
  const bool wrapped = parsed.contains("payload") && parsed.contains("schema");
  const json& payload = wrapped ? parsed["payload"] : parsed;
  const json* fields = wrapped ? image_fields(parsed["schema"]) : nullptr;
  if (!payload.is_object() || !payload.contains("op")) {
    // Heartbeats and transaction metadata have no op; a flat record has no envelope at all.
    const bool envelope_like = payload.is_object() && (payload.contains("after") || payload.contains("before"));
    if (!envelope_like && payload.is_object() && (payload.contains("ts_ms") || payload.contains("status"))) {
      out.skip = true;
      return out;
    }
    out.error = "not a change record (no op): apply records with the before/after envelope, not flattened ones";
    return out;
  }
  const std::string op = payload["op"].is_string() ? payload["op"].get<std::string>() : "";
  const json& source = payload.contains("source") && payload["source"].is_object() ? payload["source"] : json::object();
  TableSchema table;
  table.id.database = source.value("db", "");
  table.id.schema = source.contains("schema") && source["schema"].is_string() ? source["schema"].get<std::string>() : "";
  table.id.table = source.contains("table") && source["table"].is_string() ? source["table"].get<std::string>() : "";
  if (op == "m") {
    out.skip = true;
    return out;
  }
  if (table.id.table.empty()) {
    out.error = "the record's source block names no table (source.table)";
    return out;
  }
  ChangeEvent& event = out.event;
  if (op == "c") event.op = Op::Create;
  else if (op == "u") event.op = Op::Update;
  else if (op == "d") event.op = Op::Delete;
  else if (op == "r") event.op = Op::Read;
  else if (op == "t") event.op = Op::Truncate;
  else {
    out.error = "unknown op '" + op + "'";
    return out;
  }
  event.source.commit_ts_ms = source.value("ts_ms", int64_t{0});
  // Columns: the schema's, else the images' fields in order.
  std::vector<const json*> column_schemas;
  if (fields) {
    for (const auto& f : *fields) {
      table.columns.push_back(f.value("field", ""));
      column_schemas.push_back(&f);
    }
  } else {
    for (const char* image : {"after", "before"}) {
      if (!payload.contains(image) || !payload[image].is_object()) continue;
      for (const auto& [name, v] : payload[image].items())
        if (std::find(table.columns.begin(), table.columns.end(), name) == table.columns.end()) table.columns.push_back(name);
    }
  }
  // Described by the schema; without one the values carry their own types (no description, which keeps
  // the table's description, and the sink's plan, the same whatever values come).
  if (!column_schemas.empty())
    for (const json* c : column_schemas) table.column_info.push_back(describe(*c));
  std::string error;
  const auto row_of = [&](const json& image) {
    Row row(table.columns.size(), Value(Unavailable{}));
    for (size_t i = 0; i < table.columns.size(); ++i) {
      if (!image.contains(table.columns[i])) continue;
      const json& v = image[table.columns[i]];
      ColumnInfo info;
      row[i] = column_schemas.empty() ? untyped(v, info) : typed(v, *column_schemas[i], info, error);
      if (!error.empty()) {
        error = "column " + table.columns[i] + ": " + error;
        return row;
      }
    }
    return row;
  };
  if (payload.contains("before") && payload["before"].is_object()) event.before = row_of(payload["before"]);
  if (payload.contains("after") && payload["after"].is_object()) event.after = row_of(payload["after"]);
  if (!error.empty()) {
    out.error = error;
    return out;
  }
  // The key's fields name the key columns.
  if (!key.empty()) {
    json parsed_key = json::parse(key, nullptr, false);
    if (parsed_key.is_object() && parsed_key.contains("payload") && parsed_key.contains("schema"))
      parsed_key = parsed_key["payload"];
    if (parsed_key.is_object())
      for (const auto& [name, v] : parsed_key.items()) {
        const auto at = std::find(table.columns.begin(), table.columns.end(), name);
        if (at != table.columns.end()) table.key_columns.push_back(static_cast<size_t>(at - table.columns.begin()));
      }
  }
  event.table = schema_for(std::move(table));
  return out;
}

}  // namespace tidemark::kafka
