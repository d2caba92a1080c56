#include "source/source_factory.hpp"

#include <stdexcept>

#include "source/generator/generator_source.hpp"

namespace tidemark {

std::unique_ptr<Source> make_source(const Config& config) {
  if (config.source.type == "generator") return std::make_unique<GeneratorSource>(config);
  // The PostgreSQL and MySQL/MariaDB log readers are their own issues; their settings already validate.
  throw std::runtime_error("source.type '" + config.source.type +
                           "' is not available in this build yet: only 'generator' is. "
                           "The PostgreSQL and MySQL/MariaDB readers are being built (issues #3 and #4).");
}

}  // namespace tidemark
