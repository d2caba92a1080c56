# shellcheck shell=bash
# shellcheck disable=SC2034 # settings read by scripts/servers.sh and callers
# Throwaway MariaDB server on 127.0.0.1 for tests and the demo. Source it after common.sh.
#
#   start_mariadb   initialise $TIDEMARK_RUN_DIR/mariadb/data on first use, start mariadbd detached,
#                   wait until it answers, (re)apply the test database and users. No-op if running.
#   stop_mariadb    clean shutdown via mariadb-admin; SIGTERM/SIGKILL of the pid as fallback.
#   mariadb_running true when the server of this run dir is up.
#
# TIDEMARK_MARIADB_EXTRA_ARGS: extra mariadbd options (split on whitespace), appended after the defaults
# below so they override them, e.g. "--skip-log-bin" or "--binlog-format=MIXED" (tests of the checks).
#
# Accounts (over TCP on 127.0.0.1:$TIDEMARK_MYSQL_PORT):
#   tidemark / tidemark  @'%' and @'127.0.0.1' (and @localhost for the socket):
#                        REPLICATION SLAVE, REPLICATION CLIENT (= BINLOG MONITOR) on *.*;
#                        SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, ALTER, INDEX on tidemark_test.*
#   root / root          @'127.0.0.1' and @'::1': all privileges. root@localhost (the socket) also
#                        accepts the OS root user without a password (unix_socket).

TIDEMARK_MYSQL_HOST=127.0.0.1
TIDEMARK_MYSQL_PORT="${TIDEMARK_MYSQL_PORT:-13306}"
TIDEMARK_MYSQL_USER=tidemark
TIDEMARK_MYSQL_PASSWORD=tidemark
TIDEMARK_MYSQL_ROOT_PASSWORD=root
TIDEMARK_MYSQL_DATABASE=tidemark_test

MARIADB_DIR="$TIDEMARK_RUN_DIR/mariadb"
MARIADB_DATA_DIR="$MARIADB_DIR/data"
MARIADB_PID_FILE="$MARIADB_DIR/mariadbd.pid"
MARIADB_LOG_FILE="$MARIADB_DIR/mariadbd.log"
MARIADB_SOCKET="$(socket_dir_for mysock "$MARIADB_DIR")/mariadbd.sock"
MARIADB_START_TIMEOUT="${MARIADB_START_TIMEOUT:-60}"
# Written after mariadb-install-db finished: a data dir without it is a half-done init.
_MARIADB_INIT_MARKER="$MARIADB_DATA_DIR/.tidemark-initialised"

mariadb_running() {
    pidfile_pid "$MARIADB_PID_FILE" >/dev/null
}

# Runs SQL as root over the socket: as the OS root user via unix_socket (or the empty password of
# a fresh data dir), else with the root password.
_mariadb_root_sql() {
    local sql="$1"
    if mariadb --no-defaults --socket="$MARIADB_SOCKET" -uroot --batch -e 'SELECT 1' >/dev/null 2>&1; then
        mariadb --no-defaults --socket="$MARIADB_SOCKET" -uroot --batch -e "$sql"
    else
        mariadb --no-defaults --socket="$MARIADB_SOCKET" -uroot -p"$TIDEMARK_MYSQL_ROOT_PASSWORD" \
            --batch -e "$sql"
    fi
}

_mariadb_admin() {
    if mariadb-admin --no-defaults --socket="$MARIADB_SOCKET" -uroot "$@" 2>/dev/null; then
        return 0
    fi
    mariadb-admin --no-defaults --socket="$MARIADB_SOCKET" -uroot -p"$TIDEMARK_MYSQL_ROOT_PASSWORD" "$@" 2>/dev/null
}

_mariadb_init_datadir() {
    if [[ -f "$_MARIADB_INIT_MARKER" ]]; then
        return 0
    fi
    if [[ -d "$MARIADB_DATA_DIR" ]]; then
        log_warn "mariadb: $MARIADB_DATA_DIR is an unfinished initialisation; re-initialising"
        rm -rf "$MARIADB_DATA_DIR"
    fi
    mkdir -p "$MARIADB_DATA_DIR"
    log_info "mariadb: initialising data directory $MARIADB_DATA_DIR"
    local -a user_opt=()
    is_root && user_opt=(--user=root)
    if ! mariadb-install-db --no-defaults "${user_opt[@]}" --datadir="$MARIADB_DATA_DIR" \
        --auth-root-authentication-method=normal --skip-test-db \
        >"$MARIADB_DIR/install-db.log" 2>&1; then
        show_log_tail "$MARIADB_DIR/install-db.log"
        die "mariadb: mariadb-install-db failed"
    fi
    touch "$_MARIADB_INIT_MARKER"
}

