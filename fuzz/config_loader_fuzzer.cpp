// libFuzzer target: the configuration loader (load_config_text: YAML, ${ENV} substitution, the settings
// table's type and range checks, "did you mean" suggestions, cross-setting rules) with a fixed
// environment. Every error must format.
// Configuration errors are expected results.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "config/config_loader.hpp"

using namespace tidemark;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const EnvLookup env = [](const std::string& name) -> std::optional<std::string> {
    if (name == "PORT") return "5432";
    if (name == "PASSWORD") return "s3cret";
    if (name == "EMPTY") return "";
    if (name == "NESTED") return "${PORT}";
    return std::nullopt;
  };
  const std::string_view yaml(reinterpret_cast<const char*>(data), size);
  const ConfigLoadResult result = load_config_text(yaml, "fuzz.yaml", env);
  (void)format_errors(result.errors);
  return 0;
}
