#pragma once
// Runs tidemark-dev-broker (librdkafka's mock cluster) as a child process and drives its fault commands.

#include <gtest/gtest.h>
#include <signal.h>

#include <memory>
#include <string>
#include <vector>

#include "process.hpp"

namespace tidemark::test {

using namespace std::chrono_literals;

class DevBroker {
 public:
  explicit DevBroker(const std::vector<std::string>& topics) {
    std::vector<std::string> argv{TIDEMARK_DEV_BROKER_BINARY, "--bootstrap-file", dir_.file("bootstrap")};
    for (const auto& t : topics) {
      argv.push_back("--topic");
      argv.push_back(t);
    }
    process_ = std::make_unique<ChildProcess>(argv, dir_.file("out"), dir_.file("err"), true);
    if (!wait_until([&] { return !read_file(dir_.file("bootstrap")).empty(); }, 20s))
      throw std::runtime_error("dev broker did not start: " + read_file(dir_.file("err")));
    bootstrap_ = read_file(dir_.file("bootstrap"));
    while (!bootstrap_.empty() && (bootstrap_.back() == '\n' || bootstrap_.back() == ' ')) bootstrap_.pop_back();
  }
  ~DevBroker() { process_->signal(SIGTERM); }

  const std::string& bootstrap() const { return bootstrap_; }

  // Sends one control command and waits for its answer.
  void command(const std::string& line) {
    const size_t answers_before = answers();
    process_->write_stdin(line + "\n");
    ASSERT_TRUE(wait_until([&] { return answers() > answers_before; }, 10s)) << "no answer to " << line;
    const std::string out = read_file(dir_.file("out"));
    ASSERT_EQ(out.find("error:"), std::string::npos) << out;
  }

 private:
  size_t answers() const {
    const std::string out = read_file(dir_.file("out"));
    size_t n = 0;
    for (size_t at = out.find("ok\n"); at != std::string::npos; at = out.find("ok\n", at + 1)) ++n;
    return n;
  }

  TempDir dir_;
  std::unique_ptr<ChildProcess> process_;
  std::string bootstrap_;
};

}  // namespace tidemark::test
