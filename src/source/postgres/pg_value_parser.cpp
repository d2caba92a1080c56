#include "source/postgres/pg_value_parser.hpp"

#include "core/civil_time.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <system_error>
#include <vector>

namespace tidemark::pg {

namespace {

// How a built-in type's text is read.
enum class Kind {
  Bool,
  Bytea,
  String,  // text, varchar, bpchar (with its padding), name, "char", xml, inet, cidr, macaddr, macaddr8
  Int,     // int2, int4, int8, oid
  Float,   // float4, float8
  Numeric,
  Money,
  Date,
  Time,
  TimeTz,
  Timestamp,
  TimestampTz,
  Interval,
  Uuid,
  Json,  // json, jsonb
  Bits,  // bit, varbit
  Array,
};

struct Builtin {
  uint32_t oid;
  char category;
  uint32_t element_oid;
  const char* name;
  Kind kind;
};

// pg_type rows of the built-in types (oid, typcategory, typelem for arrays, typname), as a PostgreSQL 15
// server reports them. "name" has typelem 18 in pg_type (it is subscriptable), but is not an array.
constexpr Builtin kBuiltins[] = {
    {oid::kBool, 'B', 0, "bool", Kind::Bool},
    {oid::kBytea, 'U', 0, "bytea", Kind::Bytea},
    {oid::kChar, 'Z', 0, "char", Kind::String},
    {oid::kName, 'S', 0, "name", Kind::String},
    {oid::kInt8, 'N', 0, "int8", Kind::Int},
    {oid::kInt2, 'N', 0, "int2", Kind::Int},
    {oid::kInt4, 'N', 0, "int4", Kind::Int},
    {oid::kText, 'S', 0, "text", Kind::String},
    {oid::kOid, 'N', 0, "oid", Kind::Int},
    {oid::kJson, 'U', 0, "json", Kind::Json},
    {oid::kXml, 'U', 0, "xml", Kind::String},
    {oid::kCidr, 'I', 0, "cidr", Kind::String},
    {oid::kFloat4, 'N', 0, "float4", Kind::Float},
    {oid::kFloat8, 'N', 0, "float8", Kind::Float},
    {oid::kMacaddr8, 'U', 0, "macaddr8", Kind::String},
    {oid::kMoney, 'N', 0, "money", Kind::Money},
    {oid::kMacaddr, 'U', 0, "macaddr", Kind::String},
    {oid::kInet, 'I', 0, "inet", Kind::String},
    {oid::kBpchar, 'S', 0, "bpchar", Kind::String},
    {oid::kVarchar, 'S', 0, "varchar", Kind::String},
    {oid::kDate, 'D', 0, "date", Kind::Date},
    {oid::kTime, 'D', 0, "time", Kind::Time},
    {oid::kTimestamp, 'D', 0, "timestamp", Kind::Timestamp},
    {oid::kTimestampTz, 'D', 0, "timestamptz", Kind::TimestampTz},
    {oid::kInterval, 'T', 0, "interval", Kind::Interval},
    {oid::kTimeTz, 'D', 0, "timetz", Kind::TimeTz},
    {oid::kBit, 'V', 0, "bit", Kind::Bits},
    {oid::kVarbit, 'V', 0, "varbit", Kind::Bits},
    {oid::kNumeric, 'N', 0, "numeric", Kind::Numeric},
    {oid::kUuid, 'U', 0, "uuid", Kind::Uuid},
    {oid::kJsonb, 'U', 0, "jsonb", Kind::Json},
    {oid::kBoolArray, 'A', oid::kBool, "_bool", Kind::Array},
    {oid::kByteaArray, 'A', oid::kBytea, "_bytea", Kind::Array},
    {oid::kCharArray, 'A', oid::kChar, "_char", Kind::Array},
    {oid::kNameArray, 'A', oid::kName, "_name", Kind::Array},
    {oid::kInt8Array, 'A', oid::kInt8, "_int8", Kind::Array},
    {oid::kInt2Array, 'A', oid::kInt2, "_int2", Kind::Array},
    {oid::kInt4Array, 'A', oid::kInt4, "_int4", Kind::Array},
    {oid::kTextArray, 'A', oid::kText, "_text", Kind::Array},
    {oid::kOidArray, 'A', oid::kOid, "_oid", Kind::Array},
    {oid::kJsonArray, 'A', oid::kJson, "_json", Kind::Array},
    {oid::kXmlArray, 'A', oid::kXml, "_xml", Kind::Array},
    {oid::kCidrArray, 'A', oid::kCidr, "_cidr", Kind::Array},
    {oid::kFloat4Array, 'A', oid::kFloat4, "_float4", Kind::Array},
    {oid::kFloat8Array, 'A', oid::kFloat8, "_float8", Kind::Array},
    {oid::kMacaddr8Array, 'A', oid::kMacaddr8, "_macaddr8", Kind::Array},
    {oid::kMoneyArray, 'A', oid::kMoney, "_money", Kind::Array},
    {oid::kMacaddrArray, 'A', oid::kMacaddr, "_macaddr", Kind::Array},
    {oid::kInetArray, 'A', oid::kInet, "_inet", Kind::Array},
    {oid::kBpcharArray, 'A', oid::kBpchar, "_bpchar", Kind::Array},
    {oid::kVarcharArray, 'A', oid::kVarchar, "_varchar", Kind::Array},
    {oid::kDateArray, 'A', oid::kDate, "_date", Kind::Array},
    {oid::kTimeArray, 'A', oid::kTime, "_time", Kind::Array},
    {oid::kTimestampArray, 'A', oid::kTimestamp, "_timestamp", Kind::Array},
    {oid::kTimestampTzArray, 'A', oid::kTimestampTz, "_timestamptz", Kind::Array},
    {oid::kIntervalArray, 'A', oid::kInterval, "_interval", Kind::Array},
    {oid::kTimeTzArray, 'A', oid::kTimeTz, "_timetz", Kind::Array},
    {oid::kBitArray, 'A', oid::kBit, "_bit", Kind::Array},
    {oid::kVarbitArray, 'A', oid::kVarbit, "_varbit", Kind::Array},
    {oid::kNumericArray, 'A', oid::kNumeric, "_numeric", Kind::Array},
    {oid::kUuidArray, 'A', oid::kUuid, "_uuid", Kind::Array},
    {oid::kJsonbArray, 'A', oid::kJsonb, "_jsonb", Kind::Array},
};
constexpr size_t kBuiltinCount = sizeof kBuiltins / sizeof kBuiltins[0];

// Every built-in OID is below 4096: a direct index (entry + 1, 0 for none) keeps the per-value lookup cheap.
constexpr uint32_t kIndexSize = 4096;
constexpr std::array<uint8_t, kIndexSize> kBuiltinIndex = [] {
  std::array<uint8_t, kIndexSize> index{};
  for (size_t i = 0; i < kBuiltinCount; ++i) index[kBuiltins[i].oid] = static_cast<uint8_t>(i + 1);
  return index;
}();

size_t builtin_slot(uint32_t type_oid) { return type_oid < kIndexSize ? kBuiltinIndex[type_oid] : 0; }

const Builtin* find_builtin(uint32_t type_oid) {
  const size_t slot = builtin_slot(type_oid);
  return slot == 0 ? nullptr : &kBuiltins[slot - 1];
}

// The same rows as PgTypeInfo, built once.
const std::array<PgTypeInfo, kBuiltinCount>& builtin_infos() {
  static const std::array<PgTypeInfo, kBuiltinCount> infos = [] {
    std::array<PgTypeInfo, kBuiltinCount> a;
    for (size_t i = 0; i < kBuiltinCount; ++i) {
      a[i] = PgTypeInfo{kBuiltins[i].oid, kBuiltins[i].category, kBuiltins[i].element_oid, 0, kBuiltins[i].name, {}};
    }
    return a;
  }();
  return infos;
}

constexpr int64_t kMicrosPerSecond = 1'000'000;
constexpr int64_t kMicrosPerMinute = 60 * kMicrosPerSecond;
constexpr int64_t kMicrosPerHour = 60 * kMicrosPerMinute;
constexpr int64_t kMicrosPerDay = 24 * kMicrosPerHour;
// Domains over domains over arrays...: far more than any real schema, few enough to bound the recursion.
constexpr int kMaxTypeDepth = 32;
// PostgreSQL's MAXDIM.
constexpr int kMaxArrayDims = 6;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Reads min_digits..max_digits decimal digits from the front of s (refusing a longer run of digits).
bool take_digits(std::string_view& s, size_t min_digits, size_t max_digits, uint64_t& out) {
  size_t n = 0;
  uint64_t v = 0;
  while (n < s.size() && n < max_digits && is_digit(s[n])) {
    v = v * 10 + static_cast<uint64_t>(s[n] - '0');
    ++n;
  }
  if (n < min_digits || (n < s.size() && is_digit(s[n]))) return false;
  s.remove_prefix(n);
  out = v;
  return true;
}

bool take_char(std::string_view& s, char c) {
  if (s.empty() || s.front() != c) return false;
  s.remove_prefix(1);
  return true;
}

// ".f" with 1..6 digits, as microseconds; nothing when s does not start with '.'.
bool take_fraction(std::string_view& s, int64_t& micros) {
  micros = 0;
  if (!take_char(s, '.')) return true;
  size_t n = 0;
  while (n < s.size() && is_digit(s[n])) {
    if (n == 6) return false;
    micros = micros * 10 + (s[n] - '0');
    ++n;
  }
  if (n == 0) return false;
  for (size_t i = n; i < 6; ++i) micros *= 10;
  s.remove_prefix(n);
  return true;
}


bool is_leap(int64_t astronomical_year) {
  return astronomical_year % 4 == 0 && (astronomical_year % 100 != 0 || astronomical_year % 400 == 0);
}

unsigned days_in_month(int64_t astronomical_year, unsigned month) {
  static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && is_leap(astronomical_year) ? 29 : kDays[month - 1];
}

// Strips a trailing " BC" (DateStyle ISO puts it after everything else).
bool strip_bc(std::string_view& s) {
  if (s.size() >= 3 && s.substr(s.size() - 3) == " BC") {
    s.remove_suffix(3);
    return true;
  }
  return false;
}

// "YYYY-MM-DD" (the year has 4 or more digits) at the front of s, as days since 1970-01-01.
bool take_date(std::string_view& s, bool bc, int64_t& days, std::string& why) {
  uint64_t year = 0, month = 0, day = 0;
  if (!take_digits(s, 4, 9, year) || !take_char(s, '-') || !take_digits(s, 2, 2, month) || !take_char(s, '-') ||
      !take_digits(s, 2, 2, day)) {
    why = "not an ISO date (YYYY-MM-DD[ BC]; DateStyle must be ISO)";
    return false;
  }
  if (bc && year == 0) {
    why = "year 0 BC does not exist";
    return false;
  }
  // 1 BC is astronomical year 0, 44 BC is -43.
  const int64_t astronomical = bc ? 1 - static_cast<int64_t>(year) : static_cast<int64_t>(year);
  if (month < 1 || month > 12 || day < 1 || day > days_in_month(astronomical, static_cast<unsigned>(month))) {
    why = "no such day";
    return false;
  }
  days = days_from_civil(astronomical, static_cast<unsigned>(month), static_cast<unsigned>(day));
  return true;
}

// "HH:MM:SS[.ffffff]" at the front of s. Hours up to 23, or 24:00:00 exactly when allow_24.
bool take_time_of_day(std::string_view& s, bool allow_24, int64_t& micros) {
  uint64_t h = 0, m = 0, sec = 0;
  int64_t frac = 0;
  if (!take_digits(s, 2, 2, h) || !take_char(s, ':') || !take_digits(s, 2, 2, m) || !take_char(s, ':') ||
      !take_digits(s, 2, 2, sec) || !take_fraction(s, frac)) {
    return false;
  }
  if (m > 59 || sec > 59) return false;
  micros = static_cast<int64_t>(h) * kMicrosPerHour + static_cast<int64_t>(m) * kMicrosPerMinute +
           static_cast<int64_t>(sec) * kMicrosPerSecond + frac;
  if (h < 24) return true;
  return allow_24 && micros == kMicrosPerDay;
}

// A numeric zone offset "+HH", "-HH:MM", "+HH:MM:SS" at the front of s, as seconds east of UTC.
bool take_zone_offset(std::string_view& s, int64_t& seconds) {
  if (s.empty() || (s.front() != '+' && s.front() != '-')) return false;
  const bool negative = s.front() == '-';
  s.remove_prefix(1);
  uint64_t h = 0, m = 0, sec = 0;
  if (!take_digits(s, 2, 2, h)) return false;
  if (take_char(s, ':')) {
    if (!take_digits(s, 2, 2, m)) return false;
    if (take_char(s, ':') && !take_digits(s, 2, 2, sec)) return false;
  }
  if (m > 59 || sec > 59) return false;
  const auto total = static_cast<int64_t>(h * 3600 + m * 60 + sec);
  seconds = negative ? -total : total;
  return true;
}

bool parse_bool(std::string_view s, Value& out, std::string& why) {
  if (s == "t" || s == "true") {
    out = true;
  } else if (s == "f" || s == "false") {
    out = false;
  } else {
    why = "not a boolean (t or f)";
    return false;
  }
  return true;
}

bool parse_int(std::string_view s, Value& out, std::string& why) {
  int64_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec == std::errc::result_out_of_range) {
    why = "integer out of the int64 range";
    return false;
  }
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || s.empty()) {
    why = "not an integer";
    return false;
  }
  out = v;
  return true;
}

