#include "source/postgres/pgoutput_decoder.hpp"

#include "core/civil_time.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <iterator>
#include <string_view>
#include <type_traits>
#include <unordered_set>

namespace tidemark::pg {

namespace {

// ---- shared pieces -------------------------------------------------------------------------------------

std::string quoted_byte(uint8_t byte) {
  char buf[16];
  if (byte >= 0x20 && byte < 0x7F) {
    std::snprintf(buf, sizeof buf, "'%c' (0x%02x)", static_cast<char>(byte), byte);
  } else {
    std::snprintf(buf, sizeof buf, "0x%02x", byte);
  }
  return buf;
}

// An LSN that must be valid (PostgreSQL's readers reject InvalidXLogRecPtr here too).
bool read_valid_lsn(ByteCursor& c, Lsn& out, const char* what) {
  const size_t at = c.offset();
  if (!c.read_u64(out, what)) return false;
  if (out == kInvalidLsn) return c.fail(at, std::string(what) + " is 0/0 (InvalidXLogRecPtr)");
  return true;
}

// A relation or type OID: never InvalidOid.
bool read_oid(ByteCursor& c, uint32_t& out, const char* what) {
  const size_t at = c.offset();
  if (!c.read_u32(out, what)) return false;
  if (out == 0) return c.fail(at, std::string(what) + " is 0 (InvalidOid)");
  return true;
}

bool read_string(ByteCursor& c, std::string& out, const char* what, bool allow_empty) {
  const size_t at = c.offset();
  std::string_view s;
  if (!c.read_cstring(s, what)) return false;
  if (s.empty() && !allow_empty) return c.fail(at, std::string("empty ") + what);
  out.assign(s);
  return true;
}

// logicalrep_read_namespace: the empty string stands for pg_catalog.
bool read_namespace(ByteCursor& c, std::string& out) {
  if (!read_string(c, out, "namespace", true)) return false;
  if (out.empty()) out.assign(kPgCatalogNamespace);
  return true;
}

void write_namespace(std::string& out, std::string_view name) {
  put_cstring(out, name == kPgCatalogNamespace ? std::string_view() : name);
}

// Int32 length (≥ 0) followed by that many bytes.
bool read_counted_bytes(ByteCursor& c, std::string& out, const char* length_what, const char* data_what) {
  const size_t at = c.offset();
  int32_t length = 0;
  if (!c.read_i32(length, length_what)) return false;
  if (length < 0) return c.fail(at, std::string("negative ") + length_what + " " + std::to_string(length));
  std::string_view bytes;
  if (!c.read_bytes(static_cast<size_t>(length), bytes, data_what)) return false;
  out.assign(bytes);
  return true;
}

// ---- TupleData (logicalrep_read_tuple / logicalrep_write_tuple) ----------------------------------------

bool read_tuple(ByteCursor& c, TupleData& tuple, bool allow_unchanged) {
  const size_t count_at = c.offset();
  uint16_t count = 0;
  if (!c.read_u16(count, "column count")) return false;
  // Every value takes at least its kind byte: refuse counts the message cannot hold before allocating.
  if (count > c.remaining()) {
    return c.fail(count_at, "column count " + std::to_string(count) + " exceeds the " +
                                std::to_string(c.remaining()) + " remaining bytes");
  }
  tuple.clear();
  tuple.reserve(count);
  for (uint16_t i = 0; i < count; ++i) {
    const size_t kind_at = c.offset();
    uint8_t kind = 0;
    bool ok = c.read_u8(kind, "value kind");
    TupleValue value;
    if (ok) {
      switch (static_cast<TupleValueKind>(kind)) {
        case TupleValueKind::Null:
          value.kind = TupleValueKind::Null;
          break;
        case TupleValueKind::Unchanged:
          if (!allow_unchanged) {
            ok = c.fail(kind_at, "unchanged TOAST value ('u') in a key tuple");
            break;
          }
          value.kind = TupleValueKind::Unchanged;
          break;
        case TupleValueKind::Text:
          value.kind = TupleValueKind::Text;
          ok = read_counted_bytes(c, value.data, "value length", "text value");
          break;
        case TupleValueKind::Binary:
          value.kind = TupleValueKind::Binary;
          ok = read_counted_bytes(c, value.data, "value length", "binary value");
          break;
        default:
          ok = c.fail(kind_at, "unknown value kind " + quoted_byte(kind) + " (expected 'n', 'u', 't' or 'b')");
          break;
      }
    }
    if (!ok) {
      c.prefix_failure("column " + std::to_string(i) + ": ");
      return false;
    }
    tuple.push_back(std::move(value));
  }
  return true;
}

void write_tuple(std::string& out, const TupleData& tuple) {
  put_u16(out, static_cast<uint16_t>(tuple.size()));
  for (const TupleValue& value : tuple) {
    out.push_back(static_cast<char>(value.kind));
    if (value.kind == TupleValueKind::Text || value.kind == TupleValueKind::Binary) {
      put_i32(out, static_cast<int32_t>(value.data.size()));
      out.append(value.data);
    }
  }
}

// A tuple with the name used in error messages ("new tuple: column 3: ...").
bool read_named_tuple(ByteCursor& c, TupleData& tuple, const char* name, bool allow_unchanged) {
  if (read_tuple(c, tuple, allow_unchanged)) return true;
  c.prefix_failure(std::string(name) + ": ");
  return false;
}

// The Int8 that introduces a tuple: 'N', 'K' or 'O'. Reports anything not in `allowed`.
bool read_tuple_marker(ByteCursor& c, char& marker, std::string_view allowed, const char* expectation) {
  const size_t at = c.offset();
  uint8_t byte = 0;
  if (!c.read_u8(byte, "tuple marker")) return false;
  marker = static_cast<char>(byte);
  if (allowed.find(marker) == std::string_view::npos) {
    return c.fail(at, "tuple marker is " + quoted_byte(byte) + ", expected " + expectation);
  }
  return true;
}

// ---- one read_* and write_* per message ----------------------------------------------------------------

bool read_begin(ByteCursor& c, BeginMessage& m) {
  if (!read_valid_lsn(c, m.final_lsn, "final LSN")) return false;
  if (!c.read_i64(m.commit_time, "commit time")) return false;
  const size_t xid_at = c.offset();
  if (!c.read_u32(m.xid, "xid")) return false;
  if (m.xid == 0) return c.fail(xid_at, "xid is 0 (InvalidTransactionId)");
  return true;
}

void write_begin(std::string& out, const BeginMessage& m) {
  put_u64(out, m.final_lsn);
  put_i64(out, m.commit_time);
  put_u32(out, m.xid);
}

bool read_commit(ByteCursor& c, CommitMessage& m) {
  const size_t flags_at = c.offset();
  if (!c.read_u8(m.flags, "flags")) return false;
  if (m.flags != 0) return c.fail(flags_at, "unrecognized flags " + std::to_string(m.flags) + " (expected 0)");
  if (!read_valid_lsn(c, m.commit_lsn, "commit LSN")) return false;
  const size_t end_at = c.offset();
  if (!read_valid_lsn(c, m.end_lsn, "end LSN")) return false;
  if (m.end_lsn <= m.commit_lsn) {
    return c.fail(end_at, "end LSN " + lsn_to_string(m.end_lsn) + " is not after commit LSN " +
                              lsn_to_string(m.commit_lsn));
  }
  return c.read_i64(m.commit_time, "commit time");
}

void write_commit(std::string& out, const CommitMessage& m) {
  put_u8(out, m.flags);
  put_u64(out, m.commit_lsn);
  put_u64(out, m.end_lsn);
  put_i64(out, m.commit_time);
}

bool read_origin(ByteCursor& c, OriginMessage& m) {
  // The origin LSN may be 0/0: a session with an origin but no pg_replication_origin_xact_setup().
  return c.read_u64(m.commit_lsn, "origin commit LSN") && read_string(c, m.name, "origin name", false);
}

void write_origin(std::string& out, const OriginMessage& m) {
  put_u64(out, m.commit_lsn);
  put_cstring(out, m.name);
}

bool known_replica_identity(uint8_t byte) {
  switch (static_cast<ReplicaIdentity>(byte)) {
    case ReplicaIdentity::Default:
    case ReplicaIdentity::Nothing:
    case ReplicaIdentity::Full:
    case ReplicaIdentity::Index:
      return true;
  }
  return false;
}

bool read_relation_column(ByteCursor& c, RelationColumn& col) {
  const size_t flags_at = c.offset();
  if (!c.read_u8(col.flags, "column flags")) return false;
  if ((col.flags & ~kColumnFlagKey) != 0) {
    return c.fail(flags_at, "unrecognized column flags " + std::to_string(col.flags) + " (only 1 = key is defined)");
  }
  return read_string(c, col.name, "column name", false) && read_oid(c, col.type_oid, "column type OID") &&
         c.read_i32(col.type_modifier, "column type modifier");
}

bool read_relation(ByteCursor& c, RelationMessage& m) {
  if (!read_oid(c, m.relation_id, "relation id") || !read_namespace(c, m.namespace_name) ||
      !read_string(c, m.relation_name, "relation name", false)) {
    return false;
  }
  const size_t identity_at = c.offset();
  uint8_t identity = 0;
  if (!c.read_u8(identity, "replica identity")) return false;
  if (!known_replica_identity(identity)) {
    return c.fail(identity_at, "unknown replica identity " + quoted_byte(identity) + " (expected 'd', 'n', 'f' or 'i')");
  }
  m.replica_identity = static_cast<ReplicaIdentity>(identity);

  const size_t count_at = c.offset();
  uint16_t count = 0;
  if (!c.read_u16(count, "column count")) return false;
  constexpr size_t kMinColumnSize = 1 + 1 + 4 + 4;  // flags, a one-character name and its NUL, OID, typmod
  if (count > c.remaining() / kMinColumnSize) {
    return c.fail(count_at, "column count " + std::to_string(count) + " does not fit in the " +
                                std::to_string(c.remaining()) + " remaining bytes");
  }
  m.columns.clear();
  m.columns.reserve(count);
  std::unordered_set<std::string_view> names;
  for (uint16_t i = 0; i < count; ++i) {
    const size_t column_at = c.offset();
    RelationColumn col;
    if (!read_relation_column(c, col)) {
      c.prefix_failure("column " + std::to_string(i) + ": ");
      return false;
    }
    // Full means every column is part of the identity; Nothing means none is (logicalrep_write_attrs).
    if (m.replica_identity == ReplicaIdentity::Full && !col.is_key()) {
      return c.fail(column_at, "column " + std::to_string(i) + " \"" + col.name +
                                   "\" is not flagged as key under REPLICA IDENTITY FULL");
    }
    if (m.replica_identity == ReplicaIdentity::Nothing && col.is_key()) {
      return c.fail(column_at, "column " + std::to_string(i) + " \"" + col.name +
                                   "\" is flagged as key under REPLICA IDENTITY NOTHING");
    }
    m.columns.push_back(std::move(col));
    // Views stay valid: `columns` was reserved, so it never reallocates here.
    if (!names.insert(m.columns.back().name).second) {
      return c.fail(column_at, "column " + std::to_string(i) + ": duplicate column name \"" +
                                   m.columns.back().name + "\"");
    }
  }
  return true;
}

void write_relation(std::string& out, const RelationMessage& m) {
  put_u32(out, m.relation_id);
  write_namespace(out, m.namespace_name);
  put_cstring(out, m.relation_name);
  out.push_back(static_cast<char>(m.replica_identity));
  put_u16(out, static_cast<uint16_t>(m.columns.size()));
  for (const RelationColumn& col : m.columns) {
    put_u8(out, col.flags);
    put_cstring(out, col.name);
    put_u32(out, col.type_oid);
    put_i32(out, col.type_modifier);
  }
}

bool read_type(ByteCursor& c, TypeMessage& m) {
  return read_oid(c, m.type_oid, "type OID") && read_namespace(c, m.namespace_name) &&
         read_string(c, m.type_name, "type name", false);
}

void write_type(std::string& out, const TypeMessage& m) {
  put_u32(out, m.type_oid);
  write_namespace(out, m.namespace_name);
  put_cstring(out, m.type_name);
}

bool read_insert(ByteCursor& c, InsertMessage& m) {
  char marker = 0;
  return read_oid(c, m.relation_id, "relation id") && read_tuple_marker(c, marker, "N", "'N' (new tuple)") &&
         read_named_tuple(c, m.new_tuple, "new tuple", true);
}

void write_insert(std::string& out, const InsertMessage& m) {
  put_u32(out, m.relation_id);
  out.push_back(kTupleNew);
  write_tuple(out, m.new_tuple);
}

bool read_update(ByteCursor& c, UpdateMessage& m) {
  char marker = 0;
  if (!read_oid(c, m.relation_id, "relation id") ||
      !read_tuple_marker(c, marker, "KON", "'K' (key), 'O' (old tuple) or 'N' (new tuple)")) {
    return false;
  }
  const TupleData* old_image = nullptr;
  if (marker == kTupleKey) {
    if (!read_named_tuple(c, m.key_tuple.emplace(), "key tuple", false)) return false;
    old_image = &*m.key_tuple;
  } else if (marker == kTupleOld) {
    if (!read_named_tuple(c, m.old_tuple.emplace(), "old tuple", true)) return false;
    old_image = &*m.old_tuple;
  }
  if (old_image != nullptr && !read_tuple_marker(c, marker, "N", "'N' (new tuple) after the old image")) {
    return false;
  }
  const size_t new_at = c.offset();
  if (!read_named_tuple(c, m.new_tuple, "new tuple", true)) return false;
  if (old_image != nullptr && old_image->size() != m.new_tuple.size()) {
    return c.fail(new_at, "new tuple has " + std::to_string(m.new_tuple.size()) + " columns, the " +
                              (m.key_tuple ? "key" : "old") + " tuple " + std::to_string(old_image->size()));
  }
  return true;
}

void write_update(std::string& out, const UpdateMessage& m) {
  put_u32(out, m.relation_id);
  if (m.key_tuple) {
    out.push_back(kTupleKey);
    write_tuple(out, *m.key_tuple);
  } else if (m.old_tuple) {
    out.push_back(kTupleOld);
    write_tuple(out, *m.old_tuple);
  }
  out.push_back(kTupleNew);
  write_tuple(out, m.new_tuple);
}

bool read_delete(ByteCursor& c, DeleteMessage& m) {
  char marker = 0;
  if (!read_oid(c, m.relation_id, "relation id") ||
      !read_tuple_marker(c, marker, "KO", "'K' (key) or 'O' (old tuple)")) {
    return false;
  }
  if (marker == kTupleKey) return read_named_tuple(c, m.key_tuple.emplace(), "key tuple", false);
  return read_named_tuple(c, m.old_tuple.emplace(), "old tuple", true);
}

void write_delete(std::string& out, const DeleteMessage& m) {
  put_u32(out, m.relation_id);
  if (m.key_tuple) {
    out.push_back(kTupleKey);
    write_tuple(out, *m.key_tuple);
  } else {
    out.push_back(kTupleOld);
    write_tuple(out, m.old_tuple ? *m.old_tuple : TupleData{});
  }
}

bool read_truncate(ByteCursor& c, TruncateMessage& m) {
  const size_t count_at = c.offset();
  uint32_t count = 0;
  if (!c.read_u32(count, "relation count")) return false;
  if (count == 0) return c.fail(count_at, "relation count is 0");
  const size_t options_at = c.offset();
  if (!c.read_u8(m.options, "options")) return false;
  if ((m.options & ~(kTruncateCascade | kTruncateRestartIdentity)) != 0) {
    return c.fail(options_at, "unrecognized options " + std::to_string(m.options) +
                                  " (defined: 1 = cascade, 2 = restart identity)");
  }
  if (count > c.remaining() / 4) {
    return c.fail(count_at, "relation count " + std::to_string(count) + " does not fit in the " +
                                std::to_string(c.remaining()) + " remaining bytes");
  }
  m.relation_ids.assign(count, 0);
  for (uint32_t& id : m.relation_ids) {
    if (!read_oid(c, id, "relation id")) return false;
  }
  return true;
}

void write_truncate(std::string& out, const TruncateMessage& m) {
  put_u32(out, static_cast<uint32_t>(m.relation_ids.size()));
  put_u8(out, m.options);
  for (uint32_t id : m.relation_ids) put_u32(out, id);
}

bool read_message(ByteCursor& c, LogicalMessage& m) {
  const size_t flags_at = c.offset();
  uint8_t flags = 0;
  if (!c.read_u8(flags, "flags")) return false;
  if ((flags & ~kMessageTransactional) != 0) {
    return c.fail(flags_at, "unrecognized flags " + std::to_string(flags) + " (defined: 1 = transactional)");
  }
  m.transactional = (flags & kMessageTransactional) != 0;
  return read_valid_lsn(c, m.lsn, "message LSN") && read_string(c, m.prefix, "prefix", true) &&
         read_counted_bytes(c, m.content, "content length", "content");
}

void write_message(std::string& out, const LogicalMessage& m) {
  put_u8(out, m.transactional ? kMessageTransactional : 0);
  put_u64(out, m.lsn);
  put_cstring(out, m.prefix);
  put_i32(out, static_cast<int32_t>(m.content.size()));
  out.append(m.content);
}

// Kinds of later protocol versions, named so that a misconfigured slot says what happened.
const char* later_protocol_kind(char kind) {
  switch (kind) {
    case 'S': return "Stream Start (protocol version 2, streaming)";
    case 'E': return "Stream Stop (protocol version 2, streaming)";
    case 'c': return "Stream Commit (protocol version 2, streaming)";
    case 'A': return "Stream Abort (protocol version 2, streaming)";
    case 'b': return "Begin Prepare (protocol version 3, two-phase)";
    case 'P': return "Prepare (protocol version 3, two-phase)";
    case 'K': return "Commit Prepared (protocol version 3, two-phase)";
    case 'r': return "Rollback Prepared (protocol version 3, two-phase)";
    case 'p': return "Stream Prepare (protocol version 3, two-phase)";
    default: return nullptr;
  }
}

template <typename M>
bool read_into(ByteCursor& c, PgOutputMessage& out, bool (*read)(ByteCursor&, M&)) {
  M& m = out.emplace<M>();
  return read(c, m);
}

// ---- describe --------------------------------------------------------------------------------------------

void append_value_text(std::string& out, std::string_view data) {
  constexpr size_t kMaxShown = 48;
  out.push_back('"');
  const size_t shown = std::min(data.size(), kMaxShown);
  for (size_t i = 0; i < shown; ++i) {
    const auto byte = static_cast<unsigned char>(data[i]);
    if (byte == '"' || byte == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(byte));
    } else if (byte < 0x20 || byte == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", byte);
      out.append(buf);
    } else {
      out.push_back(static_cast<char>(byte));
    }
  }
  out.push_back('"');
  if (shown < data.size()) out.append("...(" + std::to_string(data.size()) + " bytes)");
}

void append_tuple(std::string& out, const TupleData& tuple) {
  out.push_back('(');
  for (size_t i = 0; i < tuple.size(); ++i) {
    if (i > 0) out.append(", ");
    const TupleValue& v = tuple[i];
    switch (v.kind) {
      case TupleValueKind::Null:
        out.append("null");
        break;
      case TupleValueKind::Unchanged:
        out.append("unchanged");
        break;
      case TupleValueKind::Text:
        append_value_text(out, v.data);
        break;
      case TupleValueKind::Binary:
        out.append("b[" + std::to_string(v.data.size()) + "]");
        break;
    }
  }
  out.push_back(')');
}

const char* identity_name(ReplicaIdentity identity) {
  switch (identity) {
    case ReplicaIdentity::Default: return "default";
    case ReplicaIdentity::Nothing: return "nothing";
    case ReplicaIdentity::Full: return "full";
    case ReplicaIdentity::Index: return "index";
  }
  return "?";
}

struct Describer {
  std::string out;

