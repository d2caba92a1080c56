#pragma once
// Applies the JSON diffs of a MySQL 8 PARTIAL_UPDATE_ROWS after image (binlog_row_value_options=
// PARTIAL_JSON) to the column's before document, with the semantics of MySQL's apply_json_diffs
// (sql/json_diff.cc), which a replica runs on the same diffs:
//
//   - the path is exact: member names and array cells only (no wildcards, ranges or `**`), no auto-wrapping
//     (`$.a[0]` does not address a scalar `a`); the root `$` itself cannot be replaced, inserted or removed;
//   - replace: the path must exist; its value is replaced;
//   - insert: the parent (the path minus its last leg) must exist. An object gets the new member, which
//     must not exist yet; an array gets the value inserted at the index, later elements shifting right
//     (an index past the end appends; `last` is the last element's index, so `[last]` inserts before it);
//   - remove: the parent must exist and hold the member, or the array cell within bounds;
//   - diffs apply in order, each to the result of the previous one.
// Anything else (MySQL "rejects" the diff) is an error here, with the diff's number, operation and path.
//
// Output text: the same form json_binary_to_text gives a full document, so that an after image rebuilt
// from a diff reads like one logged whole: ", " and ": " separators, object keys in the order MySQL's binary
// format stores them (shorter keys first, equal lengths by bytes), strings escaped the same way, numbers as
// they were written in the input (the before document and the diff values are both json_binary_to_text
// output, so DECIMAL's "1.50" stays "1.50"). This is not always what MySQL's JSON_EXTRACT/SELECT prints:
// MySQL prints keys in that same order, but e.g. doubles in its own format.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "source/mysql/mysql_json_binary.hpp"

namespace tidemark::mysql {

// One leg of an exact MySQL JSON path: `.name`, `."quoted name"`, `[3]`, `[last]`, `[last-2]`.
struct JsonPathLeg {
  enum class Kind : uint8_t { Member, ArrayCell };
  Kind kind = Kind::Member;
  std::string member;      // Member: the unescaped name
  uint32_t index = 0;      // ArrayCell
  bool from_end = false;   // ArrayCell: `last` (index 0) or `last-N` (index N)
  bool operator==(const JsonPathLeg&) const = default;
};

// Parses a MySQL JSON path (sql-common/json_path.cc syntax: `$` then legs, white space allowed between
// tokens; unquoted member names must be ECMAScript identifiers and may contain JSON escapes). Wildcards
// (`.*`, `[*]`, `**`) and ranges (`[1 to 3]`) are valid MySQL paths but address several values, so they are
// an error here. Returns false and sets `error` (with the byte offset) on failure.
bool parse_json_path(std::string_view path, std::vector<JsonPathLeg>& legs, std::string& error);

// Applies `diffs` in order to `document` (JSON text) and writes the new document's text to `out`.
// Returns false and sets `error` when the document is not valid JSON, a path is malformed or inexact, or
// MySQL would reject a diff (path not found, insert of an existing member, operation on a scalar, ...).
// Never throws.
bool apply_json_diffs(std::string_view document, const std::vector<JsonDiff>& diffs, std::string& out,
                      std::string& error);

// Re-renders JSON text in the form described above (keys reordered, separators normalized, numbers
// kept as written). Returns false and sets `error` on invalid JSON.
bool normalize_mysql_json_text(std::string_view document, std::string& out, std::string& error);

}  // namespace tidemark::mysql
