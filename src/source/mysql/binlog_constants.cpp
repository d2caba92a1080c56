#include "source/mysql/binlog_constants.hpp"

namespace tidemark::mysql {

std::string_view event_type_name(uint8_t type) {
  switch (static_cast<EventType>(type)) {
    case EventType::Unknown: return "UNKNOWN_EVENT";
    case EventType::StartV3: return "START_EVENT_V3";
    case EventType::Query: return "QUERY_EVENT";
    case EventType::Stop: return "STOP_EVENT";
    case EventType::Rotate: return "ROTATE_EVENT";
    case EventType::Intvar: return "INTVAR_EVENT";
    case EventType::Rand: return "RAND_EVENT";
    case EventType::UserVar: return "USER_VAR_EVENT";
    case EventType::FormatDescription: return "FORMAT_DESCRIPTION_EVENT";
    case EventType::Xid: return "XID_EVENT";
    case EventType::BeginLoadQuery: return "BEGIN_LOAD_QUERY_EVENT";
    case EventType::ExecuteLoadQuery: return "EXECUTE_LOAD_QUERY_EVENT";
    case EventType::TableMap: return "TABLE_MAP_EVENT";
    case EventType::WriteRowsV1: return "WRITE_ROWS_EVENT_V1";
    case EventType::UpdateRowsV1: return "UPDATE_ROWS_EVENT_V1";
    case EventType::DeleteRowsV1: return "DELETE_ROWS_EVENT_V1";
    case EventType::Incident: return "INCIDENT_EVENT";
    case EventType::Heartbeat: return "HEARTBEAT_LOG_EVENT";
    case EventType::Ignorable: return "IGNORABLE_LOG_EVENT";
    case EventType::RowsQuery: return "ROWS_QUERY_LOG_EVENT";
    case EventType::WriteRowsV2: return "WRITE_ROWS_EVENT_V2";
    case EventType::UpdateRowsV2: return "UPDATE_ROWS_EVENT_V2";
    case EventType::DeleteRowsV2: return "DELETE_ROWS_EVENT_V2";
    case EventType::MysqlGtid: return "GTID_LOG_EVENT";
    case EventType::MysqlAnonymousGtid: return "ANONYMOUS_GTID_LOG_EVENT";
    case EventType::MysqlPreviousGtids: return "PREVIOUS_GTIDS_LOG_EVENT";
    case EventType::TransactionContext: return "TRANSACTION_CONTEXT_EVENT";
    case EventType::ViewChange: return "VIEW_CHANGE_EVENT";
    case EventType::XaPrepare: return "XA_PREPARE_LOG_EVENT";
    case EventType::PartialUpdateRows: return "PARTIAL_UPDATE_ROWS_EVENT";
    case EventType::TransactionPayload: return "TRANSACTION_PAYLOAD_EVENT";
    case EventType::HeartbeatV2: return "HEARTBEAT_LOG_EVENT_V2";
    case EventType::AnnotateRows: return "ANNOTATE_ROWS_EVENT";
    case EventType::BinlogCheckpoint: return "BINLOG_CHECKPOINT_EVENT";
    case EventType::MariaGtid: return "GTID_EVENT";
    case EventType::MariaGtidList: return "GTID_LIST_EVENT";
    case EventType::StartEncryption: return "START_ENCRYPTION_EVENT";
    case EventType::QueryCompressed: return "QUERY_COMPRESSED_EVENT";
    case EventType::WriteRowsCompressedV1: return "WRITE_ROWS_COMPRESSED_EVENT_V1";
    case EventType::UpdateRowsCompressedV1: return "UPDATE_ROWS_COMPRESSED_EVENT_V1";
    case EventType::DeleteRowsCompressedV1: return "DELETE_ROWS_COMPRESSED_EVENT_V1";
    case EventType::WriteRowsCompressed: return "WRITE_ROWS_COMPRESSED_EVENT";
    case EventType::UpdateRowsCompressed: return "UPDATE_ROWS_COMPRESSED_EVENT";
    case EventType::DeleteRowsCompressed: return "DELETE_ROWS_COMPRESSED_EVENT";
  }
  switch (type) {  // codes Tidemark has no enumerator for
    case 6: return "LOAD_EVENT";
    case 7: return "SLAVE_EVENT";
    case 8: return "CREATE_FILE_EVENT";
    case 9: return "APPEND_BLOCK_EVENT";
    case 10: return "EXEC_LOAD_EVENT";
    case 11: return "DELETE_FILE_EVENT";
    case 12: return "NEW_LOAD_EVENT";
    case 20: return "PRE_GA_WRITE_ROWS_EVENT";
    case 21: return "PRE_GA_UPDATE_ROWS_EVENT";
    case 22: return "PRE_GA_DELETE_ROWS_EVENT";
    case 42: return "GTID_TAGGED_LOG_EVENT";
    default: return "UNKNOWN";
  }
}

std::string_view column_type_name(ColumnType type) {
  switch (type) {
    case ColumnType::Decimal: return "DECIMAL(old)";
    case ColumnType::Tiny: return "TINYINT";
    case ColumnType::Short: return "SMALLINT";
    case ColumnType::Long: return "INT";
    case ColumnType::Float: return "FLOAT";
    case ColumnType::Double: return "DOUBLE";
    case ColumnType::Null: return "NULL";
    case ColumnType::Timestamp: return "TIMESTAMP(old)";
    case ColumnType::LongLong: return "BIGINT";
    case ColumnType::Int24: return "MEDIUMINT";
    case ColumnType::Date: return "DATE";
    case ColumnType::Time: return "TIME(old)";
    case ColumnType::DateTime: return "DATETIME(old)";
    case ColumnType::Year: return "YEAR";
    case ColumnType::NewDate: return "NEWDATE";
    case ColumnType::Varchar: return "VARCHAR";
    case ColumnType::Bit: return "BIT";
    case ColumnType::Timestamp2: return "TIMESTAMP";
    case ColumnType::DateTime2: return "DATETIME";
    case ColumnType::Time2: return "TIME";
    case ColumnType::TypedArray: return "TYPED_ARRAY";
    case ColumnType::Vector: return "VECTOR";
    case ColumnType::Json: return "JSON";
    case ColumnType::NewDecimal: return "DECIMAL";
    case ColumnType::Enum: return "ENUM";
    case ColumnType::Set: return "SET";
    case ColumnType::TinyBlob: return "TINYBLOB";
    case ColumnType::MediumBlob: return "MEDIUMBLOB";
    case ColumnType::LongBlob: return "LONGBLOB";
    case ColumnType::Blob: return "BLOB";
    case ColumnType::VarString: return "VAR_STRING";
    case ColumnType::String: return "CHAR";
    case ColumnType::Geometry: return "GEOMETRY";
  }
  return "UNKNOWN";
}

}  // namespace tidemark::mysql
