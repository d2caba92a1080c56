#include "sink/database/sql_values.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <variant>

#include "core/civil_time.hpp"
#include "core/utf8.hpp"
#include "sink/envelope_serializer.hpp"
#include "sink/json_writer.hpp"

namespace tidemark::dbsink {

namespace {

using Error = std::optional<std::string>;

constexpr int64_t kMicrosPerSecond = 1'000'000;
constexpr int64_t kMicrosPerDay = 86'400 * kMicrosPerSecond;
// MySQL's TIME range: ±838:59:59 (fractions beyond it are out of range too).
constexpr int64_t kMySqlTimeMax = (838 * 3600 + 59 * 60 + 59) * kMicrosPerSecond;
// MySQL's TIMESTAMP range in UTC: 1970-01-01 00:00:01 to 2038-01-19 03:14:07.999999 (0 is the zero date).
constexpr int64_t kMySqlTimestampMin = kMicrosPerSecond;
constexpr int64_t kMySqlTimestampMax = 2'147'483'647 * kMicrosPerSecond + 999'999;

// What the target column's declared type says, as far as the rendering depends on it.
enum class Target : uint8_t {
  Unknown,  // no type given
  Other,    // a type this file has no rule for (PostgreSQL enums, inet, MySQL year...): the default literal
  Text,
  Boolean,  // PostgreSQL boolean
  Integer,
  Numeric,
  Float,
  Bytes,     // bytea; MySQL binary, varbinary, blobs
  Binary16,  // MySQL binary(16)
  Bits,
  Date,
  Time,
  TimeTz,
  Timestamp,
  TimestampTz,
  MySqlTimestamp,  // MySQL TIMESTAMP: a narrower range than DATETIME
  Interval,
  Json,
  Uuid,
  Array,  // PostgreSQL arrays
};

struct Source {
  ColumnKind kind = ColumnKind::Unknown;
  uint32_t length = 0;  // Bits: the declared number of bits
};

struct Ctx {
  Dialect dialect;
  std::string_view target_type;  // as given, for messages
  bool in_array = false;         // rendering an element of an array
  int fraction_digits = -1;      // a temporal column's fractional second digits; -1: not temporal
  int scale = -1;                // a decimal column's scale; -1: not decimal, or unlimited
};

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// The PostgreSQL element type of an array type ("integer[]" -> "integer"; format_type writes one [] for
// any number of dimensions, but "integer[][]" is stripped too).
std::string_view pg_element_type(std::string_view t) {
  while (ends_with(t, "[]")) t.remove_suffix(2);
  return trim(t);
}

Target classify_postgres(std::string_view t) {
  if (t.empty()) return Target::Unknown;
  if (ends_with(t, "[]")) return Target::Array;
  if (t == "boolean" || t == "bool") return Target::Boolean;
  if (t == "smallint" || t == "integer" || t == "bigint" || t == "int" || t == "int2" || t == "int4" ||
      t == "int8" || t == "oid")
    return Target::Integer;
  if (starts_with(t, "numeric") || starts_with(t, "decimal")) return Target::Numeric;
  if (t == "real" || t == "double precision" || t == "float4" || t == "float8" || starts_with(t, "float("))
    return Target::Float;
  if (t == "bytea") return Target::Bytes;
  if (t == "bit" || starts_with(t, "bit(") || starts_with(t, "bit varying") || starts_with(t, "varbit"))
    return Target::Bits;
  if (t == "date") return Target::Date;
  if (starts_with(t, "timestamp")) {
    return t == "timestamptz" || ends_with(t, "with time zone") ? Target::TimestampTz : Target::Timestamp;
  }
  if (starts_with(t, "time")) return t == "timetz" || ends_with(t, "with time zone") ? Target::TimeTz : Target::Time;
  if (starts_with(t, "interval")) return Target::Interval;
  if (t == "json" || t == "jsonb") return Target::Json;
  if (t == "uuid") return Target::Uuid;
  if (t == "text" || starts_with(t, "character") || starts_with(t, "varchar") || starts_with(t, "char(") ||
      t == "char" || starts_with(t, "bpchar") || t == "name" || t == "citext")
    return Target::Text;
  return Target::Other;
}

Target classify_mysql(std::string_view t) {
  if (t.empty()) return Target::Unknown;
  const std::string_view base = t.substr(0, t.find_first_of("( "));
  if (base == "tinyint" || base == "smallint" || base == "mediumint" || base == "int" || base == "integer" ||
      base == "bigint" || base == "bool" || base == "boolean")
    return Target::Integer;
  if (base == "decimal" || base == "numeric" || base == "dec" || base == "fixed") return Target::Numeric;
  if (base == "float" || base == "double" || base == "real") return Target::Float;
  if (base == "bit") return Target::Bits;
  if (starts_with(t, "binary(16)")) return Target::Binary16;
  if (base == "binary" || base == "varbinary" || base == "tinyblob" || base == "blob" || base == "mediumblob" ||
      base == "longblob")
    return Target::Bytes;
  // ENUM and SET columns take their members as text (a number would be a member's index).
  if (base == "char" || base == "varchar" || base == "tinytext" || base == "text" || base == "mediumtext" ||
      base == "longtext" || base == "enum" || base == "set")
    return Target::Text;
  if (base == "date") return Target::Date;
  if (base == "time") return Target::Time;
  if (base == "datetime") return Target::Timestamp;
  if (base == "timestamp") return Target::MySqlTimestamp;
  if (base == "json") return Target::Json;
  if (base == "uuid") return Target::Uuid;
  return Target::Other;
}

Target classify(Dialect dialect, std::string_view t) {
  return dialect == Dialect::Postgres ? classify_postgres(t) : classify_mysql(t);
}

// The `index`th number in the first parentheses of a type ("numeric(10,2)": 10, 2), or -1.
int type_parameter(std::string_view t, size_t index) {
  size_t at = t.find('(');
  if (at == std::string_view::npos) return -1;
  for (size_t i = 0; i <= index; ++i) {
    ++at;
    while (at < t.size() && t[at] == ' ') ++at;
    int n = 0;
    const auto r = std::from_chars(t.data() + at, t.data() + t.size(), n);
    if (r.ec != std::errc()) return -1;
    at = static_cast<size_t>(r.ptr - t.data());
    while (at < t.size() && t[at] == ' ') ++at;
    if (i == index) return n;
    if (at >= t.size() || t[at] != ',') return -1;
  }
  return -1;
}

// The fractional second digits a temporal column keeps: its (n), else 6 (PostgreSQL) or 0 (MySQL).
int fraction_digits(Dialect dialect, Target tgt, std::string_view t) {
  if (tgt != Target::Time && tgt != Target::TimeTz && tgt != Target::Timestamp && tgt != Target::TimestampTz &&
      tgt != Target::MySqlTimestamp)
    return -1;
  const int n = type_parameter(t, 0);
  return n >= 0 ? n : dialect == Dialect::MySql ? 0 : 6;
}

// The scale of a decimal column: numeric(p,s) s, numeric(p) 0; no parameters: unlimited (PostgreSQL) or
// 0 (MySQL's DECIMAL is DECIMAL(10,0)).
int decimal_scale(Dialect dialect, Target tgt, std::string_view t) {
  if (tgt != Target::Numeric) return -1;
  const int s = type_parameter(t, 1);
  if (s >= 0) return s;
  if (type_parameter(t, 0) >= 0) return 0;
  return dialect == Dialect::MySql ? 0 : -1;
}

Ctx make_ctx(Dialect dialect, std::string_view type, Target tgt, bool in_array) {
  Ctx c{dialect, type};
  c.in_array = in_array;
  c.fraction_digits = fraction_digits(dialect, tgt, type);
  c.scale = decimal_scale(dialect, tgt, type);
  return c;
}

// ---- small text helpers ----------------------------------------------------------------------------------

template <typename T>
void append_int(std::string& out, T v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, static_cast<size_t>(r.ptr - buf));
}

// `v` with at least `width` digits (zero-padded on the left).
void append_padded(std::string& out, uint64_t v, size_t width) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  const auto n = static_cast<size_t>(r.ptr - buf);
  if (n < width) out.append(width - n, '0');
  out.append(buf, n);
}

