#include "mariadb_server.hpp"

namespace tidemark::test {

namespace {

std::string joined(const std::vector<std::string>& args) {
  std::string out;
  for (const auto& arg : args) out += (out.empty() ? "" : " ") + arg;
  return out;
}

}  // namespace

ThrowawayMariaDb::ThrowawayMariaDb(const std::vector<std::string>& extra_args)
    : server_("mariadb",
              [args = joined(extra_args)](const ThrowawayServer& s) {
                return std::vector<std::string>{"TIDEMARK_MYSQL_PORT=" + s.port(), "TIDEMARK_MARIADB_EXTRA_ARGS=" + args};
              },
              "run/mariadb/mariadbd.log") {
  server_.start();
}

MySqlTarget ThrowawayMariaDb::target(bool root) const {
  return root ? MySqlTarget{"127.0.0.1", port(), "root", "root", "tidemark_test"}
              : MySqlTarget{"127.0.0.1", port(), "tidemark", "tidemark", "tidemark_test"};
}

}  // namespace tidemark::test
