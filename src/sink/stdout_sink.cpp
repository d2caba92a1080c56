#include "sink/stdout_sink.hpp"

#include <cerrno>
#include <cstring>

#include "sink/json_writer.hpp"

namespace tidemark {

namespace {
constexpr size_t kFlushEvery = 512;  // records; bounds what a crash can leave unflushed
}

std::optional<TopicIndex> StdoutSink::resolve_topic(const std::string& name) {
  for (size_t i = 0; i < topics_.size(); ++i)
    if (topics_[i] == name) return i;
  topics_.push_back(name);
  return topics_.size() - 1;
}

bool StdoutSink::send(TopicIndex topic, std::optional<std::string_view> key, std::optional<std::string_view> value,
                      Ticket ticket) {
  if (fatal_) return false;
  line_.clear();
  JsonWriter w(line_);
  line_.append("{\"topic\":");
  w.string(topics_.at(topic));
  // Key and value are JSON already: embed them as they are.
  line_.append(",\"key\":");
  line_.append(key ? *key : "null");
  line_.append(",\"value\":");
  line_.append(value ? *value : "null");
  line_.append("}\n");
  if (std::fwrite(line_.data(), 1, line_.size(), stream_) != line_.size()) {
    fatal_ = std::string("cannot write to stdout: ") + std::strerror(errno);
    return false;
  }
  unflushed_.push_back(ticket);
  if (unflushed_.size() >= kFlushEvery) return flush_stream();
  return true;
}

bool StdoutSink::flush_stream() {
  if (std::fflush(stream_) != 0) {
    fatal_ = std::string("cannot write to stdout: ") + std::strerror(errno);
    return false;
  }
  for (const Ticket t : unflushed_) {
    if (metrics_) metrics_->count_record_acknowledged(0);  // written and flushed: no broker to wait for
    tracker_.acknowledge(t);
  }
  unflushed_.clear();
  return true;
}

void StdoutSink::poll(std::chrono::milliseconds) {
  if (!unflushed_.empty() && !fatal_) flush_stream();
}

bool StdoutSink::flush(std::chrono::milliseconds) { return fatal_ ? false : flush_stream(); }

}  // namespace tidemark