  void operator()(const BeginMessage& m) {
    out = "Begin xid=" + std::to_string(m.xid) + " final_lsn=" + lsn_to_string(m.final_lsn) +
          " commit_time=" + format_pg_timestamp(m.commit_time);
  }
  void operator()(const CommitMessage& m) {
    out = "Commit commit_lsn=" + lsn_to_string(m.commit_lsn) + " end_lsn=" + lsn_to_string(m.end_lsn) +
          " commit_time=" + format_pg_timestamp(m.commit_time);
    if (m.flags != 0) out += " flags=" + std::to_string(m.flags);
  }
  void operator()(const OriginMessage& m) {
    out = "Origin name=";
    append_value_text(out, m.name);
    out += " commit_lsn=" + lsn_to_string(m.commit_lsn);
  }
  void operator()(const RelationMessage& m) {
    out = "Relation " + std::to_string(m.relation_id) + " " + m.namespace_name + "." + m.relation_name +
          " identity=" + identity_name(m.replica_identity) + " columns=(";
    for (size_t i = 0; i < m.columns.size(); ++i) {
      const RelationColumn& col = m.columns[i];
      if (i > 0) out.append(", ");
      if (col.is_key()) out.push_back('*');
      out += col.name + ":" + std::to_string(col.type_oid);
      if (col.type_modifier != -1) out += "(" + std::to_string(col.type_modifier) + ")";
    }
    out.push_back(')');
  }
  void operator()(const TypeMessage& m) {
    out = "Type " + std::to_string(m.type_oid) + " " + m.namespace_name + "." + m.type_name;
  }
  void operator()(const InsertMessage& m) {
    out = "Insert relation=" + std::to_string(m.relation_id) + " new=";
    append_tuple(out, m.new_tuple);
  }
  void operator()(const UpdateMessage& m) {
    out = "Update relation=" + std::to_string(m.relation_id);
    if (m.key_tuple) {
      out += " key=";
      append_tuple(out, *m.key_tuple);
    }
    if (m.old_tuple) {
      out += " old=";
      append_tuple(out, *m.old_tuple);
    }
    out += " new=";
    append_tuple(out, m.new_tuple);
  }
  void operator()(const DeleteMessage& m) {
    out = "Delete relation=" + std::to_string(m.relation_id);
    if (m.key_tuple) {
      out += " key=";
      append_tuple(out, *m.key_tuple);
    }
    if (m.old_tuple) {
      out += " old=";
      append_tuple(out, *m.old_tuple);
    }
  }
  void operator()(const TruncateMessage& m) {
    out = "Truncate relations=[";
    for (size_t i = 0; i < m.relation_ids.size(); ++i) {
      if (i > 0) out.append(", ");
      out += std::to_string(m.relation_ids[i]);
    }
    out.push_back(']');
    if (m.cascade()) out += " cascade";
    if (m.restart_identity()) out += " restart_identity";
  }
  void operator()(const LogicalMessage& m) {
    out = std::string("Message ") + (m.transactional ? "transactional" : "non-transactional") +
          " lsn=" + lsn_to_string(m.lsn) + " prefix=";
    append_value_text(out, m.prefix);
    out += " content=";
    append_value_text(out, m.content);
  }
};


}  // namespace