bool parse_float(std::string_view s, Value& out, std::string& why) {
  if (s == "NaN") {
    out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (s == "Infinity") {
    out = std::numeric_limits<double>::infinity();
    return true;
  }
  if (s == "-Infinity") {
    out = -std::numeric_limits<double>::infinity();
    return true;
  }
  // from_chars also takes "inf"/"nan" spellings PostgreSQL never writes: refuse anything but digits.
  if (s.empty() || !(is_digit(s.front()) || s.front() == '-' || s.front() == '.')) {
    why = "not a floating-point number";
    return false;
  }
  // float4 text is read as a double directly, not as a float and then widened: see docs/types.md.
  double v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v, std::chars_format::general);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || !std::isfinite(v)) {
    why = r.ec == std::errc::result_out_of_range ? "floating-point number out of range" : "not a floating-point number";
    return false;
  }
  out = v;
  return true;
}

// "-?digits[.digits]" or NaN / Infinity / -Infinity: kept exactly.
bool parse_numeric(std::string_view s, Value& out, std::string& why) {
  if (s == "NaN" || s == "Infinity" || s == "-Infinity") {
    out = Decimal{std::string(s)};
    return true;
  }
  std::string_view rest = s;
  take_char(rest, '-');
  size_t int_digits = 0;
  while (int_digits < rest.size() && is_digit(rest[int_digits])) ++int_digits;
  rest.remove_prefix(int_digits);
  bool ok = int_digits > 0;
  if (ok && take_char(rest, '.')) {
    size_t frac_digits = 0;
    while (frac_digits < rest.size() && is_digit(rest[frac_digits])) ++frac_digits;
    rest.remove_prefix(frac_digits);
    ok = frac_digits > 0;
  }
  if (!ok || !rest.empty()) {
    why = "not a decimal number";
    return false;
  }
  out = Decimal{std::string(s)};
  return true;
}

