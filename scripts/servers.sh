#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Start and stop Tidemark's throwaway test servers on 127.0.0.1.
#
#   scripts/servers.sh start   [mariadb] [postgres] [kafka]   (default: all three)
#   scripts/servers.sh stop    [mariadb] [postgres] [kafka]   (default: all three)
#   scripts/servers.sh restart [mariadb] [postgres] [kafka]
#   scripts/servers.sh status    (exit status 1 when any server is stopped)
#   scripts/servers.sh env       print the env file (after start)
#   scripts/servers.sh deps      only install the Debian packages
#   scripts/servers.sh clean     stop everything and delete $TIDEMARK_RUN_DIR (keeps the jar cache)
#
# `start` installs missing Debian packages first (skip with TIDEMARK_SKIP_DEPS=1), is a no-op for
# servers already running, and reuses existing data directories. After start and stop it writes
# $TIDEMARK_RUN_DIR/env.sh, which exports connection settings for the servers that are running:
#   . "$(scripts/servers.sh env-file)"      (or: . .run/env.sh)
#
# Environment: TIDEMARK_RUN_DIR (default .run), TIDEMARK_CACHE_DIR (default .cache),
# TIDEMARK_MYSQL_PORT (13306), TIDEMARK_PG_PORT (15432), TIDEMARK_KAFKA_PORT (19092),
# TIDEMARK_KAFKA_CONTROLLER_PORT (19093), TIDEMARK_KAFKA_VERSION.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
. "$SCRIPT_DIR/lib/common.sh"
. "$SCRIPT_DIR/lib/install-deps.sh"
. "$SCRIPT_DIR/lib/mariadb.sh"
. "$SCRIPT_DIR/lib/postgres.sh"
. "$SCRIPT_DIR/lib/kafka.sh"

ALL_SERVERS=(mariadb postgres kafka)
ENV_FILE="$TIDEMARK_RUN_DIR/env.sh"

usage() {
    sed -n '3,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

# Validates server names and sets SELECTED to them (all servers when none are given).
SELECTED=()
select_servers() {
    local name
    SELECTED=()
    if (($# == 0)); then
        SELECTED=("${ALL_SERVERS[@]}")
        return 0
    fi
    for name in "$@"; do
        in_list "$name" "${ALL_SERVERS[@]}" || die "unknown server '$name' (expected: ${ALL_SERVERS[*]})"
        in_list "$name" "${SELECTED[@]}" || SELECTED+=("$name")
    done
}

server_running() {
    case "$1" in
        mariadb) mariadb_running ;;
        postgres) postgres_running ;;
        kafka) kafka_running ;;
    esac
}

_export_line() {
    printf 'export %s=%q\n' "$1" "$2"
}

# Writes $ENV_FILE for the servers that are running now.
write_env_file() {
    local tmp="$ENV_FILE.tmp" running=()
    local name
    for name in "${ALL_SERVERS[@]}"; do
        server_running "$name" && running+=("$name")
    done
    mkdir -p "$TIDEMARK_RUN_DIR"
    {
        echo "# Written by scripts/servers.sh on $(date -u +%Y-%m-%dT%H:%M:%SZ). Source it; do not edit."
        _export_line TIDEMARK_SERVERS "${running[*]}"
        if in_list mariadb "${running[@]}"; then
            _export_line TIDEMARK_MYSQL_HOST "$TIDEMARK_MYSQL_HOST"
            _export_line TIDEMARK_MYSQL_PORT "$TIDEMARK_MYSQL_PORT"
            _export_line TIDEMARK_MYSQL_USER "$TIDEMARK_MYSQL_USER"
            _export_line TIDEMARK_MYSQL_PASSWORD "$TIDEMARK_MYSQL_PASSWORD"
            _export_line TIDEMARK_MYSQL_ROOT_USER root
            _export_line TIDEMARK_MYSQL_ROOT_PASSWORD "$TIDEMARK_MYSQL_ROOT_PASSWORD"
            _export_line TIDEMARK_MYSQL_DATABASE "$TIDEMARK_MYSQL_DATABASE"
            _export_line TIDEMARK_MYSQL_SOCKET "$MARIADB_SOCKET"
        fi
        if in_list postgres "${running[@]}"; then
            _export_line TIDEMARK_PG_HOST "$TIDEMARK_PG_HOST"
            _export_line TIDEMARK_PG_PORT "$TIDEMARK_PG_PORT"
            _export_line TIDEMARK_PG_USER "$TIDEMARK_PG_USER"
            _export_line TIDEMARK_PG_PASSWORD "$TIDEMARK_PG_PASSWORD"
            _export_line TIDEMARK_PG_ROOT_USER "$TIDEMARK_PG_SUPERUSER"
            _export_line TIDEMARK_PG_ROOT_PASSWORD "$TIDEMARK_PG_SUPERUSER_PASSWORD"
            _export_line TIDEMARK_PG_DATABASE "$TIDEMARK_PG_DATABASE"
            _export_line TIDEMARK_PG_SOCKET_DIR "$PG_SOCKET_DIR"
        fi
        if in_list kafka "${running[@]}"; then
            _export_line TIDEMARK_KAFKA_BOOTSTRAP "$TIDEMARK_KAFKA_BOOTSTRAP"
            _export_line TIDEMARK_KAFKA_VERSION "$TIDEMARK_KAFKA_VERSION"
            _export_line TIDEMARK_KAFKA_LIBS "$KAFKA_LIBS_DIR"  # the broker's jars, with Connect's JsonConverter
        fi
    } >"$tmp"
    mv "$tmp" "$ENV_FILE"
    log_info "wrote $ENV_FILE (running: ${running[*]:-none})"
}