void append_two(std::string& out, unsigned v) {
  out.push_back(static_cast<char>('0' + v / 10));
  out.push_back(static_cast<char>('0' + v % 10));
}

// ".ffffff" when the fraction is not zero.
void append_fraction(std::string& out, uint64_t micros) {
  if (micros == 0) return;
  out.push_back('.');
  append_padded(out, micros, 6);
}

void append_hex(std::string& out, std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  const size_t at = out.size();
  out.resize(at + 2 * bytes.size());
  char* p = out.data() + at;
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    *p++ = kHex[b >> 4];
    *p++ = kHex[b & 0x0f];
  }
}

void append_double(std::string& out, double x) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  out.append(buf, static_cast<size_t>(r.ptr - buf));
}

// An integral double as integer digits (1e18 as 1000000000000000000); false beyond 64 bits.
bool append_integral(std::string& out, double x) {
  if (x >= -9223372036854775808.0 && x < 9223372036854775808.0) {
    append_int(out, static_cast<int64_t>(x));
    return true;
  }
  if (x >= 0 && x < 18446744073709551616.0) {
    append_int(out, static_cast<uint64_t>(x));
    return true;
  }
  return false;
}

// The decimal places a number's text needs ("1.250" 2, "1e-05" 5, "12" 0): digits after the point
// without trailing zeros, shifted by an exponent.
int64_t decimal_places(std::string_view s) {
  int64_t exponent = 0;
  if (const size_t e = s.find_first_of("eE"); e != std::string_view::npos) {
    std::string_view digits = s.substr(e + 1);
    if (!digits.empty() && digits[0] == '+') digits.remove_prefix(1);
    std::from_chars(digits.data(), digits.data() + digits.size(), exponent);
    s = s.substr(0, e);
  }
  const size_t dot = s.find('.');
  std::string_view fraction = dot == std::string_view::npos ? std::string_view() : s.substr(dot + 1);
  std::string_view integer = s.substr(0, dot);
  while (!fraction.empty() && fraction.back() == '0') fraction.remove_suffix(1);
  if (!fraction.empty()) return std::max<int64_t>(0, static_cast<int64_t>(fraction.size()) - exponent);
  int64_t zeros = 0;  // trailing zeros of the integer part count against a negative exponent
  while (!integer.empty() && integer.back() == '0') {
    integer.remove_suffix(1);
    ++zeros;
  }
  if (integer.empty() || integer == "-") return 0;  // zero
  return std::max<int64_t>(0, -exponent - zeros);
}

std::string_view non_finite_text(double x) {
  if (std::isnan(x)) return "NaN";
  return x > 0 ? "Infinity" : "-Infinity";
}

// Decimal text: "-?digits(.digits)?" (finite) or NaN / Infinity / -Infinity.
enum class DecimalForm { Finite, NonFinite, Invalid };
DecimalForm decimal_form(std::string_view s) {
  if (s == "NaN" || s == "Infinity" || s == "-Infinity") return DecimalForm::NonFinite;
  size_t i = s.size() > 0 && s[0] == '-' ? 1 : 0;
  const size_t int_start = i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  if (i == int_start) return DecimalForm::Invalid;
  if (i == s.size()) return DecimalForm::Finite;
  if (s[i] != '.') return DecimalForm::Invalid;
  const size_t frac_start = ++i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  return i == s.size() && i > frac_start ? DecimalForm::Finite : DecimalForm::Invalid;
}

bool decimal_has_fraction(std::string_view s) {
  const size_t dot = s.find('.');
  return dot != std::string_view::npos && s.find_first_not_of('0', dot + 1) != std::string_view::npos;
}

// ---- dates and times ---------------------------------------------------------------------------------------

struct Civil {
  int64_t year = 0;  // astronomical: 0 is 1 BC
  unsigned month = 1, day = 1;
};

Civil civil(int64_t days) {
  Civil c;
  civil_from_days(days, c.year, c.month, c.day);
  return c;
}

// Splits microseconds since 1970-01-01 into days and microseconds of the day (floor division).
void split_micros(int64_t micros, int64_t& days, int64_t& micros_of_day) {
  micros_of_day = micros % kMicrosPerDay;
  days = micros / kMicrosPerDay;
  if (micros_of_day < 0) {
    micros_of_day += kMicrosPerDay;
    --days;
  }
}

// "YYYY-MM-DD", the year with at least 4 digits. PostgreSQL: years <= 0 as 1 - year, and `bc` set so that
// the caller appends " BC" at the end of the value. MySQL: the astronomical year (0 is 0000; a negative
// year, which only a text column takes, with a '-').
void append_ymd(std::string& out, Dialect dialect, const Civil& c, bool& bc) {
  bc = dialect == Dialect::Postgres && c.year <= 0;
  if (dialect == Dialect::MySql && c.year < 0) out.push_back('-');
  const int64_t year = bc ? 1 - c.year : c.year < 0 ? -c.year : c.year;
  append_padded(out, static_cast<uint64_t>(year), 4);
  out.push_back('-');
  append_two(out, c.month);
  out.push_back('-');
  append_two(out, c.day);
}

