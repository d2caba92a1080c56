#pragma once
// SQL literals of the database sink: how a source-neutral Value (tidemark/value.hpp) is written into an
// INSERT/UPDATE/DELETE statement for a PostgreSQL 15 or MySQL/MariaDB 10.11 target column.
//
// The sink's sessions are set up so that these literals mean exactly one thing:
//   PostgreSQL: client_encoding UTF8, standard_conforming_strings on (a backslash in '...' is itself),
//               TimeZone UTC.
//   MySQL:      character set utf8mb4, time_zone '+00:00', sql_mode without NO_BACKSLASH_ESCAPES (and
//               strict, so that the server refuses what does not fit instead of truncating it).
//
// `target_type` is the target column's declared type, lower case, as the target's catalog gives it
// (PostgreSQL: format_type(), "numeric(20,0)", "timestamp with time zone", "integer[]"; MySQL:
// COLUMN_TYPE, "bigint(20) unsigned", "datetime(6)", "enum('a','b')"); empty when unknown. It selects a
// rendering where one value kind has several (bool into an integer column, bits into bytea...) and the
// range, scale and precision checks; without it those checks are not made (and MySQL refuses arrays). `source` (may be null) describes
// the source column: its kind Bits says that Bytes hold a bit string, `element` is the kind of an
// array's elements.
//
// | Value              | PostgreSQL target                                   | MySQL target                                   |
// |--------------------|-----------------------------------------------------|------------------------------------------------|
// | Null               | NULL                                                | NULL                                           |
// | Unavailable        | error (never rendered)                              | error (never rendered)                         |
// | bool               | true / false; 1 / 0 into integer, numeric, float;   | 1 / 0                                          |
// |                    | B'1' / B'0' into bit                                |                                                |
// | int64, uint64      | digits ('quoted' into real / double precision);     | digits                                         |
// |                    | into boolean: 0 false, 1 true, else error           |                                                |
// | double             | shortest round-trip digits, quoted: '0.1', '-0',    | shortest round-trip digits; -0 as -0e0;        |
// |                    | 'NaN', 'Infinity', '-Infinity' (error into integer) | NaN / infinity: error                          |
// | Decimal            | digits ('quoted' into real / double precision);     | digits; NaN / infinity: error                  |
// |                    | 'NaN' 'Infinity' '-Infinity' (error into integer)   |                                                |
// |  both, into integer| a fraction: error; a double as integer digits       | the same                                       |
// |  both, into decimal| more decimal places than numeric(p,s) / decimal(p,s)| the same (DECIMAL without (p,s) has scale 0)   |
// |                    | keeps: error                                        |                                                |
// | std::string (also  | '...' with ' doubled; a NUL byte: error; into bytea | '...' with \0 \n \r \\ \' \" \Z escaped; into  |
// | Enum, EnumSet)     | its bytes as '\x<hex>'                              | bit: b'...' when it is a 0/1 string, else error|
// | Bytes              | '\x<hex>' (bytea hex input)                         | X'<hex>'                                       |
// | Bytes, kind Bits   | B'<exactly length bits>'; digits into integer and   | b'<exactly length bits>'; digits into integer  |
// |                    | numeric; '\x<hex>' into bytea; a set bit above      | and decimal; X'<hex>' into binary and blobs;   |
// |                    | length: error                                       | a set bit above length: error                  |
// | Date               | 'YYYY-MM-DD', 'YYYY-MM-DD BC' (year 0 is 1 BC);     | 'YYYY-MM-DD' for years 0..9999, else error;    |
// |                    | 'infinity' / '-infinity'                            | infinity: error                                |
// | Time               | 'HH:MM:SS[.ffffff]' from 00:00:00 to 24:00:00, else | '[-]HHH:MM:SS[.ffffff]' within ±838:59:59,     |
// |                    | error (any value into interval)                     | else error                                     |
// | Timestamp          | 'YYYY-MM-DD HH:MM:SS[.ffffff][ BC]'; 'infinity'     | 'YYYY-MM-DD HH:MM:SS[.ffffff]', years 0..9999  |
// |                    | / '-infinity'                                       | (TIMESTAMP column: 1970-01-01 00:00:01 to      |
// |                    |                                                     | 2038-01-19 03:14:07.999999), else error        |
// | TimestampTz        | as Timestamp with '+00' after the time              | as Timestamp, the UTC wall clock               |
// |  both, temporal    | more fractional second digits than time(n) /        | the same (no (n) keeps none: DATETIME is       |
// |                    | timestamp(n) keeps: error                           | DATETIME(0))                                   |
// |  both, into date   | Timestamp(Tz) at midnight: 'YYYY-MM-DD'; else error | the same                                       |
// | Interval           | '<m> mons <d> days [-]HH:MM:SS[.ffffff]'            | error (text column: ISO 8601 'P1Y2M3DT4H5M6S') |
// | Json               | '...' (text of the document)                        | '...' (text of the document)                   |
// | Uuid               | 'xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx'; into bytea  | canonical text; into binary(16): X'<hex>'      |
// |                    | '\x<hex>'                                           |                                                |
// | Array              | '{...}' array literal, elements double-quoted with  | into json (or text): '[...]' JSON array, else  |
// |                    | \" and \\, NULL, nested {...}; element type's rules;| error                                          |
// |                    | into json/jsonb: a JSON array                       |                                                |
//
// PostgreSQL quotes numbers where the column's own input function must read them: `real_column = 0.1`
// with an unquoted (numeric) 0.1 compares in double precision and misses the row. MySQL has no such
// literal; equality on FLOAT columns is inexact there whatever the literal. MariaDB stores -0 as 0.
//
// Into a text column (char, varchar, text, character varying, bpchar, name, citext, tinytext..longtext,
// and for MySQL also enum and set, whose members are text) every value is written as quoted text,
// without range checks: the text above without B'' or X'' decoration (bits as '0101'), bool as
// 'true'/'false' (PostgreSQL) or '1'/'0' (MySQL), non-finite numbers as 'NaN', 'Infinity', '-Infinity',
// Bytes as '\x<hex>' text (PostgreSQL) or the bytes themselves (MySQL, X'<hex>', which strict mode refuses
// when they are not UTF-8), dates with astronomical years for MySQL ('-0001-12-31'), an interval in the
// PostgreSQL form (PostgreSQL) or ISO 8601 (MySQL), an Array as its PostgreSQL array literal (PostgreSQL)
// or JSON array (MySQL). Unavailable and PostgreSQL strings with a NUL byte stay errors.
//
// JSON arrays (MySQL, or a PostgreSQL json/jsonb column): null, true/false, numbers, strings (UTF-8 is
// checked), Json documents embedded as they are, Bytes as base64 strings, bits as "0101", dates and times
// as strings of their text above, TimestampTz as "YYYY-MM-DDTHH:MM:SS[.ffffff]Z", Interval as ISO 8601,
// nested arrays. NaN and infinities have no JSON form: error.
//
// Strings are not checked for UTF-8 (outside JSON arrays): both servers refuse ill-formed text (MySQL in
// strict mode). A value the target type cannot hold for reasons these rules do not check (a varchar too
// short, an integer out of the column's range, a bit(n) of another length) is refused by the server.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tidemark/change_event.hpp"
#include "tidemark/value.hpp"

