#pragma once
// Reads a YAML file into Config through the settings table, reporting every problem at once.

#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "config/env_substitution.hpp"

namespace tidemark {

struct ConfigError {
  std::string file;
  int line = 0;  // 1-based; 0 when the problem has no place in the file (a missing key)
  int column = 0;
  std::string key;  // dotted key path
  std::string message;
  std::string to_string() const;  // "file:line:col: key: message"
};

struct ConfigLoadResult {
  Config config;
  std::vector<ConfigError> errors;
  bool ok() const { return errors.empty(); }
};

ConfigLoadResult load_config_text(std::string_view yaml, const std::string& file_name, const EnvLookup& env);
ConfigLoadResult load_config_file(const std::string& path, const EnvLookup& env);

// One line per error, for the log and for `tidemark check`.
std::string format_errors(const std::vector<ConfigError>& errors);

}  // namespace tidemark
