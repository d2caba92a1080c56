#pragma once
// Kafka Connect schemas in JsonConverter's JSON form (`schemas.enable=true`): what Debezium puts beside each
// payload as {"schema": ..., "payload": ...}. They describe the payloads the envelope serializer writes
// (decimal.handling.mode=string, interval.handling.mode=string, time.precision.mode=adaptive_time_microseconds,
// bigint.unsigned.handling.mode=precise with decimal.format=NUMERIC), so JsonConverter reads every record
// back. Built once per table schema; `record_name` is the topic's name, as Debezium's schema names are.

#include <string>
#include <string_view>

#include "sink/envelope_serializer.hpp"
#include "tidemark/change_event.hpp"

namespace tidemark {

// {"type":"struct","fields":[key columns],"optional":false,"name":"<record_name>.Key"}
std::string connect_key_schema(const TableSchema& table, std::string_view record_name);

// The envelope: before/after as "<record_name>.Value", the connector's source block, op, ts_ms, transaction.
std::string connect_envelope_schema(const TableSchema& table, ConnectorKind connector, std::string_view record_name);

// ExtractNewRecordState's value: the columns, then the __ fields asked for, as "<record_name>.Value".
std::string connect_flat_schema(const TableSchema& table, const FlatFields& fields, std::string_view record_name);

// Debezium's fixed records: the heartbeat's key and value, the transaction topic's key and value.
std::string connect_heartbeat_key_schema();
std::string connect_heartbeat_value_schema();
std::string connect_transaction_key_schema();
std::string connect_transaction_value_schema();

}  // namespace tidemark
