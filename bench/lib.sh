# shellcheck shell=bash
# Helpers shared by the benchmark scripts (sourced after scripts/lib/common.sh).

# Stops the daemon started in the background as $daemon_pid: SIGTERM, up to 60 s for its flush, then
# SIGKILL; reaps it and clears daemon_pid.
stop_daemon() {
    [[ -n "$daemon_pid" ]] || return 0
    kill -TERM "$daemon_pid" 2>/dev/null || true
    local i
    for ((i = 0; i < 600; i++)); do
        kill -0 "$daemon_pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$daemon_pid" 2>/dev/null && kill -KILL "$daemon_pid" 2>/dev/null
    wait "$daemon_pid" 2>/dev/null || true
    daemon_pid=""
}
