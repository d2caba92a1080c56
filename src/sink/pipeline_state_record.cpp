#include "sink/pipeline_state_record.hpp"

namespace tidemark {

namespace {
constexpr int kFormat = 1;
}

std::string encode_state_record(const PipelineStateRecord& state) {
  nlohmann::json doc = {{"format", kFormat},
                        {"pipeline", state.pipeline},
                        {"source_type", state.source_type},
                        {"position", state.position ? nlohmann::json(state.position->token) : nlohmann::json()},
                        {"extensions", state.extensions}};
  if (state.partial) doc["partial"] = {{"changes", state.partial->changes}, {"first", state.partial->first}};
  return doc.dump();
}

DecodedStateRecord decode_state_record(std::string_view value) {
  DecodedStateRecord out;
  try {
    const auto doc = nlohmann::json::parse(value);
    if (doc.value("format", 0) != kFormat) {
      out.error = "it has an unknown format version (written by another Tidemark version)";
      return out;
    }
    PipelineStateRecord state;
    state.pipeline = doc.at("pipeline").get<std::string>();
    state.source_type = doc.at("source_type").get<std::string>();
    if (doc.contains("position") && !doc["position"].is_null()) state.position = SourcePosition{doc["position"].get<std::string>()};
    if (doc.contains("extensions")) state.extensions = doc["extensions"];
    if (doc.contains("partial")) {
      const auto& p = doc["partial"];
      state.partial = PartialTransaction{p.at("changes").get<uint64_t>(), p.at("first").get<std::string>()};
    }
    out.state = std::move(state);
  } catch (const nlohmann::json::exception& e) {
    out.error = std::string("it is not valid: ") + e.what();
  }
  return out;
}

std::string change_identity(const ChangeEvent& event) {
  const SourceInfo& s = event.source;
  switch (s.connector) {
    case ConnectorKind::Postgres:
      return "lsn " + std::to_string(s.lsn.value_or(0)) + " xid " + std::to_string(s.txid.value_or(0));
    case ConnectorKind::MySql:
      return s.file + ":" + std::to_string(s.pos) + " row " + std::to_string(s.row);
    case ConnectorKind::Generator:
      return "sequence " + std::to_string(s.sequence.value_or(0));
  }
  return {};
}

}  // namespace tidemark
