#pragma once
// `tidemark binlog-dump FILE`: decodes a MySQL/MariaDB binlog file and prints one JSON object per event,
// through the replication stream's decode front end; with --changes, the file goes through the stream's
// own BinlogChangeBuilder and the change records (Debezium envelopes) are printed instead.

#include <ostream>
#include <string>

namespace tidemark {

struct BinlogDumpOptions {
  std::string path;
  bool hex = false;      // also print each event's bytes as hex ("hex" field)
  bool changes = false;  // print the change records the daemon would publish (tables need FULL metadata)
};

// Prints JSON lines on `out`; errors (bad magic, truncated event, checksum mismatch, malformed event) go
// to `err` and, for the event where they occurred, as a final {"position", "error"} line on `out`.
// Returns 0 when the whole file decoded, 1 otherwise.
int run_binlog_dump(const BinlogDumpOptions& options, std::ostream& out, std::ostream& err);

}  // namespace tidemark
