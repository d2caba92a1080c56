#pragma once
// MySQL 8's binary JSON (the storage and binlog form of JSON columns, "json_binary.h") -> JSON text, and
// the JSON diffs of PARTIAL_UPDATE_ROWS after images (binlog_row_value_options=PARTIAL_JSON).
//
// Text form: MySQL's own (`JSON_EXTRACT`/`SELECT` output): `{"a": 1, "b": [true, null]}` with ", " and ": "
// separators, object keys in stored order. Doubles in the shortest form that reads back, with ".0" added to
// integral values (MySQL prints 1.0 as 1.0). Opaque values: DECIMAL as its exact number; DATE, TIME,
// DATETIME and TIMESTAMP as quoted strings ("2024-01-01", "12:34:56.500000", "2024-01-01 12:34:56.000000");
// any other opaque type as "base64:typeNN:<base64>" (MySQL's rendering).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tidemark::mysql {

// Converts one binary JSON document. An empty input is the JSON null literal (MySQL writes a zero-length
// value for a JSON null set through some paths). Returns false and sets `error` (with the byte offset
// within `doc`) on malformed input: truncated, offsets out of range, nesting deeper than 150, unknown type.
bool json_binary_to_text(std::string_view doc, std::string& out, std::string& error);

enum class JsonDiffOp : uint8_t { Replace = 0, Insert = 1, Remove = 2 };

// One operation of a partial JSON update: apply `op` at `path` (a MySQL JSON path such as `$.a[2]`);
// `value` is the new value's JSON text (empty for Remove).
struct JsonDiff {
  JsonDiffOp op = JsonDiffOp::Replace;
  std::string path;
  std::string value;
  bool operator==(const JsonDiff&) const = default;
};

// Decodes the diff list of one partially updated JSON column (the bytes after the column's length
// prefix): a sequence of { op: 1 byte, path length: packed integer, path, [value length: packed integer,
// binary JSON value] (not for Remove) }.
bool decode_json_diffs(std::string_view bytes, std::vector<JsonDiff>& out, std::string& error);

// "replace", "insert", "remove".
std::string_view json_diff_op_name(JsonDiffOp op);

// Appends `raw` as a JSON string literal in the form json_binary_to_text writes (invalid UTF-8 becomes
// U+FFFD; \", \\, \b, \f, \n, \r, \t and \u00XX escapes).
void append_json_string(std::string& out, std::string_view raw);

}  // namespace tidemark::mysql
