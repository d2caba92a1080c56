#pragma once
// One Kafka record of a change (Tidemark's envelope, or Debezium's: the same shape) read back into a
// ChangeEvent, so that a database sink can apply topics written by Tidemark or Debezium.
//
// | value                                         | result                                                  |
// |-----------------------------------------------|---------------------------------------------------------|
// | null (a tombstone after a delete)             | skipped                                                 |
// | {"schema": ..., "payload": {envelope}}        | typed by the schema (below)                             |
// | {envelope}: before, after, op, source, ts_ms  | typed by the JSON value alone                           |
// | op "c" / "u" / "d" / "r" / "t"                | Create / Update / Delete / Read / Truncate              |
// | op "m", heartbeats, transaction metadata      | skipped (no "op" among c u d r t, or no source.table)   |
// | a flat record, not JSON, no source.table      | error naming what is missing                            |
//
// The table is source.db (+ source.schema when present, as PostgreSQL records have it) + source.table;
// the key columns are the fields of the record's key. Columns come in the schema's order, else in the
// order of the after (then before) image's fields.
//
// Values with a schema, by Connect type and semantic name: int8..int64 -> int64; float, double -> double
// ("NaN", "Infinity" strings too); boolean; string -> string; bytes -> Bytes (base64);
// io.debezium.time.Date -> Date; Time (ms), MicroTime, NanoTime -> Time; Timestamp (ms), MicroTimestamp,
// NanoTimestamp -> Timestamp; ZonedTimestamp -> TimestampTz; io.debezium.data.Json -> Json; Uuid -> Uuid;
// Bits -> Bytes of kind Bits; org.apache.kafka.connect.data.Decimal (a number, or base64 two's
// complement with parameters.scale) and strings of Decimal columns -> Decimal; arrays element by element.
// Without a schema: integers -> int64 (uint64 above its range), other numbers -> double, strings ->
// string, objects and arrays -> Json. "__debezium_unavailable_value" is Unavailable in either case.

#include <map>
#include <string>
#include <string_view>

#include "tidemark/change_event.hpp"

namespace tidemark::kafka {

struct DecodedRecord {
  bool skip = false;         // nothing to apply (tombstone, heartbeat, message)
  std::string error;         // not a change record: why
  ChangeEvent event;         // when neither
};

class ChangeRecordDecoder {
 public:
  DecodedRecord decode(std::string_view key, std::string_view value);

 private:
  // The schema of `id` with these columns: the one kept from before when it is the same.
  TableSchemaPtr schema_for(TableSchema fresh);
  std::map<std::string, TableSchemaPtr> schemas_;  // by "database.schema.table"
};

}  // namespace tidemark::kafka
