#include "snapshot/snapshot_state.hpp"

#include <algorithm>

namespace tidemark::snapshot {

namespace {

using nlohmann::json;

json key_to_json(const KeyText& key) {
  json out = json::array();
  for (const auto& part : key) out.push_back(part ? json(*part) : json(nullptr));
  return out;
}

std::optional<KeyText> key_from_json(const json& j, const char* field) {
  if (!j.contains(field) || j.at(field).is_null()) return std::nullopt;
  const json& a = j.at(field);
  if (!a.is_array()) throw std::runtime_error(std::string(field) + " must be a list of key column values");
  KeyText key;
  for (const auto& part : a) {
    if (part.is_null()) {
      key.emplace_back(std::nullopt);
    } else if (part.is_string()) {
      key.emplace_back(part.get<std::string>());
    } else {
      key.emplace_back(part.dump());  // a number written without quotes
    }
  }
  return key;
}

json request_to_json(const TableRequest& r) {
  json out = {{"table", r.table}};
  if (!r.where.empty()) out["where"] = r.where;
  if (r.after) out["after"] = key_to_json(*r.after);
  if (r.upto) out["upto"] = key_to_json(*r.upto);
  if (r.chunk_size) out["chunk_size"] = r.chunk_size;
  if (!r.signal_id.empty()) out["signal_id"] = r.signal_id;
  return out;
}

TableRequest request_from_json(const json& j) {
  TableRequest r;
  r.table = j.at("table").get<std::string>();
  r.where = j.value("where", std::string());
  r.after = key_from_json(j, "after");
  r.upto = key_from_json(j, "upto");
  r.chunk_size = j.value("chunk_size", int64_t{0});
  r.signal_id = j.value("signal_id", std::string());
  return r;
}

}  // namespace

bool SnapshotState::signal_processed(const std::string& id) const {
  return std::find(processed_signals.begin(), processed_signals.end(), id) != processed_signals.end();
}

void SnapshotState::remember_signal(const std::string& id) {
  processed_signals.push_back(id);
  while (processed_signals.size() > kRememberedSignals) processed_signals.pop_front();
}

void queue_tables(SnapshotState& state, const std::vector<TableId>& tables) {
  for (const TableId& id : tables) {
    const std::string name = (id.schema.empty() ? id.database : id.schema) + "." + id.table;
    const bool known = (state.current && state.current->request.table == name) ||
                       std::any_of(state.queue.begin(), state.queue.end(), [&](const TableRequest& r) { return r.table == name; });
    if (known) continue;
    TableRequest request;
    request.table = name;
    state.queue.push_back(std::move(request));
  }
}

nlohmann::json to_json(const SnapshotState& state) {
  json out = json::object();
  json queue = json::array();
  for (const auto& r : state.queue) queue.push_back(request_to_json(r));
  out["queue"] = std::move(queue);
  if (state.current) {
    const TableProgress& c = *state.current;
    json cur = {{"request", request_to_json(c.request)}, {"rows", c.rows}, {"chunks", c.chunks}, {"started_ms", c.started_ms}};
    if (c.last_key) cur["last_key"] = key_to_json(*c.last_key);
    if (c.max_key) cur["max_key"] = key_to_json(*c.max_key);
    if (c.first_key) cur["first_key"] = key_to_json(*c.first_key);
    out["current"] = std::move(cur);
  }
  out["paused"] = state.paused;
  out["processed_signals"] = state.processed_signals;
  out["tables_done"] = state.tables_done;
  out["rows_done"] = state.rows_done;
  if (!state.last_error.empty()) out["last_error"] = state.last_error;
  return out;
}

Fallible<SnapshotState> snapshot_state_from_json(const nlohmann::json& j) {
  try {
    SnapshotState s;
    if (!j.is_object()) return Fallible<SnapshotState>::failure("snapshot state is not an object");
    for (const auto& r : j.value("queue", json::array())) s.queue.push_back(request_from_json(r));
    if (j.contains("current") && !j.at("current").is_null()) {
      const json& c = j.at("current");
      TableProgress p;
      p.request = request_from_json(c.at("request"));
      p.last_key = key_from_json(c, "last_key");
      p.max_key = key_from_json(c, "max_key");
      p.first_key = key_from_json(c, "first_key");
      p.rows = c.value("rows", uint64_t{0});
      p.chunks = c.value("chunks", uint64_t{0});
      p.started_ms = c.value("started_ms", int64_t{0});
      s.current = std::move(p);
    }
    s.paused = j.value("paused", false);
    for (const auto& id : j.value("processed_signals", json::array())) s.processed_signals.push_back(id.get<std::string>());
    s.tables_done = j.value("tables_done", uint64_t{0});
    s.rows_done = j.value("rows_done", uint64_t{0});
    s.last_error = j.value("last_error", std::string());
    return {std::move(s), ""};
  } catch (const std::exception& e) {
    return Fallible<SnapshotState>::failure(std::string("snapshot state: ") + e.what());
  }
}

}  // namespace tidemark::snapshot
