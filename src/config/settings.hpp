#pragma once
// The declarative table of every configuration key: name, type, default, help, validator, and whether it
// is a secret or can change on SIGHUP. Loader, `tidemark check`, reload and docs all read this one table.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "config/config.hpp"
#include "config/env_substitution.hpp"

namespace tidemark {

enum class SettingType { String, Integer, Boolean, Choice, StringList, StringMap, MapList };

struct Setting {
  std::string path;  // dotted key path, e.g. "sink.kafka.bootstrap_servers"
  SettingType type = SettingType::String;
  std::string help;
  std::string default_text;  // shown in help; empty when there is no default
  bool required = false;
  bool secret = false;      // never logged or printed
  bool reloadable = false;  // applied live on SIGHUP; others need a restart
  std::vector<std::string> choices;
  // Parses a YAML node (after ${ENV} substitution of scalars), validates it and stores it; returns the
  // error text on failure.
  std::function<std::optional<std::string>(Config&, const YAML::Node&, const EnvLookup&)> parse;
  std::function<void(Config&)> apply_default;
  // The current value as text, for diffs on reload and for printing (secrets are redacted by callers).
  std::function<std::string(const Config&)> render;
  // Like render, with secrets inside values (map entries such as sasl.password) redacted.
  std::function<std::string(const Config&)> display;
  // Copies this setting's value from `from` into `to`: how SIGHUP moves a reloadable setting live.
  std::function<void(Config& to, const Config& from)> copy;
};

const std::vector<Setting>& settings();
const Setting* find_setting(std::string_view path);

// Replaces every secret's value by "****"; used whenever a config value is printed or logged.
std::string display_value(const Setting& setting, const Config& config);

}  // namespace tidemark
