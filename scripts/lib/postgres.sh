# shellcheck shell=bash
# shellcheck disable=SC2034 # settings read by scripts/servers.sh and callers
# Throwaway PostgreSQL cluster on 127.0.0.1 for tests and the demo. Source it after common.sh.
#
#   start_postgres    initdb on first use, start with `pg_ctl -w`, (re)apply roles and database.
#                     No-op when already running.
#   stop_postgres     `pg_ctl -m fast -w stop`; signals as fallback.
#   postgres_running  true when the cluster of this run dir is up.
#
# Where the cluster lives: initdb and postgres refuse to run as root, so as root they run as the
# `postgres` OS user, which must be able to reach the data directory. The cluster goes to
# $TIDEMARK_RUN_DIR/postgres when the postgres user can traverse $TIDEMARK_RUN_DIR (true for
# /work/..., /tmp/..., /srv/...); otherwise (a checkout under /root, mode 0700) it goes to
# /tmp/tidemark-<hash of run dir>-pgdata and $TIDEMARK_RUN_DIR/postgres becomes a symlink to it.
# No permissions of parent directories are changed. TIDEMARK_PG_DIR overrides the location.
#
# Layout: <pg dir>/data (postgres:postgres, 0700), <pg dir>/sock (unix socket, 0755),
#         <pg dir>/postgres.log.
# Accounts: local socket = trust for everyone; TCP = scram-sha-256:
#   tidemark / tidemark   LOGIN REPLICATION, owner of database tidemark_test
#   postgres / postgres   superuser

TIDEMARK_PG_HOST=127.0.0.1
TIDEMARK_PG_PORT="${TIDEMARK_PG_PORT:-15432}"
TIDEMARK_PG_USER=tidemark
TIDEMARK_PG_PASSWORD=tidemark
TIDEMARK_PG_SUPERUSER=postgres
TIDEMARK_PG_SUPERUSER_PASSWORD=postgres
TIDEMARK_PG_DATABASE=tidemark_test
POSTGRES_START_TIMEOUT="${POSTGRES_START_TIMEOUT:-60}"

# Resolved by _pg_resolve_paths.
PG_DIR=""
PG_DATA_DIR=""
PG_SOCKET_DIR=""
PG_LOG_FILE=""
PG_BINDIR=""

_pg_os_user() {
    if is_root; then echo postgres; else id -un; fi
}