_mariadb_launch() {
    local -a user_opt=() extra_args=()
    is_root && user_opt=(--user=root)
    read -r -a extra_args <<<"${TIDEMARK_MARIADB_EXTRA_ARGS:-}"
    mkdir -p "$(dirname "$MARIADB_SOCKET")"
    rm -f "$MARIADB_PID_FILE" "$MARIADB_SOCKET"
    # --no-defaults must come first. setsid: own session, so the server outlives this shell.
    setsid mariadbd --no-defaults "${user_opt[@]}" \
        --datadir="$MARIADB_DATA_DIR" \
        --socket="$MARIADB_SOCKET" \
        --pid-file="$MARIADB_PID_FILE" \
        --log-error="$MARIADB_LOG_FILE" \
        --bind-address=127.0.0.1 \
        --port="$TIDEMARK_MYSQL_PORT" \
        --skip-name-resolve \
        --server-id=1 \
        --log-bin="$MARIADB_DATA_DIR/mysql-bin" \
        --binlog-format=ROW \
        --binlog-row-image=FULL \
        --binlog-row-metadata=FULL \
        --binlog-checksum=CRC32 \
        --log-slave-updates=1 \
        --gtid-strict-mode=1 \
        --innodb-buffer-pool-size=64M \
        --innodb-log-file-size=48M \
        --max-connections=200 \
        --character-set-server=utf8mb4 \
        --collation-server=utf8mb4_general_ci \
        "${extra_args[@]}" \
        </dev/null >>"$MARIADB_LOG_FILE" 2>&1 &
    _MARIADB_LAUNCH_PID=$!
}

_mariadb_wait_ready() {
    local deadline
    deadline=$(($(date +%s) + MARIADB_START_TIMEOUT))
    until _mariadb_admin ping >/dev/null; do
        if ! pid_alive "$_MARIADB_LAUNCH_PID"; then
            show_log_tail "$MARIADB_LOG_FILE"
            die "mariadb: mariadbd exited during startup"
        fi
        if (($(date +%s) >= deadline)); then
            show_log_tail "$MARIADB_LOG_FILE"
            die "mariadb: not answering after ${MARIADB_START_TIMEOUT}s"
        fi
        sleep 0.2
    done
    wait_for_port 127.0.0.1 "$TIDEMARK_MYSQL_PORT" 10 "$_MARIADB_LAUNCH_PID" ||
        die "mariadb: port $TIDEMARK_MYSQL_PORT not open"
}

# Idempotent: run on every start, so a half-finished earlier setup is completed.
_mariadb_setup_accounts() {
    local db="$TIDEMARK_MYSQL_DATABASE" user="$TIDEMARK_MYSQL_USER" pw="$TIDEMARK_MYSQL_PASSWORD"
    local rootpw="$TIDEMARK_MYSQL_ROOT_PASSWORD" host sql
    sql="CREATE DATABASE IF NOT EXISTS \`$db\` CHARACTER SET utf8mb4;"
    for host in '%' '127.0.0.1' 'localhost'; do
        sql+="
CREATE USER IF NOT EXISTS '$user'@'$host' IDENTIFIED BY '$pw';
ALTER USER '$user'@'$host' IDENTIFIED BY '$pw';
GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO '$user'@'$host';
GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, ALTER, INDEX ON \`$db\`.* TO '$user'@'$host';"
    done
    for host in '127.0.0.1' '::1'; do
        sql+="
CREATE USER IF NOT EXISTS 'root'@'$host' IDENTIFIED BY '$rootpw';
ALTER USER 'root'@'$host' IDENTIFIED BY '$rootpw';
GRANT ALL PRIVILEGES ON *.* TO 'root'@'$host' WITH GRANT OPTION;"
    done
    sql+="
ALTER USER 'root'@'localhost' IDENTIFIED VIA unix_socket OR mysql_native_password USING PASSWORD('$rootpw');
FLUSH PRIVILEGES;"
    _mariadb_root_sql "$sql" || die "mariadb: creating the test database and users failed"
}

start_mariadb() {
    require_cmd mariadbd mariadb mariadb-admin mariadb-install-db
    if mariadb_running; then
        log_info "mariadb: already running (pid $(pidfile_pid "$MARIADB_PID_FILE")) on 127.0.0.1:$TIDEMARK_MYSQL_PORT"
        return 0
    fi
    if port_open 127.0.0.1 "$TIDEMARK_MYSQL_PORT"; then
        die "mariadb: port $TIDEMARK_MYSQL_PORT is taken by another process (set TIDEMARK_MYSQL_PORT)"
    fi
    local start
    start="$(now_s)"
    mkdir -p "$MARIADB_DIR"
    _mariadb_init_datadir
    _mariadb_launch
    _mariadb_wait_ready
    _mariadb_setup_accounts
    log_info "mariadb: ready on 127.0.0.1:$TIDEMARK_MYSQL_PORT (socket $MARIADB_SOCKET) in $(elapsed_since "$start")s"
}

stop_mariadb() {
    local pid
    if ! pid="$(pidfile_pid "$MARIADB_PID_FILE")"; then
        log_info "mariadb: not running"
        rm -f "$MARIADB_PID_FILE"
        return 0
    fi
    log_info "mariadb: stopping (pid $pid)"
    if _mariadb_admin --shutdown-timeout=30 shutdown >/dev/null; then
        wait_pid_exit "$pid" 30 || log_warn "mariadb: still running after mariadb-admin shutdown"
    else
        log_warn "mariadb: mariadb-admin shutdown failed; signalling pid $pid"
    fi
    terminate_pid "$pid" mariadbd 30
    rm -f "$MARIADB_PID_FILE"
    log_info "mariadb: stopped"
}
