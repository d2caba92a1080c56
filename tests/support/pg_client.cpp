#include "pg_client.hpp"

#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <cstdlib>
#include <stdexcept>

namespace tidemark::test {

namespace {
std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

PGconn* connect(const PgTarget& t) {
  const char* keys[] = {"host", "port", "user", "password", "dbname", nullptr};
  const char* values[] = {t.host.c_str(), t.port.c_str(), t.user.c_str(), t.password.c_str(), t.database.c_str(), nullptr};
  PGconn* conn = PQconnectdbParams(keys, values, 0);
  if (PQstatus(conn) != CONNECTION_OK) {
    const std::string error = PQerrorMessage(conn);
    PQfinish(conn);
    throw std::runtime_error("connect to PostgreSQL: " + error);
  }
  return conn;
}
}  // namespace

PgTarget real_postgres(bool superuser) {
  PgTarget t{env("TIDEMARK_PG_HOST"), env("TIDEMARK_PG_PORT"),
             env(superuser ? "TIDEMARK_PG_ROOT_USER" : "TIDEMARK_PG_USER"),
             env(superuser ? "TIDEMARK_PG_ROOT_PASSWORD" : "TIDEMARK_PG_PASSWORD"), env("TIDEMARK_PG_DATABASE")};
  if (t.port.empty())
    ADD_FAILURE() << "TIDEMARK_PG_PORT is not set: run the tests through ./scripts/test.sh, which starts PostgreSQL";
  return t;
}

void pg_exec(const PgTarget& target, const std::string& sql) {
  PGconn* conn = connect(target);
  PGresult* r = PQexec(conn, sql.c_str());
  const bool ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;
  const std::string error = ok ? "" : PQresultErrorMessage(r);
  PQclear(r);
  PQfinish(conn);
  if (!ok) throw std::runtime_error("SQL failed: " + error + " in: " + sql.substr(0, 200));
}

std::vector<std::string> pg_query(const PgTarget& target, const std::string& sql) {
  PGconn* conn = connect(target);
  PGresult* r = PQexec(conn, sql.c_str());
  std::vector<std::string> rows;
  const bool ok = PQresultStatus(r) == PGRES_TUPLES_OK;
  const std::string error = ok ? "" : PQresultErrorMessage(r);
  if (ok)
    for (int i = 0; i < PQntuples(r); ++i) rows.emplace_back(PQgetisnull(r, i, 0) ? "" : PQgetvalue(r, i, 0));
  PQclear(r);
  PQfinish(conn);
  if (!ok) throw std::runtime_error("query failed: " + error);
  return rows;
}

}  // namespace tidemark::test
