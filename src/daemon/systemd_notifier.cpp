#include "daemon/systemd_notifier.hpp"

#include <systemd/sd-daemon.h>

namespace tidemark {

SystemdNotifier::SystemdNotifier() {
  uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) > 0 && usec > 0) watchdog_interval_ = std::chrono::microseconds(usec);
}

void SystemdNotifier::notify(const std::string& state) const { sd_notify(0, state.c_str()); }
void SystemdNotifier::ready() const { notify("READY=1\nSTATUS=streaming"); }
void SystemdNotifier::reloading() const { notify("RELOADING=1\nSTATUS=reloading configuration"); }
void SystemdNotifier::stopping() const { notify("STOPPING=1\nSTATUS=stopping: flushing to Kafka"); }
void SystemdNotifier::watchdog() const { notify("WATCHDOG=1"); }
void SystemdNotifier::status(const std::string& text) const { notify("STATUS=" + text); }

}  // namespace tidemark