void append_time_of_day(std::string& out, int64_t micros_of_day) {
  const auto secs = static_cast<uint64_t>(micros_of_day / kMicrosPerSecond);
  append_padded(out, secs / 3600, 2);
  out.push_back(':');
  append_two(out, static_cast<unsigned>(secs / 60 % 60));
  out.push_back(':');
  append_two(out, static_cast<unsigned>(secs % 60));
  append_fraction(out, static_cast<uint64_t>(micros_of_day % kMicrosPerSecond));
}

void append_date_text(std::string& out, Dialect dialect, int32_t days) {
  if (days == kDateInfinity || days == kDateMinusInfinity) {
    out.append(days == kDateInfinity ? "infinity" : "-infinity");
    return;
  }
  bool bc = false;
  append_ymd(out, dialect, civil(days), bc);
  if (bc) out.append(" BC");
}

// Signed, hours beyond 24 allowed: "-838:59:59.5" style (PostgreSQL's interval and MySQL's TIME input).
void append_duration(std::string& out, int64_t micros) {
  const bool negative = micros < 0;
  const uint64_t a = negative ? 0 - static_cast<uint64_t>(micros) : static_cast<uint64_t>(micros);
  if (negative) out.push_back('-');
  const uint64_t secs = a / 1'000'000;
  append_padded(out, secs / 3600, 2);
  out.push_back(':');
  append_two(out, static_cast<unsigned>(secs / 60 % 60));
  out.push_back(':');
  append_two(out, static_cast<unsigned>(secs % 60));
  append_fraction(out, a % 1'000'000);
}

// "YYYY-MM-DD HH:MM:SS[.ffffff]" (+ "+00" when `zone`) (+ " BC"); infinity / -infinity.
void append_timestamp_text(std::string& out, Dialect dialect, int64_t micros, bool zone) {
  if (micros == kTimestampInfinity || micros == kTimestampMinusInfinity) {
    out.append(micros == kTimestampInfinity ? "infinity" : "-infinity");
    return;
  }
  int64_t days = 0, tod = 0;
  split_micros(micros, days, tod);
  bool bc = false;
  append_ymd(out, dialect, civil(days), bc);
  out.push_back(' ');
  append_time_of_day(out, tod);
  if (zone) out.append("+00");
  if (bc) out.append(" BC");
}

// PostgreSQL interval input: "<m> mons <d> days [-]HH:MM:SS[.ffffff]", every field with its own sign.
void append_pg_interval(std::string& out, const Interval& iv) {
  append_int(out, iv.months);
  out.append(" mons ");
  append_int(out, iv.days);
  out.append(" days ");
  if (iv.micros == std::numeric_limits<int64_t>::min()) {
    // The one value whose H:M:S form PostgreSQL 15 refuses (its magnitude does not fit int64).
    append_int(out, iv.micros);
    out.append(" microseconds");
  } else {
    append_duration(out, iv.micros);
  }
}

// ---- quoting -------------------------------------------------------------------------------------------------

// '...' with ' doubled; false (and nothing meaningful appended) when `s` has a NUL byte.
bool append_pg_quoted(std::string& out, std::string_view s) {
  out.push_back('\'');
  const char* p = s.data();
  const char* const end = p + s.size();
  const char* run = p;
  for (; p != end; ++p) {
    const char c = *p;
    if (c == '\'') {
      out.append(run, static_cast<size_t>(p + 1 - run));  // the quote, then again below
      run = p;
    } else if (c == '\0') {
      return false;
    }
  }
  out.append(run, static_cast<size_t>(end - run));
  out.push_back('\'');
  return true;
}

// MySQL string escapes (mysql_real_escape_string's set): \0 \n \r \\ \' \" and \Z for 0x1a.
constexpr std::array<char, 256> kMySqlEscapes = [] {
  std::array<char, 256> t{};
  t[0] = '0';
  t['\n'] = 'n';
  t['\r'] = 'r';
  t['\\'] = '\\';
  t['\''] = '\'';
  t['"'] = '"';
  t[0x1a] = 'Z';
  return t;
}();

void append_mysql_quoted(std::string& out, std::string_view s) {
  out.push_back('\'');
  const char* p = s.data();
  const char* const end = p + s.size();
  const char* run = p;
  for (; p != end; ++p) {
    const char e = kMySqlEscapes[static_cast<unsigned char>(*p)];
    if (e != 0) {
      out.append(run, static_cast<size_t>(p - run));
      out.push_back('\\');
      out.push_back(e);
      run = p + 1;
    }
  }
  out.append(run, static_cast<size_t>(end - run));
  out.push_back('\'');
}

// ---- error messages ------------------------------------------------------------------------------------------

void append_shown(std::string& out, std::string_view s) {
  constexpr size_t kMax = 40;
  static constexpr char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < s.size() && i < kMax; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) {
      out.append("\\x");
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0x0f]);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  if (s.size() > kMax) out.append("...");
}

std::string describe(const Value& value) {
  std::string d;
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Null>) {
          d = "NULL";
        } else if constexpr (std::is_same_v<T, Unavailable>) {
          d = "an unavailable value (one the log did not carry)";
        } else if constexpr (std::is_same_v<T, bool>) {
          d = x ? "boolean true" : "boolean false";
        } else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, uint64_t>) {
          d = "integer ";
          append_int(d, x);
        } else if constexpr (std::is_same_v<T, double>) {
          d = "double ";
          if (std::isfinite(x)) {
            append_double(d, x);
          } else {
            d += non_finite_text(x);
          }
        } else if constexpr (std::is_same_v<T, Decimal>) {
          d = "decimal ";
          append_shown(d, x.text);
        } else if constexpr (std::is_same_v<T, std::string>) {
          d = "string '";
          append_shown(d, x);
          d += "'";
        } else if constexpr (std::is_same_v<T, Bytes>) {
          d = "binary value of " + std::to_string(x.data.size()) + " bytes";
        } else if constexpr (std::is_same_v<T, Date>) {
          d = "date ";
          append_date_text(d, Dialect::Postgres, x.days);
        } else if constexpr (std::is_same_v<T, Time>) {
          d = "time ";
          append_duration(d, x.micros);
        } else if constexpr (std::is_same_v<T, Timestamp>) {
          d = "timestamp ";
          append_timestamp_text(d, Dialect::Postgres, x.micros, false);
        } else if constexpr (std::is_same_v<T, TimestampTz>) {
          d = "timestamp with time zone ";
          append_timestamp_text(d, Dialect::Postgres, x.micros, true);
        } else if constexpr (std::is_same_v<T, Interval>) {
          d = "interval ";
          append_iso_interval(d, x);
        } else if constexpr (std::is_same_v<T, Json>) {
          d = "JSON document '";
          append_shown(d, x.text);
          d += "'";
        } else if constexpr (std::is_same_v<T, Uuid>) {
          d = "UUID ";
          append_uuid(d, x);
        } else if constexpr (std::is_same_v<T, Array>) {
          d = "array of " + std::to_string(x.items.size()) + " elements";
        }
      },
      value.v);
  return d;
}

