#pragma once
// The stream as records: the Publisher turns each item into topic, key and value, and the MessageSink
// (Kafka, or stdout) takes them; its delivery reports acknowledge the tickets.

#include <memory>

#include "sink/change_sink.hpp"
#include "sink/message_sink.hpp"
#include "sink/publisher.hpp"

namespace tidemark {

class RecordSink final : public ChangeSink {
 public:
  RecordSink(PublisherOptions options, std::unique_ptr<MessageSink> sink, PositionTracker& tracker)
      : sink_(std::move(sink)), publisher_(std::move(options), *sink_, tracker) {}

  MessageSink& messages() { return *sink_; }

  bool publish(const StreamItem& item) override { return publisher_.publish(item); }
  bool publish_heartbeat(int64_t now_ms) override { return publisher_.publish_heartbeat(now_ms); }
  bool awaiting_acknowledgements() const override { return publisher_.awaiting_acknowledgements(); }
  void poll(std::chrono::milliseconds timeout) override { sink_->poll(timeout); }
  void set_wakeup(std::function<void()> wake) override { sink_->set_wakeup(std::move(wake)); }
  bool flush(std::chrono::milliseconds timeout) override { return sink_->flush(timeout); }
  bool waiting_for_room() const override { return sink_->waiting_for_room(); }
  void abort() override { sink_->abort(); }
  std::optional<std::string> fatal_error() const override { return sink_->fatal_error(); }
  void attach_metrics(PipelineMetrics& metrics) override {
    sink_->attach_metrics(metrics);
    publisher_.set_metrics(&metrics);
  }

 private:
  std::unique_ptr<MessageSink> sink_;
  Publisher publisher_;
};

}  // namespace tidemark
