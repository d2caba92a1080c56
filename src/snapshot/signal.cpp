#include "snapshot/signal.hpp"

#include <nlohmann/json.hpp>

namespace tidemark::snapshot {

namespace {

using nlohmann::json;

struct SignalError {
  std::string what;
};

std::optional<KeyText> key_field(const json& j, const char* name) {
  if (!j.contains(name) || j.at(name).is_null()) return std::nullopt;
  json a = j.at(name);
  if (!a.is_array()) a = json::array({a});  // a single-column key may be given as a scalar
  KeyText key;
  for (const auto& part : a) {
    if (part.is_null()) throw SignalError{std::string("\"") + name + "\" may not contain null"};
    key.emplace_back(part.is_string() ? part.get<std::string>() : part.dump());
  }
  return key;
}

std::string string_field(const json& j, const char* name) {
  if (!j.contains(name) || j.at(name).is_null()) return {};
  if (!j.at(name).is_string()) throw SignalError{std::string("\"") + name + "\" must be a string"};
  return j.at(name).get<std::string>();
}

// One entry of "tables" / "data-collections": a name or an object with the table's options.
TableRequest table_entry(const json& entry) {
  TableRequest r;
  if (entry.is_string()) {
    r.table = entry.get<std::string>();
  } else if (entry.is_object()) {
    r.table = string_field(entry, "table");
    if (r.table.empty()) r.table = string_field(entry, "data-collection");
    r.where = string_field(entry, "where");
    r.after = key_field(entry, "after");
    r.upto = key_field(entry, "upto");
    if (entry.contains("chunk_size")) r.chunk_size = entry.at("chunk_size").get<int64_t>();
  } else {
    throw SignalError{"a table must be a name or an object with \"table\""};
  }
  if (r.table.empty()) throw SignalError{"a table entry has no name"};
  return r;
}

std::vector<TableRequest> tables_of(const json& data, bool required) {
  const char* field = data.contains("tables") ? "tables" : "data-collections";
  if (!data.contains(field)) {
    if (required) throw SignalError{"execute-snapshot needs \"tables\" (or Debezium's \"data-collections\")"};
    return {};
  }
  const json& list = data.at(field);
  if (!list.is_array()) throw SignalError{std::string("\"") + field + "\" must be a list"};
  std::vector<TableRequest> out;
  for (const auto& entry : list) out.push_back(table_entry(entry));
  if (required && out.empty()) throw SignalError{std::string("\"") + field + "\" is empty"};
  return out;
}

void apply_execute_options(const json& data, std::vector<TableRequest>& tables) {
  const std::string where_all = string_field(data, "where");
  int64_t chunk_size = 0;
  if (data.contains("chunk_size")) {
    if (!data.at("chunk_size").is_number_integer() || data.at("chunk_size").get<int64_t>() < 1)
      throw SignalError{"\"chunk_size\" must be a positive integer"};
    chunk_size = data.at("chunk_size").get<int64_t>();
  }
  if (data.contains("type") && data.at("type").is_string()) {
    std::string type = data.at("type").get<std::string>();
    for (auto& c : type) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (type != "incremental")
      throw SignalError{"snapshot type '" + data.at("type").get<std::string>() +
                        "' is not supported: Tidemark's snapshots are incremental (the log keeps streaming)"};
  }
  // Debezium: "additional-conditions": [{"data-collection": "...", "filter": "..."}] (or "additional-condition").
  std::vector<std::pair<std::string, std::string>> conditions;
  if (data.contains("additional-conditions")) {
    for (const auto& c : data.at("additional-conditions")) {
      conditions.emplace_back(string_field(c, "data-collection"), string_field(c, "filter"));
    }
  }
  const std::string single_condition = string_field(data, "additional-condition");
  for (auto& t : tables) {
    if (t.where.empty()) t.where = where_all;
    if (t.where.empty()) t.where = single_condition;
    for (const auto& [table, filter] : conditions)
      if (table == t.table && t.where.empty()) t.where = filter;
    if (t.chunk_size == 0) t.chunk_size = chunk_size;
    if (t.chunk_size < 0) throw SignalError{"\"chunk_size\" of " + t.table + " must be positive"};
  }
}

}  // namespace

const char* signal_kind_name(SignalKind kind) {
  switch (kind) {
    case SignalKind::ExecuteSnapshot: return "execute-snapshot";
    case SignalKind::StopSnapshot: return "stop-snapshot";
    case SignalKind::PauseSnapshot: return "pause-snapshot";
    case SignalKind::ResumeSnapshot: return "resume-snapshot";
  }
  return "?";
}

Fallible<Signal> parse_signal(const std::string& id, const std::string& type, const std::string& data) {
  Signal s;
  s.id = id;
  if (type == "execute-snapshot") {
    s.kind = SignalKind::ExecuteSnapshot;
  } else if (type == "stop-snapshot") {
    s.kind = SignalKind::StopSnapshot;
  } else if (type == "pause-snapshot") {
    s.kind = SignalKind::PauseSnapshot;
  } else if (type == "resume-snapshot") {
    s.kind = SignalKind::ResumeSnapshot;
  } else {
    return Fallible<Signal>::failure("signal " + id + ": unknown type '" + type +
                                     "' (execute-snapshot, stop-snapshot, pause-snapshot, resume-snapshot)");
  }
  json parsed = json::object();
  if (!data.empty()) {
    parsed = json::parse(data, nullptr, false);
    const bool no_data_needed = s.kind == SignalKind::PauseSnapshot || s.kind == SignalKind::ResumeSnapshot;
    if (parsed.is_discarded() && no_data_needed) parsed = json::object();
    if (parsed.is_discarded() || !parsed.is_object())
      return Fallible<Signal>::failure("signal " + id + " (" + type + "): data is not a JSON object: " + data);
  }
  try {
    s.pipeline = string_field(parsed, "pipeline");
    if (s.kind == SignalKind::PauseSnapshot || s.kind == SignalKind::ResumeSnapshot) return {std::move(s), ""};
    s.tables = tables_of(parsed, s.kind == SignalKind::ExecuteSnapshot);
    if (s.kind == SignalKind::ExecuteSnapshot) apply_execute_options(parsed, s.tables);
    for (auto& t : s.tables) t.signal_id = id;
  } catch (const SignalError& e) {
    return Fallible<Signal>::failure("signal " + id + " (" + type + "): " + e.what);
  } catch (const json::exception& e) {
    return Fallible<Signal>::failure("signal " + id + " (" + type + "): " + e.what());
  }
  return {std::move(s), ""};
}

std::string execute_snapshot_data(const TableRequest& r) {
  json table = {{"table", r.table}};
  if (!r.where.empty()) table["where"] = r.where;
  auto key = [](const KeyText& k) {
    json a = json::array();
    for (const auto& p : k) a.push_back(p ? json(*p) : json(nullptr));
    return a;
  };
  if (r.after) table["after"] = key(*r.after);
  if (r.upto) table["upto"] = key(*r.upto);
  if (r.chunk_size) table["chunk_size"] = r.chunk_size;
  return json{{"tables", json::array({table})}}.dump();
}

}  // namespace tidemark::snapshot
