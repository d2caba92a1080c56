#pragma once
// Character sets of MySQL/MariaDB text columns: collation id -> character set, and conversion of a
// column's bytes to UTF-8.
//
// - utf8mb4 / utf8mb3 (and ascii) pass through, validated: an ill-formed sequence becomes U+FFFD, one
//   replacement per maximal ill-formed subpart, as Java's decoders and the JSON writer do.
// - latin1 is MySQL's latin1, which is Windows-1252 with the five bytes 1252 leaves undefined (0x81, 0x8D,
//   0x8F, 0x90, 0x9D) mapped to the C1 controls U+0081... (what MySQL itself converts them to).
// - Every other character set goes through glibc's iconv; bytes iconv cannot convert become U+FFFD.
// - Unknown collation ids are read as UTF-8 (validated).

#include <cstdint>
#include <string>
#include <string_view>

namespace tidemark::mysql {

enum class Charset : uint8_t {
  Unknown,
  Binary,
  Utf8mb4,
  Utf8mb3,
  Ascii,
  Latin1,
  Other,  // converted with iconv, see charset_iconv_name
};

// The character set of a collation id (MySQL 8 and MariaDB 10.x/11.x ids, including MariaDB's
// 1024+ "full" collation ids and MySQL 8's utf8mb4_0900 range). Unknown ids give Charset::Unknown.
Charset charset_of_collation(uint32_t collation);

// The MySQL name of the character set of `collation` ("utf8mb4", "latin1", "cp1251", ...); "" when unknown.
std::string_view charset_name_of_collation(uint32_t collation);

// The iconv name for the character set of `collation` ("CP1251", "SHIFT_JIS", ...); "" when none.
std::string_view charset_iconv_name(uint32_t collation);

// Appends the UTF-8 form of `bytes` (in the character set of `collation`) to `out`. Never fails:
// undecodable bytes become U+FFFD. Binary (63) is treated as latin1-free pass-through validation like
// UTF-8; callers keep binary columns as Bytes and do not call this.
void append_as_utf8(std::string& out, std::string_view bytes, uint32_t collation);
std::string to_utf8(std::string_view bytes, uint32_t collation);

// Appends `bytes` to `out`, replacing every ill-formed UTF-8 sequence (overlongs, surrogates, > U+10FFFF,
// truncated sequences) with U+FFFD. Returns true when nothing was replaced.
bool append_valid_utf8(std::string& out, std::string_view bytes);

}  // namespace tidemark::mysql
