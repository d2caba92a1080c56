#pragma once
// MySQL's binary DECIMAL (MYSQL_TYPE_NEWDECIMAL, also inside MySQL 8 binary JSON): groups of 9 decimal
// digits in 4 big-endian bytes, the leftover digits of the integer part first and of the fraction last in
// 1..4 bytes; the first bit is the sign (1 = positive) and a negative value has every bit inverted.

#include <cstddef>
#include <string>

#include "source/mysql/binlog_cursor.hpp"

namespace tidemark::mysql {

// Bytes a DECIMAL(precision, scale) occupies; 0 when precision/scale are out of range
// (precision 1..65, scale 0..30, scale <= precision).
size_t mysql_decimal_size(int precision, int scale);

// Reads one DECIMAL(precision, scale) and writes its exact text: '-' for negative values, the integer
// part without leading zeros ("0" when empty), and for scale > 0 a '.' and exactly `scale` digits
// ("-0.000001", "12345678.90"). A zero is never negative. A group whose value is not a valid run of
// digits (corrupt bytes) is an error.
bool read_mysql_decimal(BinlogCursor& cursor, int precision, int scale, std::string& out);

}  // namespace tidemark::mysql
