# shellcheck shell=bash
# Helpers shared by the benchmark scripts (sourced after scripts/lib/common.sh).

# Stops the daemon started in the background as $daemon_pid: SIGTERM, up to 60 s for its flush, then
# SIGKILL; reaps it and clears daemon_pid.
stop_daemon() {
    [[ -n "$daemon_pid" ]] || return 0
    terminate "$daemon_pid" 600
    daemon_pid=""
}

# terminate PID TENTHS: SIGTERM, up to TENTHS tenths of a second to exit, then SIGKILL; reaps it.
terminate() {
    kill -TERM "$1" 2>/dev/null || true
    local i
    for ((i = 0; i < $2; i++)); do
        kill -0 "$1" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$1" 2>/dev/null; then kill -KILL "$1" 2>/dev/null || true; fi
    wait "$1" 2>/dev/null || true
}