// lc_monetary=C: "$1,234.56", "-$1,234.56" (also "($1.00)" and a '-' after the symbol, for other C-like
// locales' sign positions). Digits grouped by ',' and a '.' fraction; the result keeps the fraction digits.
bool parse_money(std::string_view s, Value& out, std::string& why) {
  why = "not a money amount in lc_monetary=C form (-$1,234.56)";
  bool negative = false;
  std::string_view rest = s;
  if (rest.size() >= 2 && rest.front() == '(' && rest.back() == ')') {
    negative = true;
    rest = rest.substr(1, rest.size() - 2);
  }
  for (const bool symbol : {false, true}) {
    if (symbol) take_char(rest, '$');
    if (take_char(rest, '-')) {
      if (negative) return false;
      negative = true;
    }
  }
  std::string digits;
  bool seen_digit = false, seen_point = false, last_was_group = false;
  for (const char c : rest) {
    if (is_digit(c)) {
      digits.push_back(c);
      seen_digit = true;
      last_was_group = false;
    } else if (c == ',' && seen_digit && !seen_point && !last_was_group) {
      last_was_group = true;
    } else if (c == '.' && seen_digit && !seen_point && !last_was_group) {
      digits.push_back('.');
      seen_point = true;
    } else {
      return false;
    }
  }
  if (!seen_digit || last_was_group || digits.back() == '.') return false;
  std::string text;
  text.reserve(digits.size() + 1);
  // Zero is unsigned, as numeric writes it ("-$0.00" is not something cash_out writes, but "($0.00)" might be).
  const bool all_zero = std::all_of(digits.begin(), digits.end(), [](char c) { return c == '0' || c == '.'; });
  if (negative && !all_zero) text.push_back('-');
  text.append(digits);
  out = Decimal{std::move(text)};
  return true;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// bytea_output=hex ("\x0aff") or escape ("a\\b\000").
bool parse_bytea(std::string_view s, Value& out, std::string& why) {
  std::string bytes;
  if (s.size() >= 2 && s[0] == '\\' && s[1] == 'x') {
    s.remove_prefix(2);
    if (s.size() % 2 != 0) {
      why = "odd number of hex digits";
      return false;
    }
    bytes.resize(s.size() / 2);
    for (size_t i = 0; i < bytes.size(); ++i) {
      const int hi = hex_value(s[2 * i]);
      const int lo = hex_value(s[2 * i + 1]);
      if (hi < 0 || lo < 0) {
        why = "not a hex digit";
        return false;
      }
      bytes[i] = static_cast<char>(hi << 4 | lo);
    }
  } else {
    bytes.reserve(s.size());
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] != '\\') {
        bytes.push_back(s[i]);
      } else if (i + 1 < s.size() && s[i + 1] == '\\') {
        bytes.push_back('\\');
        ++i;
      } else if (i + 3 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' && s[i + 2] <= '7' &&
                 s[i + 3] >= '0' && s[i + 3] <= '7') {
        bytes.push_back(static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0')));
        i += 3;
      } else {
        why = "bad escape in bytea escape format";
        return false;
      }
    }
  }
  out = Bytes{std::move(bytes)};
  return true;
}

