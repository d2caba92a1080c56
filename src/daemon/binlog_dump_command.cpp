#include "daemon/binlog_dump_command.hpp"

#include <cstdio>
#include <filesystem>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "sink/envelope_serializer.hpp"
#include "source/mysql/binlog_change_builder.hpp"
#include "source/mysql/binlog_file_reader.hpp"
#include "source/mysql/row_decoder.hpp"

namespace tidemark {

namespace {

using json = nlohmann::ordered_json;
using namespace tidemark::mysql;

std::string to_hex(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char b : bytes) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 0x0f]);
  }
  return out;
}

std::string checksum_name(ChecksumAlgorithm c) {
  switch (c) {
    case ChecksumAlgorithm::Off: return "NONE";
    case ChecksumAlgorithm::Crc32: return "CRC32";
    case ChecksumAlgorithm::Undefined: break;
  }
  return "UNDEFINED";
}

json value_json(const Value& v) {
  std::string text;
  write_json_value(v, text);
  return json::parse(text, nullptr, /*allow_exceptions=*/false);
}

json xid_json(const XaXid& x) {
  return json{{"format_id", x.format_id}, {"gtrid_hex", to_hex(x.gtrid)}, {"bqual_hex", to_hex(x.bqual)}};
}

json table_json(const TableMap& t) {
  json cols = json::array();
  for (const ColumnDef& c : t.columns) {
    json col{{"name", c.name}, {"type", std::string(column_type_name(c.type))}, {"meta", c.meta},
             {"nullable", c.nullable}};
    if (c.is_unsigned) col["unsigned"] = true;
    if (c.collation != 0) col["collation"] = c.collation;
    if (!c.enum_values.empty()) col["values"] = c.enum_values;
    if (c.type == ColumnType::Geometry) col["geometry_type"] = c.geometry_type;
    if (!c.visible) col["visible"] = false;
    cols.push_back(std::move(col));
  }
  json j{{"table_id", t.table_id}, {"database", t.database}, {"table", t.table}, {"flags", t.flags},
         {"columns", std::move(cols)}};
  if (t.has_primary_key_metadata) {
    j["primary_key"] = t.primary_key;
    bool prefixed = false;
    for (uint32_t p : t.primary_key_prefixes) prefixed = prefixed || p != 0;
    if (prefixed) j["primary_key_prefixes"] = t.primary_key_prefixes;
  }
  return j;
}

json row_json(const Row& row, const TableMap& t) {
  json o = json::object();
  for (size_t i = 0; i < row.size(); ++i) {
    const std::string name = i < t.columns.size() && !t.columns[i].name.empty() ? t.columns[i].name
                                                                                : "@" + std::to_string(i + 1);
    o[name] = value_json(row[i]);
  }
  return o;
}

class Dumper {
 public:
  explicit Dumper(bool hex) : hex_(hex) {}

  json event_json(const DecodedEvent& ev, const BinlogDecoder& decoder) {
    const EventHeader& h = ev.header;
    json j{{"position", ev.position},
           {"type", std::string(event_type_name(h.type))},
           {"type_code", h.type},
           {"timestamp", h.timestamp},
           {"server_id", h.server_id},
           {"size", h.event_size},
           {"next_position", h.next_position},
           {"flags", h.flags}};
    if (hex_) j["hex"] = to_hex(ev.bytes);
    std::visit([&](const auto& e) { content(j, e, ev, decoder); }, ev.event);
    return j;
  }

