#include "source/echo_filter.hpp"

#include <algorithm>

namespace tidemark {

std::string marker_table_in_source(const Config& config) {
  const std::string& name = config.two_way.marker_table;
  if (name.find('.') != std::string::npos) return name;
  return (config.source.type == "postgres" ? std::string("public") : config.source.database) + "." + name;
}

EchoFilter::EchoFilter(std::string marker_table, std::string peer, std::string self)
    : peer_(std::move(peer)), self_(std::move(self)) {
  const size_t dot = marker_table.find('.');
  marker_space_ = marker_table.substr(0, dot);
  marker_name_ = dot == std::string::npos ? std::string() : marker_table.substr(dot + 1);
}

bool EchoFilter::is_marker_table(const TableId& id) const {
  // Every event passes here: compared in place, no name built.
  return id.table == marker_name_ && (id.schema.empty() ? id.database : id.schema) == marker_space_;
}

bool EchoFilter::is_echo_marker(const ChangeEvent& event) const {
  const auto& columns = event.table->columns;
  const auto at = std::find(columns.begin(), columns.end(), "pipeline");
  if (at == columns.end()) return false;
  const auto column = static_cast<size_t>(at - columns.begin());
  // The old image carries the key when the new one may not (a MINIMAL binlog image).
  for (const auto* image : {event.before ? &*event.before : nullptr, event.after ? &*event.after : nullptr}) {
    if (!image || column >= image->size()) continue;
    if (const auto* text = std::get_if<std::string>(&(*image)[column].v)) return *text == peer_ || *text == self_;
  }
  return false;
}

bool EchoFilter::pass(StreamItem& item) {
  auto* event = std::get_if<ChangeEvent>(&item);
  if (!event) {
    const bool echo_end = in_echo_;
    in_echo_ = false;
    return !echo_end;
  }
  const bool marker = is_marker_table(event->table->id);
  if (marker && !in_echo_ && is_echo_marker(*event)) {
    in_echo_ = true;
    ++dropped_;
  }
  if (!marker && !in_echo_) return true;
  if (!event->resume_position) return false;
  if (in_echo_) {
    in_echo_ = false;
    return false;
  }
  SourcePosition end = std::move(*event->resume_position);
  item = Checkpoint{std::move(end)};
  return true;
}

}  // namespace tidemark
