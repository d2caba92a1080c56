#pragma once
// sink.database.tables checked against both databases before anything runs (start and `tidemark check`):
// every mapped table and column exists on its side, the target's key is copied from source columns, the
// expressions are of the allowed kind. Every problem at once, each naming the fix.

#include <string>
#include <vector>

#include "config/config.hpp"
#include "sink/database/target_connection.hpp"

namespace tidemark::dbsink {

// `source` and `target` are connected catalog connections to the source and the target databases.
std::vector<std::string> check_mappings(const Config& config, TargetConnection& source, TargetConnection& target);

}  // namespace tidemark::dbsink
