#include "source/mysql/mysql_prerequisites.hpp"

#include <algorithm>
#include <cctype>
#include <initializer_list>

#include "source/table_patterns.hpp"

namespace tidemark::mysql {

namespace {

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

std::string variable(MySqlConnection& conn, const std::string& name) {
  return upper(conn.query_value("SELECT @@global." + name).value_or(""));
}

}  // namespace

PrerequisiteReport check_prerequisites(MySqlConnection& conn, const Config& config) {
  PrerequisiteReport report;
  report.server_version = conn.query_value("SELECT VERSION()").value_or("");
  report.flavor = report.server_version.find("MariaDB") != std::string::npos ? Flavor::MariaDb : Flavor::MySql;
  auto& problems = report.problems;

  const std::string log_bin = variable(conn, "log_bin");
  if (log_bin != "1" && log_bin != "ON")
    problems.push_back("binary logging is off on the server: start it with log_bin (e.g. [mysqld] log_bin=mysql-bin, "
                       "server_id=1, binlog_format=ROW in my.cnf) and restart it");
  const std::string format = variable(conn, "binlog_format");
  if (format != "ROW")
    problems.push_back("binlog_format is " + format + ", Tidemark needs ROW: SET GLOBAL binlog_format = 'ROW' and put "
                       "binlog_format=ROW in my.cnf (sessions already open keep the old format until they reconnect)");
  const std::string image = variable(conn, "binlog_row_image");
  if (image != "FULL")
    problems.push_back("binlog_row_image is " + image + ", Tidemark needs FULL (complete before and after images): "
                       "SET GLOBAL binlog_row_image = 'FULL' and put binlog_row_image=FULL in my.cnf");
  const std::string metadata = variable(conn, "binlog_row_metadata");
  if (metadata != "FULL")
    report.warnings.push_back("binlog_row_metadata is " + (metadata.empty() ? std::string("not available") : metadata) +
                              ": column names, keys and ENUM/SET members are read from information_schema, which "
                              "describes tables as they are now, not as they were when older events were logged. "
                              "Recommended: SET GLOBAL binlog_row_metadata = 'FULL' and binlog_row_metadata=FULL in my.cnf");
  const auto server_id = conn.query_value("SELECT @@server_id");
  if (server_id && *server_id == std::to_string(config.source.mysql.server_id))
    problems.push_back("source.mysql.server_id " + *server_id + " is the server's own server_id: choose another one, "
                       "unique in the replication topology");

  // Privileges: the global grants as the server shows them (MariaDB 10.5+ says BINLOG MONITOR for REPLICATION
  // CLIENT), compared privilege by privilege: REPLICATION SLAVE ADMIN is not REPLICATION SLAVE.
  std::vector<std::string> global_privileges;
  if (auto rows = conn.query("SHOW GRANTS")) {
    for (const auto& row : *rows) {
      if (row.empty() || !row[0]) continue;
      const std::string grant = upper(*row[0]);
      const size_t on = grant.find(" ON *.* TO ");
      if (grant.rfind("GRANT ", 0) != 0 || on == std::string::npos) continue;
      const std::string list = grant.substr(6, on - 6);
      for (size_t begin = 0; begin <= list.size();) {
        size_t end = list.find(',', begin);
        if (end == std::string::npos) end = list.size();
        std::string privilege = list.substr(begin, end - begin);
        privilege.erase(0, privilege.find_first_not_of(' '));
        privilege.erase(privilege.find_last_not_of(' ') + 1);
        global_privileges.push_back(privilege);
        begin = end + 1;
      }
    }
  }
  const auto has = [&](std::initializer_list<const char*> names) {
    for (const char* name : names)
      if (std::find(global_privileges.begin(), global_privileges.end(), name) != global_privileges.end()) return true;
    return false;
  };
  // The account the server matched ('tidemark'@'%', 'tidemark'@'127.0.0.1'...), for a GRANT that fits it.
  std::string user = "'" + config.source.user + "'@'%'";
  if (const auto account = conn.query_value("SELECT CURRENT_USER()")) {
    const size_t at = account->rfind('@');
    if (at != std::string::npos) user = "'" + account->substr(0, at) + "'@'" + account->substr(at + 1) + "'";
  }
  const bool all = has({"ALL PRIVILEGES", "ALL"});
  if (all || has({"SUPER"}))
    report.warnings.push_back("user " + config.source.user + " has " + (all ? "ALL PRIVILEGES" : "SUPER") +
                              " on *.*: whoever controls Tidemark's configuration or can reach its connections can do "
                              "anything on the server. Grant only REPLICATION SLAVE, REPLICATION CLIENT (BINLOG MONITOR), "
                              "SELECT on the captured tables and the control tables' rights (docs/security.md)");
  if (!all && !has({"REPLICATION SLAVE", "REPLICATION REPLICA"}))
    problems.push_back("user " + config.source.user + " lacks REPLICATION SLAVE, needed to read the binlog: GRANT REPLICATION SLAVE ON *.* TO " + user);
  // SUPER covers SHOW MASTER STATUS on MySQL only; MariaDB 10.5.2+ needs BINLOG MONITOR.
  if (!all && !has({"REPLICATION CLIENT", "BINLOG MONITOR"}) && !(report.flavor == Flavor::MySql && has({"SUPER"})))
    problems.push_back("user " + config.source.user + " lacks REPLICATION CLIENT (BINLOG MONITOR on MariaDB), needed to "
                       "find the end of the binlog: GRANT REPLICATION CLIENT ON *.* TO " + user);

  // Captured tables: information_schema lists only tables the user has some privilege on.
  if (config.source.tables.empty()) {
    problems.push_back("source.tables is empty: list the tables to capture as database.table ('*' allowed)");
  } else if (auto rows = conn.query("SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES WHERE TABLE_TYPE = 'BASE TABLE' "
                                    "AND TABLE_SCHEMA NOT IN ('mysql','information_schema','performance_schema','sys')")) {
    std::vector<std::string> selected;
    for (const auto& row : *rows) {
      const std::string name = row[0].value_or("") + "." + row[1].value_or("");
      if (table_selected(config.source.tables, name)) selected.push_back(name);
    }
    for (const std::string& pattern : config.source.tables) {
      const bool matched = std::any_of(selected.begin(), selected.end(), [&](const std::string& n) { return glob_match(pattern, n); });
      if (!matched)
        problems.push_back("source.tables entry '" + pattern + "' matches no table the user " + config.source.user +
                           " can see: create the table, or GRANT SELECT ON <database>.* TO " + user);
    }
    for (const std::string& name : selected) {
      const size_t dot = name.find('.');
      if (!conn.execute("SELECT 1 FROM " + quote_identifier(name.substr(0, dot)) + "." + quote_identifier(name.substr(dot + 1)) + " LIMIT 0"))
        problems.push_back("cannot SELECT from " + name + ": " + conn.error() + ". GRANT SELECT ON " + name + " TO " + user);
    }
  } else {
    problems.push_back("cannot read information_schema.TABLES: " + conn.error());
  }
  return report;
}

std::optional<BinlogPosition> current_end_of_log(MySqlConnection& conn, Flavor flavor, std::string& error) {
  // GTID state first: a transaction committing between the two reads is then inside the file position but
  // not the GTID state, and resuming by GTID reads it (a duplicate at worst, never a gap).
  const auto gtid = conn.query_value(flavor == Flavor::MariaDb ? "SELECT @@global.gtid_binlog_pos" : "SELECT @@global.gtid_executed");
  auto status = conn.query("SHOW MASTER STATUS");
  if (!status) {
    error = "SHOW MASTER STATUS failed: " + conn.error();
    return std::nullopt;
  }
  if (status->empty() || (*status)[0].size() < 2) {
    error = "SHOW MASTER STATUS returned nothing: binary logging is off";
    return std::nullopt;
  }
  BinlogPosition p;
  p.flavor = flavor;
  p.file = (*status)[0][0].value_or("");
  p.position = std::stoull((*status)[0][1].value_or("4"));
  if (gtid) {
    std::string text = *gtid;
    text.erase(std::remove(text.begin(), text.end(), '\n'), text.end());
    p.gtid = text;
  }
  return p;
}

}  // namespace tidemark::mysql
