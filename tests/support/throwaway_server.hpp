#pragma once
// A throwaway database server for tests that need server settings the shared one must not have, made by
// the project's own scripts/servers.sh (the same accounts and database as the shared servers) with its own
// run directory under /tmp and a free port, so the shared servers of .run/ are never touched. What is the
// same for both databases lives here; ThrowawayMariaDb and ThrowawayPostgres add their settings and accounts.

#include <functional>
#include <string>
#include <vector>

#include "process.hpp"

namespace tidemark::test {

class ThrowawayServer {
 public:
  // `service` is servers.sh's name for it ("mariadb", "postgres"); `environment(server)` gives the
  // variables ("NAME=value") that point the script at this server's port and directory; `log` is the
  // server log (relative to the directory) shown when the script fails. Nothing starts until start().
  using Environment = std::function<std::vector<std::string>(const ThrowawayServer& server)>;
  ThrowawayServer(std::string service, Environment environment, std::string log);
  // Stops the server if it was started and deletes its directory.
  ~ThrowawayServer();
  ThrowawayServer(const ThrowawayServer&) = delete;
  ThrowawayServer& operator=(const ThrowawayServer&) = delete;

  // Runs scripts/servers.sh <command> <service> against this server; throws with the script's output and
  // the server log on failure. A failed start() stops what it may have left running.
  void run(const std::string& command);
  void start();
  void stop() noexcept;

  const std::string& port() const { return port_; }
  const std::string& directory() const { return dir_.path(); }
  std::string file(const std::string& name) const { return dir_.file(name); }

 private:
  TempDir dir_;
  std::string port_;
  std::string service_;
  Environment environment_;
  std::string log_;
  bool started_ = false;
};

// A TCP port on 127.0.0.1 that nothing listens on right now.
int free_local_port();

}  // namespace tidemark::test
