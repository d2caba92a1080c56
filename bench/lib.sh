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

# nap SECONDS: a poll loop's pause without forking `sleep` (a fork and an exec per turn, taken from the
# machine being measured): a read with a timeout on a pipe nothing writes to.
nap() {
    [[ -n "${NAP_FD:-}" ]] || exec {NAP_FD}<> <(:)
    read -r -t "$1" -u "$NAP_FD" _ || true
}

CLK_TCK="$(getconf CLK_TCK)"

# CPU ticks (user + system) of a process or thread (/proc/<pid>[/task/<tid>]), without forking.
proc_ticks() {
    local line f
    { read -r line <"/proc/$1/stat"; } 2>/dev/null || { echo 0; return; }
    read -ra f <<<"${line##*) }"
    echo $((f[11] + f[12]))
}

# CPU ticks of a whole server of $TIDEMARK_RUN_DIR (mariadb | postgres): MariaDB's one process; PostgreSQL's
# postmaster with its children, live (ps --ppid) and exited (the postmaster's cutime + cstime: backends of
# clients that have left).
server_ticks() {
    local pid line f total c
    if [[ "$1" == mariadb ]]; then
        pid="$(cat "$TIDEMARK_RUN_DIR/mariadb/mariadbd.pid" 2>/dev/null)" || { echo 0; return; }
        proc_ticks "$pid"
        return
    fi
    pid="$(head -n 1 "$TIDEMARK_RUN_DIR/postgres/data/postmaster.pid" 2>/dev/null)" || { echo 0; return; }
    { read -r line <"/proc/$pid/stat"; } 2>/dev/null || { echo 0; return; }
    read -ra f <<<"${line##*) }"
    total=$((f[11] + f[12] + f[13] + f[14]))
    for c in $(ps --ppid "$pid" -o pid= 2>/dev/null); do total=$((total + $(proc_ticks "$c"))); done
    echo "$total"
}

# "busy total" ticks of the whole machine (all cores) from /proc/stat: busy excludes idle and iowait.
machine_ticks() {
    local cpu user nice system idle iowait irq softirq steal rest
    read -r cpu user nice system idle iowait irq softirq steal rest </proc/stat
    echo "$((user + nice + system + irq + softirq + steal)) $((user + nice + system + idle + iowait + irq + softirq + steal))"
}

# The machine's CPU use in percent since MARK (a machine_ticks reading), rounded.
busy_since() {
    local b0 t0 b1 t1
    read -r b0 t0 <<<"$1"
    read -r b1 t1 <<<"$(machine_ticks)"
    echo $(((b1 - b0) * 100 / (t1 - t0 > 0 ? t1 - t0 : 1)))
}

# "cpu_some io_full" stall microseconds of the whole machine so far (/proc/pressure; "0 0" without PSI):
# cpu_some = some runnable task waited for a core; io_full = every non-idle task waited for I/O.
pressure_totals() {
    local c="" i=""
    { c="$(</proc/pressure/cpu)" && i="$(</proc/pressure/io)"; } 2>/dev/null || { echo "0 0"; return; }
    [[ "$c" =~ some[^$'\n']*total=([0-9]+) ]] && c="${BASH_REMATCH[1]}" || c=0
    [[ "$i" =~ full[^$'\n']*total=([0-9]+) ]] && i="${BASH_REMATCH[1]}" || i=0
    echo "$c $i"
}

# "cpu_some%/io_full%" of the wall time since MARK (a pressure_totals reading) and T0_US (its time, µs).
pressure_since() {
    local c0 i0 c1 i1 wall
    read -r c0 i0 <<<"$1"
    read -r c1 i1 <<<"$(pressure_totals)"
    wall=$((${EPOCHREALTIME/./} - $2))
    ((wall > 0)) || wall=1
    echo "$(((c1 - c0) * 100 / wall))/$(((i1 - i0) * 100 / wall))"
}