namespace tidemark::dbsink {

enum class Dialect { Postgres, MySql };

// A target column's type as the literals below read it: worked out once per column, not once per value.
class LiteralType {
 public:
  LiteralType() = default;
  LiteralType(Dialect dialect, std::string_view type);
  Dialect dialect() const { return dialect_; }
  const std::string& type() const { return type_; }  // as given, without surrounding blanks
  uint8_t target() const { return target_; }          // the rendering rule (sql_values.cpp's Target)
  int fraction_digits() const { return fraction_digits_; }
  int scale() const { return scale_; }

 private:
  Dialect dialect_ = Dialect::Postgres;
  std::string type_;
  uint8_t target_ = 0;
  int fraction_digits_ = -1;
  int scale_ = -1;
};

// Appends `value` as a SQL literal that `dialect` accepts for a column of `target_type` (see above).
// Returns nullopt on success; otherwise an error sentence naming the value and why the target cannot hold
// it, and `out` is left as it was.
std::optional<std::string> append_sql_literal(std::string& out, Dialect dialect, const Value& value,
                                              const ColumnInfo* source, std::string_view target_type);
std::optional<std::string> append_sql_literal(std::string& out, const Value& value, const ColumnInfo* source,
                                              const LiteralType& target_type);

// `literal` (one of append_sql_literal's for a PostgreSQL column of `target_type`) as a field of COPY's text
// format that the column's input function reads as the same value: a quoted literal's text, \N for NULL,
// numbers into numeric columns, booleans into boolean, bit strings into bit. False, with `out` as it was, for
// an unquoted literal the input function could read otherwise (a number into json or a date column: SQL
// refuses it, COPY might not); such a row takes the SQL path.
bool append_copy_field(std::string& out, std::string_view literal, std::string_view target_type);
bool append_copy_field(std::string& out, std::string_view literal, const LiteralType& target_type);

// Quotes an identifier: "name" (doubling ") for PostgreSQL, `name` (doubling `) for MySQL.
void append_identifier(std::string& out, Dialect dialect, std::string_view name);
// `space`.`name` (a schema or database, and a table), each quoted as append_identifier does.
std::string qualified_identifier(Dialect dialect, std::string_view space, std::string_view name);
// A string literal of `text`: quotes doubled, and on MySQL backslashes too (its default sql_mode reads them).
std::string string_literal(Dialect dialect, std::string_view text);

}  // namespace tidemark::dbsink
