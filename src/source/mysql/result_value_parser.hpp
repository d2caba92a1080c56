#pragma once
// A value of a chunk SELECT's result turned into exactly the Value the binlog row decoder (row_decoder.cpp)
// gives for the same stored value, and into the text a snapshot key is carried as (KeyText).
//
// The SELECT uses the binary protocol (prepared statements), not the text protocol, because MariaDB prints
// FLOAT with 6 significant digits (3.40282e38 for 3.4028235e38): that text cannot give back the stored
// float, neither as a value nor as a key to continue after. The binary protocol sends the 4 stored bytes
// (and DOUBLE's 8), temporal values as fields (negative TIME, fractions and zero dates without parsing
// text) and BIT as its bytes; DECIMAL, strings, ENUM/SET, UUID and INET come as text.
//
// The reader's session sets character_set_results=NULL, so text columns arrive as their stored bytes and
// are converted to UTF-8 by charset.cpp, the decoder's own conversion, not by the server's: both sides then
// agree even on bytes a character set leaves undefined.

#include <mysql.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "source/mysql/table_map.hpp"
#include "source/mysql/table_schema_loader.hpp"
#include "tidemark/value.hpp"

namespace tidemark::mysql {

// What the parser knows about a result column: the same facts the decoder has about the column (the
// catalog's collation, extended type and members; nullability and signedness from MYSQL_FIELD flags).
struct ResultColumn {
  enum_field_types type = MYSQL_TYPE_NULL;  // MYSQL_FIELD::type
  bool is_unsigned = false;
  bool nullable = true;
  bool is_enum = false;
  bool is_set = false;
  unsigned long bits = 0;   // BIT(n): n
  uint32_t collation = 0;   // the catalog's collation id; kBinaryCollation for byte strings
  ExtendedType extended = ExtendedType::None;
  std::vector<std::string> members;  // ENUM/SET members in definition order (for their key text)
};

ResultColumn result_column(const MYSQL_FIELD& field, const CatalogColumn& catalog);

// How a column is fetched: the MYSQL_BIND buffer the reader binds for it.
enum class WireKind { Integer, Float, Double, Temporal, Bytes };
WireKind wire_kind(enum_field_types type);

// One fetched value, as the binary protocol delivered it into the bind buffer of its WireKind.
struct WireValue {
  bool is_null = false;
  uint64_t integer = 0;  // Integer: the 8 bytes of a MYSQL_TYPE_LONGLONG bind
  float f = 0;
  double d = 0;
  MYSQL_TIME time{};
  std::string bytes;     // Bytes: the whole value
};

// The Value of `wire`; false with `error` when the text is not what the type's form allows.
bool parse_result_value(const ResultColumn& column, const WireValue& wire, Value& out, std::string& error);

// How a key column's KeyText is written back into SQL.
enum class KeyLiteral {
  Number,  // unquoted: integers, DECIMAL, FLOAT/DOUBLE (as the exact double), YEAR, ENUM index, SET bits
  Hex,     // X'..': byte strings (binary collation)
  Bits,    // BIT: hex text written as the unsigned number (a BIT column compares as a number, X'..' not)
  String,  // quoted: text, temporal values, UUID, INET
};
KeyLiteral key_literal_kind(const CatalogColumn& catalog);

// The KeyText entry of a key column's value (nullopt for NULL), from the wire rather than from the Value:
// a zero date in a NOT NULL column is the epoch as a Value but must stay '0000-00-00' to be found again.
// FLOAT is written as its exact double ("1.0000000149011612e-01" for 0.1f): the server compares a FLOAT
// column as that double, so a shorter text would not be equal to the stored value.
bool result_key_text(const ResultColumn& column, const WireValue& wire, std::optional<std::string>& out,
                     std::string& error);

}  // namespace tidemark::mysql
