#pragma once

#include <memory>

#include "config/config.hpp"
#include "sink/change_sink.hpp"
#include "sink/message_sink.hpp"
#include "sink/publisher.hpp"

namespace tidemark {

// sink.type is postgres or mysql: changes are applied to a database (sink/database/), whose position
// table, not the state file, holds the pipeline's state.
bool is_database_sink(const Config& config);

// The Kafka or stdout sink. Throws std::runtime_error (at start-up) when it cannot be configured.
std::unique_ptr<MessageSink> make_message_sink(const Config& config, PositionTracker& tracker);

PublisherOptions publisher_options(const Config& config);

}  // namespace tidemark
