// libFuzzer target: the binlog row decoder (decode_rows) over a table map built from the input, so every
// column type, its metadata, signedness, collation (charset conversion), ENUM/SET members and the
// extended types (UUID, INET4/6, MariaDB JSON) are decoded, in every rows event kind.
//
// Input:
//   u8  column count - 1 (mod 64)
//   u8  kind: 0 write, 1 update, 2 delete, 3 partial update (mod 4)
//   per column, 8 bytes: u8 type code (as TABLE_MAP stores it), u16 meta, u8 flags (bit 0 nullable,
//     bit 1 unsigned, bits 2..4 extended type mod 5), u16 collation id, u8 ENUM/SET member count (mod 65)
//   before-image column bitmap, after-image column bitmap ((n + 7) / 8 bytes each)
//   the row images (the rest)
// Decode errors are expected results.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_input.hpp"
#include "source/mysql/row_decoder.hpp"

using namespace tidemark::mysql;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tidemark::fuzz::FuzzInput in(data, size);
  const size_t n = static_cast<size_t>(in.u8() % 64) + 1;
  static constexpr RowsKind kKinds[] = {RowsKind::Write, RowsKind::Update, RowsKind::Delete, RowsKind::PartialUpdate};
  const RowsKind kind = kKinds[in.u8() % 4];
  TableMap table;
  table.table_id = 1;
  table.database = "fuzz";
  table.table = "t";
  for (size_t i = 0; i < n; ++i) {
    ColumnDef col;
    col.type = static_cast<ColumnType>(in.u8());
    col.meta = in.u16();
    const uint8_t flags = in.u8();
    col.nullable = (flags & 1) != 0;
    col.is_unsigned = (flags & 2) != 0;
    col.extended = static_cast<ExtendedType>(((flags >> 2) & 7) % 5);
    col.collation = in.u16();
    const size_t members = in.u8() % 65;
    for (size_t k = 0; k < members; ++k) col.enum_values.push_back("m" + std::to_string(k));
    col.name = "c" + std::to_string(i);
    table.columns.push_back(std::move(col));
  }
  RowsEvent event;
  event.event_type = kind == RowsKind::Write    ? static_cast<uint8_t>(EventType::WriteRowsV2)
                     : kind == RowsKind::Update ? static_cast<uint8_t>(EventType::UpdateRowsV2)
                     : kind == RowsKind::Delete ? static_cast<uint8_t>(EventType::DeleteRowsV2)
                                                : static_cast<uint8_t>(EventType::PartialUpdateRows);
  event.kind = kind;
  event.table_id = 1;
  event.column_count = n;
  event.after_image_has_value_options = kind == RowsKind::PartialUpdate;
  event.before_columns = std::string(in.bytes((n + 7) / 8));
  event.after_columns = std::string(in.bytes((n + 7) / 8));
  event.rows = std::string(in.rest());
  std::vector<RowChange> out;
  if (auto error = decode_rows(event, table, out)) (void)error->to_string();
  return 0;
}