bool parse_date(std::string_view s, Value& out, std::string& why) {
  if (s == "infinity") {
    out = Date{kDateInfinity};
    return true;
  }
  if (s == "-infinity") {
    out = Date{kDateMinusInfinity};
    return true;
  }
  const bool bc = strip_bc(s);
  int64_t days = 0;
  if (!take_date(s, bc, days, why)) return false;
  if (!s.empty()) {
    why = "trailing characters after the date";
    return false;
  }
  // PostgreSQL's dates end at 5874897-12-31 (2147483494 days after 1970), below the sentinels.
  if (days <= kDateMinusInfinity || days >= kDateInfinity) {
    why = "date out of range";
    return false;
  }
  out = Date{static_cast<int32_t>(days)};
  return true;
}

bool parse_time(std::string_view s, Value& out, std::string& why) {
  int64_t micros = 0;
  if (!take_time_of_day(s, true, micros) || !s.empty()) {
    why = "not a time of day (HH:MM:SS[.ffffff])";
    return false;
  }
  out = Time{micros};
  return true;
}

// Local time and offset to UTC, modulo one day.
bool parse_timetz(std::string_view s, Value& out, std::string& why) {
  int64_t micros = 0, offset = 0;
  if (!take_time_of_day(s, true, micros) || !take_zone_offset(s, offset) || !s.empty()) {
    why = "not a time with zone (HH:MM:SS[.ffffff]+HH[:MM[:SS]])";
    return false;
  }
  int64_t utc = (micros - offset * kMicrosPerSecond) % kMicrosPerDay;
  if (utc < 0) utc += kMicrosPerDay;
  out = format_utc_time(utc);
  return true;
}


