#include "throwaway_server.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
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

ThrowawayServer::ThrowawayServer(std::string service, Environment environment, std::string log)
    : port_(std::to_string(free_local_port())),
      service_(std::move(service)),
      environment_(std::move(environment)),
      log_(std::move(log)) {}

ThrowawayServer::~ThrowawayServer() { stop(); }

void ThrowawayServer::run(const std::string& command) {
  const std::string out = dir_.file("servers-" + command + ".log");
  std::vector<std::string> env = environment_(*this);
  env.push_back("TIDEMARK_RUN_DIR=" + dir_.file("run"));
  env.push_back("TIDEMARK_SKIP_DEPS=1");  // the packages are there: the shared servers run
  ChildProcess script({"/bin/bash", std::string(TIDEMARK_SOURCE_DIR) + "/scripts/servers.sh", command, service_}, out,
                      out + ".err", false, env);
  const auto status = script.wait_for_exit(std::chrono::seconds(120));
  if (status == 0) return;
  std::string settings;
  for (const auto& e : env) settings += " " + e;
  throw std::runtime_error("scripts/servers.sh " + command + " " + service_ + " (" + settings.substr(1) + ") " +
                           (status ? "exited " + std::to_string(*status) : std::string("timed out")) + ":\n" +
                           read_file(out) + read_file(out + ".err") + read_file(dir_.file(log_)));
}

void ThrowawayServer::start() {
  started_ = true;  // from here on a failure may leave a server behind: stop() handles "not running"
  try {
    run("start");
  } catch (...) {
    stop();
    throw;
  }
}

void ThrowawayServer::stop() noexcept {
  if (!started_) return;
  started_ = false;
  try {
    run("stop");
  } catch (const std::exception& e) {
    // The directory goes anyway (TempDir); a server left running would show in the next start's port check.
    std::fprintf(stderr, "ThrowawayServer: %s\n", e.what());
  }
}

}  // namespace tidemark::test
