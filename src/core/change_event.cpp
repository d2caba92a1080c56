#include "tidemark/change_event.hpp"

#include <functional>

namespace tidemark {

std::string TableId::to_string() const {
  std::string out = database;
  if (!schema.empty()) {
    out += '.';
    out += schema;
  }
  out += '.';
  out += table;
  return out;
}

size_t TableIdHash::operator()(const TableId& id) const noexcept {
  const std::hash<std::string> h;
  size_t seed = h(id.database);
  seed ^= h(id.schema) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
  seed ^= h(id.table) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
  return seed;
}

const Row* ChangeEvent::key_image() const {
  if (op == Op::Delete) return before ? &*before : nullptr;
  if (after) return &*after;
  return before ? &*before : nullptr;
}

namespace {
size_t value_bytes(const Value& value) {
  return std::visit(
      [](const auto& x) -> size_t {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::string>) {
          return sizeof(Value) + x.size();
        } else if constexpr (std::is_same_v<T, Bytes>) {
          return sizeof(Value) + x.data.size();
        } else if constexpr (std::is_same_v<T, Json> || std::is_same_v<T, Decimal>) {
          return sizeof(Value) + x.text.size();
        } else if constexpr (std::is_same_v<T, Array>) {
          size_t total = sizeof(Value);
          for (const auto& item : x.items) total += value_bytes(item);
          return total;
        } else {
          return sizeof(Value);
        }
      },
      value.v);
}

size_t row_bytes(const std::optional<Row>& row) {
  if (!row) return 0;
  size_t total = 0;
  for (const auto& value : *row) total += value_bytes(value);
  return total;
}
}  // namespace

size_t approximate_bytes(const StreamItem& item) {
  if (const auto* event = std::get_if<ChangeEvent>(&item)) {
    return sizeof(ChangeEvent) + row_bytes(event->before) + row_bytes(event->after) +
           (event->resume_position ? event->resume_position->token.size() : 0);
  }
  return sizeof(Checkpoint) + std::get<Checkpoint>(item).position.token.size();
}

}  // namespace tidemark