Error fail(const Ctx& c, const Value& value, std::string_view why) {
  std::string m = c.in_array ? "array element " : "";
  m += describe(value);
  m += " cannot be written to ";
  const char* db = c.dialect == Dialect::Postgres ? "PostgreSQL" : "MySQL";
  if (c.target_type.empty()) {
    m += "a ";
    m += db;
    m += " column";
  } else {
    m += "the ";
    m += db;
    m += " column of type '";
    m += c.target_type;
    m += "'";
  }
  m += ": ";
  m += why;
  return m;
}

Error nul_error(const Ctx& c, const Value& value, std::string_view text) {
  const size_t at = text.find('\0');
  return fail(c, value,
              "it holds a NUL byte (at byte " + std::to_string(at) + "), which PostgreSQL text cannot hold");
}

// A decimal column would round a number with more decimal places than its scale.
Error check_scale(const Ctx& c, const Value& value, std::string_view number_text) {
  if (c.scale < 0 || decimal_places(number_text) <= c.scale) return std::nullopt;
  return fail(c, value, "the column keeps " + std::to_string(c.scale) + " decimal places and would lose the rest");
}

// A temporal column would round a value with more fractional second digits than it keeps.
Error check_fraction(const Ctx& c, const Value& value, int64_t micros) {
  if (c.fraction_digits < 0 || c.fraction_digits >= 6) return std::nullopt;
  int64_t unit = 1;
  for (int i = c.fraction_digits; i < 6; ++i) unit *= 10;
  if (micros % unit == 0) return std::nullopt;
  return fail(c, value,
              "the column keeps " + std::to_string(c.fraction_digits) +
                  " fractional second digits and would lose the rest");
}

// A Timestamp into a date column: only midnight has no time of day to lose.
Error check_midnight(const Ctx& c, const Value& value, int64_t micros, int64_t& days) {
  int64_t tod = 0;
  split_micros(micros, days, tod);
  if (tod == 0) return std::nullopt;
  return fail(c, value, "a date column would drop its time of day");
}

// ---- bit strings (MySQL BIT(n): Bytes holding the value big-endian) -----------------------------------------

// The number of bits: the declared length, or every bit of the bytes when none is declared. Error when
// a bit above that length is set.
Error check_bits(const Ctx& c, const Value& value, std::string_view data, uint32_t length, size_t& bits) {
  const size_t total = data.size() * 8;
  bits = length != 0 ? length : total;
  for (size_t pos = bits; pos < total; ++pos) {
    const auto byte = static_cast<unsigned char>(data[data.size() - 1 - pos / 8]);
    if ((byte >> (pos % 8)) & 1u) {
      return fail(c, value, "a bit above its declared " + std::to_string(bits) + " bits is set");
    }
  }
  return std::nullopt;
}

void append_bit_text(std::string& out, std::string_view data, size_t bits) {
  for (size_t i = 0; i < bits; ++i) {
    const size_t pos = bits - 1 - i;  // weight of this bit
    if (pos / 8 >= data.size()) {
      out.push_back('0');
      continue;
    }
    const auto byte = static_cast<unsigned char>(data[data.size() - 1 - pos / 8]);
    out.push_back(((byte >> (pos % 8)) & 1u) ? '1' : '0');
  }
}

// The bits as an unsigned number (BIT(n) into an integer or decimal column).
Error append_bits_number(std::string& out, const Ctx& c, const Value& value, std::string_view data) {
  uint64_t n = 0;
  for (size_t i = 0; i < data.size(); ++i) {
    const auto byte = static_cast<unsigned char>(data[i]);
    if (n >> 56 != 0) return fail(c, value, "its bits do not fit a 64-bit number");
    n = n << 8 | byte;
  }
  append_int(out, n);
  return std::nullopt;
}

// ---- the renderers -----------------------------------------------------------------------------------------

