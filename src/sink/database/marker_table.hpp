#pragma once
// The marker table of two-way sync (two_way.marker_table): one row per pipeline in each database. A
// database sink with two_way.peer set updates its pipeline's row as the first statement of every
// transaction it applies, so that the log of the target shows, at the start of each of those transactions,
// whose they are; the pipeline reading that database drops them (source/echo_filter.hpp). The update
// bumps a counter, so the row always changes and the log always carries it (MySQL logs no row event for
// an UPDATE that changes nothing).

#include <optional>
#include <string>

#include "config/config.hpp"
#include "sink/database/target_connection.hpp"

namespace tidemark::dbsink {

class MarkerTable {
 public:
  // The table `name` ("table", or "schema.table" / "database.table") in `default_space` (the schema or
  // database an unqualified name lives in).
  MarkerTable(Dialect dialect, const std::string& default_space, const std::string& name);

  const std::string& label() const { return where_.label; }  // schema.table
  std::string create_statement() const;
  // Creates the table when missing and `create`, and inserts `pipeline`'s row when missing. `exists` says
  // whether the table is there afterwards.
  std::optional<TargetError> ensure(TargetConnection& target, bool create, const std::string& pipeline, bool& exists) const;
  // The statement marking the open transaction as `pipeline`'s (ends with ";\n").
  std::string mark_statement(TargetConnection& target, const std::string& pipeline) const;

 private:
  OwnTable where_;
};

}  // namespace tidemark::dbsink
