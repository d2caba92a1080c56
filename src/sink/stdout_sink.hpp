#pragma once
// Debugging sink: one JSON line per record, {"topic":..,"key":..,"value":..}, on a stream (stdout).
// A record counts as acknowledged once the stream has been flushed after it.

#include <cstdio>
#include <string>
#include <vector>

#include "sink/message_sink.hpp"

namespace tidemark {

class StdoutSink final : public MessageSink {
 public:
  StdoutSink(std::FILE* stream, PositionTracker& tracker) : stream_(stream), tracker_(tracker) {}

  std::optional<TopicIndex> resolve_topic(const std::string& name) override;
  bool send(TopicIndex topic, std::optional<std::string_view> key, std::optional<std::string_view> value,
            Ticket ticket) override;
  void pass(Ticket ticket) override { tracker_.acknowledge(ticket); }
  void poll(std::chrono::milliseconds timeout) override;
  bool flush(std::chrono::milliseconds timeout) override;
  void abort() override {}
  std::optional<std::string> fatal_error() const override { return fatal_; }
  void attach_metrics(PipelineMetrics& metrics) override { metrics_ = &metrics; }

 private:
  bool flush_stream();

  std::FILE* stream_;
  PositionTracker& tracker_;
  PipelineMetrics* metrics_ = nullptr;
  std::vector<std::string> topics_;
  std::vector<Ticket> unflushed_;
  std::string line_;
  std::optional<std::string> fatal_;
};

}  // namespace tidemark
