#pragma once

#include <string>

namespace tidemark {

// Markdown reference of every setting, generated from the settings table (docs/configuration.md is this
// output; a unit test keeps the two equal).
std::string settings_reference_markdown();

}  // namespace tidemark