std::string_view message_kind_name(MessageKind kind) {
  switch (kind) {
    case MessageKind::Begin: return "Begin";
    case MessageKind::Commit: return "Commit";
    case MessageKind::Origin: return "Origin";
    case MessageKind::Relation: return "Relation";
    case MessageKind::Type: return "Type";
    case MessageKind::Insert: return "Insert";
    case MessageKind::Update: return "Update";
    case MessageKind::Delete: return "Delete";
    case MessageKind::Truncate: return "Truncate";
    case MessageKind::Message: return "Message";
  }
  return "unknown";
}

MessageKind kind_of(const PgOutputMessage& message) {
  static constexpr MessageKind kKinds[] = {
      MessageKind::Begin,  MessageKind::Commit, MessageKind::Origin, MessageKind::Relation, MessageKind::Type,
      MessageKind::Insert, MessageKind::Update, MessageKind::Delete, MessageKind::Truncate, MessageKind::Message,
  };
  static_assert(std::size(kKinds) == std::variant_size_v<PgOutputMessage>);
  return kKinds[message.index()];
}

std::variant<PgOutputMessage, DecodeError> decode_pgoutput(std::string_view payload) {
  ByteCursor c(payload);
  uint8_t byte = 0;
  if (!c.read_u8(byte, "message kind")) return DecodeError{'\0', 0, "empty pgoutput message"};
  const auto kind = static_cast<char>(byte);

  PgOutputMessage message;
  bool ok = false;
  switch (static_cast<MessageKind>(kind)) {
    case MessageKind::Begin: ok = read_into(c, message, read_begin); break;
    case MessageKind::Commit: ok = read_into(c, message, read_commit); break;
    case MessageKind::Origin: ok = read_into(c, message, read_origin); break;
    case MessageKind::Relation: ok = read_into(c, message, read_relation); break;
    case MessageKind::Type: ok = read_into(c, message, read_type); break;
    case MessageKind::Insert: ok = read_into(c, message, read_insert); break;
    case MessageKind::Update: ok = read_into(c, message, read_update); break;
    case MessageKind::Delete: ok = read_into(c, message, read_delete); break;
    case MessageKind::Truncate: ok = read_into(c, message, read_truncate); break;
    case MessageKind::Message: ok = read_into(c, message, read_message); break;
    default: {
      if (const char* later = later_protocol_kind(kind)) {
        return DecodeError{kind, 0,
                           std::string("unsupported pgoutput message kind ") + quoted_byte(byte) + ": " + later +
                               "; Tidemark requests proto_version '1'"};
      }
      return DecodeError{kind, 0, "unknown pgoutput message kind " + quoted_byte(byte)};
    }
  }
  if (ok && !c.at_end()) {
    c.fail(c.offset(), std::to_string(c.remaining()) + " trailing bytes after the last field");
    ok = false;
  }
  if (!ok) {
    const CursorFailure& f = *c.failure();
    return DecodeError{kind, f.offset,
                       std::string(message_kind_name(static_cast<MessageKind>(kind))) + ": " + f.message};
  }
  return message;
}

