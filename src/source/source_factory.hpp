#pragma once

#include <memory>

#include "source/source.hpp"

namespace tidemark {

// Throws std::runtime_error (at start-up) when the configured source type is not available.
std::unique_ptr<Source> make_source(const Config& config);

}  // namespace tidemark