// The ISO text TimestampTz renders in the envelope ("+294276-12-31T23:59:59.999999Z"), for instants beyond
// the int64 microseconds of the event model.
std::string format_iso_utc(int64_t days, int64_t micros_of_day) {
  int64_t year = 0;
  unsigned month = 0, day = 0;
  civil_from_days(days, year, month, day);
  std::string out;
  if (year < 0 || year > 9999) out.push_back(year < 0 ? '-' : '+');
  std::string digits = std::to_string(year < 0 ? -year : year);
  if (digits.size() < 4) out.append(4 - digits.size(), '0');
  out += digits;
  const auto two = [&out](unsigned v) {
    out.push_back(static_cast<char>('0' + v / 10));
    out.push_back(static_cast<char>('0' + v % 10));
  };
  out.push_back('-');
  two(month);
  out.push_back('-');
  two(day);
  out.push_back('T');
  std::string time = format_utc_time(micros_of_day);  // "HH:MM:SS[.ffffff]Z"
  out += time;
  return out;
}

struct ParsedTimestamp {
  bool fits = false;       // micros is valid; otherwise the instant is beyond int64 microseconds
  int64_t micros = 0;      // since 1970-01-01 00:00:00 (UTC when with_zone), or a sentinel
  int64_t days = 0;        // when !fits: the UTC day and time of day
  int64_t micros_of_day = 0;
};

// "YYYY-MM-DD HH:MM:SS[.ffffff][offset][ BC]", or infinity / -infinity.
bool parse_timestamp(std::string_view s, bool with_zone, ParsedTimestamp& result, std::string& why) {
  if (s == "infinity" || s == "-infinity") {
    result.fits = true;
    result.micros = s == "infinity" ? kTimestampInfinity : kTimestampMinusInfinity;
    return true;
  }
  const bool bc = strip_bc(s);
  int64_t days = 0, tod = 0, offset = 0;
  if (!take_date(s, bc, days, why)) return false;
  if (!take_char(s, ' ') || !take_time_of_day(s, false, tod)) {
    why = "not an ISO timestamp (YYYY-MM-DD HH:MM:SS[.ffffff]; DateStyle must be ISO)";
    return false;
  }
  if (with_zone && !take_zone_offset(s, offset)) {
    why = "missing or bad numeric zone offset (+HH[:MM[:SS]]; DateStyle must be ISO)";
    return false;
  }
  if (!s.empty()) {
    why = "trailing characters after the timestamp";
    return false;
  }
  // Dates stop at year 5874897 and offsets at 16 hours: no overflow in this normalisation.
  tod -= offset * kMicrosPerSecond;
  const int64_t carry = tod >= 0 ? tod / kMicrosPerDay : -((-tod + kMicrosPerDay - 1) / kMicrosPerDay);
  days += carry;
  tod -= carry * kMicrosPerDay;
  int64_t micros = 0;
  if (__builtin_mul_overflow(days, kMicrosPerDay, &micros) || __builtin_add_overflow(micros, tod, &micros) ||
      micros == kTimestampInfinity || micros == kTimestampMinusInfinity) {
    result.fits = false;
    result.days = days;
    result.micros_of_day = tod;
    return true;
  }
  result.fits = true;
  result.micros = micros;
  return true;
}

