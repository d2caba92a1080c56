#include "source/mysql/result_value_parser.hpp"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <array>
#include <charconv>
#include <cstring>

#include "core/civil_time.hpp"
#include "source/mysql/binlog_constants.hpp"
#include "source/mysql/charset.hpp"
#include "source/mysql/row_decoder.hpp"

namespace tidemark::mysql {

namespace {

constexpr int64_t kMicrosPerSecond = 1'000'000;
constexpr int64_t kMicrosPerDay = 86'400LL * kMicrosPerSecond;

bool is_blob_type(enum_field_types t) {
  return t == MYSQL_TYPE_TINY_BLOB || t == MYSQL_TYPE_MEDIUM_BLOB || t == MYSQL_TYPE_LONG_BLOB || t == MYSQL_TYPE_BLOB;
}

// The decoder's rule (row_decoder.cpp valid_calendar_date), repeated here: a date no calendar has (zero
// month or day) is a "zero date".
bool valid_calendar_date(int64_t year, unsigned month, unsigned day) {
  if (month < 1 || month > 12 || day < 1) return false;
  static constexpr std::array<unsigned, 12> kDays = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (day > kDays[month - 1]) return false;
  if (month == 2 && day == 29) return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return true;
}

// Debezium's rule, as the decoder applies it: Null when the column is nullable, otherwise the epoch.
template <typename T>
Value zero_date(const ResultColumn& column) {
  if (column.nullable) return Null{};
  return T{};
}

int64_t time_of_day_micros(const MYSQL_TIME& t) {
  return (static_cast<int64_t>(t.hour) * 3600 + t.minute * 60 + t.second) * kMicrosPerSecond +
         static_cast<int64_t>(t.second_part);
}

Value temporal_value(const ResultColumn& column, const MYSQL_TIME& t) {
  switch (column.type) {
    case MYSQL_TYPE_TIME:
    case MYSQL_TYPE_TIME2: {
      // libmariadb may split hours beyond a day into `day`; TIME counts them as hours either way.
      const int64_t hours = static_cast<int64_t>(t.day) * 24 + t.hour;
      const int64_t micros = (hours * 3600 + t.minute * 60 + t.second) * kMicrosPerSecond + static_cast<int64_t>(t.second_part);
      return Time{t.neg ? -micros : micros};
    }
    case MYSQL_TYPE_DATE:
    case MYSQL_TYPE_NEWDATE:
      if (!valid_calendar_date(t.year, t.month, t.day)) return zero_date<Date>(column);
      return Date{static_cast<int32_t>(days_from_civil(t.year, t.month, t.day))};
    case MYSQL_TYPE_TIMESTAMP:
    case MYSQL_TYPE_TIMESTAMP2:
      // The session's time_zone is +00:00, so the fields are the stored UTC instant.
      if (!valid_calendar_date(t.year, t.month, t.day)) return zero_date<TimestampTz>(column);
      return TimestampTz{days_from_civil(t.year, t.month, t.day) * kMicrosPerDay + time_of_day_micros(t)};
    default:  // DATETIME
      if (!valid_calendar_date(t.year, t.month, t.day)) return zero_date<Timestamp>(column);
      return Timestamp{days_from_civil(t.year, t.month, t.day) * kMicrosPerDay + time_of_day_micros(t)};
  }
}

// MySQL's DECIMAL text: optional '-', digits, optionally '.' and digits (what mysql_decimal writes).
bool decimal_text(const std::string& s) {
  size_t i = s.starts_with('-') ? 1 : 0;
  const size_t digits_start = i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  if (i == digits_start) return false;
  if (i == s.size()) return true;
  if (s[i] != '.') return false;
  const size_t fraction_start = ++i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  return i == s.size() && i > fraction_start;
}

bool extended_value(const ResultColumn& column, const std::string& text, Value& out, std::string& error) {
  switch (column.extended) {
    case ExtendedType::Uuid: {
      Uuid u;
      if (!parse_uuid(text, u)) {
        error = "UUID text '" + text.substr(0, 64) + "' is not a UUID";
        return false;
      }
      out = u;
      return true;
    }
    case ExtendedType::Inet4: {
      // Reprinted the way the decoder prints the 4 stored bytes.
      unsigned char b[4];
      if (inet_pton(AF_INET, text.c_str(), b) != 1) {
        error = "INET4 text '" + text.substr(0, 64) + "' is not an IPv4 address";
        return false;
      }
      out = std::to_string(b[0]) + "." + std::to_string(b[1]) + "." + std::to_string(b[2]) + "." + std::to_string(b[3]);
      return true;
    }
    case ExtendedType::Inet6: {
      // Reprinted with inet_ntop, as the decoder prints the 16 stored bytes.
      unsigned char b[16];
      char buf[INET6_ADDRSTRLEN];
      if (inet_pton(AF_INET6, text.c_str(), b) != 1 || inet_ntop(AF_INET6, b, buf, sizeof buf) == nullptr) {
        error = "INET6 text '" + text.substr(0, 64) + "' is not an IPv6 address";
        return false;
      }
      out = std::string(buf);
      return true;
    }
    case ExtendedType::Json: {
      std::string doc;
      append_valid_utf8(doc, text);
      out = Json{std::move(doc)};
      return true;
    }
    case ExtendedType::None: break;
  }
  return false;
}

bool bytes_value(const ResultColumn& column, const std::string& bytes, Value& out, std::string& error) {
  switch (column.type) {
    case MYSQL_TYPE_NEWDECIMAL:
    case MYSQL_TYPE_DECIMAL:
      if (!decimal_text(bytes)) {
        error = "DECIMAL text '" + bytes.substr(0, 80) + "' is not a decimal";
        return false;
      }
      out = Decimal{bytes};
      return true;
    case MYSQL_TYPE_BIT:
      if (column.bits == 1) {
        out = !bytes.empty() && bytes.back() != 0;
      } else {
        out = Bytes{bytes};
      }
      return true;
    case MYSQL_TYPE_GEOMETRY: out = Bytes{bytes}; return true;
    case MYSQL_TYPE_JSON: {  // MySQL 8: the server's text of the document
      std::string doc;
      append_valid_utf8(doc, bytes);
      out = Json{std::move(doc)};
      return true;
    }
    default: break;
  }
  if (column.extended != ExtendedType::None) return extended_value(column, bytes, out, error);
  // Byte strings, as the decoder's text_or_bytes decides: the binary collation, or no collation for the
  // BLOB types.
  if (column.collation == kBinaryCollation || (column.collation == 0 && is_blob_type(column.type))) {
    out = Bytes{bytes};
  } else {
    out = to_utf8(bytes, column.collation);
  }
  return true;
}

std::string hex(const std::string& bytes) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return out;
}

// Exact round-trip text of a double with an exponent, so the server reads it as a DOUBLE literal.
std::string double_text(double d) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  return std::string(buf, r.ptr);
}

