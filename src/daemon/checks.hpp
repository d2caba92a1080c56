#pragma once
// `tidemark check`: every problem with the configuration and the environment it names, listed at once.

#include <string>
#include <vector>

#include "config/config.hpp"

namespace tidemark {

// Problems beyond the file itself: the broker, the state file, the source's prerequisites.
std::vector<std::string> check_environment(const Config& config);

}  // namespace tidemark