std::string encode_pgoutput(const PgOutputMessage& message) {
  std::string out;
  out.push_back(static_cast<char>(kind_of(message)));
  std::visit(
      [&out](const auto& m) {
        using M = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<M, BeginMessage>) write_begin(out, m);
        else if constexpr (std::is_same_v<M, CommitMessage>) write_commit(out, m);
        else if constexpr (std::is_same_v<M, OriginMessage>) write_origin(out, m);
        else if constexpr (std::is_same_v<M, RelationMessage>) write_relation(out, m);
        else if constexpr (std::is_same_v<M, TypeMessage>) write_type(out, m);
        else if constexpr (std::is_same_v<M, InsertMessage>) write_insert(out, m);
        else if constexpr (std::is_same_v<M, UpdateMessage>) write_update(out, m);
        else if constexpr (std::is_same_v<M, DeleteMessage>) write_delete(out, m);
        else if constexpr (std::is_same_v<M, TruncateMessage>) write_truncate(out, m);
        else if constexpr (std::is_same_v<M, LogicalMessage>) write_message(out, m);
      },
      message);
  return out;
}

std::optional<std::string> check_against_relation(const PgOutputMessage& message, const RelationMessage& relation) {
  const size_t width = relation.columns.size();
  const std::string table = relation.namespace_name + "." + relation.relation_name;
  auto check_tuple = [&](const TupleData& tuple, const char* name) -> std::optional<std::string> {
    if (tuple.size() != width) {
      return std::string(name) + " has " + std::to_string(tuple.size()) + " columns, relation " + table + " has " +
             std::to_string(width);
    }
    return std::nullopt;
  };
  auto check_key_tuple = [&](const TupleData& tuple) -> std::optional<std::string> {
    if (auto problem = check_tuple(tuple, "key tuple")) return problem;
    for (size_t i = 0; i < width; ++i) {
      if (!relation.columns[i].is_key() && tuple[i].kind != TupleValueKind::Null) {
        return "key tuple has a value in column \"" + relation.columns[i].name + "\", which is not part of the " +
               "replica identity of " + table;
      }
    }
    return std::nullopt;
  };
  auto check_id = [&](uint32_t id) -> std::optional<std::string> {
    if (id != relation.relation_id) {
      return "relation id " + std::to_string(id) + " does not match relation " + table + " (" +
             std::to_string(relation.relation_id) + ")";
    }
    return std::nullopt;
  };

  if (const auto* insert = std::get_if<InsertMessage>(&message)) {
    if (auto problem = check_id(insert->relation_id)) return problem;
    return check_tuple(insert->new_tuple, "new tuple");
  }
  if (const auto* update = std::get_if<UpdateMessage>(&message)) {
    if (auto problem = check_id(update->relation_id)) return problem;
    if (update->key_tuple) {
      if (auto problem = check_key_tuple(*update->key_tuple)) return problem;
    }
    if (update->old_tuple) {
      if (auto problem = check_tuple(*update->old_tuple, "old tuple")) return problem;
    }
    return check_tuple(update->new_tuple, "new tuple");
  }
  if (const auto* del = std::get_if<DeleteMessage>(&message)) {
    if (auto problem = check_id(del->relation_id)) return problem;
    if (del->key_tuple) return check_key_tuple(*del->key_tuple);
    if (del->old_tuple) return check_tuple(*del->old_tuple, "old tuple");
  }
  return std::nullopt;
}