// IntervalStyle=postgres: "[N year[s]] [N mon[s]] [N day[s]] [[+-]H:MM:SS[.ffffff]]", every part signed
// on its own; "00:00:00" for zero.
bool parse_interval(std::string_view s, Value& out, std::string& why) {
  why = "not an interval in IntervalStyle postgres form (1 year 2 mons -3 days +04:05:06.789)";
  if (s.empty()) return false;
  int64_t months = 0, days = 0, micros = 0;
  bool seen_time = false;
  while (!s.empty()) {
    const size_t space = s.find(' ');
    std::string_view token = s.substr(0, space);
    s.remove_prefix(space == std::string_view::npos ? s.size() : space + 1);
    if (token.empty() || (space != std::string_view::npos && s.empty())) return false;
    if (token.find(':') != std::string_view::npos) {
      if (seen_time || !s.empty()) return false;  // the time part comes last, once
      seen_time = true;
      bool negative = false;
      if (token.front() == '-' || token.front() == '+') {
        negative = token.front() == '-';
        token.remove_prefix(1);
      }
      uint64_t h = 0, m = 0, sec = 0;
      int64_t frac = 0;
      if (!take_digits(token, 2, 19, h) || !take_char(token, ':') || !take_digits(token, 2, 2, m) ||
          !take_char(token, ':') || !take_digits(token, 2, 2, sec) || !take_fraction(token, frac) || !token.empty() ||
          m > 59 || sec > 59) {
        return false;
      }
      // The magnitude may reach 2^63 for the most negative interval.
      uint64_t magnitude = 0;
      if (__builtin_mul_overflow(h, static_cast<uint64_t>(kMicrosPerHour), &magnitude) ||
          __builtin_add_overflow(magnitude, m * kMicrosPerMinute + sec * kMicrosPerSecond + frac, &magnitude)) {
        why = "interval time out of range";
        return false;
      }
      constexpr uint64_t kMaxPositive = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
      if (magnitude > kMaxPositive + (negative ? 1 : 0)) {
        why = "interval time out of range";
        return false;
      }
      micros = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
      continue;
    }
    // "N unit"
    if (seen_time) return false;
    int64_t n = 0;
    if (token.front() == '+') token.remove_prefix(1);
    const auto r = std::from_chars(token.data(), token.data() + token.size(), n);
    if (r.ec != std::errc() || r.ptr != token.data() + token.size()) return false;
    const size_t unit_end = s.find(' ');
    const std::string_view unit = s.substr(0, unit_end);
    s.remove_prefix(unit_end == std::string_view::npos ? s.size() : unit_end + 1);
    if (unit_end != std::string_view::npos && s.empty()) return false;  // a trailing space
    int64_t factor = 0;
    int64_t* field = nullptr;
    if (unit == "year" || unit == "years") {
      factor = 12;
      field = &months;
    } else if (unit == "mon" || unit == "mons") {
      factor = 1;
      field = &months;
    } else if (unit == "day" || unit == "days") {
      factor = 1;
      field = &days;
    } else {
      return false;
    }
    int64_t add = 0;
    if (__builtin_mul_overflow(n, factor, &add) || __builtin_add_overflow(*field, add, field)) {
      why = "interval out of range";
      return false;
    }
  }
  constexpr int64_t kMin32 = std::numeric_limits<int32_t>::min();
  constexpr int64_t kMax32 = std::numeric_limits<int32_t>::max();
  if (months < kMin32 || months > kMax32 || days < kMin32 || days > kMax32) {
    why = "interval months or days out of range";
    return false;
  }
  out = Interval{static_cast<int32_t>(months), static_cast<int32_t>(days), micros};
  return true;
}

bool parse_uuid_text(std::string_view s, Value& out, std::string& why) {
  Uuid u;
  if (s.size() != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' || !parse_uuid(s, u)) {
    why = "not a UUID";
    return false;
  }
  out = u;
  return true;
}

bool parse_bits(std::string_view s, Value& out, std::string& why) {
  for (const char c : s) {
    if (c != '0' && c != '1') {
      why = "not a bit string";
      return false;
    }
  }
  out = std::string(s);
  return true;
}

bool parse_scalar(Kind kind, std::string_view s, Value& out, std::string& why) {
  switch (kind) {
    case Kind::Bool: return parse_bool(s, out, why);
    case Kind::Bytea: return parse_bytea(s, out, why);
    case Kind::String: out = std::string(s); return true;
    case Kind::Int: return parse_int(s, out, why);
    case Kind::Float: return parse_float(s, out, why);
    case Kind::Numeric: return parse_numeric(s, out, why);
    case Kind::Money: return parse_money(s, out, why);
    case Kind::Date: return parse_date(s, out, why);
    case Kind::Time: return parse_time(s, out, why);
    case Kind::TimeTz: return parse_timetz(s, out, why);
    case Kind::Timestamp:
    case Kind::TimestampTz: {
      ParsedTimestamp t;
      if (!parse_timestamp(s, kind == Kind::TimestampTz, t, why)) return false;
      if (t.fits) {
        if (kind == Kind::Timestamp) {
          out = Timestamp{t.micros};
        } else {
          out = TimestampTz{t.micros};
        }
        return true;
      }
      // PostgreSQL's timestamps reach 294276-12-31, int64 microseconds since 1970 only 294247-01-10T04:00:54.
      // A TimestampTz renders as ISO text, so the text itself carries the later instants unchanged; a
      // Timestamp renders as a number, which has no room for them.
      if (kind == Kind::TimestampTz) {
        out = format_iso_utc(t.days, t.micros_of_day);
        return true;
      }
      why = "timestamp after 294247-01-10 04:00:54.775807 does not fit int64 microseconds since 1970";
      return false;
    }
    case Kind::Interval: return parse_interval(s, out, why);
    case Kind::Uuid: return parse_uuid_text(s, out, why);
    case Kind::Json: out = Json{std::string(s)}; return true;
    case Kind::Bits: return parse_bits(s, out, why);
    case Kind::Array: break;  // handled by the caller
  }
  why = "internal: no scalar parser";
  return false;
}

