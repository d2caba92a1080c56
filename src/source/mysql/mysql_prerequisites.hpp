#pragma once
// Everything a MySQL/MariaDB source needs before it streams, each missing piece reported with its fix:
// binary logging on, binlog_format=ROW, binlog_row_image=FULL, the replication privileges, the captured
// tables and SELECT on them, and a server_id of our own. binlog_row_metadata=FULL is recommended (names,
// key and charsets come from the binlog itself; otherwise from information_schema, see
// table_schema_loader.hpp) and reported as a warning.

#include <string>
#include <vector>

#include "config/config.hpp"
#include "source/mysql/binlog_position.hpp"
#include "db/mysql_connection.hpp"

namespace tidemark::mysql {

struct PrerequisiteReport {
  std::vector<std::string> problems;  // empty when the source can stream
  std::vector<std::string> warnings;  // recommendations
  Flavor flavor = Flavor::MariaDb;
  std::string server_version;
};

PrerequisiteReport check_prerequisites(MySqlConnection& conn, const Config& config);

// The current end of the binlog: where a first start begins (SHOW MASTER STATUS plus the server's GTID
// position). nullopt with `error` when it cannot be read.
std::optional<BinlogPosition> current_end_of_log(MySqlConnection& conn, Flavor flavor, std::string& error);

}  // namespace tidemark::mysql