void append_padded(std::string& out, uint64_t v, int width) {
  std::string digits = std::to_string(v);
  if (static_cast<int>(digits.size()) < width) out.append(static_cast<size_t>(width) - digits.size(), '0');
  out += digits;
}

// The server's text of a temporal value (fraction only when not zero), zero dates included.
std::string temporal_text(const ResultColumn& column, const MYSQL_TIME& t) {
  std::string out;
  const bool time_only = column.type == MYSQL_TYPE_TIME || column.type == MYSQL_TYPE_TIME2;
  if (time_only) {
    if (t.neg) out.push_back('-');
    append_padded(out, static_cast<uint64_t>(t.day) * 24 + t.hour, 2);
  } else {
    append_padded(out, t.year, 4);
    out.push_back('-');
    append_padded(out, t.month, 2);
    out.push_back('-');
    append_padded(out, t.day, 2);
    if (column.type == MYSQL_TYPE_DATE || column.type == MYSQL_TYPE_NEWDATE) return out;
    out.push_back(' ');
    append_padded(out, t.hour, 2);
  }
  out.push_back(':');
  append_padded(out, t.minute, 2);
  out.push_back(':');
  append_padded(out, t.second, 2);
  if (t.second_part != 0) {
    out.push_back('.');
    append_padded(out, t.second_part, 6);
  }
  return out;
}

// ENUM: the member's index (0 for the error value ''); SET: the bits of its members. Both compare and
// sort by these numbers, not by their text.
bool enum_set_number(const ResultColumn& column, const std::string& text, std::string& out, std::string& error) {
  auto index_of = [&](std::string_view member) -> size_t {
    for (size_t i = 0; i < column.members.size(); ++i)
      if (column.members[i] == member) return i + 1;
    return 0;
  };
  if (column.is_enum) {
    const size_t index = text.empty() ? 0 : index_of(text);
    if (index == 0 && !text.empty()) {
      error = "ENUM value '" + text + "' is not a member of the column";
      return false;
    }
    out = std::to_string(index);
    return true;
  }
  uint64_t bits = 0;
  std::string_view rest(text);
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view member = rest.substr(0, comma);
    const size_t index = index_of(member);
    if (index == 0 || index > 64) {
      error = "SET value '" + text + "' has a member the column does not list";
      return false;
    }
    bits |= uint64_t{1} << (index - 1);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  out = std::to_string(bits);
  return true;
}

}  // namespace