std::string describe(const PgOutputMessage& message) {
  Describer d;
  std::visit(d, message);
  return std::move(d.out);
}

std::string format_pg_timestamp(int64_t pg_us) {
  // Years 1..9999 in Unix microseconds.
  constexpr int64_t kMinUnixUs = -62'135'596'800LL * 1'000'000;
  constexpr int64_t kMaxUnixUs = 253'402'300'799LL * 1'000'000 + 999'999;
  const int64_t unix_us = pg_us_to_unix_us(pg_us);
  if (unix_us < kMinUnixUs || unix_us > kMaxUnixUs) return "pg_us:" + std::to_string(pg_us);
  int64_t seconds = unix_us / 1'000'000;
  int64_t micros = unix_us % 1'000'000;
  if (micros < 0) {
    micros += 1'000'000;
    --seconds;
  }
  int64_t days = seconds / 86400;
  int64_t second_of_day = seconds % 86400;
  if (second_of_day < 0) {
    second_of_day += 86400;
    --days;
  }
  int64_t year = 0;
  unsigned month = 0;
  unsigned day = 0;
  civil_from_days(days, year, month, day);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%04" PRId64 "-%02u-%02uT%02" PRId64 ":%02" PRId64 ":%02" PRId64 ".%06" PRId64 "Z",
                year, month, day, second_of_day / 3600, second_of_day / 60 % 60, second_of_day % 60, micros);
  return buf;
}

}  // namespace tidemark::pg
