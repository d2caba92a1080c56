#pragma once
// The two decompressors of the binlog: MariaDB's zlib format (compressed QUERY and rows events) and MySQL
// 8's zstd TRANSACTION_PAYLOAD. Both bound what a corrupt length can make them allocate.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tidemark::mysql {

inline constexpr size_t kMaxInflatedSize = size_t{1} << 30;  // 1 GiB: a server's max_allowed_packet ceiling

// Inflates MariaDB's compressed format (binlog_buf_uncompress: 1 header byte 0x80|alg<<4|lenlen, lenlen
// bytes of big-endian length, zlib). On failure, sets `error`.
bool maria_uncompress(std::string_view src, std::string& out, std::string& error);

// Decompresses one zstd frame; `declared_size` (0: unknown) must match. On failure, sets `error`.
bool zstd_decompress(std::string_view payload, uint64_t declared_size, std::string& out, std::string& error);

}  // namespace tidemark::mysql
