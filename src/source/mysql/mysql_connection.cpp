#include "source/mysql/mysql_connection.hpp"

namespace tidemark::mysql {

MySqlConnection::MySqlConnection(const SourceConfig& source, unsigned read_timeout_s) {
  mysql_ = mysql_init(nullptr);
  if (!mysql_) {
    connect_error_ = "out of memory";
    return;
  }
  unsigned connect_timeout = 10;
  mysql_options(mysql_, MYSQL_OPT_CONNECT_TIMEOUT, &connect_timeout);
  mysql_options(mysql_, MYSQL_OPT_READ_TIMEOUT, &read_timeout_s);
  unsigned write_timeout = 30;
  mysql_options(mysql_, MYSQL_OPT_WRITE_TIMEOUT, &write_timeout);
  mysql_options(mysql_, MYSQL_SET_CHARSET_NAME, "utf8mb4");
  const unsigned port = source.port > 0 ? static_cast<unsigned>(source.port) : 3306;
  const std::string host = source.host.empty() ? "127.0.0.1" : source.host;
  if (!mysql_real_connect(mysql_, host.c_str(), source.user.c_str(), source.password.c_str(),
                          source.database.empty() ? nullptr : source.database.c_str(), port, nullptr, 0)) {
    connect_error_ = mysql_error(mysql_);
    return;
  }
  connected_ = true;
  // Values in UTC, so TIMESTAMP columns read by SELECT (snapshots, checks) agree with the binlog's.
  execute("SET time_zone = '+00:00'");
}

MySqlConnection::~MySqlConnection() {
  if (mysql_) mysql_close(mysql_);
}

std::optional<std::vector<SqlRow>> MySqlConnection::query(std::string_view sql) {
  if (!connected_) return std::nullopt;
  if (mysql_real_query(mysql_, sql.data(), static_cast<unsigned long>(sql.size())) != 0) return std::nullopt;
  std::vector<SqlRow> rows;
  MYSQL_RES* result = mysql_store_result(mysql_);
  if (!result) {
    if (mysql_field_count(mysql_) != 0) return std::nullopt;
    return rows;
  }
  const unsigned columns = mysql_num_fields(result);
  while (MYSQL_ROW row = mysql_fetch_row(result)) {
    const unsigned long* lengths = mysql_fetch_lengths(result);
    SqlRow out;
    out.reserve(columns);
    for (unsigned i = 0; i < columns; ++i) {
      if (row[i]) out.emplace_back(std::string(row[i], lengths[i]));
      else out.emplace_back(std::nullopt);
    }
    rows.push_back(std::move(out));
  }
  mysql_free_result(result);
  return rows;
}

bool MySqlConnection::execute(std::string_view sql) { return query(sql).has_value(); }

std::optional<std::string> MySqlConnection::query_value(std::string_view sql) {
  auto rows = query(sql);
  if (!rows || rows->empty() || (*rows)[0].empty()) return std::nullopt;
  return (*rows)[0][0].value_or("");
}

std::string MySqlConnection::error() const {
  if (!connected_) return connect_error_;
  return mysql_error(mysql_);
}

unsigned MySqlConnection::error_code() const { return mysql_ ? mysql_errno(mysql_) : 0; }

std::string MySqlConnection::quote(std::string_view value) {
  std::string out(value.size() * 2 + 3, '\0');
  out[0] = '\'';
  const unsigned long n = mysql_real_escape_string(mysql_, out.data() + 1, value.data(), static_cast<unsigned long>(value.size()));
  out.resize(n + 1);
  out.push_back('\'');
  return out;
}

std::string quote_identifier(std::string_view name) {
  std::string out = "`";
  for (const char c : name) {
    if (c == '`') out.push_back('`');
    out.push_back(c);
  }
  out.push_back('`');
  return out;
}

}  // namespace tidemark::mysql
