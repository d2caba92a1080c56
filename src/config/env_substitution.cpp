#include "config/env_substitution.hpp"

#include <cstdlib>

namespace tidemark {

EnvLookup process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

namespace {
bool valid_name(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return !(name[0] >= '0' && name[0] <= '9');
}
}  // namespace

SubstitutionResult substitute_env(std::string_view text, const EnvLookup& lookup) {
  SubstitutionResult result;
  result.value.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    if (text.compare(i, 3, "$${") == 0) {
      result.value += "${";
      i += 3;
      continue;
    }
    if (text.compare(i, 2, "${") != 0) {
      result.value += text[i++];
      continue;
    }
    const size_t close = text.find('}', i + 2);
    if (close == std::string_view::npos) {
      result.error = "unterminated ${...} reference";
      return result;
    }
    std::string_view inner = text.substr(i + 2, close - i - 2);
    std::optional<std::string_view> fallback;
    if (const size_t sep = inner.find(":-"); sep != std::string_view::npos) {
      fallback = inner.substr(sep + 2);
      inner = inner.substr(0, sep);
    }
    if (!valid_name(inner)) {
      result.error = "invalid environment variable name '" + std::string(inner) + "' in ${...}";
      return result;
    }
    const std::optional<std::string> value = lookup(std::string(inner));
    if (value && !(value->empty() && fallback)) {
      result.value += *value;
    } else if (fallback) {
      result.value += *fallback;
    } else {
      result.error = "environment variable " + std::string(inner) + " is not set (use ${" + std::string(inner) +
                     ":-default} for a fallback)";
      return result;
    }
    i = close + 1;
  }
  return result;
}

}  // namespace tidemark
