#pragma once
// pgoutput's logical replication messages, protocol version 1 (PostgreSQL 10 to 15 and later; no
// streaming or two-phase messages). Layouts follow PostgreSQL's src/backend/replication/logical/proto.c
// (logicalrep_write_* / logicalrep_read_*) and "Logical Replication Message Formats" in the manual:
//
//   'B' Begin     Int64 final_lsn, Int64 commit_time, Int32 xid
//   'C' Commit    Int8 flags (0), Int64 commit_lsn, Int64 end_lsn, Int64 commit_time
//   'O' Origin    Int64 commit_lsn, String name
//   'R' Relation  Int32 relid, String namespace ("" = pg_catalog), String name, Int8 replica identity,
//                 Int16 ncolumns, ncolumns × { Int8 flags (1 = key), String name, Int32 type OID,
//                 Int32 type modifier }
//   'Y' Type      Int32 type OID, String namespace ("" = pg_catalog), String name
//   'I' Insert    Int32 relid, 'N', TupleData
//   'U' Update    Int32 relid, ['K' TupleData | 'O' TupleData], 'N', TupleData
//   'D' Delete    Int32 relid, 'K' TupleData | 'O' TupleData
//   'T' Truncate  Int32 nrelids, Int8 options (1 cascade, 2 restart identity), nrelids × Int32 relid
//   'M' Message   Int8 flags (1 = transactional), Int64 lsn, String prefix, Int32 length, Byte*length
//   TupleData     Int16 ncolumns, ncolumns × { 'n' | 'u' | 't' Int32 length, Byte*length
//                                              | 'b' Int32 length, Byte*length }
//
// decode_pgoutput() checks every invariant it can see in one message (see there) and reports the first
// violation with the message kind and the byte offset. Each message has a read_* and a write_* function
// in pgoutput_decoder.cpp, next to each other.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "source/postgres/byte_cursor.hpp"
#include "source/postgres/replication_messages.hpp"

