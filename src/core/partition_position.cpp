#include "core/partition_position.hpp"

#include <nlohmann/json.hpp>

namespace tidemark {

std::string partition_position_token(const PartitionPosition& position) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [partition, offset] : position) j[partition] = nlohmann::json::array({offset.next, offset.owner});
  return j.dump();
}

std::optional<PartitionPosition> parse_partition_position(const std::string& token) {
  const auto j = nlohmann::json::parse(token, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  PartitionPosition out;
  for (const auto& [partition, value] : j.items()) {
    if (partition.find('/') == std::string::npos) return std::nullopt;
    if (value.is_number_integer()) {
      out[partition] = PartitionOffset{value.get<int64_t>(), ""};
    } else if (value.is_array() && value.size() == 2 && value[0].is_number_integer() && value[1].is_string()) {
      out[partition] = PartitionOffset{value[0].get<int64_t>(), value[1].get<std::string>()};
    } else {
      return std::nullopt;
    }
  }
  return out;
}

}  // namespace tidemark
