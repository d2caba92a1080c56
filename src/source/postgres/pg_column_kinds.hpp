#pragma once
// A PostgreSQL column's type as the event model's ColumnInfo (docs/types.md lists the mapping).

#include <cstdint>

#include "source/postgres/pg_value_parser.hpp"
#include "tidemark/change_event.hpp"

namespace tidemark::pg {

// Domains resolve to their base type, arrays to Array with their element's kind; an OID the registry does
// not know is a String (its values are sent as PostgreSQL's text).
ColumnInfo pg_column_info(uint32_t type_oid, const PgTypeRegistry& types, bool not_null);

}  // namespace tidemark::pg
