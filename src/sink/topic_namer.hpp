#pragma once
// Topic of a table from sink.kafka.topic_template ({prefix}, {database}, {schema}, {table}).

#include <string>

#include "tidemark/change_event.hpp"

namespace tidemark {

class TopicNamer {
 public:
  TopicNamer(std::string prefix, std::string topic_template);
  // Characters Kafka does not allow in topic names become '_' (as Debezium does).
  std::string topic_for(const TableId& table) const;

 private:
  std::string prefix_;
  std::string template_;
};

}  // namespace tidemark
