#pragma once
// Two-way sync: drops from this pipeline's stream the transactions that the peer pipeline (two_way.peer)
// applied into this source database, so that no change travels back to where it came from. The peer's
// database sink updates its row of the marker table (two_way.marker_table) as the first statement of each
// transaction it applies (sink/database/marker_table.hpp); here, a change of that row (or of this
// pipeline's own, when both directions share one database) starts an echo, and everything up to the end
// of that transaction is dropped, its end position too: passed on as a Checkpoint, it would make this
// pipeline's sink commit a position-only transaction into the peer's database, which the peer drops and
// answers the same way, for ever. The committed position moves past echoes with the next transaction of
// this database's own (a restart before that reads them again and drops them again).
//
// One part of an echo travels on: the peer's id map entries (the rows its sink generated keys for, and
// their source keys), which this pipeline's sink records the other way round, so that a row created on
// either side can be updated and deleted from either side. Such an echo ends with its end position (its
// entries are committed with it); the sink's answer writes nothing new into the peer's id map, so the next
// echo carries no entries and is dropped whole.
//
// Invariants:
// - Changes of the marker table never pass, whoever made them; the end of a transaction that made them
//   passes as a Checkpoint unless that transaction is an echo without the peer's id map entries.
// - Of an echo only the peer's id map entries pass (pipeline = the peer).
// - An echo ends with its transaction: at the event that carries the resume position, or a Checkpoint.

#include <cstdint>
#include <string>

#include "config/two_way_tables.hpp"
#include "tidemark/change_event.hpp"

namespace tidemark {

class EchoFilter {
 public:
  // `marker_table`, `id_map_table`: "schema.table" (PostgreSQL) or "database.table" (MySQL); `peer`: the
  // peer's pipeline name; `self`: this pipeline's, whose own marks are dropped too (both directions in one
  // database: this pipeline's sink writes into the database its source reads).
  EchoFilter(std::string marker_table, std::string id_map_table, std::string peer, std::string self);

  // False when `item` is dropped. The last event of a transaction that only changed the marker table
  // becomes a Checkpoint and passes.
  bool pass(StreamItem& item);
  uint64_t dropped_transactions() const { return dropped_; }

 private:
  // The text of `event`'s column `pipeline` (old image first: a MINIMAL binlog image may lack it in the new).
  static const std::string* pipeline_of(const ChangeEvent& event);
  bool is_echo_marker(const ChangeEvent& event) const;
  bool is_peer_entry(const ChangeEvent& event) const;
  // The end of an echo: dropped, or a Checkpoint when some of its entries passed.
  bool end_echo(StreamItem& item, SourcePosition end);

  std::string marker_table_;
  std::string id_map_table_;
  std::string peer_;
  std::string self_;
  bool in_echo_ = false;
  bool forwarded_ = false;  // the echo in progress passed some id map entries
  uint64_t dropped_ = 0;
};

}  // namespace tidemark