PgParseResult parse_typed(uint32_t type_oid, int32_t typmod, std::string_view text, const PgTypeRegistry& types,
                          int depth);

PgParseError make_error(uint32_t type_oid, const PgTypeRegistry& types, std::string_view text, std::string message) {
  return PgParseError{type_oid, types.type_name(type_oid), std::string(text), std::move(message)};
}

bool is_array_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

// PostgreSQL's array text form: optional "[lb:ub][lb:ub]=" bounds (dropped), then nested braces; elements
// separated by ',', double-quoted with backslash escapes when needed, NULL unquoted for SQL NULL.
class ArrayParser {
 public:
  ArrayParser(uint32_t array_oid, uint32_t element_oid, int32_t typmod, std::string_view text,
              const PgTypeRegistry& types, int depth)
      : array_oid_(array_oid), element_oid_(element_oid), typmod_(typmod), text_(text), types_(types),
        depth_(depth) {}

  PgParseResult parse() {
    if (!skip_bounds()) return structural("bad dimension decoration ([lb:ub]=)");
    skip_space();
    Value result;
    if (!parse_level(result, 1)) return error_ ? std::move(*error_) : structural("malformed array");
    skip_space();
    if (pos_ != text_.size()) return structural("trailing characters after the array");
    return result;
  }

 private:
  PgParseError structural(std::string message) const {
    return make_error(array_oid_, types_, text_, "malformed array: " + std::move(message));
  }

  void skip_space() {
    while (pos_ < text_.size() && is_array_space(text_[pos_])) ++pos_;
  }

  bool skip_bounds() {
    if (pos_ >= text_.size() || text_[pos_] != '[') return true;
    while (pos_ < text_.size() && text_[pos_] == '[') {
      const size_t close = text_.find(']', pos_);
      if (close == std::string_view::npos) return false;
      std::string_view dim = text_.substr(pos_ + 1, close - pos_ - 1);
      const size_t colon = dim.find(':');
      if (colon == std::string_view::npos) return false;
      for (std::string_view bound : {dim.substr(0, colon), dim.substr(colon + 1)}) {
        int64_t v = 0;
        const auto r = std::from_chars(bound.data(), bound.data() + bound.size(), v);
        if (bound.empty() || r.ec != std::errc() || r.ptr != bound.data() + bound.size()) return false;
      }
      pos_ = close + 1;
    }
    if (pos_ >= text_.size() || text_[pos_] != '=') return false;
    ++pos_;
    return true;
  }

  // At '{': reads one level into out (an Array). The array must be rectangular, as PostgreSQL's are: all
  // elements at the same depth, all sub-arrays of one level the same length.
  bool parse_level(Value& out, int level) {
    if (level > kMaxArrayDims) {
      error_ = structural("more than 6 dimensions");
      return false;
    }
    if (pos_ >= text_.size() || text_[pos_] != '{') return false;
    ++pos_;
    Array array;
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == '}') {
      ++pos_;
      if (level > 1) {
        error_ = structural("empty sub-array");
        return false;
      }
      out = std::move(array);
      return true;
    }
    while (true) {
      skip_space();
      if (pos_ >= text_.size()) return false;
      Value item;
      if (text_[pos_] == '{') {
        if (!parse_level(item, level + 1)) return false;
      } else {
        if (element_level_ != 0 && element_level_ != level) {
          error_ = structural("elements at different depths");
          return false;
        }
        element_level_ = level;
        if (!parse_element(item)) return false;
      }
      array.items.push_back(std::move(item));
      skip_space();
      if (pos_ >= text_.size()) return false;
      if (text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (text_[pos_] == '}') {
        ++pos_;
        size_t& length = lengths_[static_cast<size_t>(level - 1)];
        if (length != 0 && length != array.items.size()) {
          error_ = structural("sub-arrays of different lengths");
          return false;
        }
        length = array.items.size();
        out = std::move(array);
        return true;
      }
      return false;
    }
  }

  bool parse_element(Value& out) {
    std::string raw;
    bool quoted = false;
    if (text_[pos_] == '"') {
      quoted = true;
      ++pos_;
      while (true) {
        if (pos_ >= text_.size()) return false;
        const char c = text_[pos_++];
        if (c == '"') break;
        if (c == '\\') {
          if (pos_ >= text_.size()) return false;
          raw.push_back(text_[pos_++]);
        } else {
          raw.push_back(c);
        }
      }
    } else {
      // Unquoted: up to the delimiter or the closing brace; trailing white space is not part of it.
      size_t keep = 0;
      while (pos_ < text_.size()) {
        const char c = text_[pos_];
        if (c == ',' || c == '}') break;
        if (c == '{' || c == '"') return false;
        ++pos_;
        if (c == '\\') {
          if (pos_ >= text_.size()) return false;
          raw.push_back(text_[pos_++]);
          keep = raw.size();
        } else {
          raw.push_back(c);
          if (!is_array_space(c)) keep = raw.size();
        }
      }
      raw.resize(keep);
      if (raw.empty()) return false;
    }
    if (!quoted && raw.size() == 4 && (raw[0] | 0x20) == 'n' && (raw[1] | 0x20) == 'u' && (raw[2] | 0x20) == 'l' &&
        (raw[3] | 0x20) == 'l') {
      out = Null{};
      return true;
    }
    PgParseResult element = parse_typed(element_oid_, typmod_, raw, types_, depth_ + 1);
    if (!element.ok()) {
      PgParseError e = element.error();
      e.message = "element of " + types_.type_name(array_oid_) + ": " + e.message;
      error_ = std::move(e);
      return false;
    }
    out = std::move(element).value();
    return true;
  }

