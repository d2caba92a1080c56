#pragma once
// The tests' own MariaDB/MySQL access (libmariadb's plain client API, not Tidemark's code), to write the
// changes Tidemark must capture and to read what the server holds.

#include <optional>
#include <string>
#include <vector>

namespace tidemark::test {

struct MySqlTarget {
  std::string host, port, user, password, database;
};

// The throwaway server scripts/test.sh starts (TIDEMARK_MYSQL_*); fails the test when unset.
MySqlTarget real_mysql(bool root = false);

// A connection kept open across statements (sessions matter: SET, BEGIN ... COMMIT).
class MySqlSession {
 public:
  explicit MySqlSession(const MySqlTarget& target);
  ~MySqlSession();
  MySqlSession(const MySqlSession&) = delete;
  MySqlSession& operator=(const MySqlSession&) = delete;

  // Runs one or more ';'-separated statements; throws on error.
  void exec(const std::string& sql);
  // Runs a query; every row, NULL as nullopt. Throws on error.
  std::vector<std::vector<std::optional<std::string>>> rows(const std::string& sql);
  // First column of the first row ("" when none).
  std::string value(const std::string& sql);

 private:
  struct Impl;
  Impl* impl_;
};

// One-shot helpers (a fresh connection each).
void mysql_exec(const MySqlTarget& target, const std::string& sql);
std::string mysql_value(const MySqlTarget& target, const std::string& sql);

}  // namespace tidemark::test
