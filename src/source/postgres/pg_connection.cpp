#include "source/postgres/pg_connection.hpp"

namespace tidemark::pg {

Connection::Connection(const SourceConfig& config, const std::string& application_name, Mode mode) {
  const std::string port = std::to_string(config.port);
  // The text forms pg_value_parser reads: ISO dates, UTC, the 'postgres' interval style, C money.
  static constexpr const char* kSessionOptions =
      "-c TimeZone=UTC -c DateStyle=ISO,YMD -c IntervalStyle=postgres -c lc_monetary=C -c extra_float_digits=1";
  std::vector<const char*> keys = {"host", "port", "user", "dbname", "application_name", "connect_timeout",
                                   "client_encoding", "options"};
  std::vector<const char*> values = {config.host.c_str(), port.c_str(), config.user.c_str(), config.database.c_str(),
                                     application_name.c_str(), "10", "UTF8", kSessionOptions};
  if (!config.password.empty()) {
    keys.push_back("password");
    values.push_back(config.password.c_str());
  }
  if (mode == Mode::Replication) {
    keys.push_back("replication");
    values.push_back("database");
  }
  keys.push_back(nullptr);
  values.push_back(nullptr);
  conn_ = PQconnectdbParams(keys.data(), values.data(), 0);
}

Connection::~Connection() {
  if (conn_) PQfinish(conn_);
}

std::string Connection::error() const {
  if (!conn_) return "out of memory";
  std::string message = PQerrorMessage(conn_);
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  return message;
}

std::optional<Result> Connection::query(const std::string& sql, const std::vector<std::string>& params) {
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const auto& p : params) values.push_back(p.c_str());
  Result result(params.empty() ? PQexec(conn_, sql.c_str())
                               : PQexecParams(conn_, sql.c_str(), static_cast<int>(params.size()), nullptr,
                                              values.data(), nullptr, nullptr, 0));
  const ExecStatusType status = result ? PQresultStatus(result.get()) : PGRES_FATAL_ERROR;
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_COPY_BOTH) {
    last_error_.clear();
    last_sqlstate_.clear();
    return result;
  }
  last_error_ = result ? PQresultErrorMessage(result.get()) : error();
  while (!last_error_.empty() && (last_error_.back() == '\n' || last_error_.back() == ' ')) last_error_.pop_back();
  const char* state = result ? PQresultErrorField(result.get(), PG_DIAG_SQLSTATE) : nullptr;
  last_sqlstate_ = state ? state : "";
  return std::nullopt;
}

std::string quote_identifier(const std::string& name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string quote_literal(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') out += '\'';
    out += c;
  }
  return out + "'";
}

}  // namespace tidemark::pg
