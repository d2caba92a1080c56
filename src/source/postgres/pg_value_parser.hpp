#pragma once
// PostgreSQL's text output form of a column value (what pgoutput protocol version 1 sends) to the event
// model's typed values. The mapping of every type is documented in docs/types.md.
//
// The text forms depend on the session that runs the output functions (the walsender). The parser expects
// PostgreSQL's defaults, which the source pins in its replication connection:
//   DateStyle=ISO (any order), IntervalStyle=postgres, extra_float_digits >= 1 (shortest exact floats),
//   bytea_output=hex (escape is also understood), lc_monetary=C (money as -$1,234.56),
//   TimeZone=UTC (any zone works: timestamptz/timetz texts carry their numeric offset).
// Anything that does not fit the type's text form is an error, never a guess.

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "tidemark/value.hpp"

namespace tidemark::pg {

// OIDs of the built-in types the parser knows (pg_type.oid, fixed across PostgreSQL versions).
namespace oid {
inline constexpr uint32_t kBool = 16;
inline constexpr uint32_t kBytea = 17;
inline constexpr uint32_t kChar = 18;  // "char": one byte
inline constexpr uint32_t kName = 19;
inline constexpr uint32_t kInt8 = 20;
inline constexpr uint32_t kInt2 = 21;
inline constexpr uint32_t kInt4 = 23;
inline constexpr uint32_t kText = 25;
inline constexpr uint32_t kOid = 26;
inline constexpr uint32_t kJson = 114;
inline constexpr uint32_t kXml = 142;
inline constexpr uint32_t kCidr = 650;
inline constexpr uint32_t kFloat4 = 700;
inline constexpr uint32_t kFloat8 = 701;
inline constexpr uint32_t kMacaddr8 = 774;
inline constexpr uint32_t kMoney = 790;
inline constexpr uint32_t kMacaddr = 829;
inline constexpr uint32_t kInet = 869;
inline constexpr uint32_t kBpchar = 1042;
inline constexpr uint32_t kVarchar = 1043;
inline constexpr uint32_t kDate = 1082;
inline constexpr uint32_t kTime = 1083;
inline constexpr uint32_t kTimestamp = 1114;
inline constexpr uint32_t kTimestampTz = 1184;
inline constexpr uint32_t kInterval = 1186;
inline constexpr uint32_t kTimeTz = 1266;
inline constexpr uint32_t kBit = 1560;
inline constexpr uint32_t kVarbit = 1562;
inline constexpr uint32_t kNumeric = 1700;
inline constexpr uint32_t kUuid = 2950;
inline constexpr uint32_t kJsonb = 3802;

// Their array types (pg_type.typarray, read from a PostgreSQL 15 server).
inline constexpr uint32_t kBoolArray = 1000;
inline constexpr uint32_t kByteaArray = 1001;
inline constexpr uint32_t kCharArray = 1002;
inline constexpr uint32_t kNameArray = 1003;
inline constexpr uint32_t kInt8Array = 1016;
inline constexpr uint32_t kInt2Array = 1005;
inline constexpr uint32_t kInt4Array = 1007;
inline constexpr uint32_t kTextArray = 1009;
inline constexpr uint32_t kOidArray = 1028;
inline constexpr uint32_t kJsonArray = 199;
inline constexpr uint32_t kXmlArray = 143;
inline constexpr uint32_t kCidrArray = 651;
inline constexpr uint32_t kFloat4Array = 1021;
inline constexpr uint32_t kFloat8Array = 1022;
inline constexpr uint32_t kMacaddr8Array = 775;
inline constexpr uint32_t kMoneyArray = 791;
inline constexpr uint32_t kMacaddrArray = 1040;
inline constexpr uint32_t kInetArray = 1041;
inline constexpr uint32_t kBpcharArray = 1014;
inline constexpr uint32_t kVarcharArray = 1015;
inline constexpr uint32_t kDateArray = 1182;
inline constexpr uint32_t kTimeArray = 1183;
inline constexpr uint32_t kTimestampArray = 1115;
inline constexpr uint32_t kTimestampTzArray = 1185;
inline constexpr uint32_t kIntervalArray = 1187;
inline constexpr uint32_t kTimeTzArray = 1270;
inline constexpr uint32_t kBitArray = 1561;
inline constexpr uint32_t kVarbitArray = 1563;
inline constexpr uint32_t kNumericArray = 1231;
inline constexpr uint32_t kUuidArray = 2951;
inline constexpr uint32_t kJsonbArray = 3807;
}  // namespace oid

// One row of pg_type, as far as the parser needs it.
struct PgTypeInfo {
  uint32_t oid = 0;
  char category = 'U';      // pg_type.typcategory: 'A' array, 'E' enum, 'B' boolean, 'S' string, ...
  uint32_t element_oid = 0;  // arrays (category 'A'): the element type; ignored for other categories
  uint32_t base_oid = 0;     // domains (pg_type.typbasetype): values parse as this type; 0 otherwise
  std::string name;          // pg_type.typname, for error messages
  std::vector<std::string> labels;  // enums: pg_enum's labels in sort order (for schemas, not for parsing)
};

// The types the parser knows: the built-in ones above (fixed), plus what the source registers at run time
// for the Type messages it receives (enums, domains, arrays of those), from pg_type.
class PgTypeRegistry {
 public:
  PgTypeRegistry() = default;

