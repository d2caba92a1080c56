#pragma once
// One libmariadb connection (MySQL or MariaDB server) with the session settings Tidemark relies on, and
// simple text queries. Errors are values: the caller decides between retry and fatal.

#include <mysql.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"

namespace tidemark::mysql {

// A result row: NULL columns are nullopt.
using SqlRow = std::vector<std::optional<std::string>>;

class MySqlConnection {
 public:
  // Connects to source.host:source.port as source.user, with TLS as source.tls says (require and verify-*
  // refuse a server that answers without TLS). `read_timeout_s` bounds every read, so a replica stream
  // notices a dead server (heartbeats arrive well within it).
  MySqlConnection(const DatabaseEndpoint& source, unsigned read_timeout_s = 30);
  ~MySqlConnection();
  MySqlConnection(const MySqlConnection&) = delete;
  MySqlConnection& operator=(const MySqlConnection&) = delete;

  bool ok() const { return connected_; }
  MYSQL* raw() { return mysql_; }
  // "TLSv1.3" when the connection is encrypted, "" when it is plain text.
  std::string tls_version();

  // Runs a statement; nullopt on error (see error(), error_code()).
  std::optional<std::vector<SqlRow>> query(std::string_view sql);
  // Runs a statement that returns no rows.
  bool execute(std::string_view sql);
  // The first column of the first row ("" when NULL); nullopt on error or no row.
  std::optional<std::string> query_value(std::string_view sql);

  std::string error() const;
  unsigned error_code() const;

  // A string literal with the connection's escaping ('...').
  std::string quote(std::string_view value);

 private:
  MYSQL* mysql_ = nullptr;
  bool connected_ = false;
  std::string connect_error_;
};

// What to change, naming the setting, for a connection error (libmariadb's code and message) that is about
// TLS or may be ("" for other errors).
std::string tls_hint(const DatabaseEndpoint& source, unsigned error_code, const std::string& message);

// `name` as an identifier (`...`).
std::string quote_identifier(std::string_view name);

}  // namespace tidemark::mysql
