#include "source/mysql/row_decoder.hpp"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <array>
#include <bit>
#include <charconv>
#include <cstring>
#include <string>
#include <system_error>

#include "core/civil_time.hpp"
#include "source/mysql/charset.hpp"
#include "source/mysql/mysql_decimal.hpp"

namespace tidemark::mysql {

namespace {

constexpr int64_t kMicrosPerSecond = 1'000'000;
constexpr int64_t kMicrosPerDay = 86'400LL * kMicrosPerSecond;

// ---- STRING / ENUM / SET metadata -------------------------------------------------------------------------

struct StringLayout {
  ColumnType real = ColumnType::String;
  size_t length = 0;  // STRING: max length in bytes; ENUM/SET: storage bytes
};

// ColumnDef::meta of a STRING/ENUM/SET column is either already resolved (the length, < 0x100 for ENUM/SET
// and < 0x400 for STRING) or the raw two metadata bytes of TABLE_MAP (real_type << 8 | length, where for
// lengths > 255 two bits of the length are stored inverted in bits 4..5 of real_type). Both are accepted:
// real_type bytes are >= 0xc0, so the raw form is >= 0xc000.
StringLayout string_layout(const ColumnDef& column) {
  StringLayout l;
  l.real = column.type;
  if (column.meta >= 0xc000) {
    const unsigned byte0 = column.meta >> 8;
    const unsigned byte1 = column.meta & 0xFF;
    if ((byte0 & 0x30) != 0x30) {
      l.length = byte1 | (((byte0 & 0x30) ^ 0x30) << 4);
      l.real = static_cast<ColumnType>(byte0 | 0x30);
    } else {
      l.length = byte1;
      l.real = static_cast<ColumnType>(byte0);
    }
    if (column.type != ColumnType::String) l.real = column.type;  // ENUM/SET already resolved
  } else {
    l.length = column.meta;
  }
  return l;
}

// ---- temporal -----------------------------------------------------------------------------------------------

bool valid_calendar_date(int64_t year, unsigned month, unsigned day) {
  if (month < 1 || month > 12 || day < 1) return false;
  static constexpr std::array<unsigned, 12> kDays = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (day > kDays[month - 1]) return false;
  if (month == 2 && day == 29) {
    const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return leap;
  }
  return true;
}

// Zero dates ('0000-00-00') and dates with a zero (or otherwise impossible) month or day, which MySQL
// stores in some SQL modes: Null when the column is nullable, otherwise the epoch (Debezium's rule).
template <typename T>
void zero_date(const ColumnDef& column, Value& out) {
  if (column.nullable) {
    out = Null{};
  } else {
    out = T{};
  }
}

// Fractional seconds of TIME2/DATETIME2/TIMESTAMP2: fsp 1-2 -> 1 byte (hundredths), 3-4 -> 2 bytes
// (1/10000), 5-6 -> 3 bytes (micros); big-endian. `is_signed` for TIME2, whose fraction is signed.
size_t fraction_bytes(unsigned fsp) { return (fsp + 1) / 2; }

bool check_fsp(BinlogCursor& c, unsigned fsp) {
  if (fsp > 6) return c.fail("invalid fractional seconds precision " + std::to_string(fsp) + " (0..6)");
  return true;
}

bool read_time2(BinlogCursor& c, unsigned fsp, int64_t& micros) {
  if (!check_fsp(c, fsp)) return false;
  constexpr int64_t kIntOffset = 0x800000;
  constexpr int64_t kOffset = 0x800000000000LL;
  int64_t packed = 0;  // (int part << 24) + microseconds, signed
  const size_t start = c.offset();
  uint64_t v = 0;
  if (fsp >= 5) {
    if (!c.read_uint_be(6, v, "TIME2")) return false;
    packed = static_cast<int64_t>(v) - kOffset;
  } else {
    if (!c.read_uint_be(3, v, "TIME2")) return false;
    int64_t intpart = static_cast<int64_t>(v) - kIntOffset;
    int64_t frac = 0;
    if (fsp >= 1) {
      uint64_t f = 0;
      const size_t n = fraction_bytes(fsp);
      if (!c.read_uint_be(n, f, "TIME2 fraction")) return false;
      // Negative values: the fraction counts down from the next integer (as MySQL's
      // my_time_packed_from_binary reads it).
      frac = static_cast<int64_t>(f);
      if (intpart < 0 && frac != 0) {
        ++intpart;
        frac -= n == 1 ? 0x100 : 0x10000;
      }
      const int64_t limit = n == 1 ? 100 : 10000;
      if (frac <= -limit || frac >= limit) return c.fail("invalid TIME2 fraction at offset " + std::to_string(start));
      frac *= n == 1 ? 10000 : 100;
    }
    packed = intpart * (int64_t{1} << 24) + frac;
  }
  const bool negative = packed < 0;
  const uint64_t a = negative ? static_cast<uint64_t>(-packed) : static_cast<uint64_t>(packed);
  const uint64_t hms = a >> 24;
  const uint64_t frac = a & 0xFFFFFF;
  const uint64_t hour = (hms >> 12) & 0x3FF;
  const uint64_t minute = (hms >> 6) & 0x3F;
  const uint64_t second = hms & 0x3F;
  if (minute > 59 || second > 59 || frac >= 1'000'000) {
    return c.fail("invalid TIME2 value at offset " + std::to_string(start));
  }
  const int64_t m = static_cast<int64_t>((hour * 3600 + minute * 60 + second) * 1'000'000 + frac);
  micros = negative ? -m : m;
  return true;
}

bool read_fraction_unsigned(BinlogCursor& c, unsigned fsp, int64_t& micros, const char* what) {
  micros = 0;
  if (fsp == 0) return true;
  const size_t n = fraction_bytes(fsp);
  uint64_t f = 0;
  if (!c.read_uint_be(n, f, what)) return false;
  static constexpr std::array<uint64_t, 4> kLimit = {0, 100, 10000, 1000000};
  static constexpr std::array<int64_t, 4> kScale = {0, 10000, 100, 1};
  if (f >= kLimit[n]) return c.fail(std::string("invalid ") + what + " " + std::to_string(f));
  micros = static_cast<int64_t>(f) * kScale[n];
  return true;
}

void date_value(const ColumnDef& column, int64_t year, unsigned month, unsigned day, Value& out) {
  if (!valid_calendar_date(year, month, day)) return zero_date<Date>(column, out);
  out = Date{static_cast<int32_t>(days_from_civil(year, month, day))};
}

void datetime_value(const ColumnDef& column, int64_t year, unsigned month, unsigned day, uint64_t hour,
                    uint64_t minute, uint64_t second, int64_t micros, Value& out) {
  if (!valid_calendar_date(year, month, day)) return zero_date<Timestamp>(column, out);
  const int64_t days = days_from_civil(year, month, day);
  out = Timestamp{days * kMicrosPerDay +
                  static_cast<int64_t>(hour * 3600 + minute * 60 + second) * kMicrosPerSecond + micros};
}

bool read_datetime2(BinlogCursor& c, const ColumnDef& column, Value& out) {
  const unsigned fsp = column.meta;
  if (!check_fsp(c, fsp)) return false;
  const size_t start = c.offset();
  uint64_t v = 0;
  if (!c.read_uint_be(5, v, "DATETIME2")) return false;
  int64_t micros = 0;
  if (!read_fraction_unsigned(c, fsp, micros, "DATETIME2 fraction")) return false;
  if (v < 0x8000000000ULL) return c.fail("invalid DATETIME2: negative value at offset " + std::to_string(start));
  const uint64_t intpart = v - 0x8000000000ULL;
  const uint64_t ymd = intpart >> 17;
  const uint64_t ym = ymd >> 5;
  const uint64_t hms = intpart & 0x1FFFF;
  const uint64_t hour = hms >> 12, minute = (hms >> 6) & 0x3F, second = hms & 0x3F;
  if (hour > 23 || minute > 59 || second > 59) return c.fail("invalid DATETIME2 time of day at offset " + std::to_string(start));
  datetime_value(column, static_cast<int64_t>(ym / 13), static_cast<unsigned>(ym % 13), static_cast<unsigned>(ymd & 0x1F),
                 hour, minute, second, micros, out);
  return true;
}

bool read_timestamp_value(BinlogCursor& c, const ColumnDef& column, bool v2, Value& out) {
  uint64_t seconds = 0;
  int64_t micros = 0;
  if (v2) {
    if (!check_fsp(c, column.meta)) return false;
    if (!c.read_uint_be(4, seconds, "TIMESTAMP2")) return false;
    if (!read_fraction_unsigned(c, column.meta, micros, "TIMESTAMP2 fraction")) return false;
  } else {
    uint32_t s = 0;
    if (!c.read_u32(s, "TIMESTAMP")) return false;
    seconds = s;
  }
  if (seconds == 0 && micros == 0) {
    zero_date<TimestampTz>(column, out);  // '0000-00-00 00:00:00' (1970-01-01 00:00:00 UTC is out of range)
  } else {
    out = TimestampTz{static_cast<int64_t>(seconds) * kMicrosPerSecond + micros};
  }
  return true;
}

// ---- strings ------------------------------------------------------------------------------------------------

bool read_length_prefixed(BinlogCursor& c, size_t prefix_bytes, std::string_view& out, const char* what) {
  uint64_t n = 0;
  const size_t start = c.offset();
  if (!c.read_uint(prefix_bytes, n, what)) return false;
  if (n > c.remaining()) {
    return c.fail(std::string(what) + " length " + std::to_string(n) + " at offset " + std::to_string(start) +
                  " exceeds the " + std::to_string(c.remaining()) + " bytes left");
  }
  return c.read_bytes(static_cast<size_t>(n), out, what);
}

void text_or_bytes(const ColumnDef& column, std::string_view bytes, bool binary_default, Value& out) {
  const bool binary = column.collation == kBinaryCollation || (column.collation == 0 && binary_default);
  if (binary) {
    out = Bytes{std::string(bytes)};
  } else {
    out = to_utf8(bytes, column.collation);
  }
}

bool fixed_binary(BinlogCursor& c, const ColumnDef& column, std::string_view bytes, size_t length, Value& out) {
  // BINARY(n) values are logged without their trailing zero bytes: put them back.
  std::string data(bytes);
  if (data.size() < length) data.resize(length, '\0');
  switch (column.extended) {
    case ExtendedType::Uuid: {
      if (data.size() != 16) return c.fail("UUID value of " + std::to_string(data.size()) + " bytes (expected 16)");
      Uuid u;
      std::memcpy(u.bytes.data(), data.data(), 16);
      out = u;
      return true;
    }
    case ExtendedType::Inet4: {
      if (data.size() != 4) return c.fail("INET4 value of " + std::to_string(data.size()) + " bytes (expected 4)");
      const auto* b = reinterpret_cast<const unsigned char*>(data.data());
      out = std::to_string(b[0]) + "." + std::to_string(b[1]) + "." + std::to_string(b[2]) + "." + std::to_string(b[3]);
      return true;
    }
    case ExtendedType::Inet6: {
      if (data.size() != 16) return c.fail("INET6 value of " + std::to_string(data.size()) + " bytes (expected 16)");
      char buf[INET6_ADDRSTRLEN];
      if (inet_ntop(AF_INET6, data.data(), buf, sizeof buf) == nullptr) return c.fail("INET6 value not printable");
      out = std::string(buf);
      return true;
    }
    default: out = Bytes{std::move(data)}; return true;
  }
}

bool read_enum(BinlogCursor& c, const ColumnDef& column, size_t storage, Value& out) {
  if (storage != 1 && storage != 2) return c.fail("invalid ENUM storage size " + std::to_string(storage));
  uint64_t index = 0;
  if (!c.read_uint(storage, index, "ENUM")) return false;
  if (index == 0) {
    out = std::string();  // the "error" member '' that MySQL stores for invalid values
    return true;
  }
  if (index > column.enum_values.size()) {
    return c.fail("ENUM index " + std::to_string(index) + " out of range: the column has " +
                  std::to_string(column.enum_values.size()) + " members" +
                  (column.enum_values.empty() ? " (no member list: needs binlog_row_metadata=FULL or the schema)" : ""));
  }
  out = column.enum_values[static_cast<size_t>(index - 1)];
  return true;
}

bool read_set(BinlogCursor& c, const ColumnDef& column, size_t storage, Value& out) {
  if (storage < 1 || storage > 8) return c.fail("invalid SET storage size " + std::to_string(storage));
  uint64_t bits = 0;
  if (!c.read_uint(storage, bits, "SET")) return false;
  std::string text;
  for (size_t i = 0; i < 64 && bits != 0; ++i) {
    if ((bits & (uint64_t{1} << i)) == 0) continue;
    bits &= ~(uint64_t{1} << i);
    if (i >= column.enum_values.size()) {
      return c.fail("SET member bit " + std::to_string(i) + " out of range: the column has " +
                    std::to_string(column.enum_values.size()) + " members" +
                    (column.enum_values.empty() ? " (no member list: needs binlog_row_metadata=FULL or the schema)" : ""));
    }
    if (!text.empty()) text.push_back(',');
    text += column.enum_values[i];
  }
  out = std::move(text);
  return true;
}

}  // namespace

bool decode_column_value(BinlogCursor& c, const ColumnDef& column, Value& out) {
  switch (column.type) {
    case ColumnType::Tiny:
    case ColumnType::Short:
    case ColumnType::Int24:
    case ColumnType::Long:
    case ColumnType::LongLong: {
      const size_t n = column.type == ColumnType::Tiny    ? 1
                       : column.type == ColumnType::Short ? 2
                       : column.type == ColumnType::Int24 ? 3
                       : column.type == ColumnType::Long  ? 4
                                                          : 8;
      uint64_t v = 0;
      if (!c.read_uint(n, v, "integer")) return false;
      if (column.is_unsigned) {
        if (n == 8) {
          out = v;
        } else {
          out = static_cast<int64_t>(v);
        }
      } else if (n == 8) {
        out = static_cast<int64_t>(v);
      } else {
        const unsigned shift = static_cast<unsigned>(64 - 8 * n);
        out = static_cast<int64_t>(v << shift) >> shift;  // sign-extend
      }
      return true;
    }
    case ColumnType::Float: {
      uint32_t v = 0;
      if (!c.read_u32(v, "FLOAT")) return false;
      out = float_as_double(std::bit_cast<float>(v));
      return true;
    }
    case ColumnType::Double: {
      uint64_t v = 0;
      if (!c.read_u64(v, "DOUBLE")) return false;
      out = std::bit_cast<double>(v);
      return true;
    }
    case ColumnType::NewDecimal: {
      std::string text;
      if (!read_mysql_decimal(c, column.meta >> 8, column.meta & 0xFF, text)) return false;
      out = Decimal{std::move(text)};
      return true;
    }
    case ColumnType::Decimal: return c.fail("pre-5.0 DECIMAL is not supported");
    case ColumnType::Null: out = Null{}; return true;
    case ColumnType::Year: {
      uint8_t v = 0;
      if (!c.read_u8(v, "YEAR")) return false;
      out = static_cast<int64_t>(v == 0 ? 0 : 1900 + v);
      return true;
    }
    case ColumnType::Bit: {
      const size_t nbits = static_cast<size_t>(column.meta >> 8) * 8 + (column.meta & 0xFF);
      std::string_view b;
      if (!c.read_bytes((nbits + 7) / 8, b, "BIT")) return false;
      if (nbits == 1) {
        out = b[0] != 0;
      } else {
        out = Bytes{std::string(b)};
      }
      return true;
    }
    case ColumnType::Date:
    case ColumnType::NewDate: {
      uint32_t v = 0;
      if (!c.read_u24(v, "DATE")) return false;
      date_value(column, v >> 9, (v >> 5) & 0x0F, v & 0x1F, out);
      return true;
    }
    case ColumnType::Time: {
      uint32_t v = 0;
      if (!c.read_u24(v, "TIME")) return false;
      int64_t s = static_cast<int32_t>(v << 8) >> 8;  // signed 24-bit HHMMSS
      const bool negative = s < 0;
      if (negative) s = -s;
      const int64_t seconds = (s / 10000) * 3600 + (s / 100 % 100) * 60 + s % 100;
      out = Time{(negative ? -seconds : seconds) * kMicrosPerSecond};
      return true;
    }
    case ColumnType::Time2: {
      int64_t micros = 0;
      if (!read_time2(c, column.meta, micros)) return false;
      out = Time{micros};
      return true;
    }
    case ColumnType::DateTime: {
      uint64_t v = 0;
      if (!c.read_u64(v, "DATETIME")) return false;
      const uint64_t d = v / 1000000, t = v % 1000000;
      // YYYYMMDDhhmmss in 8 bytes could say year 1.8e9, whose microseconds overflow int64.
      if (d / 10000 > 9999) return c.fail("invalid DATETIME " + std::to_string(v) + ": year beyond 9999");
      datetime_value(column, static_cast<int64_t>(d / 10000), static_cast<unsigned>(d / 100 % 100),
                     static_cast<unsigned>(d % 100), t / 10000, t / 100 % 100, t % 100, 0, out);
      return true;
    }
    case ColumnType::DateTime2: return read_datetime2(c, column, out);
    case ColumnType::Timestamp: return read_timestamp_value(c, column, false, out);
    case ColumnType::Timestamp2: return read_timestamp_value(c, column, true, out);
    case ColumnType::Varchar:
    case ColumnType::VarString: {
      std::string_view b;
      if (!read_length_prefixed(c, column.meta < 256 ? 1 : 2, b, "VARCHAR")) return false;
      text_or_bytes(column, b, false, out);
      return true;
    }
    case ColumnType::String:
    case ColumnType::Enum:
    case ColumnType::Set: {
      const StringLayout l = string_layout(column);
      if (l.real == ColumnType::Enum) return read_enum(c, column, l.length, out);
      if (l.real == ColumnType::Set) return read_set(c, column, l.length, out);
      std::string_view b;
      if (!read_length_prefixed(c, l.length < 256 ? 1 : 2, b, "CHAR")) return false;
      if (column.extended != ExtendedType::None || column.collation == kBinaryCollation) {
        return fixed_binary(c, column, b, l.length, out);
      }
      text_or_bytes(column, b, false, out);
      return true;
    }
    case ColumnType::TinyBlob:
    case ColumnType::MediumBlob:
    case ColumnType::LongBlob:
    case ColumnType::Blob:
    case ColumnType::Geometry:
    case ColumnType::Json:
    case ColumnType::Vector: {
      const size_t prefix = column.meta;
      if (prefix < 1 || prefix > 4) return c.fail("invalid length-prefix size " + std::to_string(prefix) + " (1..4)");
      std::string_view b;
      if (!read_length_prefixed(c, prefix, b, "BLOB")) return false;
      if (column.type == ColumnType::Json) {
        std::string text, error;
        if (!json_binary_to_text(b, text, error)) return c.fail("binary JSON: " + error);
        out = Json{std::move(text)};
      } else if (column.type == ColumnType::Geometry || column.type == ColumnType::Vector) {
        out = Bytes{std::string(b)};
      } else if (column.extended == ExtendedType::Json) {
        std::string text;
        append_valid_utf8(text, b);
        out = Json{std::move(text)};
      } else {
        text_or_bytes(column, b, true, out);
      }
      return true;
    }
    default:
      return c.fail("unsupported column type " + std::to_string(static_cast<unsigned>(column.type)));
  }
}

namespace {

bool bit_set(std::string_view bitmap, size_t i) {
  return (static_cast<unsigned char>(bitmap[i / 8]) >> (i % 8)) & 1;
}

// One row image. `partial` for the after image of PARTIAL_UPDATE_ROWS.
bool read_image(BinlogCursor& c, const TableMap& table, std::string_view columns_bitmap, bool partial,
                Row& row, std::vector<PartialJson>& partial_json) {
  const size_t n = table.columns.size();
  std::string_view partial_bits;
  size_t json_columns = 0;
  if (partial) {
    uint64_t options = 0;
    if (!c.read_packed(options, "binlog_row_value_options")) return false;
    for (const auto& col : table.columns) json_columns += col.type == ColumnType::Json;
    if ((options & 1) != 0 && !c.read_bytes((json_columns + 7) / 8, partial_bits, "partial JSON bitmap")) return false;
  }
  size_t present = 0;
  for (size_t i = 0; i < n; ++i) present += bit_set(columns_bitmap, i);
  std::string_view nulls;
  if (!c.read_bytes((present + 7) / 8, nulls, "NULL bitmap")) return false;
  row.assign(n, Value{Unavailable{}});
  size_t k = 0;     // index among present columns
  size_t json = 0;  // index among JSON columns
  for (size_t i = 0; i < n; ++i) {
    const ColumnDef& col = table.columns[i];
    const bool is_partial = col.type == ColumnType::Json && !partial_bits.empty() && bit_set(partial_bits, json);
    if (col.type == ColumnType::Json) ++json;
    if (!bit_set(columns_bitmap, i)) continue;
    const bool is_null = bit_set(nulls, k++);
    if (is_null) {
      row[i] = Null{};
      continue;
    }
    const size_t start = c.offset();
    bool ok = false;
    if (is_partial) {
      std::string_view b;
      ok = col.meta >= 1 && col.meta <= 4 ? read_length_prefixed(c, col.meta, b, "JSON diff")
                                          : c.fail("invalid JSON length-prefix size " + std::to_string(col.meta));
      if (ok) {
        PartialJson pj{i, {}};
        std::string error;
        ok = decode_json_diffs(b, pj.diffs, error) || c.fail("JSON diff: " + error);
        if (ok) partial_json.push_back(std::move(pj));
      }
    } else {
      ok = decode_column_value(c, col, row[i]);
    }
    if (!ok) {
      std::string context = "column " + std::to_string(i);
      if (!col.name.empty()) context += " `" + col.name + "`";
      context += " (" + std::string(column_type_name(col.type)) + ", value at offset " + std::to_string(start) + "): ";
      c.prefix_failure(context);
      return false;
    }
  }
  return true;
}

}  // namespace

std::optional<DecodeError> decode_rows(const RowsEvent& event, const TableMap& table, std::vector<RowChange>& out) {
  BinlogCursor c(event.rows, event.rows_offset);
  const size_t n = table.columns.size();
  const size_t bitmap_bytes = (n + 7) / 8;
  auto fail = [&](std::string message) {
    c.fail(std::move(message));
    return c.error(event.event_type);
  };
  if (event.column_count != n) {
    return fail("rows event has " + std::to_string(event.column_count) + " columns, the table map of `" + table.database +
                "`.`" + table.table + "` has " + std::to_string(n));
  }
  const bool has_before = event.kind != RowsKind::Write;
  const bool has_after = event.kind != RowsKind::Delete;
  const bool two_images = event.kind == RowsKind::Update || event.kind == RowsKind::PartialUpdate;
  if (event.before_columns.size() < bitmap_bytes) {
    return fail("column bitmap of " + std::to_string(event.before_columns.size()) + " bytes for " + std::to_string(n) + " columns");
  }
  if (two_images && event.after_columns.size() < bitmap_bytes) {
    return fail("after-image column bitmap of " + std::to_string(event.after_columns.size()) + " bytes for " +
                std::to_string(n) + " columns");
  }
  size_t row_number = 0;
  while (!c.at_end()) {
    if (n == 0) return fail("rows of a table with no columns");
    const size_t row_start = c.offset();
    RowChange change;
    bool ok = true;
    if (has_before) ok = read_image(c, table, event.before_columns, false, change.before.emplace(), change.partial_json);
    if (ok && has_after) {
      ok = read_image(c, table, two_images ? event.after_columns : event.before_columns,
                      event.kind == RowsKind::PartialUpdate, change.after.emplace(), change.partial_json);
    }
    if (!ok) {
      c.prefix_failure("row " + std::to_string(row_number) + ": ");
      return c.error(event.event_type);
    }
    // Bitmaps that select no column make empty images: the loop would append rows forever.
    if (c.offset() == row_start) {
      return fail("row " + std::to_string(row_number) + ": the column bitmaps select no column, so the " +
                  std::to_string(c.remaining()) + " bytes left cannot be rows");
    }
    out.push_back(std::move(change));
    ++row_number;
  }
  return std::nullopt;
}

double float_as_double(float f) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, f);
  double d = 0;
  const auto p = std::from_chars(buf, r.ptr, d);
  if (p.ec != std::errc()) return static_cast<double>(f);
  return d;
}

}  // namespace tidemark::mysql
