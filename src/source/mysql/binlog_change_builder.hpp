#pragma once
// Turns binlog events, in log order, into the stream the publisher consumes: one ChangeEvent per row of
// a captured table, the resume position on the last event of each transaction (or a Checkpoint when the
// transaction changed nothing captured). Source-neutral about where the bytes come from: the replica
// socket (mysql_source) and binlog files (binlog-dump, tests) feed it the same way.
//
// One place updates the position: finish_transaction(). A position is "after this transaction": the GTID
// state including it, and the file/offset of the event after its commit event.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <set>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "source/mysql/binlog_decoder.hpp"
#include "source/mysql/binlog_events.hpp"
#include "source/mysql/binlog_position.hpp"
#include "source/mysql/row_decoder.hpp"
#include "source/mysql/table_schema_loader.hpp"
#include "tidemark/change_event.hpp"

namespace tidemark::mysql {

class BinlogChangeBuilder {
 public:
  struct Options {
    Flavor flavor = Flavor::MariaDb;
    std::vector<std::string> table_patterns;  // "database.table" globs
    ChecksumAlgorithm initial_checksum = ChecksumAlgorithm::Off;  // until the first FORMAT_DESCRIPTION
  };
  // Hands one item over; false means stop (the daemon is shutting down or the connection broke).
  using Emit = std::function<bool(StreamItem&&)>;
  enum class Outcome { Continue, Stopped, Retry, Fatal };

  // `loader` may be null (file mode): then tables must carry FULL metadata and UUID/INET columns are raw.
  BinlogChangeBuilder(Options options, TableSchemaLoader* loader, BinlogPosition start);

  // Processes one event (header + body + checksum as read from the server or a file).
  Outcome on_event(std::string_view bytes, const Emit& emit, std::string& error);

  // After the last complete transaction handed to `emit`: where a reconnect resumes.
  const BinlogPosition& position() const { return position_; }
  bool in_transaction() const { return in_transaction_; }

  // Counters for logs and benchmarks.
  uint64_t events_read() const { return events_read_; }
  uint64_t rows_emitted() const { return rows_emitted_; }

 private:
  struct CachedTable {
    std::string raw_body;  // the TABLE_MAP body it was built from: equal bytes → same schema
    TableMap map;
    TableSchemaPtr schema;  // nullptr: not captured
  };

  Outcome on_table_map(const RawEvent& raw, TableMapEvent& event, std::string& error);
  Outcome on_rows(const RawEvent& raw, const RowsEvent& event, const Emit& emit, std::string& error);
  Outcome on_query(const RawEvent& raw, const QueryEvent& event, const Emit& emit, std::string& error);
  Outcome on_truncate(const std::string& database, const std::string& table, const RawEvent& raw, const Emit& emit);
  Outcome finish_transaction(const RawEvent& raw, const Emit& emit);
  Outcome hand_over(ChangeEvent event, const Emit& emit);
  Outcome process(const RawEvent& raw, const BinlogEvent& event, const Emit& emit, std::string& error);
  TableSchemaPtr build_schema(const TableMap& map) const;
  bool captured(const std::string& database, const std::string& table) const;

  Options options_;
  TableSchemaLoader* loader_;
  BinlogDecoder decoder_;  // the same front end as binlog files
  std::string file_;
  BinlogPosition position_;
  std::optional<MariaGtidState> maria_state_;
  std::optional<MysqlGtidSet> mysql_state_;
  std::unordered_map<uint64_t, CachedTable> tables_;
  std::optional<ChangeEvent> held_;  // newest event: it gets the resume position if the commit comes next
  std::vector<RowChange> rows_;      // reused buffer
  bool in_transaction_ = false;
  bool standalone_ = false;          // MariaDB GTID with FL_STANDALONE: the next statement is the transaction
  std::optional<MariaGtid> maria_gtid_;
  std::optional<std::pair<std::string, uint64_t>> mysql_gtid_;
  std::string gtid_text_;                   // GTID of the current transaction, for events' source block
  std::optional<EventHeader> outer_header_;  // while inside a TRANSACTION_PAYLOAD: the payload event's header
  std::set<std::string> partial_json_warned_;  // tables whose JSON diffs could not be applied (warned once)
  uint64_t events_read_ = 0;
  uint64_t rows_emitted_ = 0;
};

}  // namespace tidemark::mysql
