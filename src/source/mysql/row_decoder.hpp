#pragma once
// Our own decoder of binlog row images (libmariadb's mariadb_rpl_extract_rows is wrong or fails on
// several types). One cursor over the rows of a rows event; every read is bounds-checked and a malformed
// image yields a DecodeError naming the row, the column, its type and the byte offset.
//
// Row image layout (per row): a NULL bitmap with one bit per column *present* in the image's column
// bitmap, then the values of the present, non-NULL columns in column order, each in its type's binary
// form (see decode_column_value). UPDATE rows are a before image followed by an after image, each with
// its own column bitmap.

#include <optional>
#include <string_view>
#include <vector>

#include "source/mysql/binlog_cursor.hpp"
#include "source/mysql/binlog_events.hpp"
#include "source/mysql/mysql_json_binary.hpp"
#include "source/mysql/table_map.hpp"
#include "tidemark/value.hpp"

namespace tidemark::mysql {

// One row of a rows event, in TableMap column order. Columns absent from the event's column bitmap
// (binlog_row_image=MINIMAL/NOBLOB) are Unavailable, never Null.
// A JSON column of a PARTIAL_UPDATE_ROWS after image that carries a diff instead of the document
// (MySQL 8, binlog_row_value_options=PARTIAL_JSON). The column's after value is Unavailable.
struct PartialJson {
  size_t column = 0;
  std::vector<JsonDiff> diffs;
  bool operator==(const PartialJson&) const = default;
};

struct RowChange {
  std::optional<Row> before;  // delete, update
  std::optional<Row> after;   // write, update
  std::vector<PartialJson> partial_json;  // PARTIAL_UPDATE_ROWS only
};

// Decodes every row of `event` with `table` (which must be the TableMap of event.table_id). Appends to
// `out`. Returns the first error, with nothing appended for the failing row.
std::optional<DecodeError> decode_rows(const RowsEvent& event, const TableMap& table, std::vector<RowChange>& out);

// Decodes one non-NULL value of `column` at the cursor. On failure the cursor holds the reason.
bool decode_column_value(BinlogCursor& cursor, const ColumnDef& column, Value& out);

// A FLOAT as the event model's double: the float's shortest decimal text read as a double, so FLOAT 0.1
// becomes the double 0.1, not 0.10000000149011612 (as PostgreSQL's float4 is handled). The snapshot
// reader converts with it too, so both sides agree.
double float_as_double(float f);

}  // namespace tidemark::mysql
