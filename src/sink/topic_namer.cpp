#include "sink/topic_namer.hpp"

namespace tidemark {

TopicNamer::TopicNamer(std::string prefix, std::string topic_template)
    : prefix_(std::move(prefix)), template_(std::move(topic_template)) {}

std::string TopicNamer::topic_for(const TableId& table) const {
  std::string out;
  for (size_t i = 0; i < template_.size();) {
    if (template_[i] == '{') {
      const size_t close = template_.find('}', i);
      if (close != std::string::npos) {
        const std::string_view name(template_.data() + i + 1, close - i - 1);
        const std::string* value = name == "prefix"     ? &prefix_
                                   : name == "database" ? &table.database
                                   : name == "schema"   ? &table.schema
                                   : name == "table"    ? &table.table
                                                        : nullptr;
        if (value) {
          out += *value;
          i = close + 1;
          continue;
        }
      }
    }
    out += template_[i++];
  }
  // A table without a schema leaves ".." or a trailing '.' behind in templates that name {schema}.
  std::string cleaned;
  for (char c : out) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte & 0xC0) == 0x80) continue;  // UTF-8 continuation: the character already became one '_'
    const bool legal = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                       c == '_' || c == '-';
    if (c == '.' && (cleaned.empty() || cleaned.back() == '.')) continue;
    cleaned += legal ? c : '_';
  }
  while (!cleaned.empty() && cleaned.back() == '.') cleaned.pop_back();
  if (cleaned.size() > 249) cleaned.resize(249);  // Kafka's limit
  return cleaned;
}

}  // namespace tidemark
