#pragma once

#include <memory>

#include "config/config.hpp"
#include "sink/message_sink.hpp"
#include "sink/publisher.hpp"

namespace tidemark {

// Throws std::runtime_error (at start-up) when the sink cannot be configured.
std::unique_ptr<MessageSink> make_sink(const Config& config, PositionTracker& tracker);

PublisherOptions publisher_options(const Config& config);

}  // namespace tidemark
