#include "snapshot/signal.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/text_excerpt.hpp"
#include "db/row_filter.hpp"

namespace tidemark::snapshot {

namespace {

using nlohmann::json;

struct SignalError {
  std::string what;
};

// The deepest [ / { nesting of `text`, outside strings; stops counting past `limit`. Iterative, so a
// hostile row cannot overflow the stack before the parser even sees it.
size_t nesting_depth(std::string_view text, size_t limit) {
  size_t depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') deepest = std::max(deepest, ++depth);
    else if ((c == ']' || c == '}') && depth > 0) --depth;
    if (deepest > limit) break;
  }
  return deepest;
}

int64_t chunk_size_field(const json& j, const std::string& what) {
  const json& v = j.at("chunk_size");
  if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(kMaxSignalChunkSize)) ||
      v.get<int64_t>() < 1 || v.get<int64_t>() > kMaxSignalChunkSize)
    throw SignalError{"\"chunk_size\"" + what + " must be an integer from 1 to " + std::to_string(kMaxSignalChunkSize)};
  return v.get<int64_t>();
}

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
    if (entry.contains("chunk_size")) r.chunk_size = chunk_size_field(entry, " of " + excerpt(r.table, 100));
  } else {
    throw SignalError{"a table must be a name or an object with \"table\""};
  }
  if (r.table.empty()) throw SignalError{"a table entry has no name"};
  if (r.table.size() > kMaxTableNameBytes) throw SignalError{"a table name is longer than " + std::to_string(kMaxTableNameBytes) + " bytes"};
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
  const int64_t chunk_size = data.contains("chunk_size") ? chunk_size_field(data, "") : 0;
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
    if (t.where.size() > kMaxRowFilterLength)
      throw SignalError{"the condition of " + excerpt(t.table, 100) + " is " + std::to_string(t.where.size()) +
                        " bytes; at most " + std::to_string(kMaxRowFilterLength) + " are allowed"};
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
  if (id.empty() || id.size() > kMaxSignalIdBytes)
    return Fallible<Signal>::failure("signal " + excerpt(id, 64) + ": the id must have 1 to " +
                                     std::to_string(kMaxSignalIdBytes) + " bytes");
  const std::string name = "signal " + id + " (" + excerpt(type, 40) + ")";
  if (data.size() > kMaxSignalDataBytes)
    return Fallible<Signal>::failure(name + ": data of " + std::to_string(data.size()) + " bytes; at most " +
                                     std::to_string(kMaxSignalDataBytes) + " are allowed");
  if (type == "execute-snapshot") {
    s.kind = SignalKind::ExecuteSnapshot;
  } else if (type == "stop-snapshot") {
    s.kind = SignalKind::StopSnapshot;
  } else if (type == "pause-snapshot") {
    s.kind = SignalKind::PauseSnapshot;
  } else if (type == "resume-snapshot") {
    s.kind = SignalKind::ResumeSnapshot;
  } else {
    return Fallible<Signal>::failure("signal " + id + ": unknown type '" + excerpt(type, 40) +
                                     "' (execute-snapshot, stop-snapshot, pause-snapshot, resume-snapshot)");
  }
  json parsed = json::object();
  if (!data.empty()) {
    if (nesting_depth(data, kMaxSignalNesting) > kMaxSignalNesting)
      return Fallible<Signal>::failure(name + ": data nested deeper than " + std::to_string(kMaxSignalNesting) + " levels");
    parsed = json::parse(data, nullptr, false);
    const bool no_data_needed = s.kind == SignalKind::PauseSnapshot || s.kind == SignalKind::ResumeSnapshot;
    if (parsed.is_discarded() && no_data_needed) parsed = json::object();
    if (parsed.is_discarded() || !parsed.is_object())
      return Fallible<Signal>::failure(name + ": data is not a JSON object: " + excerpt(data));
  }
  try {
    s.pipeline = string_field(parsed, "pipeline");
    if (s.kind == SignalKind::PauseSnapshot || s.kind == SignalKind::ResumeSnapshot) return {std::move(s), ""};
    s.tables = tables_of(parsed, s.kind == SignalKind::ExecuteSnapshot);
    if (s.kind == SignalKind::ExecuteSnapshot) apply_execute_options(parsed, s.tables);
    for (auto& t : s.tables) t.signal_id = id;
  } catch (const SignalError& e) {
    return Fallible<Signal>::failure(name + ": " + e.what);
  } catch (const json::exception& e) {
    return Fallible<Signal>::failure(name + ": " + e.what());
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
