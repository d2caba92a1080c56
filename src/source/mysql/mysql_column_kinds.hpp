#pragma once
// A MySQL/MariaDB column's type as the event model's ColumnInfo (docs/types.md lists the mapping). The
// stream describes a column from its TABLE_MAP definition, a snapshot from information_schema; both give
// the same ColumnInfo for the same column, so a table's records have one schema whichever path they take.

#include "source/mysql/table_map.hpp"
#include "source/mysql/table_schema_loader.hpp"
#include "tidemark/change_event.hpp"

namespace tidemark::mysql {

ColumnInfo column_info(const ColumnDef& column);
ColumnInfo column_info(const CatalogColumn& column);

}  // namespace tidemark::mysql
