#include "source/postgres/pg_column_kinds.hpp"

namespace tidemark::pg {

namespace {

// The registered type behind a chain of domains (bounded: a cycle cannot occur in pg_type, but the
// registry is filled from the network).
const PgTypeInfo* resolve_domains(uint32_t type_oid, const PgTypeRegistry& types) {
  const PgTypeInfo* info = types.find(type_oid);
  for (int depth = 0; info != nullptr && info->base_oid != 0 && depth < 8; ++depth) info = types.find(info->base_oid);
  return info;
}

ColumnKind scalar_kind(uint32_t type_oid) {
  switch (type_oid) {
    case oid::kBool: return ColumnKind::Boolean;
    case oid::kInt2: return ColumnKind::Int16;
    case oid::kInt4: return ColumnKind::Int32;
    case oid::kInt8:
    case oid::kOid: return ColumnKind::Int64;
    case oid::kFloat4: return ColumnKind::Float32;
    case oid::kFloat8: return ColumnKind::Float64;
    case oid::kNumeric:
    case oid::kMoney: return ColumnKind::Decimal;
    case oid::kBytea: return ColumnKind::Bytes;
    case oid::kDate: return ColumnKind::Date;
    case oid::kTime: return ColumnKind::Time;
    case oid::kTimestamp: return ColumnKind::Timestamp;
    case oid::kTimestampTz: return ColumnKind::TimestampTz;
    case oid::kTimeTz: return ColumnKind::TimeTz;
    case oid::kInterval: return ColumnKind::Interval;
    case oid::kJson:
    case oid::kJsonb: return ColumnKind::Json;
    case oid::kXml: return ColumnKind::Xml;
    case oid::kUuid: return ColumnKind::Uuid;
    default: return ColumnKind::String;  // text types, bit strings, network types, and every type sent as text
  }
}

}  // namespace

ColumnInfo pg_column_info(uint32_t type_oid, const PgTypeRegistry& types, bool not_null) {
  ColumnInfo info;
  info.optional = !not_null;
  const PgTypeInfo* type = resolve_domains(type_oid, types);
  if (type == nullptr) {
    info.kind = ColumnKind::String;
    return info;
  }
  if (type->category == 'A' && type->element_oid != 0) {
    info.kind = ColumnKind::Array;
    const PgTypeInfo* element = resolve_domains(type->element_oid, types);
    info.element = element == nullptr ? ColumnKind::String
                   : element->category == 'E' ? ColumnKind::Enum
                                              : scalar_kind(element->oid);
    if (element != nullptr && element->category == 'E') info.members = element->labels;
    return info;
  }
  if (type->category == 'E') {
    info.kind = ColumnKind::Enum;
    info.members = type->labels;
    return info;
  }
  info.kind = scalar_kind(type->oid);
  return info;
}

}  // namespace tidemark::pg
