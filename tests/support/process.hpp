#pragma once
// Runs a program as a child process for tests: the real daemon binary, the dev broker.

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <sys/types.h>

namespace tidemark::test {

class ChildProcess {
 public:
  // stdout and stderr go to the given files; with `pipe_stdin` the child's stdin is a pipe we write to.
  // `extra_env` entries ("NAME=value") are added to the inherited environment.
  ChildProcess(const std::vector<std::string>& argv, const std::string& stdout_path, const std::string& stderr_path,
               bool pipe_stdin = false, const std::vector<std::string>& extra_env = {});
  ~ChildProcess();  // kills (SIGKILL) and reaps a child that is still running
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  void signal(int sig) const;
  void write_stdin(const std::string& text) const;
  // The exit status (>= 0), or -signal when killed by a signal; nullopt when still running at the timeout.
  std::optional<int> wait_for_exit(std::chrono::milliseconds timeout);
  bool running();

 private:
  pid_t pid_ = -1;
  int stdin_fd_ = -1;
  std::optional<int> status_;
};

std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& text);

// Polls `condition` every 50 ms until it holds or `timeout` passes.
bool wait_until(const std::function<bool()>& condition, std::chrono::milliseconds timeout);

// A fresh directory under /tmp, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Joins threads still running when a test leaves early (a failed ASSERT, an exception): a joinable
// std::thread destroyed would end the whole test program.
struct JoinAtExit {
  std::vector<std::thread*> threads;
  ~JoinAtExit() {
    for (auto* t : threads)
      if (t->joinable()) t->join();
  }
};

}  // namespace tidemark::test
