#pragma once
// A row's key as one byte string, so the keys touched inside a watermark window can live in a hash set.
// Two keys encode equally exactly when their typed values are equal (Value::operator==): byte for byte,
// never by collation; see docs/snapshots.md for why that is the right equality here.

#include <string>
#include <vector>

#include "tidemark/value.hpp"

namespace tidemark::snapshot {

// Appends the encoding of row[columns[0]], row[columns[1]]... to `out`. False when a key value is
// Unavailable (the log did not carry it): the key cannot be known.
bool encode_key(const Row& row, const std::vector<size_t>& columns, std::string& out);

}  // namespace tidemark::snapshot
