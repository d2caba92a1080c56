#include "mysql_client.hpp"

#include <gtest/gtest.h>
#include <mysql.h>

#include <cstdlib>
#include <stdexcept>

namespace tidemark::test {

namespace {
std::string mysql_env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}
}  // namespace

MySqlTarget real_mysql(bool root) {
  MySqlTarget t{mysql_env("TIDEMARK_MYSQL_HOST"), mysql_env("TIDEMARK_MYSQL_PORT"),
                mysql_env(root ? "TIDEMARK_MYSQL_ROOT_USER" : "TIDEMARK_MYSQL_USER"),
                mysql_env(root ? "TIDEMARK_MYSQL_ROOT_PASSWORD" : "TIDEMARK_MYSQL_PASSWORD"), mysql_env("TIDEMARK_MYSQL_DATABASE")};
  if (t.port.empty())
    ADD_FAILURE() << "TIDEMARK_MYSQL_PORT is not set: run the tests through ./scripts/test.sh, which starts MariaDB";
  return t;
}

struct MySqlSession::Impl {
  MYSQL* mysql = nullptr;
};

MySqlSession::MySqlSession(const MySqlTarget& t) : impl_(new Impl) {
  impl_->mysql = mysql_init(nullptr);
  mysql_options(impl_->mysql, MYSQL_SET_CHARSET_NAME, "utf8mb4");
  if (!mysql_real_connect(impl_->mysql, t.host.c_str(), t.user.c_str(), t.password.c_str(),
                          t.database.empty() ? nullptr : t.database.c_str(), static_cast<unsigned>(std::stoul(t.port)),
                          nullptr, CLIENT_MULTI_STATEMENTS)) {
    const std::string error = mysql_error(impl_->mysql);
    mysql_close(impl_->mysql);
    delete impl_;
    throw std::runtime_error("connect to MariaDB: " + error);
  }
  exec("SET time_zone = '+00:00'");
}

MySqlSession::~MySqlSession() {
  mysql_close(impl_->mysql);
  delete impl_;
}

void MySqlSession::exec(const std::string& sql) { rows(sql); }

std::vector<std::vector<std::optional<std::string>>> MySqlSession::rows(const std::string& sql) {
  MYSQL* m = impl_->mysql;
  if (mysql_real_query(m, sql.data(), static_cast<unsigned long>(sql.size())) != 0)
    throw std::runtime_error("MariaDB: " + std::string(mysql_error(m)) + " in: " + sql.substr(0, 300));
  std::vector<std::vector<std::optional<std::string>>> out;
  for (;;) {
    if (MYSQL_RES* result = mysql_store_result(m)) {
      const unsigned n = mysql_num_fields(result);
      while (MYSQL_ROW row = mysql_fetch_row(result)) {
        const unsigned long* lengths = mysql_fetch_lengths(result);
        std::vector<std::optional<std::string>> r;
        for (unsigned i = 0; i < n; ++i)
          r.push_back(row[i] ? std::optional<std::string>(std::string(row[i], lengths[i])) : std::nullopt);
        out.push_back(std::move(r));
      }
      mysql_free_result(result);
    } else if (mysql_field_count(m) != 0) {
      throw std::runtime_error("MariaDB: " + std::string(mysql_error(m)));
    }
    const int more = mysql_next_result(m);
    if (more > 0) throw std::runtime_error("MariaDB: " + std::string(mysql_error(m)) + " in: " + sql.substr(0, 300));
    if (more < 0) break;
  }
  return out;
}

std::string MySqlSession::value(const std::string& sql) {
  const auto r = rows(sql);
  if (r.empty() || r[0].empty()) return "";
  return r[0][0].value_or("");
}

void mysql_exec(const MySqlTarget& target, const std::string& sql) {
  MySqlSession s(target);
  s.exec(sql);
}

std::string mysql_value(const MySqlTarget& target, const std::string& sql) {
  MySqlSession s(target);
  return s.value(sql);
}

}  // namespace tidemark::test
