#include "sink/envelope_serializer.hpp"

#include <charconv>
#include <chrono>

#include "core/civil_time.hpp"
#include "sink/json_writer.hpp"
#include "tidemark/version.hpp"

namespace tidemark {

// Debezium's placeholder for values the log did not carry (its unavailable.value.placeholder default).
static constexpr std::string_view kUnavailablePlaceholder = "__debezium_unavailable_value";

struct EnvelopeSerializer::TableFragments {
  TableSchemaPtr table;                      // keeps the schema (and so the cache key) alive
  std::vector<std::string> column_prefixes;  // "\"name\":"
  std::string source_table;                  // ,"db":"..",["schema":"..",]"table":".."
  std::string source_table_no_schema;        // the same without schema (MySQL-style block)
};

namespace {

void append_two_digits(std::string& out, unsigned v) {
  out.push_back(static_cast<char>('0' + v / 10));
  out.push_back(static_cast<char>('0' + v % 10));
}


void append_number(std::string& out, int64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, static_cast<size_t>(r.ptr - buf));
}

}  // namespace

namespace {
std::string_view connector_name(ConnectorKind kind) {
  switch (kind) {
    case ConnectorKind::Generator: return "generator";
    case ConnectorKind::MySql: return "mysql";
    case ConnectorKind::Postgres: return "postgresql";
  }
  return "unknown";
}

std::string_view snapshot_text(SnapshotMarker m) {
  switch (m) {
    case SnapshotMarker::No: return "false";
    case SnapshotMarker::Yes: return "true";
    case SnapshotMarker::Last: return "last";
    case SnapshotMarker::Incremental: return "incremental";
  }
  return "false";
}
}  // namespace

void append_iso_timestamp_utc(std::string& out, int64_t micros) {
  if (micros == kTimestampInfinity || micros == kTimestampMinusInfinity) {
    out.append(micros == kTimestampInfinity ? "infinity" : "-infinity");
    return;
  }
  // Floor division without multiplying back: days * 86400000000 overflows next to INT64_MIN.
  constexpr int64_t kMicrosPerDay = 86'400'000'000LL;
  int64_t micros_of_day = micros % kMicrosPerDay;
  const int64_t days = micros / kMicrosPerDay - (micros_of_day < 0 ? 1 : 0);
  if (micros_of_day < 0) micros_of_day += kMicrosPerDay;
  int64_t year;
  unsigned month, day;
  civil_from_days(days, year, month, day);
  if (year < 0 || year > 9999) {  // ISO-8601 expanded years carry a sign and at least 4 digits
    out.push_back(year < 0 ? '-' : '+');
    year = year < 0 ? -year : year;
  }
  char ybuf[24];
  auto r = std::to_chars(ybuf, ybuf + sizeof ybuf, year);
  for (auto n = r.ptr - ybuf; n < 4; ++n) out.push_back('0');
  out.append(ybuf, static_cast<size_t>(r.ptr - ybuf));
  out.push_back('-');
  append_two_digits(out, month);
  out.push_back('-');
  append_two_digits(out, day);
  out.push_back('T');
  const auto secs = static_cast<unsigned>(micros_of_day / 1'000'000);
  append_two_digits(out, secs / 3600);
  out.push_back(':');
  append_two_digits(out, secs / 60 % 60);
  out.push_back(':');
  append_two_digits(out, secs % 60);
  const auto frac = static_cast<unsigned>(micros_of_day % 1'000'000);
  if (frac != 0) {
    char fbuf[7];
    unsigned f = frac;
    for (int i = 5; i >= 0; --i, f /= 10) fbuf[i] = static_cast<char>('0' + f % 10);
    out.push_back('.');
    out.append(fbuf, 6);
  }
  out.push_back('Z');
}

void append_iso_interval(std::string& out, const Interval& iv) {
  // Debezium's interval.handling.mode=string: every component present, fields keep their own signs.
  const int64_t years = iv.months / 12;
  const int64_t months = iv.months % 12;
  const int64_t hours = iv.micros / 3'600'000'000LL;
  const int64_t minutes = iv.micros / 60'000'000LL % 60;
  const int64_t micros = iv.micros % 60'000'000LL;
  out.push_back('P');
  append_number(out, years);
  out.push_back('Y');
  append_number(out, months);
  out.push_back('M');
  append_number(out, iv.days);
  out.append("DT");
  append_number(out, hours);
  out.push_back('H');
  append_number(out, minutes);
  out.push_back('M');
  if (micros < 0) out.push_back('-');
  const int64_t abs_micros = micros < 0 ? -micros : micros;
  append_number(out, abs_micros / 1'000'000);
  if (const int64_t frac = abs_micros % 1'000'000; frac != 0) {
    // Debezium writes the seconds as a decimal without trailing zeros (6.78S, not 6.780000S).
    char fbuf[6];
    int64_t f = frac;
    for (int i = 5; i >= 0; --i, f /= 10) fbuf[i] = static_cast<char>('0' + f % 10);
    size_t digits = 6;
    while (fbuf[digits - 1] == '0') --digits;
    out.push_back('.');
    out.append(fbuf, digits);
  }
  out.push_back('S');
}