// The text of a scalar value as a PostgreSQL input function reads it: what goes between the quotes of a
// literal or of an array element (before quoting). Checks what the target cannot hold.
Error pg_text(std::string& out, const Ctx& c, const Value& value, Source src, Target tgt) {
  return std::visit(
      [&](const auto& x) -> Error {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Null> || std::is_same_v<T, Array>) {
          return fail(c, value, "internal: not a scalar");
        } else if constexpr (std::is_same_v<T, Unavailable>) {
          return fail(c, value, "the sink must never write it as a value");
        } else if constexpr (std::is_same_v<T, bool>) {
          const bool number = tgt == Target::Integer || tgt == Target::Numeric || tgt == Target::Float;
          out.append(number ? (x ? "1" : "0") : (x ? "true" : "false"));
        } else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, uint64_t>) {
          if (tgt == Target::Boolean) {
            if (x != 0 && x != 1) return fail(c, value, "only 0 and 1 are booleans");
            out.append(x == 1 ? "true" : "false");
          } else {
            append_int(out, x);
          }
        } else if constexpr (std::is_same_v<T, double>) {
          if (!std::isfinite(x)) {
            if (tgt == Target::Integer) return fail(c, value, "an integer column has no NaN or infinity");
            out.append(non_finite_text(x));
          } else {
            if (tgt == Target::Integer) {
              if (x != std::trunc(x)) return fail(c, value, "an integer column would round away its fraction");
              if (!append_integral(out, x)) return fail(c, value, "it is beyond the 64-bit integers");
            } else {
              const size_t start = out.size();
              append_double(out, x);
              if (Error e = check_scale(c, value, std::string_view(out).substr(start))) return e;
            }
          }
        } else if constexpr (std::is_same_v<T, Decimal>) {
          const DecimalForm form = decimal_form(x.text);
          if (form == DecimalForm::Invalid) return fail(c, value, "it is not a decimal number");
          if (tgt == Target::Integer) {
            if (form == DecimalForm::NonFinite) return fail(c, value, "an integer column has no NaN or infinity");
            if (decimal_has_fraction(x.text)) return fail(c, value, "an integer column would round away its fraction");
          }
          if (form == DecimalForm::Finite) {
            if (Error e = check_scale(c, value, x.text)) return e;
          }
          out.append(x.text);
        } else if constexpr (std::is_same_v<T, std::string>) {
          out.append(x);
        } else if constexpr (std::is_same_v<T, Bytes>) {
          if (src.kind == ColumnKind::Bits) {
            size_t bits = 0;
            if (Error e = check_bits(c, value, x.data, src.length, bits)) return e;
            append_bit_text(out, x.data, bits);
          } else {
            out.append("\\x");
            append_hex(out, x.data);
          }
        } else if constexpr (std::is_same_v<T, Date>) {
          append_date_text(out, c.dialect, x.days);
        } else if constexpr (std::is_same_v<T, Time>) {
          if (tgt == Target::Interval) {
            append_duration(out, x.micros);
          } else {
            if (x.micros < 0 || x.micros > kMicrosPerDay)
              return fail(c, value, "PostgreSQL's time holds 00:00:00 to 24:00:00 (an interval column would hold it)");
            if (Error e = check_fraction(c, value, x.micros)) return e;
            append_time_of_day(out, x.micros);
          }
        } else if constexpr (std::is_same_v<T, Timestamp> || std::is_same_v<T, TimestampTz>) {
          const bool infinite = x.micros == kTimestampInfinity || x.micros == kTimestampMinusInfinity;
          if (tgt == Target::Date && !infinite) {
            int64_t days = 0;
            if (Error e = check_midnight(c, value, x.micros, days)) return e;
            append_date_text(out, c.dialect, static_cast<int32_t>(days));
          } else {
            if (!infinite) {
              if (Error e = check_fraction(c, value, x.micros)) return e;
            }
            append_timestamp_text(out, c.dialect, x.micros, std::is_same_v<T, TimestampTz>);
          }
        } else if constexpr (std::is_same_v<T, Interval>) {
          append_pg_interval(out, x);
        } else if constexpr (std::is_same_v<T, Json>) {
          out.append(x.text);
        } else if constexpr (std::is_same_v<T, Uuid>) {
          if (tgt == Target::Bytes) {
            out.append("\\x");
            append_hex(out, std::string_view(reinterpret_cast<const char*>(x.bytes.data()), x.bytes.size()));
          } else {
            append_uuid(out, x);
          }
        } else {
          static_assert(sizeof(T) == 0, "every value type needs a rendering");
        }
        return std::nullopt;
      },
      value.v);
}

// Escapes out[from..] for the inside of a double-quoted PostgreSQL array element (\" and \\).
void escape_array_element(std::string& out, size_t from) {
  const size_t first = out.find_first_of("\"\\", from);
  if (first == std::string::npos) return;
  const std::string tail = out.substr(first);
  out.resize(first);
  for (const char ch : tail) {
    if (ch == '"' || ch == '\\') out.push_back('\\');
    out.push_back(ch);
  }
}

// PostgreSQL array literal text: {..} with every element double-quoted, NULL, nested arrays.
Error pg_array_text(std::string& out, const Ctx& c, const Array& a, Source element, Target element_target) {
  out.push_back('{');
  for (size_t i = 0; i < a.items.size(); ++i) {
    if (i != 0) out.push_back(',');
    const Value& item = a.items[i];
    if (item.is_null()) {
      out.append("NULL");
    } else if (const auto* nested = std::get_if<Array>(&item.v)) {
      if (Error e = pg_array_text(out, c, *nested, element, element_target)) return e;
    } else {
      out.push_back('"');
      const size_t start = out.size();
      if (Error e = pg_text(out, c, item, element, element_target)) return e;
      escape_array_element(out, start);
      out.push_back('"');
    }
  }
  out.push_back('}');
  return std::nullopt;
}

// JSON text of a value, as an element of a JSON array (see the header).
Error json_text(std::string& out, const Ctx& c, const Value& value, Source src) {
  return std::visit(
      [&](const auto& x) -> Error {
        using T = std::decay_t<decltype(x)>;
        JsonWriter w(out);
        if constexpr (std::is_same_v<T, Null>) {
          w.null();
        } else if constexpr (std::is_same_v<T, Unavailable>) {
          return fail(c, value, "the sink must never write it as a value");
        } else if constexpr (std::is_same_v<T, bool>) {
          w.boolean(x);
        } else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, uint64_t>) {
          append_int(out, x);
        } else if constexpr (std::is_same_v<T, double>) {
          if (!std::isfinite(x)) return fail(c, value, "JSON has no NaN or infinity");
          append_double(out, x);
        } else if constexpr (std::is_same_v<T, Decimal>) {
          const DecimalForm form = decimal_form(x.text);
          if (form == DecimalForm::Invalid) return fail(c, value, "it is not a decimal number");
          if (form == DecimalForm::NonFinite) return fail(c, value, "JSON has no NaN or infinity");
          const size_t digits = x.text[0] == '-' ? 1 : 0;
          if (x.text.size() > digits + 1 && x.text[digits] == '0' && x.text[digits + 1] != '.')
            return fail(c, value, "a JSON number has no leading zeros");
          out.append(x.text);
        } else if constexpr (std::is_same_v<T, std::string>) {
          const auto* p = reinterpret_cast<const unsigned char*>(x.data());
          const auto* const end = p + x.size();
          while (p != end) {
            const Utf8Sequence seq = utf8_sequence(p, end);
            if (!seq.valid) return fail(c, value, "it is not valid UTF-8, which a JSON string must be");
            p += seq.length;
          }
          w.string(x);
        } else if constexpr (std::is_same_v<T, Bytes>) {
          if (src.kind == ColumnKind::Bits) {
            size_t bits = 0;
            if (Error e = check_bits(c, value, x.data, src.length, bits)) return e;
            out.push_back('"');
            append_bit_text(out, x.data, bits);
            out.push_back('"');
          } else {
            w.base64(x.data);
          }
        } else if constexpr (std::is_same_v<T, Date>) {
          out.push_back('"');
          append_date_text(out, c.dialect, x.days);
          out.push_back('"');
        } else if constexpr (std::is_same_v<T, Time>) {
          out.push_back('"');
          append_duration(out, x.micros);
          out.push_back('"');
        } else if constexpr (std::is_same_v<T, Timestamp>) {
          out.push_back('"');
          append_timestamp_text(out, c.dialect, x.micros, false);
          out.push_back('"');
        } else if constexpr (std::is_same_v<T, TimestampTz>) {
          out.push_back('"');
          append_iso_timestamp_utc(out, x.micros);
          out.push_back('"');
        } else if constexpr (std::is_same_v<T, Interval>) {
          out.push_back('"');
          append_iso_interval(out, x);
          out.push_back('"');
        } else if constexpr (std::is_same_v<T, Json>) {
          out.append(x.text);
        } else if constexpr (std::is_same_v<T, Uuid>) {
          out.push_back('"');
          append_uuid(out, x);
          out.push_back('"');
        } else if constexpr (std::is_same_v<T, Array>) {
          out.push_back('[');
          for (size_t i = 0; i < x.items.size(); ++i) {
            if (i != 0) out.push_back(',');
            Ctx element_ctx = c;
            element_ctx.in_array = true;
            if (Error e = json_text(out, element_ctx, x.items[i], src)) return e;
          }
          out.push_back(']');
        } else {
          static_assert(sizeof(T) == 0, "every value type needs a rendering");
        }
        return std::nullopt;
      },
      value.v);
}

