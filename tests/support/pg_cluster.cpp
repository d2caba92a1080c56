#include "pg_cluster.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <stdexcept>

namespace tidemark::test {

int free_local_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    throw std::runtime_error("bind to 127.0.0.1:0 failed");
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

ThrowawayPostgres::ThrowawayPostgres(const std::vector<std::string>& settings, const std::string& hba)
    : port_(std::to_string(free_local_port())) {
  // As root, the scripts run initdb and postgres as the `postgres` OS user, which must reach the data
  // directory below this one (mkdtemp makes it 0700).
  if (::chmod(dir_.path().c_str(), 0711) != 0) throw std::runtime_error("chmod " + dir_.path() + " failed");
  try {
    started_ = true;  // from here on a failure may leave a postmaster behind: stop() handles "not running"
    servers_sh("start");
    if (!settings.empty() || !hba.empty()) {
      for (const auto& setting : settings) pg_exec(target(true), "ALTER SYSTEM SET " + setting);
      if (!hba.empty()) write_file(dir_.file("postgres/data/pg_hba.conf"), hba);  // keeps its owner, postgres
      servers_sh("restart");
    }
  } catch (...) {
    stop();
    throw;
  }
}

ThrowawayPostgres::~ThrowawayPostgres() { stop(); }

PgTarget ThrowawayPostgres::target(bool superuser) const {
  return superuser ? PgTarget{"127.0.0.1", port_, "postgres", "postgres", "tidemark_test"}
                   : PgTarget{"127.0.0.1", port_, "tidemark", "tidemark", "tidemark_test"};
}

void ThrowawayPostgres::servers_sh(const std::string& command) {
  const std::string out = dir_.file("servers-" + command + ".log");
  ChildProcess script({"/bin/bash", std::string(TIDEMARK_SOURCE_DIR) + "/scripts/servers.sh", command, "postgres"}, out,
                      out + ".err", false,
                      {"TIDEMARK_RUN_DIR=" + dir_.file("run"), "TIDEMARK_PG_DIR=" + dir_.file("postgres"),
                       "TIDEMARK_PG_PORT=" + port_, "TIDEMARK_SKIP_DEPS=1"});
  const auto status = script.wait_for_exit(std::chrono::seconds(120));
  if (status != 0)
    throw std::runtime_error("scripts/servers.sh " + command + " postgres (port " + port_ + ", dir " + dir_.path() +
                             ") " + (status ? "exited " + std::to_string(*status) : std::string("timed out")) + ":\n" +
                             read_file(out) + read_file(out + ".err") +
                             read_file(dir_.file("postgres/postgres.log")));
}

void ThrowawayPostgres::stop() noexcept {
  if (!started_) return;
  started_ = false;
  try {
    servers_sh("stop");
  } catch (const std::exception& e) {
    // The directory goes anyway (TempDir); a postmaster left running would show in the next start's port check.
    std::fprintf(stderr, "ThrowawayPostgres: %s\n", e.what());
  }
}

}  // namespace tidemark::test