void write_json_value(const Value& value, std::string& out) {
  JsonWriter w(out);
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Null>) {
          w.null();
        } else if constexpr (std::is_same_v<T, Unavailable>) {
          w.string(kUnavailablePlaceholder);
        } else if constexpr (std::is_same_v<T, bool>) {
          w.boolean(x);
        } else if constexpr (std::is_same_v<T, int64_t>) {
          w.integer(x);
        } else if constexpr (std::is_same_v<T, uint64_t>) {
          w.unsigned_integer(x);
        } else if constexpr (std::is_same_v<T, double>) {
          w.number(x);
        } else if constexpr (std::is_same_v<T, Decimal>) {
          w.string(x.text);
        } else if constexpr (std::is_same_v<T, std::string>) {
          w.string(x);
        } else if constexpr (std::is_same_v<T, Bytes>) {
          w.base64(x.data);
        } else if constexpr (std::is_same_v<T, Date> || std::is_same_v<T, Time> || std::is_same_v<T, Timestamp>) {
          // io.debezium.time.Date (days), MicroTime and MicroTimestamp (microseconds) are plain numbers;
          // the infinity sentinels pass through as their extreme values.
          if constexpr (std::is_same_v<T, Date>) {
            w.integer(x.days);
          } else {
            w.integer(x.micros);
          }
        } else if constexpr (std::is_same_v<T, TimestampTz>) {
          out.push_back('"');
          append_iso_timestamp_utc(out, x.micros);
          out.push_back('"');
        } else if constexpr (std::is_same_v<T, Interval>) {
          out.push_back('"');
          append_iso_interval(out, x);
          out.push_back('"');
        } else if constexpr (std::is_same_v<T, Json>) {
          w.string(x.text);
        } else if constexpr (std::is_same_v<T, Uuid>) {
          out.push_back('"');
          append_uuid(out, x);
          out.push_back('"');
        } else if constexpr (std::is_same_v<T, Array>) {
          out.push_back('[');
          for (size_t i = 0; i < x.items.size(); ++i) {
            if (i) out.push_back(',');
            write_json_value(x.items[i], out);
          }
          out.push_back(']');
        } else {
          static_assert(sizeof(T) == 0, "every value type needs a rendering");
        }
      },
      value.v);
}

EnvelopeSerializer::EnvelopeSerializer(EnvelopeOptions options) : options_(std::move(options)) {
  // Everything of the source block up to its ts_ms value is fixed per connector kind: rendered once.
  std::string escaped_name;
  JsonWriter(escaped_name).string(options_.server_name);
  for (const ConnectorKind kind : {ConnectorKind::Generator, ConnectorKind::MySql, ConnectorKind::Postgres}) {
    source_prefix_[static_cast<size_t>(kind)] = ",\"source\":{\"version\":\"" + std::string(kVersion) +
                                                 "\",\"connector\":\"" + std::string(connector_name(kind)) +
                                                 "\",\"name\":" + escaped_name + ",\"ts_ms\":";
  }
}

EnvelopeSerializer::~EnvelopeSerializer() = default;
EnvelopeSerializer::EnvelopeSerializer(EnvelopeSerializer&&) noexcept = default;

const EnvelopeSerializer::TableFragments& EnvelopeSerializer::fragments(const TableSchemaPtr& table) {
  if (table.get() == last_table_) return *last_fragments_;
  auto& slot = cache_[table.get()];
  if (!slot) {
    slot = std::make_unique<TableFragments>();
    slot->table = table;
    for (const auto& name : table->columns) slot->column_prefixes.push_back(JsonWriter::member_prefix(name));
    std::string db = ",\"db\":\"";
    append_json_escaped(db, table->id.database);
    db += '"';
    std::string tbl = ",\"table\":\"";
    append_json_escaped(tbl, table->id.table);
    tbl += '"';
    std::string schema = ",\"schema\":\"";
    append_json_escaped(schema, table->id.schema);
    schema += '"';
    slot->source_table = db + schema + tbl;
    slot->source_table_no_schema = db + tbl;
  }
  last_table_ = table.get();
  last_fragments_ = slot.get();
  return *slot;
}

bool EnvelopeSerializer::write_key(const TableSchema& table, const Row& image, std::string& out) {
  if (table.key_columns.empty()) return false;
  out.push_back('{');
  // The escaped "name": fragments of the table's columns, when the last envelope was of this table (the
  // publisher writes a key and then its envelope, so this is the common case).
  const TableFragments* f = &table == last_table_ ? last_fragments_ : nullptr;
  bool first = true;
  for (const size_t index : table.key_columns) {
    if (!first) out.push_back(',');
    first = false;
    if (f != nullptr && index < f->column_prefixes.size()) {
      out.append(f->column_prefixes[index]);
    } else {
      out.push_back('"');
      append_json_escaped(out, table.columns[index]);
      out.append("\":");
    }
    if (index < image.size()) {
      write_json_value(image[index], out);
    } else {
      write_json_value(Value(Unavailable{}), out);
    }
  }
  out.push_back('}');
  return true;
}

