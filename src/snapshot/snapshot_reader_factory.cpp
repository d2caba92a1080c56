#include "snapshot/snapshot_reader_factory.hpp"

#include "source/mysql/mysql_snapshot_reader.hpp"
#include "source/postgres/pg_snapshot_reader.hpp"

namespace tidemark::snapshot {

std::unique_ptr<SnapshotReader> make_snapshot_reader(const Config& config) {
  if (config.source.type == "postgres") return std::make_unique<pg::PgSnapshotReader>(config);
  if (config.source.type == "mysql") return std::make_unique<mysql::MySqlSnapshotReader>(config);
  return nullptr;
}

}  // namespace tidemark::snapshot