Source element_source(const ColumnInfo* info) {
  Source s;
  if (info != nullptr) {
    s.kind = info->element;
    if (info->element == ColumnKind::Bits) s.length = info->length;
  }
  return s;
}

// A quoted literal of a text built in a scratch buffer (arrays, JSON arrays).
Error quote_built(std::string& out, const Ctx& c, const Value& value, const std::string& text) {
  if (c.dialect == Dialect::Postgres) {
    if (!append_pg_quoted(out, text)) return nul_error(c, value, text);
  } else {
    append_mysql_quoted(out, text);
  }
  return std::nullopt;
}

Error array_literal(std::string& out, const Ctx& c, const Array& a, const Value& value, Source element,
                    Target tgt, std::string_view target_type) {
  std::string text;
  if (c.dialect == Dialect::MySql || tgt == Target::Json) {
    if (c.dialect == Dialect::MySql && tgt != Target::Json && tgt != Target::Text)
      return fail(c, value, "MySQL has no arrays; only a JSON or text column can hold one");
    Ctx element_ctx = c;
    element_ctx.in_array = true;
    text.push_back('[');
    for (size_t i = 0; i < a.items.size(); ++i) {
      if (i != 0) text.push_back(',');
      if (Error e = json_text(text, element_ctx, a.items[i], element)) return e;
    }
    text.push_back(']');
  } else {
    const std::string_view element_type = tgt == Target::Array ? pg_element_type(target_type) : std::string_view();
    const Target element_target = tgt == Target::Array ? classify_postgres(element_type) : Target::Unknown;
    const Ctx element_ctx =
        make_ctx(c.dialect, tgt == Target::Array ? element_type : c.target_type, element_target, true);
    if (Error e = pg_array_text(text, element_ctx, a, element, element_target)) return e;
  }
  return quote_built(out, c, value, text);
}

// Any value into a text column: its text, quoted.
Error text_literal(std::string& out, const Ctx& c, const Value& value, const ColumnInfo* info, Source src) {
  const bool pg = c.dialect == Dialect::Postgres;
  if (value.is_null()) {
    out.append("NULL");
    return std::nullopt;
  }
  if (const auto* s = std::get_if<std::string>(&value.v)) {
    if (!pg) {
      append_mysql_quoted(out, *s);
    } else if (!append_pg_quoted(out, *s)) {
      return nul_error(c, value, *s);
    }
    return std::nullopt;
  }
  if (const auto* j = std::get_if<Json>(&value.v)) {
    if (!pg) {
      append_mysql_quoted(out, j->text);
    } else if (!append_pg_quoted(out, j->text)) {
      return nul_error(c, value, j->text);
    }
    return std::nullopt;
  }
  if (const auto* a = std::get_if<Array>(&value.v)) {
    return array_literal(out, c, *a, value, element_source(info), Target::Text, c.target_type);
  }
  if (const auto* b = std::get_if<bool>(&value.v)) {
    out.append(pg ? (*b ? "'true'" : "'false'") : (*b ? "'1'" : "'0'"));
    return std::nullopt;
  }
  if (const auto* b = std::get_if<Bytes>(&value.v); b != nullptr && !pg && src.kind != ColumnKind::Bits) {
    out.append("X'");  // MySQL converts the bytes to the column's character set (strict mode refuses bad UTF-8)
    append_hex(out, b->data);
    out.push_back('\'');
    return std::nullopt;
  }
  if (const auto* iv = std::get_if<Interval>(&value.v); iv != nullptr && !pg) {
    out.push_back('\'');
    append_iso_interval(out, *iv);
    out.push_back('\'');
    return std::nullopt;
  }
  // The rest has text without quotes, backslashes or NUL bytes (PostgreSQL's bytea text '\x..' has a
  // backslash, which standard_conforming_strings keeps as it is).
  out.push_back('\'');
  if (const auto* t = std::get_if<Time>(&value.v)) {
    append_duration(out, t->micros);  // no range check: any duration has a text
  } else if (const auto* tz = std::get_if<TimestampTz>(&value.v)) {
    append_timestamp_text(out, c.dialect, tz->micros, pg);  // MySQL: the UTC wall clock, as its TIMESTAMP shows it
  } else if (Error e = pg_text(out, c, value, src, Target::Text)) {
    return e;
  }
  out.push_back('\'');
  return std::nullopt;
}

Error mysql_year_check(const Ctx& c, const Value& value, int64_t days) {
  const int64_t year = civil(days).year;
  if (year < 0 || year > 9999) return fail(c, value, "MySQL dates end at years 0 and 9999");
  return std::nullopt;
}

Error mysql_timestamp_check(const Ctx& c, const Value& value, int64_t micros, Target tgt) {
  if (micros == kTimestampInfinity || micros == kTimestampMinusInfinity)
    return fail(c, value, "MySQL has no infinite timestamps");
  if (tgt == Target::MySqlTimestamp) {
    if (micros < kMySqlTimestampMin || micros > kMySqlTimestampMax)
      return fail(c, value,
                  "MySQL's TIMESTAMP holds 1970-01-01 00:00:01 to 2038-01-19 03:14:07.999999 UTC (a DATETIME column "
                  "would hold it)");
    return std::nullopt;
  }
  int64_t days = 0, tod = 0;
  split_micros(micros, days, tod);
  return mysql_year_check(c, value, days);
}

