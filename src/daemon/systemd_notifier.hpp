#pragma once
// Tells systemd (Type=notify) what state the daemon is in; does nothing when not run by systemd.

#include <chrono>
#include <optional>
#include <string>

namespace tidemark {

class SystemdNotifier {
 public:
  SystemdNotifier();
  void ready() const;
  void reloading() const;
  void stopping() const;
  void watchdog() const;
  void status(const std::string& text) const;
  // Interval at which watchdog() must be called, when the unit sets WatchdogSec.
  std::optional<std::chrono::microseconds> watchdog_interval() const { return watchdog_interval_; }

 private:
  void notify(const std::string& state) const;
  std::optional<std::chrono::microseconds> watchdog_interval_;
};

}  // namespace tidemark