  // Registers (or replaces) a run-time type. Returns false, and changes nothing, for a built-in OID or an
  // OID of 0: the built-in table cannot be overridden.
  //   enum:   {oid, 'E', 0, 0, name}               -> std::string
  //   domain: {oid, <base's category>, 0, base, name} -> parsed as the base type (domains may nest)
  //   array:  {oid, 'A', element, 0, name}         -> Array of parsed elements
  // Other categories (composite 'C', range 'R', ...) give the text as std::string.
  bool add(PgTypeInfo info);

  // The built-in or registered type, or nullptr when the OID is unknown.
  const PgTypeInfo* find(uint32_t type_oid) const;

  // "int4", "_int4", a registered name, or "oid 12345" for an unknown type.
  std::string type_name(uint32_t type_oid) const;

  // The built-in types only (static table), or nullptr.
  static const PgTypeInfo* builtin(uint32_t type_oid);

  size_t registered_count() const { return types_.size(); }

 private:
  std::unordered_map<uint32_t, PgTypeInfo> types_;
};

// Why a text did not parse. For an array element, the type and text are the element's.
struct PgParseError {
  uint32_t type_oid = 0;
  std::string type_name;
  std::string text;     // the offending text, in full
  std::string message;  // what is wrong with it
  // "cannot parse int4 (oid 23) value 'abc': not an integer" (the text cut to 200 bytes).
  std::string to_string() const;
};

// A Value, or the error. No exceptions.
class PgParseResult {
 public:
  PgParseResult(Value value) : r_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: reads naturally
  PgParseResult(PgParseError error) : r_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool ok() const { return r_.index() == 0; }
  explicit operator bool() const { return ok(); }
  // Only when ok().
  const Value& value() const& { return std::get<0>(r_); }
  Value&& value() && { return std::get<0>(std::move(r_)); }
  // Only when !ok().
  const PgParseError& error() const { return std::get<1>(r_); }

 private:
  std::variant<Value, PgParseError> r_;
};

// Parses PostgreSQL's text output of a value of type `type_oid` (from the Relation message; `typmod` is the
// column's atttypmod, not needed by any text form but passed on to array elements and domain bases).
// Unknown OIDs give the text unchanged as std::string. Never returns Null or Unavailable itself (those come
// from pgoutput's column markers); array elements may be Null.
PgParseResult parse_pg_text(uint32_t type_oid, int32_t typmod, std::string_view text, const PgTypeRegistry& types);

// Debezium's io.debezium.time.ZonedTime text for a time of day in UTC: "HH:MM:SS[.ffffff]Z" (six fractional
// digits when the fraction is not zero, as TimestampTz renders). `micros` must be in [0, 86400000000).
std::string format_utc_time(int64_t micros);

}  // namespace tidemark::pg
