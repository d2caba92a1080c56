#include "source/echo_filter.hpp"

#include <algorithm>

namespace tidemark {

EchoFilter::EchoFilter(std::string marker_table, std::string id_map_table, std::string peer, std::string self)
    : marker_table_(std::move(marker_table)),
      id_map_table_(std::move(id_map_table)),
      peer_(std::move(peer)),
      self_(std::move(self)) {}

const std::string* EchoFilter::pipeline_of(const ChangeEvent& event) {
  const auto& columns = event.table->columns;
  const auto at = std::find(columns.begin(), columns.end(), "pipeline");
  if (at == columns.end()) return nullptr;
  const auto column = static_cast<size_t>(at - columns.begin());
  for (const auto* image : {event.before ? &*event.before : nullptr, event.after ? &*event.after : nullptr}) {
    if (!image || column >= image->size()) continue;
    if (const auto* text = std::get_if<std::string>(&(*image)[column].v)) return text;
  }
  return nullptr;
}

bool EchoFilter::is_echo_marker(const ChangeEvent& event) const {
  const std::string* pipeline = pipeline_of(event);
  return pipeline && (*pipeline == peer_ || *pipeline == self_);
}

bool EchoFilter::is_peer_entry(const ChangeEvent& event) const {
  if (!is_table(event.table->id, id_map_table_)) return false;
  const std::string* pipeline = pipeline_of(event);
  return pipeline && *pipeline == peer_;
}

bool EchoFilter::end_echo(StreamItem& item, SourcePosition end) {
  in_echo_ = false;
  if (!forwarded_) return false;
  forwarded_ = false;
  item = Checkpoint{std::move(end)};
  return true;
}

bool EchoFilter::pass(StreamItem& item) {
  auto* event = std::get_if<ChangeEvent>(&item);
  if (!event) {
    if (!in_echo_) return true;
    return end_echo(item, std::get<Checkpoint>(item).position);
  }
  // Every event passes here: the tables are compared in place, no name built.
  const bool marker = is_table(event->table->id, marker_table_);
  if (marker && !in_echo_ && is_echo_marker(*event)) {
    in_echo_ = true;
    forwarded_ = false;
    ++dropped_;
  }
  if (!marker && !in_echo_) return true;
  if (in_echo_ && is_peer_entry(*event)) {
    forwarded_ = true;
    if (event->resume_position) in_echo_ = forwarded_ = false;  // it ends the echo, and carries its end
    return true;
  }
  if (!event->resume_position) return false;
  SourcePosition end = std::move(*event->resume_position);
  if (in_echo_) return end_echo(item, std::move(end));
  item = Checkpoint{std::move(end)};
  return true;
}

}  // namespace tidemark
