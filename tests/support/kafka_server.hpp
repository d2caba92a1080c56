#pragma once
// A throwaway Apache Kafka broker (KRaft, scripts/lib/kafka.sh) for tests that need broker settings the
// shared one must not have: the stock auto.create.topics.enable=true. The same jars as the shared broker,
// its own directory under /tmp and free ports; about ten seconds to start, so a suite shares one.

#include <string>

#include "throwaway_server.hpp"

namespace tidemark::test {

class ThrowawayKafka {
 public:
  // Starts the broker; throws (with the script's output and the broker log) when it cannot.
  explicit ThrowawayKafka(bool auto_create_topics);

  std::string bootstrap() const { return "127.0.0.1:" + server_.port(); }

 private:
  ThrowawayServer server_;
};

}  // namespace tidemark::test
