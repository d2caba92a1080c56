#pragma once
// The typed values of a row image: source-neutral, so that every source maps its wire format into these
// and every sink renders only these.

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <variant>
#include <vector>

namespace tidemark {

// SQL NULL.
struct Null {
  bool operator==(const Null&) const = default;
};

// The column has a value in the database, but the log did not carry it (PostgreSQL's unchanged TOASTed
// values, columns left out of a MINIMAL/NOBLOB binlog image). Never confused with NULL.
struct Unavailable {
  bool operator==(const Unavailable&) const = default;
};

// Exact decimal as canonical text: an optional '-', digits, optionally '.' and digits; or one of
// "NaN", "Infinity", "-Infinity". Kept as text so that no precision is lost on the way.
struct Decimal {
  std::string text;
  bool operator==(const Decimal&) const = default;
};

// Raw bytes (bytea, BLOB, BINARY).
struct Bytes {
  std::string data;
  bool operator==(const Bytes&) const = default;
};

// Days since 1970-01-01. kDateInfinity / kDateMinusInfinity stand for PostgreSQL's 'infinity' values.
struct Date {
  int32_t days = 0;
  bool operator==(const Date&) const = default;
};
inline constexpr int32_t kDateInfinity = std::numeric_limits<int32_t>::max();
inline constexpr int32_t kDateMinusInfinity = std::numeric_limits<int32_t>::min();

// Microseconds since midnight. May be negative or exceed a day (MySQL TIME ranges over ±838 hours).
struct Time {
  int64_t micros = 0;
  bool operator==(const Time&) const = default;
};

// Wall-clock date and time without a zone, as microseconds since 1970-01-01 00:00:00.
struct Timestamp {
  int64_t micros = 0;
  bool operator==(const Timestamp&) const = default;
};

// An instant, as microseconds since the Unix epoch (UTC).
struct TimestampTz {
  int64_t micros = 0;
  bool operator==(const TimestampTz&) const = default;
};
inline constexpr int64_t kTimestampInfinity = std::numeric_limits<int64_t>::max();
inline constexpr int64_t kTimestampMinusInfinity = std::numeric_limits<int64_t>::min();

// PostgreSQL's interval: months, days and microseconds are independent fields (a month is not 30 days).
struct Interval {
  int32_t months = 0;
  int32_t days = 0;
  int64_t micros = 0;
  bool operator==(const Interval&) const = default;
};

// JSON document as text (already valid JSON; rendered as a string, as Debezium's io.debezium.data.Json).
struct Json {
  std::string text;
  bool operator==(const Json&) const = default;
};

struct Uuid {
  std::array<uint8_t, 16> bytes{};
  bool operator==(const Uuid&) const = default;
};

struct Value;

// A one-dimensional array; elements may be NULL. Multi-dimensional arrays nest.
struct Array {
  std::vector<Value> items;
  bool operator==(const Array&) const;
};

struct Value {
  using Variant = std::variant<Null, Unavailable, bool, int64_t, uint64_t, double, Decimal, std::string, Bytes,
                               Date, Time, Timestamp, TimestampTz, Interval, Json, Uuid, Array>;
  Variant v;

  Value() = default;
  template <typename T>
    requires std::is_constructible_v<Variant, T&&>
  Value(T&& x) : v(std::forward<T>(x)) {}  // NOLINT(google-explicit-constructor): values read naturally

  bool is_null() const { return std::holds_alternative<Null>(v); }
  bool operator==(const Value& other) const { return v == other.v; }
};

inline bool Array::operator==(const Array& other) const { return items == other.items; }

// A row image: values in the column order of the table's schema.
using Row = std::vector<Value>;

// Canonical text of a UUID ("xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"); parse returns false on bad input.
std::string uuid_to_string(const Uuid& u);
void append_uuid(std::string& out, const Uuid& u);
bool parse_uuid(std::string_view text, Uuid& out);

}  // namespace tidemark