 private:
  void content(json& j, const FormatDescriptionEvent& e, const DecodedEvent&, const BinlogDecoder&) {
    j["binlog_version"] = e.binlog_version;
    j["server_version"] = e.server_version;
    j["create_timestamp"] = e.create_timestamp;
    j["checksum"] = checksum_name(e.format.checksum);
    j["post_header_lengths"] = e.format.post_header_lengths.size();
  }
  void content(json& j, const RotateEvent& e, const DecodedEvent&, const BinlogDecoder&) {
    j["next_file"] = e.next_file;
    j["next_file_position"] = e.position;
  }
  void content(json& j, const MariaGtidEvent& e, const DecodedEvent&, const BinlogDecoder&) {
    j["gtid"] = std::to_string(e.domain_id) + "-" + std::to_string(e.server_id) + "-" + std::to_string(e.sequence);
    j["gtid_flags"] = e.flags;
    j["standalone"] = e.standalone();
    if (e.commit_id) j["commit_id"] = *e.commit_id;
    if (e.xid) j["xid"] = xid_json(*e.xid);
    if (e.flags_extra) j["flags_extra"] = e.flags_extra;
    if (e.extra_engines) j["extra_engines"] = *e.extra_engines;
    if (e.start_alter_sequence) j["start_alter_sequence"] = *e.start_alter_sequence;
    if (e.thread_id) j["thread_id"] = *e.thread_id;
  }
  void content(json& j, const MariaGtidListEvent& e, const DecodedEvent&, const BinlogDecoder&) {
    json list = json::array();
    for (const auto& g : e.gtids)
      list.push_back(std::to_string(g.domain_id) + "-" + std::to_string(g.server_id) + "-" + std::to_string(g.sequence));
    j["gtids"] = std::move(list);
  }
  void content(json& j, const MysqlGtidEvent& e, const DecodedEvent&, const BinlogDecoder&) {
    j["gtid"] = e.anonymous ? std::string("ANONYMOUS") : format_mysql_gtid(e.sid, e.gno);
    j["gtid_flags"] = e.flags;
    if (e.last_committed) j["last_committed"] = *e.last_committed;
    if (e.sequence_number) j["sequence_number"] = *e.sequence_number;
    if (e.immediate_commit_timestamp_us) j["immediate_commit_timestamp_us"] = *e.immediate_commit_timestamp_us;
    if (e.original_commit_timestamp_us) j["original_commit_timestamp_us"] = *e.original_commit_timestamp_us;
    if (e.transaction_length) j["transaction_length"] = *e.transaction_length;
    if (e.immediate_server_version) j["immediate_server_version"] = *e.immediate_server_version;
    if (e.original_server_version) j["original_server_version"] = *e.original_server_version;
    if (e.commit_group_ticket) j["commit_group_ticket"] = *e.commit_group_ticket;
  }
  void content(json& j, const MysqlPreviousGtidsEvent& e, const DecodedEvent&, const BinlogDecoder&) {
    j["gtid_set"] = e.gtid_set;
  }
  void content(json& j, const QueryEvent& e, const DecodedEvent&, const BinlogDecoder&) {
    j["thread_id"] = e.thread_id;
    j["exec_time"] = e.exec_time;
    j["error_code"] = e.error_code;
    j["database"] = e.database;
    j["query"] = e.query;
  }
  void content(json& j, const XidEvent& e, const DecodedEvent&, const BinlogDecoder&) { j["xid"] = e.xid; }
  void content(json& j, const XaPrepareEvent& e, const DecodedEvent&, const BinlogDecoder&) {
    j["one_phase"] = e.one_phase;
    j["xid"] = xid_json(e.xid);
  }
  void content(json& j, const TableMapEvent& e, const DecodedEvent&, const BinlogDecoder&) {
    j["table_map"] = table_json(e.table);
    tables_[e.table.table_id] = e.table;
  }
  void content(json& j, const RowsEvent& e, const DecodedEvent&, const BinlogDecoder&) {
    j["table_id"] = e.table_id;
    j["rows_flags"] = e.flags;
    j["column_count"] = e.column_count;
    if (e.compressed) j["compressed"] = true;
    if (!e.extra_data.empty()) j["extra_data_hex"] = to_hex(e.extra_data);
    auto it = tables_.find(e.table_id);
    if (it == tables_.end()) {
      j["rows_error"] = "no TABLE_MAP for table id " + std::to_string(e.table_id);
      j["rows_hex"] = to_hex(e.rows);
      return;
    }
    const TableMap& t = it->second;
    j["table"] = t.database + "." + t.table;
    std::vector<RowChange> changes;
    if (auto err = decode_rows(e, t, changes)) {
      j["rows_error"] = err->to_string();
      j["rows_hex"] = to_hex(e.rows);
      return;
    }
    json rows = json::array();
    for (const RowChange& ch : changes) {
      json r = json::object();
      if (ch.before) r["before"] = row_json(*ch.before, t);
      if (ch.after) r["after"] = row_json(*ch.after, t);
      rows.push_back(std::move(r));
    }
    j["rows"] = std::move(rows);
  }
  void content(json& j, const HeartbeatEvent& e, const DecodedEvent&, const BinlogDecoder&) {
    j["file"] = e.file;
    if (e.position) j["log_position"] = *e.position;
  }
  void content(json& j, const AnnotateRowsEvent& e, const DecodedEvent&, const BinlogDecoder&) {
    j["statement"] = e.statement;
  }
  void content(json& j, const TransactionPayloadEvent& e, const DecodedEvent&, const BinlogDecoder& decoder) {
    j["compression"] = e.compression == 0 ? "ZSTD" : e.compression == 255 ? "NONE" : std::to_string(e.compression);
    j["payload_size"] = e.payload_size;
    j["uncompressed_size"] = e.uncompressed_size;
    json inner = json::array();
    for (const std::string& bytes : e.events) {
      auto decoded = decoder.decode_inner(bytes);
      if (auto* err = std::get_if<DecodeError>(&decoded)) {
        inner.push_back(json{{"error", err->to_string()}, {"hex", to_hex(bytes)}});
        continue;
      }
      inner.push_back(event_json(std::get<DecodedEvent>(decoded), decoder));
    }
    j["events"] = std::move(inner);
  }
  void content(json&, const IgnoredEvent&, const DecodedEvent&, const BinlogDecoder&) {}