ResultColumn result_column(const MYSQL_FIELD& field, const CatalogColumn& catalog) {
  ResultColumn c;
  c.type = field.type;
  c.is_unsigned = (field.flags & UNSIGNED_FLAG) != 0;
  c.nullable = (field.flags & NOT_NULL_FLAG) == 0;
  c.is_enum = (field.flags & ENUM_FLAG) != 0 || field.type == MYSQL_TYPE_ENUM || catalog.data_type == "enum";
  c.is_set = (field.flags & SET_FLAG) != 0 || field.type == MYSQL_TYPE_SET || catalog.data_type == "set";
  c.bits = field.length;
  c.collation = catalog.collation;
  if (catalog.data_type == "uuid") c.extended = ExtendedType::Uuid;
  else if (catalog.data_type == "inet4") c.extended = ExtendedType::Inet4;
  else if (catalog.data_type == "inet6") c.extended = ExtendedType::Inet6;
  else if (catalog.json && field.type != MYSQL_TYPE_JSON) c.extended = ExtendedType::Json;
  if (c.is_enum || c.is_set) c.members = parse_enum_members(catalog.column_type);
  return c;
}

WireKind wire_kind(enum_field_types type) {
  switch (type) {
    case MYSQL_TYPE_TINY:
    case MYSQL_TYPE_SHORT:
    case MYSQL_TYPE_INT24:
    case MYSQL_TYPE_LONG:
    case MYSQL_TYPE_LONGLONG:
    case MYSQL_TYPE_YEAR: return WireKind::Integer;
    case MYSQL_TYPE_FLOAT: return WireKind::Float;
    case MYSQL_TYPE_DOUBLE: return WireKind::Double;
    case MYSQL_TYPE_DATE:
    case MYSQL_TYPE_NEWDATE:
    case MYSQL_TYPE_TIME:
    case MYSQL_TYPE_TIME2:
    case MYSQL_TYPE_DATETIME:
    case MYSQL_TYPE_DATETIME2:
    case MYSQL_TYPE_TIMESTAMP:
    case MYSQL_TYPE_TIMESTAMP2: return WireKind::Temporal;
    default: return WireKind::Bytes;
  }
}

bool parse_result_value(const ResultColumn& column, const WireValue& wire, Value& out, std::string& error) {
  if (wire.is_null) {
    out = Null{};
    return true;
  }
  switch (wire_kind(column.type)) {
    case WireKind::Integer:
      // As the decoder: only BIGINT UNSIGNED is uint64; every other integer (and YEAR) fits an int64.
      if (column.type == MYSQL_TYPE_LONGLONG && column.is_unsigned) {
        out = wire.integer;
      } else {
        out = static_cast<int64_t>(wire.integer);
      }
      return true;
    case WireKind::Float: out = float_as_double(wire.f); return true;
    case WireKind::Double: out = wire.d; return true;
    case WireKind::Temporal: out = temporal_value(column, wire.time); return true;
    case WireKind::Bytes: return bytes_value(column, wire.bytes, out, error);
  }
  return false;
}

KeyLiteral key_literal_kind(const CatalogColumn& catalog) {
  static constexpr const char* kNumbers[] = {"tinyint", "smallint", "mediumint", "int", "bigint", "decimal",
                                             "float", "double", "year", "enum", "set"};
  for (const char* n : kNumbers)
    if (catalog.data_type == n) return KeyLiteral::Number;
  if (catalog.data_type == "bit") return KeyLiteral::Bits;
  if (catalog.collation == kBinaryCollation) return KeyLiteral::Hex;
  return KeyLiteral::String;
}

bool result_key_text(const ResultColumn& column, const WireValue& wire, std::optional<std::string>& out,
                     std::string& error) {
  out.reset();
  if (wire.is_null) return true;
  switch (wire_kind(column.type)) {
    case WireKind::Integer:
      out = column.type == MYSQL_TYPE_LONGLONG && column.is_unsigned ? std::to_string(wire.integer)
                                                                     : std::to_string(static_cast<int64_t>(wire.integer));
      return true;
    case WireKind::Float: out = double_text(static_cast<double>(wire.f)); return true;
    case WireKind::Double: out = double_text(wire.d); return true;
    case WireKind::Temporal: out = temporal_text(column, wire.time); return true;
    case WireKind::Bytes: break;
  }
  if (column.type == MYSQL_TYPE_BIT || column.type == MYSQL_TYPE_GEOMETRY ||
      (column.extended == ExtendedType::None && column.collation == kBinaryCollation)) {
    out = hex(wire.bytes);
    return true;
  }
  if (column.is_enum || column.is_set) {
    std::string number;
    if (!enum_set_number(column, to_utf8(wire.bytes, column.collation), number, error)) return false;
    out = std::move(number);
    return true;
  }
  Value v;
  if (!parse_result_value(column, wire, v, error)) return false;
  if (const auto* s = std::get_if<std::string>(&v.v)) {
    out = *s;
  } else {
    out = wire.bytes;  // DECIMAL, UUID: the server's text
  }
  return true;
}

}  // namespace tidemark::mysql
