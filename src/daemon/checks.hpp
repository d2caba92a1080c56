#pragma once
// `tidemark check`: every problem with the configuration and the environment it names, listed at once.

#include <string>
#include <vector>

#include "config/config.hpp"

namespace tidemark {

// Problems beyond the file itself: the broker, the state file, the source's prerequisites. The source's
// recommendations (not problems) go to `warnings` when given.
std::vector<std::string> check_environment(const Config& config, std::vector<std::string>* warnings = nullptr);

}  // namespace tidemark
