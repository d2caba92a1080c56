// The daemon's conversation with systemd (Type=notify), observed on a real notification socket the
// test owns: READY, WATCHDOG, RELOADING, STOPPING, exactly as systemd would receive them.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "daemon_runner.hpp"
#include "dev_broker_runner.hpp"

namespace tidemark::test {
namespace {

using namespace std::chrono_literals;

class NotifySocket {
 public:
  explicit NotifySocket(const std::string& path) : path_(path) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) throw std::runtime_error("bind notify socket");
  }
  ~NotifySocket() {
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  // Every datagram received so far, each split into its NAME=value lines.
  std::vector<std::string> drain() {
    char buf[4096];
    for (;;) {
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) break;
      std::string msg(buf, static_cast<size_t>(n));
      size_t start = 0;
      while (start < msg.size()) {
        size_t end = msg.find('\n', start);
        if (end == std::string::npos) end = msg.size();
        lines_.push_back(msg.substr(start, end - start));
        start = end + 1;
      }
    }
    return lines_;
  }
  bool received(const std::string& line) {
    const auto all = drain();
    return std::find(all.begin(), all.end(), line) != all.end();
  }

 private:
  std::string path_;
  int fd_ = -1;
  std::vector<std::string> lines_;
};

TEST(SystemdNotify, ReadyWatchdogReloadingStopping) {
  DaemonRunner daemon("unused:1", GeneratorSettings{.total_events = 0, .rate_per_second = 50});
  daemon.write_config("sink:\n  type: stdout\n");
  NotifySocket notify(daemon.dir().file("notify.sock"));
  daemon.start("run", {"NOTIFY_SOCKET=" + daemon.dir().file("notify.sock"), "WATCHDOG_USEC=400000"});

  ASSERT_TRUE(wait_until([&] { return notify.received("READY=1"); }, 20s)) << daemon.stderr_text();
  // At half of 400 ms, a healthy daemon pings several times a second.
  std::this_thread::sleep_for(1200ms);
  const auto lines = notify.drain();
  EXPECT_GE(std::count(lines.begin(), lines.end(), "WATCHDOG=1"), 3);

  daemon.process().signal(SIGHUP);
  ASSERT_TRUE(wait_until([&] { return notify.received("RELOADING=1"); }, 10s)) << daemon.stderr_text();
  ASSERT_EQ(daemon.stop(SIGTERM), 0) << daemon.stderr_text();
  EXPECT_TRUE(notify.received("STOPPING=1"));
  // READY comes again after the reload.
  const auto all = notify.drain();
  EXPECT_GE(std::count(all.begin(), all.end(), "READY=1"), 2);
}

}  // namespace
}  // namespace tidemark::test

namespace tidemark::test {
namespace {

TEST(SystemdNotify, WatchdogKeepsPingingWhileKafkaIsDownAndSendsWait) {
  DaemonRunner daemon("", GeneratorSettings{.total_events = 0, .rate_per_second = 3000});
  DevBroker broker({daemon.name() + ".generator.t0:1"});
  daemon.write_config("sink:\n  type: kafka\n  kafka:\n    bootstrap_servers: " + broker.bootstrap() +
                      "\n    properties:\n      queue.buffering.max.messages: \"100\"\n");
  NotifySocket notify(daemon.dir().file("notify.sock"));
  daemon.start("run", {"NOTIFY_SOCKET=" + daemon.dir().file("notify.sock"), "WATCHDOG_USEC=600000"});
  ASSERT_TRUE(wait_until([&] { return notify.received("READY=1"); }, 20s)) << daemon.stderr_text();
  ASSERT_TRUE(wait_until([&] { return daemon.committed_sequence().value_or(0) > 500; }, 20s)) << daemon.stderr_text();

  broker.command("down all");
  std::this_thread::sleep_for(1000ms);  // by now the producer queue is full and send() is waiting
  const auto before = notify.drain();
  const auto pings_before = std::count(before.begin(), before.end(), "WATCHDOG=1");
  std::this_thread::sleep_for(2000ms);
  const auto after = notify.drain();
  // Backpressure is not a hang: systemd must keep hearing from us (every 300 ms here).
  EXPECT_GE(std::count(after.begin(), after.end(), "WATCHDOG=1") - pings_before, 4);
  broker.command("up all");
  EXPECT_EQ(daemon.stop(SIGTERM), 0) << daemon.stderr_text();
}

}  // namespace
}  // namespace tidemark::test
