#pragma once
// ${NAME} and ${NAME:-default} in configuration values, so secrets can stay out of the file.

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace tidemark {

using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

// Reads the process environment.
EnvLookup process_environment();

struct SubstitutionResult {
  std::string value;
  std::string error;  // empty on success
};

// Replaces ${NAME} by the variable's value and ${NAME:-fallback} by the value or the fallback; "$${" is a
// literal "${". An unset variable without fallback, or an unterminated reference, is an error.
SubstitutionResult substitute_env(std::string_view text, const EnvLookup& lookup);

}  // namespace tidemark