void EnvelopeSerializer::write_row(const TableFragments& f, const Row& row, std::string& out) {
  out.push_back('{');
  const size_t n = std::min(row.size(), f.column_prefixes.size());
  for (size_t i = 0; i < n; ++i) {
    if (i) out.push_back(',');
    out.append(f.column_prefixes[i]);
    write_json_value(row[i], out);
  }
  out.push_back('}');
}


void EnvelopeSerializer::write_source(const ChangeEvent& event, const TableFragments& f, std::string& out) {
  JsonWriter w(out);
  const SourceInfo& s = event.source;
  out.append(source_prefix_[static_cast<size_t>(s.connector)]);
  w.integer(s.commit_ts_ms);
  out.append(",\"snapshot\":\"");
  out.append(snapshot_text(event.snapshot));
  out.push_back('"');
  switch (s.connector) {
    case ConnectorKind::Postgres:
      out.append(f.source_table);
      out.append(",\"txId\":");
      if (s.txid) w.unsigned_integer(*s.txid); else w.null();
      out.append(",\"lsn\":");
      if (s.lsn) w.unsigned_integer(*s.lsn); else w.null();
      out.append(",\"commit_lsn\":");
      if (s.commit_lsn) w.unsigned_integer(*s.commit_lsn); else w.null();
      break;
    case ConnectorKind::MySql:
      out.append(f.source_table_no_schema);
      out.append(",\"server_id\":");
      w.unsigned_integer(s.server_id);
      out.append(",\"gtid\":");
      if (s.gtid.empty()) w.null(); else w.string(s.gtid);
      out.append(",\"file\":");
      w.string(s.file);
      out.append(",\"pos\":");
      w.unsigned_integer(s.pos);
      out.append(",\"row\":");
      w.unsigned_integer(s.row);
      break;
    case ConnectorKind::Generator:
      out.append(f.source_table_no_schema);
      out.append(",\"sequence\":");
      if (s.sequence) w.unsigned_integer(*s.sequence); else w.null();
      break;
  }
  out.push_back('}');
}

void EnvelopeSerializer::write_value(const ChangeEvent& event, std::string& out, int64_t now_ms,
                                     const TransactionBlock* transaction) {
  write_value(event, event.op, event.before ? &*event.before : nullptr, event.after ? &*event.after : nullptr, out,
              now_ms, transaction);
}

void EnvelopeSerializer::write_value(const ChangeEvent& event, Op op, const Row* before, const Row* after,
                                     std::string& out, int64_t now_ms, const TransactionBlock* transaction) {
  const TableFragments& f = fragments(event.table);
  out.append("{\"before\":");
  if (before) {
    write_row(f, *before, out);
  } else {
    out.append("null");
  }
  out.append(",\"after\":");
  if (after) {
    write_row(f, *after, out);
  } else {
    out.append("null");
  }
  write_source(event, f, out);
  out.append(",\"op\":\"");
  out.push_back(static_cast<char>(op));
  out.append("\",\"ts_ms\":");
  JsonWriter(out).integer(now_ms);
  if (!transaction) {
    out.append(",\"transaction\":null}");
    return;
  }
  JsonWriter w(out);
  out.append(",\"transaction\":{\"id\":");
  w.string(transaction->id);
  out.append(",\"total_order\":");
  w.unsigned_integer(transaction->total_order);
  out.append(",\"data_collection_order\":");
  w.unsigned_integer(transaction->data_collection_order);
  out.append("}}");
}

void EnvelopeSerializer::write_flat_value(const ChangeEvent& event, Op op, const Row& row, const FlatFields& fields,
                                          std::string& out, int64_t now_ms) {
  const size_t start = out.size();
  write_row(fragments(event.table), row, out);
  out.pop_back();  // the row's closing brace: the added fields follow its columns
  bool empty = out.size() == start + 1;
  JsonWriter w(out);
  const auto field = [&](const char* name) {
    out.append(empty ? "\"" : ",\"");
    out.append(name);
    out.append("\":");
    empty = false;
  };
  const TableId& id = event.table->id;
  if (fields.op) {
    field("__op");
    out.push_back('"');
    out.push_back(static_cast<char>(op));
    out.push_back('"');
  }
  if (fields.table) {
    field("__table");
    w.string(id.table);
  }
  if (fields.db) {
    field("__db");
    w.string(id.database);
  }
  if (fields.schema) {
    field("__schema");
    if (id.schema.empty()) {
      w.null();
    } else {
      w.string(id.schema);
    }
  }
  if (fields.source_ts_ms) {
    field("__source_ts_ms");
    w.integer(event.source.commit_ts_ms);
  }
  if (fields.ts_ms) {
    field("__ts_ms");
    w.integer(now_ms);
  }
  if (fields.deleted) {
    field("__deleted");
    out.append(op == Op::Delete ? "\"true\"" : "\"false\"");
  }
  out.push_back('}');
}

}  // namespace tidemark