# Runs a command as the OS user that owns the cluster.
_pg_as_owner() {
    if is_root; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

_pg_find_bindir() {
    if [[ -n "${TIDEMARK_PG_BINDIR:-}" ]]; then
        printf '%s\n' "$TIDEMARK_PG_BINDIR"
        return 0
    fi
    local dir
    dir="$(find /usr/lib/postgresql -maxdepth 3 -path '*/bin/initdb' -printf '%h\n' 2>/dev/null | sort -V | tail -n 1)"
    [[ -n "$dir" ]] || die "postgres: no /usr/lib/postgresql/*/bin/initdb (run: scripts/servers.sh deps)"
    printf '%s\n' "$dir"
}

_pg_owner_can_traverse() {
    local dir="$1"
    if is_root; then
        runuser -u postgres -- test -x "$dir" 2>/dev/null
    else
        test -x "$dir"
    fi
}

# _pg_resolve_paths [create]: sets PG_DIR & co. Only with `create` does it pick (and make) the
# /tmp fallback for a new cluster; otherwise a missing cluster resolves to the default place.
_pg_resolve_paths() {
    local link="$TIDEMARK_RUN_DIR/postgres"
    if [[ -n "${TIDEMARK_PG_DIR:-}" ]]; then
        PG_DIR="$TIDEMARK_PG_DIR"
    elif [[ -L "$link" ]]; then
        PG_DIR="$(readlink "$link")"
    elif [[ -d "$link" || "${1:-}" != create ]]; then
        PG_DIR="$link"
    else
        mkdir -p "$TIDEMARK_RUN_DIR"
        if _pg_owner_can_traverse "$TIDEMARK_RUN_DIR"; then
            PG_DIR="$link"
        else
            PG_DIR="/tmp/tidemark-$(printf '%s' "$TIDEMARK_RUN_DIR" | md5sum | cut -c1-8)-pgdata"
            log_info "postgres: user postgres cannot reach $TIDEMARK_RUN_DIR; using $PG_DIR (symlinked from $link)"
            ln -sfn "$PG_DIR" "$link"
        fi
    fi
    PG_DATA_DIR="$PG_DIR/data"
    PG_SOCKET_DIR="$(socket_dir_for pgsock "$PG_DIR/sock")"
    PG_LOG_FILE="$PG_DIR/postgres.log"
    PG_BINDIR="$(_pg_find_bindir)"
}

# Prints the postmaster pid when it is alive (a killed postmaster can linger as a zombie until
# init reaps it; pg_ctl status would still call that running).
_pg_postmaster_pid() {
    local pid
    pid="$(head -n 1 "$PG_DATA_DIR/postmaster.pid" 2>/dev/null || true)"
    pid_alive "$pid" || return 1
    printf '%s\n' "$pid"
}

postgres_running() {
    _pg_resolve_paths
    [[ -f "$PG_DATA_DIR/PG_VERSION" ]] || return 1
    _pg_postmaster_pid >/dev/null || return 1
    _pg_as_owner "$PG_BINDIR/pg_ctl" -D "$PG_DATA_DIR" status >/dev/null 2>&1
}

# The lock files a killed server leaves (postmaster.pid, the socket's .lock) block the next start
# while the dead pid is still a zombie. Removes them when the pid they name is not alive.
_pg_remove_stale_locks() {
    local lock="$PG_DATA_DIR/postmaster.pid"
    local sock_lock="$PG_SOCKET_DIR/.s.PGSQL.$TIDEMARK_PG_PORT.lock" pid
    if [[ -f "$lock" ]] && ! _pg_postmaster_pid >/dev/null; then
        log_warn "postgres: removing stale $lock (server was not shut down cleanly)"
        rm -f "$lock"
    fi
    if [[ -f "$sock_lock" ]]; then
        pid="$(head -n 1 "$sock_lock" 2>/dev/null || true)"
        if ! pid_alive "$pid"; then
            rm -f "$sock_lock" "$PG_SOCKET_DIR/.s.PGSQL.$TIDEMARK_PG_PORT"
        fi
    fi
}

# psql as the superuser over the unix socket (trust).
_pg_psql_super() {
    "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h "$PG_SOCKET_DIR" -p "$TIDEMARK_PG_PORT" \
        -U postgres -d "${1:-postgres}"
}

_pg_make_dirs() {
    local owner
    owner="$(_pg_os_user)"
    mkdir -p "$PG_DIR" "$PG_SOCKET_DIR"
    chown "$owner:" "$PG_DIR" "$PG_SOCKET_DIR"
    chmod 0755 "$PG_DIR" "$PG_SOCKET_DIR"
}

_pg_initdb() {
    local marker="$PG_DIR/.tidemark-initialised" major
    major="$(basename "$(dirname "$PG_BINDIR")")"
    if [[ -f "$marker" && -f "$PG_DATA_DIR/PG_VERSION" ]]; then
        if [[ "$(cat "$PG_DATA_DIR/PG_VERSION")" == "$major" ]]; then
            return 0
        fi
        log_warn "postgres: data dir is for PostgreSQL $(cat "$PG_DATA_DIR/PG_VERSION"), binaries are $major; re-initialising"
    elif [[ -e "$PG_DATA_DIR" ]]; then
        log_warn "postgres: $PG_DATA_DIR is an unfinished initialisation; re-initialising"
    fi
    rm -rf "$PG_DATA_DIR" "$marker"

    log_info "postgres: initdb into $PG_DATA_DIR"
    local owner pwfile="$PG_DIR/.pwfile"
    owner="$(_pg_os_user)"
    printf '%s\n' "$TIDEMARK_PG_SUPERUSER_PASSWORD" >"$pwfile"
    chown "$owner:" "$pwfile"
    chmod 0600 "$pwfile"
    if ! _pg_as_owner "$PG_BINDIR/initdb" -D "$PG_DATA_DIR" -U postgres --pwfile="$pwfile" \
        --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 --no-sync \
        >"$PG_DIR/initdb.log" 2>&1; then
        rm -f "$pwfile"
        show_log_tail "$PG_DIR/initdb.log"
        die "postgres: initdb failed"
    fi
    rm -f "$pwfile"
    # Our settings live in tidemark.conf, rewritten on every start (so port changes apply).
    printf "\n# Tidemark test settings (rewritten by scripts/lib/postgres.sh on every start)\ninclude_if_exists = 'tidemark.conf'\n" \
        >>"$PG_DATA_DIR/postgresql.conf"
    touch "$marker"
}

_pg_write_conf() {
    local conf="$PG_DATA_DIR/tidemark.conf"
    cat >"$conf" <<EOF
# Written by scripts/lib/postgres.sh on every start; edits are lost.
listen_addresses = '127.0.0.1'
port = $TIDEMARK_PG_PORT
unix_socket_directories = '$PG_SOCKET_DIR'
wal_level = logical
max_replication_slots = 16
max_wal_senders = 16
# Throwaway cluster: skip fsync (a killed server still loses nothing; an OS crash would).
fsync = off
log_min_messages = warning
log_connections = off
log_checkpoints = off
log_line_prefix = '%m [%p] %q%u@%d '
EOF
    chown "$(_pg_os_user):" "$conf"
}

_pg_setup_accounts() {
    local user="$TIDEMARK_PG_USER" pw="$TIDEMARK_PG_PASSWORD" db="$TIDEMARK_PG_DATABASE"
    _pg_psql_super postgres <<EOF || die "postgres: creating the test role and database failed"
DO \$\$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$user') THEN
        CREATE ROLE $user LOGIN REPLICATION PASSWORD '$pw';
    END IF;
END
\$\$;
ALTER ROLE $user LOGIN REPLICATION PASSWORD '$pw';
ALTER ROLE postgres PASSWORD '$TIDEMARK_PG_SUPERUSER_PASSWORD';
SELECT 'CREATE DATABASE $db OWNER $user' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '$db')
\gexec
EOF
}

