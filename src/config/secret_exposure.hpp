#pragma once
// `tidemark check` warns about a password written into a configuration file that every local user can
// read: the unit's EnvironmentFile (root-only) is where secrets belong, referred to as ${VARIABLE}.

#include <optional>
#include <string>

namespace tidemark {

// A warning naming the key and the fix, or nullopt (no inline password, or the file is not world-readable).
std::optional<std::string> inline_secret_warning(const std::string& config_path);

}  // namespace tidemark
