#include "kafka_server.hpp"

namespace tidemark::test {

ThrowawayKafka::ThrowawayKafka(bool auto_create_topics)
    : server_("kafka",
              // The controller port is chosen once: the storage is formatted for it.
              [controller = std::to_string(free_local_port()), auto_create_topics](const ThrowawayServer& s) {
                return std::vector<std::string>{"TIDEMARK_KAFKA_PORT=" + s.port(),
                                                "TIDEMARK_KAFKA_CONTROLLER_PORT=" + controller,
                                                std::string("TIDEMARK_KAFKA_AUTO_CREATE_TOPICS=") +
                                                    (auto_create_topics ? "true" : "false")};
              },
              "run/kafka/server.log") {
  server_.start();
}

}  // namespace tidemark::test
