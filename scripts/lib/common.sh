# shellcheck shell=bash
# Common helpers for Tidemark's server scripts. Source it; do not run it.
#
#   TIDEMARK_ROOT       repository root (derived from this file's location)
#   TIDEMARK_RUN_DIR    throwaway server state: data dirs, logs, pid files, env.sh
#                       (default $TIDEMARK_ROOT/.run; override from the environment)
#   TIDEMARK_CACHE_DIR  downloads kept across `clean` (Kafka jars)
#                       (default $TIDEMARK_ROOT/.cache; override from the environment)
#
# The scripts expect `set -euo pipefail` in the caller (scripts/servers.sh sets it).

if [[ -n "${_TIDEMARK_COMMON_SH:-}" ]]; then
    return 0
fi
_TIDEMARK_COMMON_SH=1

TIDEMARK_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)"
TIDEMARK_RUN_DIR="${TIDEMARK_RUN_DIR:-$TIDEMARK_ROOT/.run}"
TIDEMARK_CACHE_DIR="${TIDEMARK_CACHE_DIR:-$TIDEMARK_ROOT/.cache}"
export TIDEMARK_ROOT TIDEMARK_RUN_DIR TIDEMARK_CACHE_DIR

# ---------------------------------------------------------------------------
# Logging (all to stderr, so functions can still return values on stdout)
# ---------------------------------------------------------------------------

_log() {
    local level="$1"
    shift
    printf '[tidemark %s] %-5s %s\n' "$(date +%H:%M:%S)" "$level" "$*" >&2
}
log_info() { _log INFO "$@"; }
log_warn() { _log WARN "$@"; }
log_error() { _log ERROR "$@"; }
die() {
    _log ERROR "$@"
    exit 1
}

# Print the last lines of a log file to stderr (for failure reports).
show_log_tail() {
    local file="$1" lines="${2:-40}"
    if [[ -f "$file" ]]; then
        printf -- '----- last %s lines of %s -----\n' "$lines" "$file" >&2
        tail -n "$lines" "$file" >&2 || true
        printf -- '----- end of %s -----\n' "$file" >&2
    else
        log_warn "log file $file does not exist"
    fi
}

# ---------------------------------------------------------------------------
# Small utilities
# ---------------------------------------------------------------------------

# Seconds since the epoch, with fractions (for timing reports).
now_s() { date +%s.%N; }

# elapsed START -> "1.23" seconds since START (from now_s).
elapsed_since() { awk -v s="$1" -v e="$(now_s)" 'BEGIN { printf "%.1f", e - s }'; }

require_cmd() {
    local cmd
    for cmd in "$@"; do
        command -v "$cmd" >/dev/null 2>&1 || die "required command '$cmd' not found (run: scripts/servers.sh deps)"
    done
}

is_root() { [[ "$(id -u)" -eq 0 ]]; }

# pid_alive PID -> true when a process with that pid exists (and is not a zombie).
pid_alive() {
    local pid="$1" state
    [[ "$pid" =~ ^[0-9]+$ ]] || return 1
    kill -0 "$pid" 2>/dev/null || return 1
    state="$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null || true)"
    [[ "$state" != "Z" ]]
}

# pidfile_pid FILE -> prints the pid stored in FILE when that process is alive.
pidfile_pid() {
    local file="$1" pid
    [[ -f "$file" ]] || return 1
    pid="$(tr -dc '0-9' <"$file" 2>/dev/null || true)"
    pid_alive "$pid" || return 1
    printf '%s\n' "$pid"
}

# wait_pid_exit PID TIMEOUT -> true when PID is gone within TIMEOUT seconds.
wait_pid_exit() {
    local pid="$1" timeout="$2" deadline
    deadline=$(($(date +%s) + timeout))
    while pid_alive "$pid"; do
        (($(date +%s) >= deadline)) && return 1
        sleep 0.2
    done
    return 0
}

# terminate_pid PID NAME [TIMEOUT]: SIGTERM, wait, then SIGKILL.
terminate_pid() {
    local pid="$1" name="$2" timeout="${3:-30}"
    pid_alive "$pid" || return 0
    kill -TERM "$pid" 2>/dev/null || true
    if ! wait_pid_exit "$pid" "$timeout"; then
        log_warn "$name (pid $pid) did not stop within ${timeout}s after SIGTERM; sending SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
        wait_pid_exit "$pid" 10 || die "$name (pid $pid) survived SIGKILL"
    fi
}

# port_open HOST PORT -> true when a TCP connection to HOST:PORT succeeds.
port_open() {
    local host="$1" port="$2"
    # shellcheck disable=SC2016 # expanded by the inner bash
    timeout 2 bash -c 'exec 3<>"/dev/tcp/$1/$2"' _ "$host" "$port" 2>/dev/null
}

# wait_for_port HOST PORT TIMEOUT [PID]: waits until HOST:PORT accepts TCP connections.
# Fails after TIMEOUT seconds, or as soon as PID (when given) has exited.
wait_for_port() {
    local host="$1" port="$2" timeout="$3" pid="${4:-}" deadline
    deadline=$(($(date +%s) + timeout))
    until port_open "$host" "$port"; do
        if [[ -n "$pid" ]] && ! pid_alive "$pid"; then
            log_error "process $pid exited while waiting for $host:$port"
            return 1
        fi
        if (($(date +%s) >= deadline)); then
            log_error "timed out after ${timeout}s waiting for $host:$port"
            return 1
        fi
        sleep 0.2
    done
    return 0
}

# Unix socket paths are limited to 107 bytes. socket_dir_for NAME PREFERRED prints PREFERRED
# when a socket file in it would fit, else a short per-checkout directory under /tmp.
socket_dir_for() {
    local name="$1" preferred="$2" hash
    if ((${#preferred} <= 80)); then
        printf '%s\n' "$preferred"
    else
        hash="$(printf '%s' "$TIDEMARK_RUN_DIR" | md5sum | cut -c1-8)"
        printf '/tmp/tidemark-%s-%s\n' "$hash" "$name"
    fi
}

# Is a server selected? in_list WORD LIST...
in_list() {
    local word="$1" item
    shift
    for item in "$@"; do
        [[ "$item" == "$word" ]] && return 0
    done
    return 1
}
