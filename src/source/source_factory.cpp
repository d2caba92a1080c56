#include "source/source_factory.hpp"

#include <stdexcept>

#include "source/generator/generator_source.hpp"
#include "source/mysql/mysql_source.hpp"
#include "source/postgres/postgres_source.hpp"

namespace tidemark {

std::unique_ptr<Source> make_source(const Config& config) {
  if (config.source.type == "generator") return std::make_unique<GeneratorSource>(config);
  if (config.source.type == "postgres") return std::make_unique<pg::PostgresSource>(config);
  if (config.source.type == "mysql") return std::make_unique<mysql::MySqlSource>(config);
  throw std::runtime_error("unknown source.type '" + config.source.type + "'");
}

}  // namespace tidemark
