#include "source/postgres/postgres_prerequisites.hpp"

#include <set>

#include <spdlog/spdlog.h>

#include "source/table_patterns.hpp"

namespace tidemark::pg {

namespace {

std::string qualified(const CapturedTable& t) { return quote_identifier(t.schema) + "." + quote_identifier(t.table); }

std::string table_list(const std::vector<CapturedTable>& tables) {
  std::string out;
  for (size_t i = 0; i < tables.size(); ++i) out += (i ? ", " : "") + qualified(tables[i]);
  return out;
}

void check_wal_level(Connection& conn, PrerequisiteReport& report) {
  const auto r = conn.query("SHOW wal_level");
  if (!r) {
    report.problems.push_back("cannot read wal_level: " + conn.last_error());
    return;
  }
  const std::string level = PQgetvalue(r->get(), 0, 0);
  if (level != "logical")
    report.problems.push_back("wal_level is '" + level +
                              "', logical replication needs 'logical': run ALTER SYSTEM SET wal_level = logical; "
                              "then restart PostgreSQL");
}

void check_role(Connection& conn, const Config& config, PrerequisiteReport& report) {
  const auto r = conn.query("SELECT rolreplication OR rolsuper, rolsuper FROM pg_roles WHERE rolname = current_user");
  if (!r || PQntuples(r->get()) != 1) {
    report.problems.push_back("cannot read the role's attributes: " + conn.last_error());
    return;
  }
  if (std::string(PQgetvalue(r->get(), 0, 1)) == "t")
    report.warnings.push_back("role " + config.source.user + " is a superuser: whoever controls Tidemark's configuration or "
                              "can reach its connections can do anything in the cluster. Use a role with LOGIN REPLICATION, "
                              "SELECT on the captured tables and the control tables' grants (docs/security.md)");
  if (std::string(PQgetvalue(r->get(), 0, 0)) != "t")
    report.problems.push_back("role " + config.source.user + " may not start replication: run ALTER ROLE " +
                              quote_identifier(config.source.user) + " REPLICATION;");
}

void resolve_tables(Connection& conn, const Config& config, PrerequisiteReport& report) {
  const auto r = conn.query(
      "SELECT n.nspname, c.relname, has_table_privilege(c.oid, 'SELECT') FROM pg_class c "
      "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('r', 'p') "
      "AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%' "
      "ORDER BY 1, 2");
  if (!r) {
    report.problems.push_back("cannot list tables: " + conn.last_error());
    return;
  }
  std::vector<std::string> no_select;
  for (int i = 0; i < PQntuples(r->get()); ++i) {
    CapturedTable t{PQgetvalue(r->get(), i, 0), PQgetvalue(r->get(), i, 1)};
    if (!table_selected(config.source.tables, t.schema + "." + t.table)) continue;
    if (std::string(PQgetvalue(r->get(), i, 2)) != "t") no_select.push_back(qualified(t));
    report.tables.push_back(std::move(t));
  }
  if (report.tables.empty()) {
    std::string patterns;
    for (const auto& p : config.source.tables) patterns += (patterns.empty() ? "" : ", ") + p;
    report.problems.push_back("source.tables (" + patterns + ") matches no table in database " +
                              config.source.database + "; name them as schema.table");
  }
  for (const auto& t : no_select)
    report.problems.push_back("role " + config.source.user + " may not read " + t + ": run GRANT SELECT ON " + t +
                              " TO " + quote_identifier(config.source.user) + ";");
}

void check_publication(Connection& conn, const Config& config, bool apply_fixes, PrerequisiteReport& report) {
  if (report.tables.empty()) return;
  const std::string& pub = config.source.postgres.publication;
  const auto exists = conn.query("SELECT puballtables FROM pg_publication WHERE pubname = $1", {pub});
  if (!exists) {
    report.problems.push_back("cannot read publications: " + conn.last_error());
    return;
  }
  if (PQntuples(exists->get()) == 0) {
    const std::string sql = "CREATE PUBLICATION " + quote_identifier(pub) + " FOR TABLE " + table_list(report.tables);
    if (config.source.postgres.create_publication) {
      if (!apply_fixes) return;  // created at start
      if (conn.query(sql)) {
        spdlog::info("created publication {}: {}", pub, sql);
        return;
      }
      report.problems.push_back("cannot create publication " + pub + ": " + conn.last_error() +
                                "; run as the tables' owner: " + sql + ";");
      return;
    }
    report.problems.push_back("publication " + pub + " does not exist: run " + sql +
                              "; (or set source.postgres.create_publication: true)");
    return;
  }
  if (std::string(PQgetvalue(exists->get(), 0, 0)) == "t") return;  // FOR ALL TABLES
  const auto members = conn.query("SELECT schemaname, tablename FROM pg_publication_tables WHERE pubname = $1", {pub});
  if (!members) {
    report.problems.push_back("cannot read publication " + pub + ": " + conn.last_error());
    return;
  }
  std::set<std::pair<std::string, std::string>> in_publication;
  for (int i = 0; i < PQntuples(members->get()); ++i)
    in_publication.emplace(PQgetvalue(members->get(), i, 0), PQgetvalue(members->get(), i, 1));
  std::vector<CapturedTable> missing;
  for (const auto& t : report.tables)
    if (!in_publication.count({t.schema, t.table})) missing.push_back(t);
  if (missing.empty()) return;
  const std::string sql = "ALTER PUBLICATION " + quote_identifier(pub) + " ADD TABLE " + table_list(missing);
  if (config.source.postgres.create_publication && !apply_fixes) return;  // extended at start
  if (config.source.postgres.create_publication && conn.query(sql)) {
    spdlog::info("added to publication {}: {}", pub, sql);
    return;
  }
  report.problems.push_back("publication " + pub + " lacks " + table_list(missing) + ", whose changes would be lost: run " +
                            sql + ";");
}

void check_slot(Connection& conn, const Config& config, PrerequisiteReport& report) {
  const std::string& slot = config.source.postgres.slot;
  const auto r = conn.query("SELECT plugin, database, slot_type FROM pg_replication_slots WHERE slot_name = $1", {slot});
  if (!r) {
    report.problems.push_back("cannot read replication slots: " + conn.last_error());
    return;
  }
  if (PQntuples(r->get()) == 0) return;  // created on first start
  report.slot_exists = true;
  const std::string plugin = PQgetvalue(r->get(), 0, 0);
  const std::string database = PQgetvalue(r->get(), 0, 1);
  if (std::string(PQgetvalue(r->get(), 0, 2)) != "logical" || plugin != "pgoutput" || database != config.source.database)
    report.problems.push_back("replication slot " + slot + " exists but is not a pgoutput slot of database " +
                              config.source.database + " (plugin " + plugin + ", database " + database +
                              "): choose another source.postgres.slot");
}

}  // namespace

PrerequisiteReport check_prerequisites(Connection& conn, const Config& config, bool apply_fixes) {
  PrerequisiteReport report;
  check_wal_level(conn, report);
  check_role(conn, config, report);
  resolve_tables(conn, config, report);
  check_publication(conn, config, apply_fixes, report);
  check_slot(conn, config, report);
  return report;
}

}  // namespace tidemark::pg