Error mysql_literal(std::string& out, const Ctx& c, const Value& value, Source src, Target tgt) {
  return std::visit(
      [&](const auto& x) -> Error {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Null> || std::is_same_v<T, Array>) {
          return fail(c, value, "internal: handled by the caller");
        } else if constexpr (std::is_same_v<T, Unavailable>) {
          return fail(c, value, "the sink must never write it as a value");
        } else if constexpr (std::is_same_v<T, bool>) {
          out.push_back(x ? '1' : '0');
        } else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, uint64_t>) {
          append_int(out, x);
        } else if constexpr (std::is_same_v<T, double>) {
          if (!std::isfinite(x)) return fail(c, value, "MySQL's numbers have no NaN or infinity");
          if (tgt == Target::Integer) {
            if (x != std::trunc(x)) return fail(c, value, "an integer column would round away its fraction");
            if (!append_integral(out, x)) return fail(c, value, "it is beyond the 64-bit integers");
          } else if (x == 0 && std::signbit(x)) {
            out.append("-0e0");  // -0 alone is the integer 0
          } else {
            const size_t start = out.size();
            append_double(out, x);
            if (Error e = check_scale(c, value, std::string_view(out).substr(start))) return e;
          }
        } else if constexpr (std::is_same_v<T, Decimal>) {
          const DecimalForm form = decimal_form(x.text);
          if (form == DecimalForm::Invalid) return fail(c, value, "it is not a decimal number");
          if (form == DecimalForm::NonFinite) return fail(c, value, "MySQL's numbers have no NaN or infinity");
          if (tgt == Target::Integer && decimal_has_fraction(x.text))
            return fail(c, value, "an integer column would round away its fraction");
          if (Error e = check_scale(c, value, x.text)) return e;
          out.append(x.text);
        } else if constexpr (std::is_same_v<T, std::string>) {
          if (tgt == Target::Bits) {
            // PostgreSQL's bit strings arrive as text: '0101' would be stored as the characters' bytes.
            if (x.empty() || x.find_first_not_of("01") != std::string::npos)
              return fail(c, value, "a BIT column takes a string of 0s and 1s");
            out.append("b'");
            out.append(x);
            out.push_back('\'');
          } else {
            append_mysql_quoted(out, x);
          }
        } else if constexpr (std::is_same_v<T, Bytes>) {
          if (src.kind == ColumnKind::Bits && tgt != Target::Bytes && tgt != Target::Binary16) {
            size_t bits = 0;
            if (Error e = check_bits(c, value, x.data, src.length, bits)) return e;
            if (tgt == Target::Integer || tgt == Target::Numeric) return append_bits_number(out, c, value, x.data);
            out.append("b'");
            append_bit_text(out, x.data, bits);
            out.push_back('\'');
          } else {
            out.append("X'");
            append_hex(out, x.data);
            out.push_back('\'');
          }
        } else if constexpr (std::is_same_v<T, Date>) {
          if (x.days == kDateInfinity || x.days == kDateMinusInfinity)
            return fail(c, value, "MySQL has no infinite dates");
          if (Error e = mysql_year_check(c, value, x.days)) return e;
          out.push_back('\'');
          append_date_text(out, c.dialect, x.days);
          out.push_back('\'');
        } else if constexpr (std::is_same_v<T, Time>) {
          if (x.micros < -kMySqlTimeMax || x.micros > kMySqlTimeMax)
            return fail(c, value, "MySQL's TIME holds -838:59:59 to 838:59:59");
          if (Error e = check_fraction(c, value, x.micros)) return e;
          out.push_back('\'');
          append_duration(out, x.micros);
          out.push_back('\'');
        } else if constexpr (std::is_same_v<T, Timestamp> || std::is_same_v<T, TimestampTz>) {
          if (Error e = mysql_timestamp_check(c, value, x.micros, tgt)) return e;
          out.push_back('\'');
          if (tgt == Target::Date) {
            int64_t days = 0;
            if (Error e = check_midnight(c, value, x.micros, days)) return e;
            append_date_text(out, c.dialect, static_cast<int32_t>(days));
          } else {
            if (Error e = check_fraction(c, value, x.micros)) return e;
            append_timestamp_text(out, c.dialect, x.micros, false);  // the session's time zone is UTC
          }
          out.push_back('\'');
        } else if constexpr (std::is_same_v<T, Interval>) {
          return fail(c, value, "MySQL has no interval type (only a text column can hold its text)");
        } else if constexpr (std::is_same_v<T, Json>) {
          append_mysql_quoted(out, x.text);
        } else if constexpr (std::is_same_v<T, Uuid>) {
          if (tgt == Target::Binary16) {
            out.append("X'");
            append_hex(out, std::string_view(reinterpret_cast<const char*>(x.bytes.data()), x.bytes.size()));
            out.push_back('\'');
          } else {
            out.push_back('\'');
            append_uuid(out, x);
            out.push_back('\'');
          }
        } else {
          static_assert(sizeof(T) == 0, "every value type needs a rendering");
        }
        return std::nullopt;
      },
      value.v);
}

Error postgres_literal(std::string& out, const Ctx& c, const Value& value, Source src, Target tgt) {
  // Unquoted forms first: numbers, booleans, bit strings.
  if (const auto* b = std::get_if<bool>(&value.v)) {
    if (tgt == Target::Bits) {
      out.append(*b ? "B'1'" : "B'0'");
      return std::nullopt;
    }
    return pg_text(out, c, value, src, tgt);
  }
  const auto* dec = std::get_if<Decimal>(&value.v);
  if (std::holds_alternative<int64_t>(value.v) || std::holds_alternative<uint64_t>(value.v) ||
      std::holds_alternative<double>(value.v) || dec != nullptr) {
    // Numbers are quoted where the column's own input function must read them: into real and double
    // precision (an unquoted 0.1 is numeric, and `real_column = 0.1` compares in double precision and
    // misses), doubles everywhere but integer columns (so also '-0', 'NaN', and an unknown column's type
    // decides), non-finite decimals.
    bool quote = tgt == Target::Float;
    if (std::holds_alternative<double>(value.v)) quote = tgt != Target::Integer;
    if (dec != nullptr && decimal_form(dec->text) == DecimalForm::NonFinite) quote = true;
    if (!quote) return pg_text(out, c, value, src, tgt);
    out.push_back('\'');
    if (Error e = pg_text(out, c, value, src, tgt)) return e;
    out.push_back('\'');
    return std::nullopt;
  }
  if (const auto* s = std::get_if<std::string>(&value.v)) {
    if (tgt == Target::Bytes) {
      // text into bytea: its bytes (bytea's input would read backslashes as escapes)
      out.append("'\\x");
      append_hex(out, *s);
      out.push_back('\'');
      return std::nullopt;
    }
    if (!append_pg_quoted(out, *s)) return nul_error(c, value, *s);
    return std::nullopt;
  } else if (const auto* j = std::get_if<Json>(&value.v)) {
    if (!append_pg_quoted(out, j->text)) return nul_error(c, value, j->text);
    return std::nullopt;
  } else if (const auto* bytes = std::get_if<Bytes>(&value.v)) {
    if (src.kind == ColumnKind::Bits && tgt != Target::Bytes) {
      size_t bits = 0;
      if (Error e = check_bits(c, value, bytes->data, src.length, bits)) return e;
      if (tgt == Target::Integer || tgt == Target::Numeric) return append_bits_number(out, c, value, bytes->data);
      out.append("B'");
      append_bit_text(out, bytes->data, bits);
      out.push_back('\'');
      return std::nullopt;
    }
    src.kind = ColumnKind::Bytes;  // into bytea: the bytes
  }
  // Quoted: every other kind, whose text has no quote or NUL byte.
  out.push_back('\'');
  if (Error e = pg_text(out, c, value, src, tgt)) return e;
  out.push_back('\'');
  return std::nullopt;
}

