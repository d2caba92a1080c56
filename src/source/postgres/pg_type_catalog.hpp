#pragma once
// Reads what pgoutput's Type message leaves out of a non-built-in type (category, element, base type,
// enum labels) from pg_type and pg_enum, and registers it. Both the stream and the snapshot reader ask here,
// so a column is described the same way whichever path its rows take.

#include <cstdint>

#include "db/pg_connection.hpp"
#include "source/postgres/pg_value_parser.hpp"

namespace tidemark::pg {

// Registers `oid` and, recursively, the element type of an array and the base type of a domain. Types
// already known are left alone; a type the catalog cannot describe is skipped (its values stay text).
void register_catalog_type(Connection& catalog, PgTypeRegistry& types, uint32_t oid);

}  // namespace tidemark::pg