cmd_start() {
    select_servers "$@"
    local -a servers=("${SELECTED[@]}")
    local start
    start="$(now_s)"
    if [[ "${TIDEMARK_SKIP_DEPS:-0}" != 1 ]]; then
        install_deps
    fi
    mkdir -p "$TIDEMARK_RUN_DIR" "$TIDEMARK_CACHE_DIR"
    # The broker takes longest: launch it first, start the databases while it boots.
    if in_list kafka "${servers[@]}"; then kafka_launch; fi
    if in_list mariadb "${servers[@]}"; then start_mariadb; fi
    if in_list postgres "${servers[@]}"; then start_postgres; fi
    if in_list kafka "${servers[@]}"; then kafka_wait_ready; fi
    write_env_file
    log_info "started ${servers[*]} in $(elapsed_since "$start")s; use: . $ENV_FILE"
}

cmd_stop() {
    select_servers "$@"
    local -a servers=("${SELECTED[@]}")
    if in_list kafka "${servers[@]}"; then stop_kafka; fi
    if in_list postgres "${servers[@]}"; then stop_postgres; fi
    if in_list mariadb "${servers[@]}"; then stop_mariadb; fi
    if [[ -d "$TIDEMARK_RUN_DIR" ]]; then
        write_env_file
    fi
}

cmd_status() {
    local name state any_down=0
    for name in "${ALL_SERVERS[@]}"; do
        if server_running "$name"; then
            state="running"
        else
            state="stopped"
            any_down=1
        fi
        case "$name" in
            mariadb) printf '%-9s %-8s 127.0.0.1:%s  data %s\n' "$name" "$state" "$TIDEMARK_MYSQL_PORT" "$MARIADB_DATA_DIR" ;;
            postgres) printf '%-9s %-8s 127.0.0.1:%s  data %s\n' "$name" "$state" "$TIDEMARK_PG_PORT" "$PG_DATA_DIR" ;;
            kafka) printf '%-9s %-8s %s  Kafka %s, data %s\n' "$name" "$state" "$TIDEMARK_KAFKA_BOOTSTRAP" "$TIDEMARK_KAFKA_VERSION" "$KAFKA_DATA_DIR" ;;
        esac
    done
    return "$any_down"
}

cmd_clean() {
    cmd_stop
    [[ -n "$TIDEMARK_RUN_DIR" && "$TIDEMARK_RUN_DIR" != "/" ]] || die "refusing to delete run dir '$TIDEMARK_RUN_DIR'"
    local link="$TIDEMARK_RUN_DIR/postgres" hash
    if [[ -L "$link" ]]; then
        rm -rf "$(readlink "$link")"
    fi
    hash="$(printf '%s' "$TIDEMARK_RUN_DIR" | md5sum | cut -c1-8)"
    rm -rf "/tmp/tidemark-$hash-mysock" "/tmp/tidemark-$hash-pgsock" "/tmp/tidemark-$hash-pgdata"
    rm -rf "$TIDEMARK_RUN_DIR"
    log_info "removed $TIDEMARK_RUN_DIR (the jar cache in $TIDEMARK_CACHE_DIR is kept)"
}

main() {
    local cmd="${1:-}"
    (($# > 0)) && shift
    case "$cmd" in
        start) cmd_start "$@" ;;
        stop) cmd_stop "$@" ;;
        restart)
            cmd_stop "$@"
            cmd_start "$@"
            ;;
        status) cmd_status ;;
        env)
            [[ -f "$ENV_FILE" ]] || die "$ENV_FILE does not exist: run scripts/servers.sh start"
            cat "$ENV_FILE"
            ;;
        env-file) printf '%s\n' "$ENV_FILE" ;;
        deps) install_deps ;;
        clean) cmd_clean ;;
        -h | --help | help) usage ;;
        *)
            usage >&2
            exit 2
            ;;
    esac
}

main "$@"
