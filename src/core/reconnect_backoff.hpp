#pragma once
// The wait between a source's sessions after a lost connection: 1 s doubling to 30 s, back to 1 s after a
// session that stayed up for 30 s, and cut short by a stop request.

#include <algorithm>
#include <chrono>
#include <stop_token>
#include <thread>

namespace tidemark {

class ReconnectBackoff {
 public:
  using Clock = std::chrono::steady_clock;

  // Call when a session starts.
  void session_started() { session_start_ = Clock::now(); }

  // The delay before the next attempt (for the log line), resetting after a healthy session.
  std::chrono::seconds next_delay() {
    if (Clock::now() - session_start_ > kHealthySession) delay_ = std::chrono::seconds(1);
    return delay_;
  }

  // Sleeps the delay (waking every 100 ms for `stop`), then doubles it up to the maximum.
  void wait(const std::stop_token& stop) {
    for (auto waited = std::chrono::milliseconds(0); waited < delay_ && !stop.stop_requested();
         waited += std::chrono::milliseconds(100))
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    delay_ = std::min(delay_ * 2, kMaxDelay);
  }

 private:
  static constexpr std::chrono::seconds kMaxDelay{30};
  static constexpr std::chrono::seconds kHealthySession{30};
  std::chrono::seconds delay_{1};
  Clock::time_point session_start_ = Clock::now();
};

}  // namespace tidemark