Error literal(std::string& out, const Ctx& c, const Value& value, Source src, Target tgt, const ColumnInfo* info,
              std::string_view target_type) {
  if (value.is_null()) {
    out.append("NULL");
    return std::nullopt;
  }
  if (std::holds_alternative<Unavailable>(value.v)) return fail(c, value, "the sink must never write it as a value");
  if (tgt == Target::Text) return text_literal(out, c, value, info, src);
  if (const auto* a = std::get_if<Array>(&value.v)) {
    return array_literal(out, c, *a, value, element_source(info), tgt, target_type);
  }
  return c.dialect == Dialect::Postgres ? postgres_literal(out, c, value, src, tgt)
                                        : mysql_literal(out, c, value, src, tgt);
}

}  // namespace

LiteralType::LiteralType(Dialect dialect, std::string_view type) : dialect_(dialect), type_(trim(type)) {
  const Target tgt = classify(dialect, type_);
  target_ = static_cast<uint8_t>(tgt);
  fraction_digits_ = dbsink::fraction_digits(dialect, tgt, type_);
  scale_ = dbsink::decimal_scale(dialect, tgt, type_);
}

std::optional<std::string> append_sql_literal(std::string& out, Dialect dialect, const Value& value,
                                              const ColumnInfo* source, std::string_view target_type) {
  return append_sql_literal(out, value, source, LiteralType(dialect, target_type));
}

std::optional<std::string> append_sql_literal(std::string& out, const Value& value, const ColumnInfo* source,
                                              const LiteralType& target_type) {
  const std::string_view type = target_type.type();
  const Target tgt = static_cast<Target>(target_type.target());
  Ctx c{target_type.dialect(), type};
  c.fraction_digits = target_type.fraction_digits();
  c.scale = target_type.scale();
  Source src;
  if (source != nullptr) {
    src.kind = source->kind;
    src.length = source->length;
  }
  const size_t mark = out.size();
  Error e = literal(out, c, value, src, tgt, source, type);
  if (e) out.resize(mark);
  return e;
}

// The characters of a quoted literal's text that COPY's field needs otherwise: the doubled quote and
// COPY's escapes.
constexpr std::array<bool, 256> kCopyEscaped = [] {
  std::array<bool, 256> t{};
  for (const unsigned char c : {'\'', '\\', '\t', '\n', '\r'}) t[c] = true;
  return t;
}();

bool append_copy_field(std::string& out, std::string_view literal, std::string_view target_type) {
  return append_copy_field(out, literal, LiteralType(Dialect::Postgres, target_type));
}

bool append_copy_field(std::string& out, std::string_view literal, const LiteralType& target_type) {
  if (literal == "NULL") {
    out.append("\\N");
    return true;
  }
  if (literal.size() >= 2 && literal.front() == '\'' && literal.back() == '\'') {
    // The literal's text ('' is one quote), with COPY's escapes for backslash, tab, newline and CR.
    literal = literal.substr(1, literal.size() - 2);
    size_t run = 0;
    for (size_t i = 0; i < literal.size(); ++i) {
      if (!kCopyEscaped[static_cast<unsigned char>(literal[i])]) continue;
      out.append(literal.data() + run, i - run);
      switch (literal[i]) {
        case '\'': out.push_back('\''); ++i; break;  // the first of the pair; the second is skipped
        case '\\': out.append("\\\\"); break;
        case '\t': out.append("\\t"); break;
        case '\n': out.append("\\n"); break;
        default: out.append("\\r"); break;
      }
      run = i + 1;
    }
    out.append(literal.data() + run, literal.size() - run);
    return true;
  }
  const Target tgt = static_cast<Target>(target_type.target());
  if (literal.size() >= 3 && literal.substr(0, 2) == "B'" && literal.back() == '\'') {
    if (tgt != Target::Bits) return false;
    out.append(literal.substr(2, literal.size() - 3));
    return true;
  }
  if (literal == "true" || literal == "false") {
    if (tgt != Target::Boolean) return false;
    out.append(literal);
    return true;
  }
  // A number: integer input takes digits only (no exponent), numeric input what a numeric constant is.
  const bool digits = literal.find_first_not_of("0123456789", literal.starts_with('-') ? 1 : 0) == std::string_view::npos &&
                      literal.find_first_of("0123456789") != std::string_view::npos;
  const bool numeric = !literal.empty() && literal.find_first_not_of("0123456789-+.eE") == std::string_view::npos;
  if (!(tgt == Target::Integer ? digits : tgt == Target::Numeric && numeric)) return false;
  out.append(literal);
  return true;
}

void append_identifier(std::string& out, Dialect dialect, std::string_view name) {
  const char q = dialect == Dialect::Postgres ? '"' : '`';
  out.push_back(q);
  size_t run = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] == q) {
      out.append(name.data() + run, i + 1 - run);
      run = i;
    }
  }
  out.append(name.data() + run, name.size() - run);
  out.push_back(q);
}

std::string qualified_identifier(Dialect dialect, std::string_view space, std::string_view name) {
  std::string out;
  append_identifier(out, dialect, space);
  out += '.';
  append_identifier(out, dialect, name);
  return out;
}

std::string string_literal(Dialect dialect, std::string_view text) {
  std::string out = "'";
  for (const char c : text) {
    if (c == '\'') out += '\'';
    if (c == '\\' && dialect == Dialect::MySql) out += '\\';
    out += c;
  }
  return out + "'";
}

}  // namespace tidemark::dbsink
