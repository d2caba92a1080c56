#pragma once
// Renders change events as Debezium-compatible JSON (the JsonConverter with schemas disabled):
// key {"col": value, ...}; value {"before", "after", "source", "op", "ts_ms", "transaction"}.
// The rendering of each value type is documented in docs/event-format.md.

#include <memory>
#include <string>
#include <unordered_map>

#include "tidemark/change_event.hpp"

namespace tidemark {

struct EnvelopeOptions {
  std::string server_name;  // source.name: the pipeline's logical name
};

// What a flat record (Debezium's ExtractNewRecordState) adds beside the row's columns, as __<name>.
struct FlatFields {
  bool op = false;             // __op: c, u, d, r
  bool table = false;          // __table
  bool db = false;             // __db
  bool schema = false;         // __schema (PostgreSQL; null otherwise)
  bool source_ts_ms = false;   // __source_ts_ms: the commit time in the source
  bool ts_ms = false;          // __ts_ms: when Tidemark processed it
  bool deleted = false;        // __deleted: "true" on a rewritten delete, "false" otherwise
};

// The envelope's `transaction` block (Debezium's transaction metadata): null when absent.
struct TransactionBlock {
  std::string_view id;
  uint64_t total_order = 0;            // 1-based position of the event in its transaction
  uint64_t data_collection_order = 0;  // 1-based position among the transaction's events of its table
};

class EnvelopeSerializer {
 public:
  explicit EnvelopeSerializer(EnvelopeOptions options);
  ~EnvelopeSerializer();
  EnvelopeSerializer(EnvelopeSerializer&&) noexcept;

  // Appends {"k1":v1,...} for the key columns of `image`. Returns false (and appends nothing) when the
  // table has no key, in which case the record has a null key.
  bool write_key(const TableSchema& table, const Row& image, std::string& out);

  // Appends the envelope of `event` as it is.
  void write_value(const ChangeEvent& event, std::string& out, int64_t now_ms,
                   const TransactionBlock* transaction = nullptr);

  // Appends an envelope with the given op and images but the event's source block: used to split a
  // key-changing update into a delete of the old key and a create of the new one.
  void write_value(const ChangeEvent& event, Op op, const Row* before, const Row* after, std::string& out,
                   int64_t now_ms, const TransactionBlock* transaction = nullptr);

  // Appends a flat record: the columns of `row` at the top level, then the `fields` asked for.
  void write_flat_value(const ChangeEvent& event, Op op, const Row& row, const FlatFields& fields, std::string& out,
                        int64_t now_ms);

 private:
  struct TableFragments;
  const TableFragments& fragments(const TableSchemaPtr& table);
  void write_row(const TableFragments& f, const Row& row, std::string& out);
  void write_source(const ChangeEvent& event, const TableFragments& f, std::string& out);

  EnvelopeOptions options_;
  // Per ConnectorKind: ,"source":{"version":"x.y.z","connector":"..","name":"..","ts_ms":  (the value follows)
  std::string source_prefix_[3];
  // Escaped "col": fragments per table schema; holds the schema so its address is never reused.
  std::unordered_map<const TableSchema*, std::unique_ptr<TableFragments>> cache_;
  const TableSchema* last_table_ = nullptr;
  const TableFragments* last_fragments_ = nullptr;
};

// Renders one value as JSON (exposed for tests and for key rendering).
void write_json_value(const Value& value, std::string& out);

// ISO-8601 renderings used for zoned timestamps and intervals.
void append_iso_timestamp_utc(std::string& out, int64_t micros_since_epoch);
void append_iso_interval(std::string& out, const Interval& interval);

}  // namespace tidemark