  uint32_t array_oid_;
  uint32_t element_oid_;
  int32_t typmod_;
  std::string_view text_;
  const PgTypeRegistry& types_;
  int depth_;
  size_t pos_ = 0;
  int element_level_ = 0;                    // the depth of the elements, once one is seen
  std::array<size_t, kMaxArrayDims> lengths_{};  // the length of each level's arrays, once one is closed
  std::optional<PgParseError> error_;
};

PgParseResult parse_typed(uint32_t type_oid, int32_t typmod, std::string_view text, const PgTypeRegistry& types,
                          int depth) {
  if (depth > kMaxTypeDepth) return make_error(type_oid, types, text, "types nest too deeply (a domain cycle?)");
  if (const Builtin* b = find_builtin(type_oid)) {
    if (b->kind == Kind::Array) return ArrayParser(type_oid, b->element_oid, typmod, text, types, depth).parse();
    Value out;
    std::string why;
    if (!parse_scalar(b->kind, text, out, why)) return make_error(type_oid, types, text, std::move(why));
    return out;
  }
  const PgTypeInfo* info = types.find(type_oid);
  if (info == nullptr) return Value(std::string(text));  // unknown type: its text
  if (info->base_oid != 0) {
    PgParseResult base = parse_typed(info->base_oid, typmod, text, types, depth + 1);
    if (!base.ok() && base.error().type_oid == info->base_oid) {
      PgParseError e = base.error();
      e.message = "domain " + info->name + ": " + e.message;
      return e;
    }
    return base;
  }
  // box (OID 603) is the one built-in type whose array delimiter is ';', not ',': its arrays stay text.
  constexpr uint32_t kBoxOid = 603;
  if (info->category == 'A' && info->element_oid != 0 && info->element_oid != kBoxOid) {
    return ArrayParser(type_oid, info->element_oid, typmod, text, types, depth).parse();
  }
  return Value(std::string(text));  // enums, composites, ranges...: the text
}

}  // namespace

bool PgTypeRegistry::add(PgTypeInfo info) {
  if (info.oid == 0 || find_builtin(info.oid) != nullptr) return false;
  types_[info.oid] = std::move(info);
  return true;
}

const PgTypeInfo* PgTypeRegistry::builtin(uint32_t type_oid) {
  const size_t slot = builtin_slot(type_oid);
  return slot == 0 ? nullptr : &builtin_infos()[slot - 1];
}

const PgTypeInfo* PgTypeRegistry::find(uint32_t type_oid) const {
  if (const PgTypeInfo* b = builtin(type_oid)) return b;
  const auto it = types_.find(type_oid);
  return it == types_.end() ? nullptr : &it->second;
}

std::string PgTypeRegistry::type_name(uint32_t type_oid) const {
  if (const PgTypeInfo* info = find(type_oid)) return info->name;
  return "oid " + std::to_string(type_oid);
}

std::string PgParseError::to_string() const {
  constexpr size_t kMaxShown = 200;
  std::string shown = text.size() > kMaxShown ? text.substr(0, kMaxShown) + "..." : text;
  return "cannot parse " + type_name + " (oid " + std::to_string(type_oid) + ") value '" + shown + "': " + message;
}

PgParseResult parse_pg_text(uint32_t type_oid, int32_t typmod, std::string_view text, const PgTypeRegistry& types) {
  return parse_typed(type_oid, typmod, text, types, 0);
}

std::string format_utc_time(int64_t micros) {
  const auto secs = static_cast<unsigned>(micros / kMicrosPerSecond);
  const auto frac = static_cast<unsigned>(micros % kMicrosPerSecond);
  char buf[17];  // HH:MM:SS.ffffffZ
  const unsigned parts[3] = {secs / 3600, secs / 60 % 60, secs % 60};
  size_t n = 0;
  for (int i = 0; i < 3; ++i) {
    if (i) buf[n++] = ':';
    buf[n++] = static_cast<char>('0' + parts[i] / 10);
    buf[n++] = static_cast<char>('0' + parts[i] % 10);
  }
  if (frac != 0) {
    buf[n++] = '.';
    unsigned f = frac;
    for (int i = 5; i >= 0; --i, f /= 10) buf[n + static_cast<size_t>(i)] = static_cast<char>('0' + f % 10);
    n += 6;
  }
  buf[n++] = 'Z';
  return std::string(buf, n);
}

}  // namespace tidemark::pg
