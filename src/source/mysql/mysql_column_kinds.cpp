#include "source/mysql/mysql_column_kinds.hpp"

#include <string>

#include "source/mysql/binlog_constants.hpp"

namespace tidemark::mysql {

namespace {

// The widths Debezium's MySQL connector gives integers: an unsigned type takes the next wider one.
ColumnKind integer_kind(ColumnType type, bool is_unsigned) {
  switch (type) {
    case ColumnType::Tiny: return ColumnKind::Int16;
    case ColumnType::Short: return is_unsigned ? ColumnKind::Int32 : ColumnKind::Int16;
    case ColumnType::Int24: return ColumnKind::Int32;
    case ColumnType::Long: return is_unsigned ? ColumnKind::Int64 : ColumnKind::Int32;
    default: return is_unsigned ? ColumnKind::UInt64 : ColumnKind::Int64;
  }
}

ColumnInfo with_bits(ColumnInfo info, uint32_t bits) {
  if (bits == 1) {
    info.kind = ColumnKind::Boolean;  // the row decoder gives BIT(1) as a bool
  } else {
    info.kind = ColumnKind::Bits;
    info.length = bits;
  }
  return info;
}

}  // namespace

ColumnInfo column_info(const ColumnDef& column) {
  ColumnInfo info;
  info.optional = column.nullable;
  switch (column.extended) {
    case ExtendedType::Uuid: info.kind = ColumnKind::Uuid; return info;
    case ExtendedType::Inet4:
    case ExtendedType::Inet6: info.kind = ColumnKind::String; return info;
    case ExtendedType::Json: info.kind = ColumnKind::Json; return info;
    case ExtendedType::None: break;
  }
  switch (column.type) {
    case ColumnType::Tiny:
    case ColumnType::Short:
    case ColumnType::Int24:
    case ColumnType::Long:
    case ColumnType::LongLong: info.kind = integer_kind(column.type, column.is_unsigned); break;
    case ColumnType::Float: info.kind = ColumnKind::Float32; break;
    case ColumnType::Double: info.kind = ColumnKind::Float64; break;
    case ColumnType::Decimal:
    case ColumnType::NewDecimal: info.kind = ColumnKind::Decimal; break;
    case ColumnType::Bit: return with_bits(info, (column.meta >> 8) * 8u + (column.meta & 0xFFu));
    case ColumnType::Year: info.kind = ColumnKind::Year; break;
    case ColumnType::Date:
    case ColumnType::NewDate: info.kind = ColumnKind::Date; break;
    case ColumnType::Time:
    case ColumnType::Time2: info.kind = ColumnKind::Time; break;
    case ColumnType::DateTime:
    case ColumnType::DateTime2: info.kind = ColumnKind::Timestamp; break;
    case ColumnType::Timestamp:
    case ColumnType::Timestamp2: info.kind = ColumnKind::TimestampTz; break;
    case ColumnType::Json: info.kind = ColumnKind::Json; break;
    case ColumnType::Enum:
      info.kind = ColumnKind::Enum;
      info.members = column.enum_values;
      break;
    case ColumnType::Set:
      info.kind = ColumnKind::EnumSet;
      info.members = column.enum_values;
      break;
    case ColumnType::Varchar:
    case ColumnType::VarString:
    case ColumnType::String:
    case ColumnType::TinyBlob:
    case ColumnType::MediumBlob:
    case ColumnType::LongBlob:
    case ColumnType::Blob:
      info.kind = column.collation == kBinaryCollation ? ColumnKind::Bytes : ColumnKind::String;
      break;
    case ColumnType::Geometry:
    case ColumnType::Vector: info.kind = ColumnKind::Bytes; break;
    case ColumnType::Null:
    case ColumnType::TypedArray: info.kind = ColumnKind::Unknown; break;
  }
  return info;
}

ColumnInfo column_info(const CatalogColumn& column) {
  ColumnInfo info;
  info.optional = column.nullable;
  const std::string& t = column.data_type;
  const bool is_unsigned = column.column_type.find("unsigned") != std::string::npos;
  if (t == "tinyint") info.kind = integer_kind(ColumnType::Tiny, is_unsigned);
  else if (t == "smallint") info.kind = integer_kind(ColumnType::Short, is_unsigned);
  else if (t == "mediumint") info.kind = integer_kind(ColumnType::Int24, is_unsigned);
  else if (t == "int" || t == "integer") info.kind = integer_kind(ColumnType::Long, is_unsigned);
  else if (t == "bigint") info.kind = integer_kind(ColumnType::LongLong, is_unsigned);
  else if (t == "float") info.kind = ColumnKind::Float32;
  else if (t == "double" || t == "real") info.kind = ColumnKind::Float64;
  else if (t == "decimal" || t == "numeric") info.kind = ColumnKind::Decimal;
  else if (t == "bit") {
    // COLUMN_TYPE "bit(12)"
    const auto open = column.column_type.find('(');
    const uint32_t bits = open == std::string::npos ? 1 : static_cast<uint32_t>(std::stoul(column.column_type.substr(open + 1)));
    return with_bits(info, bits);
  } else if (t == "year") info.kind = ColumnKind::Year;
  else if (t == "date") info.kind = ColumnKind::Date;
  else if (t == "time") info.kind = ColumnKind::Time;
  else if (t == "datetime") info.kind = ColumnKind::Timestamp;
  else if (t == "timestamp") info.kind = ColumnKind::TimestampTz;
  else if (t == "json" || column.json) info.kind = ColumnKind::Json;
  else if (t == "uuid") info.kind = ColumnKind::Uuid;
  else if (t == "enum" || t == "set") {
    info.kind = t == "enum" ? ColumnKind::Enum : ColumnKind::EnumSet;
    info.members = parse_enum_members(column.column_type);
  } else if (t == "geometry" || t == "point" || t == "linestring" || t == "polygon" || t == "multipoint" ||
             t == "multilinestring" || t == "multipolygon" || t == "geometrycollection" || t == "vector")
    info.kind = ColumnKind::Bytes;
  else info.kind = column.collation == kBinaryCollation ? ColumnKind::Bytes : ColumnKind::String;
  return info;
}

}  // namespace tidemark::mysql