  bool hex_;
  std::unordered_map<uint64_t, TableMap> tables_;
};

std::string dump_line(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

// --changes: the file through the daemon's own BinlogChangeBuilder, printing the change records.
int run_change_dump(const BinlogDumpOptions& options, std::ostream& out, std::ostream& err) {
  // The flavor (MariaDB or MySQL GTIDs) comes from the file's FORMAT_DESCRIPTION.
  BinlogChangeBuilder::Options builder_options;
  builder_options.table_patterns = {"*.*"};
  {
    BinlogFileReader probe(options.path);
    auto first = probe.next();
    if (const auto* ev = std::get_if<DecodedEvent>(&first))
      if (const auto* fde = std::get_if<FormatDescriptionEvent>(&ev->event))
        builder_options.flavor = fde->format.mariadb ? Flavor::MariaDb : Flavor::MySql;
  }
  BinlogPosition start;
  start.flavor = builder_options.flavor;
  start.file = std::filesystem::path(options.path).filename().string();
  BinlogChangeBuilder builder(builder_options, nullptr, start);
  EnvelopeSerializer serializer(EnvelopeOptions{"binlog-dump"});
  std::string line;
  const BinlogChangeBuilder::Emit emit = [&](StreamItem&& item) {
    const auto* change = std::get_if<ChangeEvent>(&item);
    if (change == nullptr) return true;  // a transaction without captured rows
    line.clear();
    serializer.write_value(*change, line, change->source.commit_ts_ms);  // reproducible output
    out << line << "\n";
    return true;
  };
  BinlogFileSource source(options.path);
  while (true) {
    auto sourced = source.next();
    if (std::holds_alternative<EndOfEvents>(sourced)) return 0;
    if (auto* e = std::get_if<BinlogReadError>(&sourced)) {
      err << "binlog-dump: " << e->message << "\n";
      return 1;
    }
    const auto& ev = std::get<SourcedEvent>(sourced);
    std::string error;
    const auto outcome = builder.on_event(ev.bytes, emit, error);
    if (outcome == BinlogChangeBuilder::Outcome::Retry || outcome == BinlogChangeBuilder::Outcome::Fatal) {
      err << "binlog-dump: " << options.path << " at position " << ev.position << ": " << error << "\n";
      return 1;
    }
  }
}

}  // namespace

int run_binlog_dump(const BinlogDumpOptions& options, std::ostream& out, std::ostream& err) {
  if (options.changes) return run_change_dump(options, out, err);
  BinlogFileSource source(options.path);
  BinlogDecoder decoder;
  Dumper dumper(options.hex);
  while (true) {
    auto sourced = source.next();
    if (std::holds_alternative<EndOfEvents>(sourced)) return 0;
    if (auto* e = std::get_if<BinlogReadError>(&sourced)) {
      err << "binlog-dump: " << e->message << "\n";
      out << dump_line(json{{"position", e->position}, {"error", e->message}}) << "\n";
      return 1;
    }
    auto& ev = std::get<SourcedEvent>(sourced);
    const uint64_t position = ev.position;
    auto decoded = decoder.decode(position, std::move(ev.bytes));
    if (auto* e = std::get_if<DecodeError>(&decoded)) {
      const std::string message = options.path + " at position " + std::to_string(position) + ": " + e->to_string();
      err << "binlog-dump: " << message << "\n";
      out << dump_line(json{{"position", position}, {"error", message}}) << "\n";
      return 1;
    }
    out << dump_line(dumper.event_json(std::get<DecodedEvent>(decoded), decoder)) << "\n";
  }
}

}  // namespace tidemark
