#include "db/mysql_connection.hpp"
#include "config/source_kinds.hpp"

#include <errmsg.h>
#include <mysqld_error.h>

namespace tidemark::mysql {

namespace {

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

std::string no_tls_problem(const std::string& mode) {
  return "the server does not offer TLS (have_ssl is not YES) but source.tls.mode is " + mode +
         ": start the server with ssl_cert, ssl_key (and ssl_ca), or set source.tls.mode to prefer or disable to "
         "connect without TLS";
}

// libmariadb's TLS options for source.tls (Connector/C 3.3 with OpenSSL, see docs/security.md): any TLS option
// makes it try TLS when the server offers it, a CA makes it verify the chain, VERIFY_SERVER_CERT adds the
// host name. Without the server offering TLS it continues in plain text unless VERIFY_SERVER_CERT is on, so
// the constructor checks require and verify-ca itself.
void set_tls_options(MYSQL* mysql, const SourceTlsConfig& tls) {
  const std::string mode = tls.mode.empty() ? "prefer" : tls.mode;
  my_bool use_tls = mode != "disable";
  my_bool verify_host = mode == "verify-full";
  mysql_options(mysql, MYSQL_OPT_SSL_ENFORCE, &use_tls);
  mysql_options(mysql, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &verify_host);
  if (!use_tls) return;
  // prefer never verifies: a CA would make libmariadb refuse a certificate it cannot verify.
  if (mode != "prefer" && !tls.ca.empty()) mysql_options(mysql, MYSQL_OPT_SSL_CA, tls.ca.c_str());
  if (!tls.cert.empty()) mysql_options(mysql, MYSQL_OPT_SSL_CERT, tls.cert.c_str());
  if (!tls.key.empty()) mysql_options(mysql, MYSQL_OPT_SSL_KEY, tls.key.c_str());
}

}  // namespace

namespace {

// The hint with the source's key names; tls_hint renames them for the endpoint.
std::string source_tls_hint(const DatabaseEndpoint& source, unsigned error_code, const std::string& message) {
  const SourceTlsConfig& tls = source.tls;
  const std::string mode = "source.tls.mode is " + tls.mode;
  if (error_code == ER_ACCESS_DENIED_ERROR) {
    if (tls.mode == "disable")
      return "a wrong password, or an account that needs TLS (REQUIRE SSL or X509) while " + mode +
             ": for such an account set source.tls.mode to verify-full (or require)";
    if (tls.cert.empty())
      return "a wrong password, or an account that needs a client certificate (REQUIRE X509, SUBJECT or ISSUER): "
             "for such an account set source.tls.cert and source.tls.key";
    return "";
  }
  if (error_code != CR_SSL_CONNECTION_ERROR) return "";
  if (contains(message, "server does not support"))
    return no_tls_problem(tls.mode);
  if (contains(message, "Validation of SSL server certificate failed"))
    return mode + ", which checks that the server's certificate names source.host (" + source.host +
           "): set source.host to a name or address the certificate lists, or use source.tls.mode verify-ca to "
           "verify the certificate without the host name";
  if (contains(message, "alert"))
    return "the server refused the TLS handshake, most likely the client certificate in source.tls.cert (it must "
           "be signed by the server's ssl_ca)";
  if (contains(message, "key") || contains(message, "PEM") || contains(message, "no start line"))
    return "the client certificate or key cannot be used: check source.tls.cert and source.tls.key (PEM, matching, "
           "the key unencrypted)";
  if (!tls.ca.empty() && tls.mode != "prefer")
    return "the server's certificate does not verify with the CA in source.tls.ca (" + tls.ca +
           "): set source.tls.ca to the certificate of the CA that issued the server's certificate (its ssl_cert)";
  return "the TLS handshake failed (" + mode + "): check the server's TLS settings and source.tls.ca, "
         "source.tls.cert and source.tls.key";
}

}  // namespace

std::string tls_hint(const DatabaseEndpoint& source, unsigned error_code, const std::string& message) {
  return rename_settings(source_tls_hint(source, error_code, message), source.settings);
}

MySqlConnection::MySqlConnection(const DatabaseEndpoint& source, unsigned read_timeout_s) {
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
  set_tls_options(mysql_, source.tls);
  const auto port = static_cast<unsigned>(source_port(source));
  const std::string host = source.host.empty() ? "127.0.0.1" : source.host;
  if (!mysql_real_connect(mysql_, host.c_str(), source.user.c_str(), source.password.c_str(),
                          source.database.empty() ? nullptr : source.database.c_str(), port, nullptr, 0)) {
    connect_error_ = mysql_error(mysql_);
    if (const std::string hint = tls_hint(source, mysql_errno(mysql_), connect_error_); !hint.empty())
      connect_error_ += ": " + hint;
    return;
  }
  const bool tls_required = !source.tls.mode.empty() && source.tls.mode != "disable" && source.tls.mode != "prefer";
  if (tls_required && !mysql_get_ssl_cipher(mysql_)) {
    // Right after the handshake, before any statement: the password went as a challenge response, not in clear.
    connect_error_ = rename_settings(no_tls_problem(source.tls.mode), source.settings);
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

std::string MySqlConnection::tls_version() {
  if (!connected_ || !mysql_get_ssl_cipher(mysql_)) return "";
  const char* version = nullptr;
  if (mariadb_get_infov(mysql_, MARIADB_CONNECTION_TLS_VERSION, &version) != 0 || !version) return "TLS";
  return version;
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
