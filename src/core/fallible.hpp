#pragma once

#include <optional>
#include <string>
#include <utility>

namespace tidemark {

// A value or the reason there is none: the cause and, where one exists, the fix.
template <typename T>
struct Fallible {
  std::optional<T> value;
  std::string error;
  bool ok() const { return value.has_value(); }
  static Fallible failure(std::string why) { return Fallible{std::nullopt, std::move(why)}; }
};

}  // namespace tidemark
