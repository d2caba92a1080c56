#include "source/source_factory.hpp"

#include <stdexcept>

#include "source/generator/generator_source.hpp"
#include "source/postgres/postgres_source.hpp"

namespace tidemark {

std::unique_ptr<Source> make_source(const Config& config) {
  if (config.source.type == "generator") return std::make_unique<GeneratorSource>(config);
  if (config.source.type == "postgres") return std::make_unique<pg::PostgresSource>(config);
  // The MySQL/MariaDB binlog reader is its own issue; its settings already validate.
  throw std::runtime_error("source.type '" + config.source.type +
                           "' is not available in this build yet: 'generator' and 'postgres' are. "
                           "The MySQL/MariaDB reader is being built (issue #4).");
}

}  // namespace tidemark
