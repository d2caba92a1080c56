#include "source/source_factory.hpp"

#include <stdexcept>

#include "config/source_kinds.hpp"
#include "source/generator/generator_source.hpp"
#include "source/kafka/kafka_source.hpp"
#include "source/mysql/mysql_snapshot_reader.hpp"
#include "source/mysql/mysql_source.hpp"
#include "source/postgres/pg_snapshot_reader.hpp"
#include "source/postgres/postgres_source.hpp"

namespace tidemark {

std::unique_ptr<Source> make_source(const Config& config, SourceServices services) {
  const SourceDescriptor& kind = describe_source(config.source);
  if (kind.type.empty()) throw std::runtime_error("unknown source.type '" + config.source.type + "'");
  switch (kind.kind) {
    case SourceKind::Generator: return std::make_unique<GeneratorSource>(config);
    case SourceKind::Postgres: return std::make_unique<pg::PostgresSource>(config);
    case SourceKind::MySql: return std::make_unique<mysql::MySqlSource>(config);
    case SourceKind::Kafka: return std::make_unique<kafka::KafkaSource>(config, std::move(services.claim_partitions));
  }
  throw std::runtime_error("unknown source.type '" + config.source.type + "'");
}

std::unique_ptr<snapshot::SnapshotReader> make_snapshot_reader(const Config& config) {
  const SourceDescriptor& kind = describe_source(config.source);
  if (!kind.is_database) return nullptr;
  switch (kind.kind) {
    case SourceKind::Generator:
    case SourceKind::Kafka: return nullptr;
    case SourceKind::Postgres: return std::make_unique<pg::PgSnapshotReader>(config);
    case SourceKind::MySql: return std::make_unique<mysql::MySqlSnapshotReader>(config);
  }
  return nullptr;
}

}  // namespace tidemark