namespace tidemark::pg {

enum class MessageKind : char {
  Begin = 'B',
  Commit = 'C',
  Origin = 'O',
  Relation = 'R',
  Type = 'Y',
  Insert = 'I',
  Update = 'U',
  Delete = 'D',
  Truncate = 'T',
  Message = 'M',
};

// "Begin", "Commit", ...; "unknown" for other values.
std::string_view message_kind_name(MessageKind kind);

// Bits and markers of the wire format.
inline constexpr uint8_t kColumnFlagKey = 1;            // RelationColumn::flags: part of the replica identity
inline constexpr uint8_t kTruncateCascade = 1;          // TruncateMessage::options
inline constexpr uint8_t kTruncateRestartIdentity = 2;  // TruncateMessage::options
inline constexpr uint8_t kMessageTransactional = 1;     // Message flags
inline constexpr char kTupleNew = 'N';
inline constexpr char kTupleKey = 'K';
inline constexpr char kTupleOld = 'O';
inline constexpr std::string_view kPgCatalogNamespace = "pg_catalog";

struct BeginMessage {
  Lsn final_lsn = 0;        // LSN of the commit record; equals CommitMessage::commit_lsn
  int64_t commit_time = 0;  // microseconds since 2000-01-01 UTC
  uint32_t xid = 0;
  bool operator==(const BeginMessage&) const = default;
};

struct CommitMessage {
  uint8_t flags = 0;  // always 0 in protocol version 1
  Lsn commit_lsn = 0;
  Lsn end_lsn = 0;          // end of the commit record: where to resume after this transaction
  int64_t commit_time = 0;  // microseconds since 2000-01-01 UTC
  bool operator==(const CommitMessage&) const = default;
};

// Sent after Begin when the transaction was replayed from another node (replication origins).
struct OriginMessage {
  Lsn commit_lsn = 0;  // the commit LSN on the origin
  std::string name;
  bool operator==(const OriginMessage&) const = default;
};

enum class ReplicaIdentity : char { Default = 'd', Nothing = 'n', Full = 'f', Index = 'i' };

struct RelationColumn {
  uint8_t flags = 0;  // kColumnFlagKey
  std::string name;
  uint32_t type_oid = 0;
  int32_t type_modifier = -1;  // atttypmod; -1 when the type has none
  bool is_key() const { return (flags & kColumnFlagKey) != 0; }
  bool operator==(const RelationColumn&) const = default;
};

// Sent before the first change of a relation in a session, and again after its definition changed.
struct RelationMessage {
  uint32_t relation_id = 0;
  std::string namespace_name;  // the wire's "" is returned as "pg_catalog", as PostgreSQL's reader does
  std::string relation_name;
  ReplicaIdentity replica_identity = ReplicaIdentity::Default;
  std::vector<RelationColumn> columns;  // live columns in attribute order (no dropped or generated ones)
  bool operator==(const RelationMessage&) const = default;
};

// Sent before a Relation that uses a type which is not built in (enums, domains, composites, ...).
struct TypeMessage {
  uint32_t type_oid = 0;
  std::string namespace_name;  // "" on the wire = "pg_catalog"
  std::string type_name;
  bool operator==(const TypeMessage&) const = default;
};

enum class TupleValueKind : char { Null = 'n', Unchanged = 'u', Text = 't', Binary = 'b' };

struct TupleValue {
  TupleValueKind kind = TupleValueKind::Null;
  std::string data;  // the value's text or binary form; empty for Null and Unchanged (unchanged TOAST)
  bool operator==(const TupleValue&) const = default;
};

// One value per column of the relation, in RelationMessage::columns order.
using TupleData = std::vector<TupleValue>;

struct InsertMessage {
  uint32_t relation_id = 0;
  TupleData new_tuple;
  bool operator==(const InsertMessage&) const = default;
};

// key_tuple ('K', replica identity columns only, others null) comes when the identity changed under a
// default or index identity; old_tuple ('O', the whole old row) with REPLICA IDENTITY FULL. Never both.
struct UpdateMessage {
  uint32_t relation_id = 0;
  std::optional<TupleData> key_tuple;
  std::optional<TupleData> old_tuple;
  TupleData new_tuple;
  // old_tuple, else key_tuple, else nullptr.
  const TupleData* old_image() const { return old_tuple ? &*old_tuple : key_tuple ? &*key_tuple : nullptr; }
  bool operator==(const UpdateMessage&) const = default;
};

// Exactly one of key_tuple and old_tuple is set.
struct DeleteMessage {
  uint32_t relation_id = 0;
  std::optional<TupleData> key_tuple;
  std::optional<TupleData> old_tuple;
  const TupleData& old_image() const { return old_tuple ? *old_tuple : *key_tuple; }
  bool operator==(const DeleteMessage&) const = default;
};

struct TruncateMessage {
  uint8_t options = 0;  // kTruncateCascade | kTruncateRestartIdentity
  std::vector<uint32_t> relation_ids;  // at least one
  bool cascade() const { return (options & kTruncateCascade) != 0; }
  bool restart_identity() const { return (options & kTruncateRestartIdentity) != 0; }
  bool operator==(const TruncateMessage&) const = default;
};

// pg_logical_emit_message(). Transactional ones arrive between Begin and Commit in statement order;
// others arrive on their own, outside any transaction, when they are written.
struct LogicalMessage {
  bool transactional = false;
  Lsn lsn = 0;
  std::string prefix;
  std::string content;  // arbitrary bytes
  bool operator==(const LogicalMessage&) const = default;
};

using PgOutputMessage = std::variant<BeginMessage, CommitMessage, OriginMessage, RelationMessage, TypeMessage,
                                     InsertMessage, UpdateMessage, DeleteMessage, TruncateMessage, LogicalMessage>;

MessageKind kind_of(const PgOutputMessage& message);

// Decodes one pgoutput message (the payload of an XLogData, or a `data` row of
// pg_logical_slot_*_binary_changes) by its first byte. Errors (never exceptions, never partial results):
//   - the buffer ends before a field ends, or a String has no NUL;
//   - bytes left after the last field;
//   - an unknown message kind (named in the message; streaming/two-phase kinds say so);
//   - an invalid field: Begin/Commit/Message with LSN 0, Begin with xid 0, Commit flags ≠ 0 or end ≤
//     commit LSN, relation/type OID 0, empty relation/type/column name, duplicate column names, unknown
//     replica identity, column flags other than the key bit, key flags inconsistent with identity FULL
//     (all keys) or NOTHING (no keys), unknown tuple markers ('N'/'K'/'O' where they belong) or value
//     kinds, an old/key tuple whose column count differs from the new tuple's, a key tuple with an
//     unchanged-TOAST value, Truncate with no relations or unknown option bits, Message flags other than
//     0/1, lengths that exceed the message.
std::variant<PgOutputMessage, DecodeError> decode_pgoutput(std::string_view payload);

// Encodes a message as pgoutput would (the write_* half; for tests and fake servers). A namespace of
// "pg_catalog" is written as "", like PostgreSQL. Strings must not contain NUL.
std::string encode_pgoutput(const PgOutputMessage& message);

// Checks a decoded Insert/Update/Delete against the Relation it refers to: same relation id, one value
// per column in every tuple, and key tuples carry values only in key columns. Returns the problem, or
// nullopt when consistent (and for other message kinds).
std::optional<std::string> check_against_relation(const PgOutputMessage& message, const RelationMessage& relation);

// One line for debug logs, e.g. `Begin xid=758 final_lsn=0/1DF3688 commit_time=2026-12-02T10:30:51.644887Z`
// or `Update relation=16399 new=("4", "toasted", "5", unchanged, null, b[4])`. Text values longer than 48
// bytes are cut (`"c4ca..."...(9600 bytes)`); binary values show their size only.
std::string describe(const PgOutputMessage& message);

// A PostgreSQL-epoch timestamp as ISO 8601 UTC with microseconds ("2000-01-01T00:00:00.000000Z"), or
// the raw number when it is outside years 1..9999.
std::string format_pg_timestamp(int64_t pg_us);

}  // namespace tidemark::pg