start_postgres() {
    _pg_resolve_paths create
    is_root && require_cmd runuser
    if postgres_running; then
        log_info "postgres: already running on 127.0.0.1:$TIDEMARK_PG_PORT (data $PG_DATA_DIR)"
        return 0
    fi
    if port_open 127.0.0.1 "$TIDEMARK_PG_PORT"; then
        die "postgres: port $TIDEMARK_PG_PORT is taken by another process (set TIDEMARK_PG_PORT)"
    fi
    local start
    start="$(now_s)"
    _pg_make_dirs
    _pg_initdb
    _pg_write_conf
    _pg_remove_stale_locks
    # setsid: the postmaster gets its own session and outlives this shell; -w waits for readiness.
    local -a as_owner=()
    is_root && as_owner=(runuser -u postgres --)
    if ! setsid -w "${as_owner[@]}" "$PG_BINDIR/pg_ctl" -D "$PG_DATA_DIR" -l "$PG_LOG_FILE" \
        -w -t "$POSTGRES_START_TIMEOUT" start >"$PG_DIR/pg_ctl.out" 2>&1; then
        cat "$PG_DIR/pg_ctl.out" >&2 || true
        show_log_tail "$PG_LOG_FILE"
        die "postgres: pg_ctl start failed"
    fi
    wait_for_port 127.0.0.1 "$TIDEMARK_PG_PORT" 10 || die "postgres: port $TIDEMARK_PG_PORT not open"
    _pg_setup_accounts
    log_info "postgres: ready on 127.0.0.1:$TIDEMARK_PG_PORT (socket dir $PG_SOCKET_DIR) in $(elapsed_since "$start")s"
}

stop_postgres() {
    _pg_resolve_paths
    if ! postgres_running; then
        log_info "postgres: not running"
        return 0
    fi
    log_info "postgres: stopping"
    if ! _pg_as_owner "$PG_BINDIR/pg_ctl" -D "$PG_DATA_DIR" -m fast -w -t 60 stop >/dev/null 2>&1; then
        local pid
        pid="$(_pg_postmaster_pid || true)"
        log_warn "postgres: pg_ctl stop failed; signalling postmaster ${pid:-?}"
        [[ -n "$pid" ]] && terminate_pid "$pid" postgres 30
    fi
    log_info "postgres: stopped"
}
