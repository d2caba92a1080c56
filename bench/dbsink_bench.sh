#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR/../scripts
# Database sink benchmark: Tidemark applying a MariaDB table to PostgreSQL and a PostgreSQL table to MariaDB
# (sink.type postgres | mysql), beside the target's own bulk loader, on the same servers in the same run.
#
#   bench/dbsink_bench.sh [mariadb-to-postgres] [postgres-to-mariadb]   (both by default; from anywhere)
#   DBSINK_BENCH_ROWS=200000 bench/dbsink_bench.sh                      (a smaller table)
#
# Scenario, per direction (source -> target):
#   1. Builds tidemark in a Release tree (DBSINK_BENCH_BUILD_DIR, build-dbbench; DBSINK_BENCH_SKIP_BUILD=1 uses the
#      binary already there), starts MariaDB and PostgreSQL with scripts/servers.sh (a no-op when they run; it never
#      stops them; no Kafka). Everything it creates is named after the run (dbbench_<pid>_m2p / _p2m).
#   2. Creates the source table (id BIGINT PRIMARY KEY, a INT, b VARCHAR(100), c DOUBLE, d TIMESTAMP; PostgreSQL:
#      timestamptz, the instant MariaDB's TIMESTAMP is) with DBSINK_BENCH_ROWS rows of about 110 bytes in one
#      statement (generate_series / the SEQUENCE engine; MariaDB without binlogging the load), and the same, empty,
#      table in the target (the sink does not create tables).
#   3. (a) Initial snapshot. Peer first (DBSINK_BENCH_ORDER=tidemark-first turns the order round): the rows are
#      exported from the source to a file (mariadb --quick --batch / psql COPY (SELECT ...) TO STDOUT; not timed),
#      then loaded into a fresh target table of the same definition, timed:
#        bulk: PostgreSQL  psql "COPY t FROM STDIN" < file   (one transaction)
#              MariaDB     mariadb --local-infile -e "LOAD DATA LOCAL INFILE 'file' INTO TABLE t"   (one transaction)
#        sql (DBSINK_BENCH_SQL_PEER=1, the default): the statements the sink itself sends, through the target's
#              client from a file: multi-row upserts (INSERT ... ON CONFLICT DO UPDATE / ON DUPLICATE KEY UPDATE)
#              of 1000 rows, a transaction per batch_max_events rows.
#      Then tidemark run (snapshot.initial when_needed, its own signal and watermark tables in the source), timed
#      from the process start until the target's position table (tidemark_apply_position, written in the same
#      transaction as the rows) holds snapshot.tables_done >= 1 with no current table; the target must then hold
#      N rows (checked, with sum(a)). Before each timed load the target is settled (PostgreSQL CHECKPOINT, InnoDB
#      dirty pages flushed) and the previous peer table dropped.
#   4. (b) Streaming. The daemon is stopped; the backlog is written to the source while nothing reads it:
#      DBSINK_BENCH_TXNS transactions of DBSINK_BENCH_TXN_ROWS rows, alternately an INSERT ... SELECT of new rows
#      and an UPDATE of a range of existing ones (a, c and d change). Its end E is noted (MariaDB: SHOW MASTER
#      STATUS; PostgreSQL: pg_current_wal_insert_lsn() inside the last transaction). tidemark run again, from the
#      target's stored position, timed from the process start until the position table's position reaches E;
#      target and source must then agree (count, sum(a), sum(id)).
#   5. Prints seconds, rows/s or changes/s, the ratio Tidemark / bulk peer (and Tidemark / sql peer), daemon peak
#      RSS (VmHWM) and CPU seconds (/proc/<pid>/stat; µs per row or change), the CPU the target and source servers
#      spent over the same span (mariadbd; PostgreSQL's postmaster and its children, exited ones included), the
#      warnings and errors of the daemon log, and a summary table. Exit 0 whether or not Tidemark is fast; non-zero
#      only when it could not run.
#   6. Drops everything it created (tables in both databases, slot, publication, its position-table rows; the
#      position table too when it is then empty), also on failure.
#
# Environment: DBSINK_BENCH_ROWS (1000000), DBSINK_BENCH_TXNS (10000), DBSINK_BENCH_TXN_ROWS (100),
# DBSINK_BENCH_BATCH (sink.database.batch_max_events; empty: the daemon's default, 5000), DBSINK_BENCH_CHUNK_SIZE
# (snapshot.chunk_size; empty: the daemon's default for a database sink, 8192 into PostgreSQL, 4096 into MySQL), DBSINK_BENCH_SQL_PEER (1; 0 = the
# bulk peer only), DBSINK_BENCH_ORDER (peer-first | tidemark-first), DBSINK_BENCH_PG_FSYNC (on: PostgreSQL runs
# with fsync = on during the run, as a stock server does, then is reset; off: the throwaway cluster's fsync = off),
# DBSINK_BENCH_POLL_MS (100: how often the position table is read, the timing resolution), DBSINK_BENCH_TIMEOUT_S
# (1800 per phase),
# DBSINK_BENCH_BUILD_DIR (build-dbbench; relative to the repository or absolute), DBSINK_BENCH_SKIP_BUILD=1,
# DBSINK_BENCH_KEEP=1 keeps the work directory (configs, daemon logs, exported rows). The servers: TIDEMARK_RUN_DIR,
# TIDEMARK_MYSQL_PORT, TIDEMARK_PG_PORT (scripts/servers.sh).
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
ROOT="$(cd "$SCRIPT_DIR/.." && pwd -P)"
. "$ROOT/scripts/lib/common.sh"
# shellcheck source=lib.sh
. "$SCRIPT_DIR/lib.sh"
cd "$ROOT"

ROWS="${DBSINK_BENCH_ROWS:-1000000}"
TXNS="${DBSINK_BENCH_TXNS:-10000}"
TXN_ROWS="${DBSINK_BENCH_TXN_ROWS:-100}"
BATCH="${DBSINK_BENCH_BATCH:-}"
CHUNK="${DBSINK_BENCH_CHUNK_SIZE:-}"
SQL_PEER="${DBSINK_BENCH_SQL_PEER:-1}"
ORDER="${DBSINK_BENCH_ORDER:-peer-first}"
POLL_MS="${DBSINK_BENCH_POLL_MS:-100}"
TIMEOUT_S="${DBSINK_BENCH_TIMEOUT_S:-1800}"
BUILD_DIR="${DBSINK_BENCH_BUILD_DIR:-build-dbbench}"
[[ "$BUILD_DIR" == /* ]] || BUILD_DIR="$ROOT/$BUILD_DIR"
[[ "$ORDER" == peer-first || "$ORDER" == tidemark-first ]] || die "DBSINK_BENCH_ORDER: peer-first or tidemark-first"
((ROWS >= TXN_ROWS)) || die "DBSINK_BENCH_ROWS ($ROWS) must be at least DBSINK_BENCH_TXN_ROWS ($TXN_ROWS)"
# The sql peer's transactions: as many rows as the sink's batches (batch_max_events, 5000 by default).
PEER_TXN_ROWS="${BATCH:-5000}"
DIRECTIONS=("$@")
((${#DIRECTIONS[@]})) || DIRECTIONS=(mariadb-to-postgres postgres-to-mariadb)
for d in "${DIRECTIONS[@]}"; do
    [[ "$d" == mariadb-to-postgres || "$d" == postgres-to-mariadb ]] ||
        die "unknown direction '$d' (mariadb-to-postgres | postgres-to-mariadb)"
done
require_cmd jq psql mariadb

log() { printf '[dbsink-bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# ---------------------------------------------------------------------------- build and servers
if [[ "${DBSINK_BENCH_SKIP_BUILD:-0}" != 1 ]]; then
    log "building Release in $BUILD_DIR (tidemark)"
    generator=()
    [[ -f "$BUILD_DIR/CMakeCache.txt" ]] || generator=(-G Ninja)  # an existing tree keeps its generator
    cmake -S . -B "$BUILD_DIR" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DTIDEMARK_BUILD_TESTS=OFF >/dev/null
    cmake --build "$BUILD_DIR" -j "$(nproc)" --target tidemark >/dev/null
fi
TIDEMARK_BIN="$BUILD_DIR/tidemark"
[[ -x "$TIDEMARK_BIN" ]] || die "missing $TIDEMARK_BIN"

"$ROOT/scripts/servers.sh" start mariadb postgres >/dev/null 2>&1 || "$ROOT/scripts/servers.sh" start mariadb postgres
# shellcheck disable=SC1091
. "$TIDEMARK_RUN_DIR/env.sh"
export PGPASSWORD="$TIDEMARK_PG_PASSWORD" PGCONNECT_TIMEOUT=10 PGTZ=UTC
PG_CONNINFO="host=$TIDEMARK_PG_HOST port=$TIDEMARK_PG_PORT user=$TIDEMARK_PG_USER dbname=$TIDEMARK_PG_DATABASE"
DB="$TIDEMARK_MYSQL_DATABASE"
pg() { psql "$PG_CONNINFO" -X -v ON_ERROR_STOP=1 -qAt "$@"; }
# The superuser over the unix socket (trust): CHECKPOINT, fsync.
pg_super() { psql -X -v ON_ERROR_STOP=1 -qAt -h "$TIDEMARK_PG_SOCKET_DIR" -p "$TIDEMARK_PG_PORT" -U "$TIDEMARK_PG_ROOT_USER" -d "$TIDEMARK_PG_DATABASE" "$@"; }
my() { mariadb --no-defaults -h "$TIDEMARK_MYSQL_HOST" -P "$TIDEMARK_MYSQL_PORT" -u "$TIDEMARK_MYSQL_ROOT_USER" \
    -p"$TIDEMARK_MYSQL_ROOT_PASSWORD" -N -B "$DB" "$@"; }

RUN="dbbench_$$"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/tidemark-dbbench.XXXXXX")"
SUMMARY="$WORK/summary.tsv"
: >"$SUMMARY"
daemon_pid=""
pg_fsync_set=0
my_dirty_pct=""
pg_tables=()     # tables this run created in PostgreSQL
my_tables=()     # ... and in MariaDB
pg_pipelines=()  # slots and publications (PostgreSQL sources)
pipelines=()     # rows in the position tables: "postgres:<name>" / "mariadb:<name>"

now_ns() { date +%s%N; }
secs() { awk -v n="$1" 'BEGIN { printf "%.2f", n / 1e9 }'; }
lsn_num() { local hi="${1%/*}" lo="${1#*/}"; echo $(((16#$hi << 32) + 16#$lo)); }
POLL_S="$(awk -v m="$POLL_MS" 'BEGIN { printf "%.3f", m / 1000 }')"

drop_pg_pipeline() {  # slot and publication named after the pipeline
    local p="$1" i
    for ((i = 0; i < 100; i++)); do
        [[ "$(pg -c "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '$p' AND active" 2>/dev/null)" == 0 ]] && break
        sleep 0.1
    done
    pg -c "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '$p'" >/dev/null 2>&1 ||
        log "WARNING: could not drop slot $p"
    pg -c "DROP PUBLICATION IF EXISTS $p" >/dev/null 2>&1
}

restore_settings() {
    if [[ $pg_fsync_set == 1 ]]; then  # back to the throwaway cluster's own setting
        pg_super -c "ALTER SYSTEM RESET fsync" -c "SELECT pg_reload_conf()" >/dev/null 2>&1 || log "WARNING: could not reset fsync"
        pg_fsync_set=0
    fi
    if [[ -n "$my_dirty_pct" ]]; then
        my -e "SET GLOBAL innodb_max_dirty_pages_pct = $my_dirty_pct" >/dev/null 2>&1
        my_dirty_pct=""
    fi
}

cleanup() {
    local status=$?
    set +e
    stop_daemon
    restore_settings
    log "cleaning up: tables, slots, publications, position rows"
    local t p
    for p in "${pg_pipelines[@]}"; do drop_pg_pipeline "$p"; done
    for t in "${pg_tables[@]}"; do pg -c "DROP TABLE IF EXISTS public.$t" >/dev/null 2>&1; done
    for t in "${my_tables[@]}"; do my -e "DROP TABLE IF EXISTS \`$t\`" >/dev/null 2>&1; done
    for p in "${pipelines[@]}"; do
        if [[ "$p" == postgres:* ]]; then
            pg -c "DELETE FROM public.tidemark_apply_position WHERE pipeline = '${p#*:}'" >/dev/null 2>&1
            [[ "$(pg -c "SELECT count(*) FROM public.tidemark_apply_position" 2>/dev/null)" == 0 ]] &&
                pg -c "DROP TABLE IF EXISTS public.tidemark_apply_position" >/dev/null 2>&1
        else
            my -e "DELETE FROM tidemark_apply_position WHERE pipeline = '${p#*:}'" >/dev/null 2>&1
            [[ "$(my -e "SELECT count(*) FROM tidemark_apply_position" 2>/dev/null)" == 0 ]] &&
                my -e "DROP TABLE IF EXISTS tidemark_apply_position" >/dev/null 2>&1
        fi
    done
    if [[ $status != 0 ]]; then
        local f
        for f in "$WORK"/*.log; do [[ -s "$f" ]] && show_log_tail "$f" 30; done
    fi
    if [[ "${DBSINK_BENCH_KEEP:-0}" == 1 ]]; then log "kept $WORK"; else rm -rf "$WORK"; fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------------------- per engine
# Runs SQL in a database: sql_in postgres|mariadb SQL...
sql_in() {
    local kind="$1"
    shift
    if [[ "$kind" == postgres ]]; then pg -c "$*"; else my -e "$*"; fi
}

create_table() {  # kind name: the empty table of the benchmark
    if [[ "$1" == postgres ]]; then
        pg_tables+=("$2")
        pg -c "CREATE TABLE public.$2 (id bigint PRIMARY KEY, a integer, b varchar(100), c double precision, d timestamptz)"
    else
        my_tables+=("$2")
        my -e "CREATE TABLE \`$2\` (id BIGINT PRIMARY KEY, a INT, b VARCHAR(100), c DOUBLE, d TIMESTAMP NULL) ENGINE=InnoDB"
    fi
}

fill_source() {  # kind name rows: the same values in both engines
    if [[ "$1" == postgres ]]; then
        pg -c "INSERT INTO public.$2 SELECT i, (i % 100000)::int,
                   md5(i::text) || md5((i + 1)::text) || left(md5((i + 2)::text), 16), i::float8 / 7,
                   timestamptz '2026-01-01 00:00:00+00' + i * interval '1 second'
               FROM generate_series(1, $3) AS i"
        pg -c "VACUUM (ANALYZE) public.$2"
    else
        local from=1 to step=1000000
        while ((from <= $3)); do  # not binlogged: no reader needs the load, and the binlog stays small
            to=$((from + step - 1))
            ((to > $3)) && to=$3
            my -e "SET SESSION sql_log_bin = 0; SET time_zone = '+00:00';
                   INSERT INTO \`$2\` SELECT seq, seq % 100000, CONCAT(MD5(seq), MD5(seq + 1), LEFT(MD5(seq + 2), 16)),
                       seq / 7e0, TIMESTAMP '2026-01-01 00:00:00' + INTERVAL seq SECOND
                   FROM seq_${from}_to_${to}"
            from=$((to + 1))
        done
        my -e "ANALYZE TABLE \`$2\`" >/dev/null
    fi
}

# "count sum(a) sum(id)" of a table, as integers (the same text from both engines).
digest() {
    if [[ "$1" == postgres ]]; then
        pg -F ' ' -c "SELECT count(*), coalesce(sum(a), 0), coalesce(sum(id), 0) FROM public.$2"
    else
        my -e "SELECT COUNT(*), COALESCE(SUM(a), 0), COALESCE(SUM(id), 0) FROM \`$2\`" | tr '\t' ' '
    fi
}

# The rows of a source table into a tab-separated file (the text format of COPY and of LOAD DATA).
export_rows() {  # kind table file
    if [[ "$1" == postgres ]]; then
        pg -c "COPY (SELECT id, a, b, c, d AT TIME ZONE 'UTC' FROM public.$2 ORDER BY id) TO STDOUT" >"$3"
    else
        my --quick -e "SET time_zone = '+00:00'; SELECT id, a, b, c, d FROM \`$2\` ORDER BY id" >"$3"
    fi
}

# The sql peer's script: the tab-separated rows as multi-row upserts of 1000 rows, PEER_TXN_ROWS rows per
# transaction, in the target's dialect (values quoted as the sink quotes them).
write_sql_peer() {  # target-kind table tsv out
    awk -F'\t' -v kind="$1" -v t="$2" -v per=1000 -v txn="$PEER_TXN_ROWS" '
        function q(s) { gsub(/\047/, "\047\047", s); return "\047" s "\047" }
        BEGIN {
            if (kind == "postgres") {
                head = "INSERT INTO public." t " (id, a, b, c, d) VALUES "
                tail = " ON CONFLICT (id) DO UPDATE SET a = EXCLUDED.a, b = EXCLUDED.b, c = EXCLUDED.c, d = EXCLUDED.d;"
                begin = "BEGIN;"
            } else {
                head = "INSERT INTO `" t "` (id, a, b, c, d) VALUES "
                tail = " ON DUPLICATE KEY UPDATE a = VALUES(a), b = VALUES(b), c = VALUES(c), d = VALUES(d);"
                begin = "START TRANSACTION;"
                print "SET time_zone = \047+00:00\047;"
            }
        }
        {
            if (intx == 0) print begin
            printf "%s(%s, %s, %s, %s, %s)", (instmt == 0 ? head : ", "), $1, $2, q($3), (kind == "postgres" ? q($4) : $4), q($5)
            instmt++; intx++
            if (instmt == per || intx == txn) { print tail; instmt = 0 }
            if (intx == txn) { print "COMMIT;"; intx = 0 }
        }
        END { if (instmt) print tail; if (intx) print "COMMIT;" }' "$3" >"$4"
}

# The streaming backlog: TXNS autocommitted transactions of TXN_ROWS rows, alternately an INSERT ... SELECT of new
# rows (ids after the snapshot's) and an UPDATE of a range of existing rows. PostgreSQL: the last transaction
# ends with SELECT pg_current_wal_insert_lsn(), a mark before its commit record.
backlog_sql() {  # kind table
    local t next_id=$((ROWS + 1)) span=$((ROWS - TXN_ROWS + 1)) u=0 lo hi
    [[ "$1" == postgres ]] || echo "SET time_zone = '+00:00';"
    for ((t = 0; t < TXNS; t++)); do
        [[ "$1" == postgres ]] && ((t == TXNS - 1)) && echo "BEGIN;"
        if ((t % 2 == 0)); then
            hi=$((next_id + TXN_ROWS - 1))
            if [[ "$1" == postgres ]]; then
                echo "INSERT INTO public.$2 SELECT i, (i % 100000)::int, md5(i::text) || md5((i + 1)::text) || left(md5((i + 2)::text), 16), i::float8 / 7, timestamptz '2026-01-01 00:00:00+00' + i * interval '1 second' FROM generate_series($next_id, $hi) AS i;"
            else
                echo "INSERT INTO \`$2\` SELECT seq, seq % 100000, CONCAT(MD5(seq), MD5(seq + 1), LEFT(MD5(seq + 2), 16)), seq / 7e0, TIMESTAMP '2026-01-01 00:00:00' + INTERVAL seq SECOND FROM seq_${next_id}_to_${hi};"
            fi
            next_id=$((hi + 1))
        else
            lo=$(((u * TXN_ROWS) % span + 1)); hi=$((lo + TXN_ROWS - 1)); u=$((u + 1))
            if [[ "$1" == postgres ]]; then
                echo "UPDATE public.$2 SET a = a + 1, c = c * 2, d = d + interval '1 second' WHERE id BETWEEN $lo AND $hi;"
            else
                echo "UPDATE \`$2\` SET a = a + 1, c = c * 2, d = d + INTERVAL 1 SECOND WHERE id BETWEEN $lo AND $hi;"
            fi
        fi
    done
    if [[ "$1" == postgres ]]; then echo "SELECT pg_current_wal_insert_lsn(); COMMIT;"; fi
}

# Settles the target before a timed load: PostgreSQL CHECKPOINT; InnoDB flushes its dirty pages (30 s at most).
settle() {
    if [[ "$1" == postgres ]]; then
        pg_super -c "CHECKPOINT" >/dev/null
    else
        my_dirty_pct="$(my -e "SELECT @@GLOBAL.innodb_max_dirty_pages_pct")"
        my -e "SET GLOBAL innodb_max_dirty_pages_pct = 0"
        local i dirty
        for ((i = 0; i < 300; i++)); do
            dirty="$(my -e "SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_dirty'" | awk '{ print $2 }')"
            ((dirty < 50)) && break
            sleep 0.1
        done
        my -e "SET GLOBAL innodb_max_dirty_pages_pct = $my_dirty_pct"
        my_dirty_pct=""
    fi
    sleep 1
}

# One timed load of the exported rows into a fresh target table (settled before); prints nanoseconds. $1 target
# kind, $2 table, $3 bulk|sql, $4 tsv, $5 sql script.
peer_load() {
    local t0 t1
    t0="$(now_ns)"
    if [[ "$1" == postgres && "$3" == bulk ]]; then
        psql "$PG_CONNINFO" -X -v ON_ERROR_STOP=1 -q -c "COPY public.$2 (id, a, b, c, d) FROM STDIN WITH (NULL 'NULL')" <"$4" >/dev/null
    elif [[ "$1" == postgres ]]; then
        psql "$PG_CONNINFO" -X -v ON_ERROR_STOP=1 -q -f "$5" >/dev/null
    elif [[ "$3" == bulk ]]; then
        mariadb --no-defaults --local-infile=1 -h "$TIDEMARK_MYSQL_HOST" -P "$TIDEMARK_MYSQL_PORT" -u "$TIDEMARK_MYSQL_USER" \
            -p"$TIDEMARK_MYSQL_PASSWORD" "$DB" \
            -e "SET time_zone = '+00:00'; LOAD DATA LOCAL INFILE '$4' INTO TABLE \`$2\` (id, a, b, c, d)" >/dev/null
    else
        mariadb --no-defaults -h "$TIDEMARK_MYSQL_HOST" -P "$TIDEMARK_MYSQL_PORT" -u "$TIDEMARK_MYSQL_USER" \
            -p"$TIDEMARK_MYSQL_PASSWORD" "$DB" <"$5" >/dev/null
    fi
    t1="$(now_ns)"
    echo $((t1 - t0))
}

# The pipeline's row of the target's position table as "position<TAB>state"; nothing before the first commit.
applied_row() {  # target-kind pipeline
    if [[ "$1" == postgres ]]; then
        pg -F $'\t' -c "SELECT position, state FROM public.tidemark_apply_position WHERE pipeline = '$2'" 2>/dev/null || true
    else
        my -r -e "SELECT position, state FROM tidemark_apply_position WHERE pipeline = '$2'" 2>/dev/null || true
    fi
}

# True when position token $2 of a source of kind $1 is at or past the end mark $3 ("file pos" / LSN number).
position_reached() {
    local kind="$1" token="$2" mark="$3"
    if [[ "$kind" == postgres ]]; then
        [[ "$token" =~ ^pg:([0-9A-Fa-f]+/[0-9A-Fa-f]+) ]] || return 1
        (($(lsn_num "${BASH_REMATCH[1]}") >= mark))
    else
        [[ "$token" =~ file=([^\;]+)\;pos=([0-9]+) ]] || return 1
        local file="${BASH_REMATCH[1]}" pos="${BASH_REMATCH[2]}"
        [[ "$file" > "${mark% *}" ]] || { [[ "$file" == "${mark% *}" ]] && ((pos >= ${mark#* })); }
    fi
}

write_config() {  # source-kind target-kind name table config
    local src="$1" dst="$2" name="$3" table="$4" config="$5"
    {
        echo "# Written by bench/dbsink_bench.sh."
        echo "name: $name"
        if [[ "$src" == postgres ]]; then
            cat <<EOF
source:
  type: postgres
  host: $TIDEMARK_PG_HOST
  port: $TIDEMARK_PG_PORT
  user: $TIDEMARK_PG_USER
  password: \${TIDEMARK_PG_PASSWORD}
  database: $TIDEMARK_PG_DATABASE
  tables: [public.$table]
  tls:
    mode: disable
  postgres:
    slot: $name
    publication: $name
    create_publication: true
EOF
        else
            cat <<EOF
source:
  type: mysql
  host: $TIDEMARK_MYSQL_HOST
  port: $TIDEMARK_MYSQL_PORT
  user: $TIDEMARK_MYSQL_USER
  password: \${TIDEMARK_MYSQL_PASSWORD}
  database: $DB
  tables: [$DB.$table]
  tls:
    mode: disable
  mysql:
    server_id: $((20000 + $$ % 10000))
EOF
        fi
        if [[ "$dst" == postgres ]]; then
            cat <<EOF
sink:
  type: postgres
  database:
    host: $TIDEMARK_PG_HOST
    port: $TIDEMARK_PG_PORT
    user: $TIDEMARK_PG_USER
    password: \${TIDEMARK_PG_PASSWORD}
    database: $TIDEMARK_PG_DATABASE
    schema: public
    tls:
      mode: disable
EOF
        else
            cat <<EOF
sink:
  type: mysql
  database:
    host: $TIDEMARK_MYSQL_HOST
    port: $TIDEMARK_MYSQL_PORT
    user: $TIDEMARK_MYSQL_USER
    password: \${TIDEMARK_MYSQL_PASSWORD}
    database: $DB
    tls:
      mode: disable
EOF
        fi
        [[ -z "$BATCH" ]] || echo "    batch_max_events: $BATCH"
        cat <<EOF
state:
  path: $WORK/$name.state.json
snapshot:
  initial: when_needed
  signal_table: ${name}_signal
  watermark_table: ${name}_watermark
EOF
        [[ -z "$CHUNK" ]] || echo "  chunk_size: $CHUNK"
    } >"$config"
}

# Starts the daemon and polls the target's position table until `done_check` (a function of position and state)
# holds. Sets run_ns (process start -> done), first_ns (start -> the pipeline's first row in the position table),
# hwm_kb (VmHWM), cpu_ticks (the daemon's user + system CPU), src_ticks / dst_ticks (the source and target
# servers' CPU over the same span) and last_state; stops the daemon.
run_daemon_until() {  # config log source-kind target-kind pipeline done_check label
    local config="$1" logf="$2" src="$3" dst="$4" name="$5" check="$6" label="$7"
    local t0 i row position="" state="" deadline s0 d0
    s0="$(server_ticks "$src")"
    d0="$(server_ticks "$dst")"
    t0="$(now_ns)"
    "$TIDEMARK_BIN" run --config "$config" >>"$logf" 2>&1 &
    daemon_pid=$!
    first_ns=""
    deadline=$(($(date +%s) + TIMEOUT_S))
    for ((i = 0; ; i++)); do
        row="$(applied_row "$dst" "$name")"
        if [[ -n "$row" ]]; then
            [[ -n "$first_ns" ]] || first_ns=$(($(now_ns) - t0))
            position="${row%%$'\t'*}"
            state="${row#*$'\t'}"
            "$check" "$position" "$state" && break
        fi
        kill -0 "$daemon_pid" 2>/dev/null || die "[$label] the daemon exited (see the log below)"
        (($(date +%s) < deadline)) || die "[$label] not done within $TIMEOUT_S s (position ${position:-none})"
        if ((i % (10000 / POLL_MS) == 0 && i > 0)); then
            log "[$label] snapshot rows applied: $(jq -r '.snapshot.current.rows // "-"' <<<"${state:-null}" 2>/dev/null || echo -); position ${position:-none}"
        fi
        sleep "$POLL_S"
    done
    run_ns=$(($(now_ns) - t0))
    hwm_kb="$(awk '/^VmHWM:/ { print $2 }' "/proc/$daemon_pid/status")"
    cpu_ticks="$(proc_ticks "$daemon_pid")"
    src_ticks=$(($(server_ticks "$src") - s0))
    dst_ticks=$(($(server_ticks "$dst") - d0))
    last_state="$state"
    stop_daemon
}

snapshot_done() {  # position state
    jq -e '(.snapshot // {}) as $s | (($s.tables_done // 0) >= 1) and ($s.current == null) and ((($s.queue // []) | length) == 0)' \
        <<<"$2" >/dev/null 2>&1
}
END_MARK=""
SRC_KIND=""
caught_up() { position_reached "$SRC_KIND" "$1" "$END_MARK"; }

# The daemon log's warnings and errors: their count on the first line, then the first five (shortened).
log_problems() {
    grep -ciE '\b(warn|warning|error|critical|fatal)\b' "$1" || true
    grep -iE '\b(warn|warning|error|critical|fatal)\b' "$1" | head -n 5 | cut -c1-240 | sed 's/^/      /' || true
}

# One line of a report table: label ns count ratio rss_kb daemon_ticks target_ticks source_ticks mismatch(0|1)
# ("-" for what does not apply). Rates are per row or change; CPU also in µs per row or change.
report_line() {
    awk -v l="$1" -v n="$2" -v c="$3" -v r="$4" -v m="$5" -v dt="$6" -v tt="$7" -v st="$8" -v bad="$9" -v h="$CLK_TCK" '
        function cpu(t) { return (t == "-") ? "-" : sprintf("%.1f (%.1f)", t / h, t / h / c * 1e6) }
        BEGIN {
            printf "  %-58s %7.2f %9.0f %6s %9s %13s %13s %13s%s\n", l, n / 1e9, c / (n / 1e9), r,
                (m == "-" ? "-" : sprintf("%.1f MB", m / 1024)), cpu(dt), cpu(tt), cpu(st), (bad == 1 ? "  <- MISMATCH" : "")
        }'
}
report_head() {
    printf "  %-58s %7s %9s %6s %9s %13s %13s %13s\n" "$1" seconds "$2/s" ratio "peak RSS" "daemon CPU" "target CPU" "source CPU"
}

# ---------------------------------------------------------------------------- one direction
bench_direction() {
    local dir="$1" src dst short
    if [[ "$dir" == mariadb-to-postgres ]]; then src=mariadb dst=postgres short=m2p; else src=postgres dst=mariadb short=p2m; fi
    SRC_KIND="$src"
    local name="${RUN}_$short" table="${RUN}_$short"
    local config="$WORK/$name.yaml" snap_log="$WORK/$short.snapshot.log" stream_log="$WORK/$short.stream.log"
    local tsv="$WORK/$short.tsv" sqlf="$WORK/$short.sql"
    : >"$snap_log"
    : >"$stream_log"
    log "== $src -> $dst: creating $table ($ROWS rows) in $src and the empty table in $dst"
    local t0
    t0="$(now_ns)"
    create_table "$src" "$table"
    fill_source "$src" "$table" "$ROWS"
    create_table "$dst" "$table"
    # The signal and watermark tables the daemon creates in the source.
    if [[ "$src" == postgres ]]; then pg_tables+=("${name}_signal" "${name}_watermark"); pg_pipelines+=("$name")
    else my_tables+=("${name}_signal" "${name}_watermark"); fi
    pipelines+=("$dst:$name")
    log "source filled in $(secs $(($(now_ns) - t0))) s"
    local src_digest
    src_digest="$(digest "$src" "$table")"

    # (a) the peers: export (not timed), then each load into a fresh table of the target, timed
    local bulk_ns="" sql_ns="" export_ns="" bulk_cpu="-" sql_cpu="-" bulk_bad=0 sql_bad=0
    run_peers() {
        local peer got d0
        log "(a) exporting the rows from $src (not timed)"
        t0="$(now_ns)"
        export_rows "$src" "$table" "$tsv"
        export_ns=$(($(now_ns) - t0))
        log "(a) exported $(wc -l <"$tsv") rows, $(du -m "$tsv" | cut -f1) MB, in $(secs "$export_ns") s"
        peer="${table}_bulk"
        create_table "$dst" "$peer"
        settle "$dst"
        log "(a) peer: bulk load into $dst ($([[ $dst == postgres ]] && echo 'COPY FROM STDIN' || echo 'LOAD DATA LOCAL INFILE'))"
        d0="$(server_ticks "$dst")"
        bulk_ns="$(peer_load "$dst" "$peer" bulk "$tsv" "")"
        sleep 0.2  # the backend is reaped
        bulk_cpu=$(($(server_ticks "$dst") - d0))
        got="$(digest "$dst" "$peer")"
        [[ "$got" == "$src_digest" ]] || { bulk_bad=1; log "WARNING: the bulk peer's table holds $got, the source $src_digest"; }
        log "(a) bulk load: $(secs "$bulk_ns") s"
        sql_in "$dst" "DROP TABLE $([[ $dst == postgres ]] && echo "public.$peer" || echo "\`$peer\`")"
        if [[ "$SQL_PEER" == 1 ]]; then
            peer="${table}_sql"
            write_sql_peer "$dst" "$peer" "$tsv" "$sqlf"
            create_table "$dst" "$peer"
            settle "$dst"
            log "(a) peer: multi-row upserts through the $dst client ($(du -m "$sqlf" | cut -f1) MB of SQL)"
            d0="$(server_ticks "$dst")"
            sql_ns="$(peer_load "$dst" "$peer" sql "$tsv" "$sqlf")"
            sleep 0.2
            sql_cpu=$(($(server_ticks "$dst") - d0))
            got="$(digest "$dst" "$peer")"
            [[ "$got" == "$src_digest" ]] || { sql_bad=1; log "WARNING: the sql peer's table holds $got, the source $src_digest"; }
            log "(a) multi-row upserts: $(secs "$sql_ns") s"
            sql_in "$dst" "DROP TABLE $([[ $dst == postgres ]] && echo "public.$peer" || echo "\`$peer\`")"
            rm -f "$sqlf"
        fi
        [[ "${DBSINK_BENCH_KEEP:-0}" == 1 ]] || rm -f "$tsv"
    }
    local snap_ns snap_first snap_hwm snap_cpu snap_src snap_dst snap_bad=0 got
    run_tidemark_snapshot() {
        write_config "$src" "$dst" "$name" "$table" "$config"
        settle "$dst"
        log "(a) tidemark: initial snapshot of $src.$table into $dst, until the position table says done"
        run_daemon_until "$config" "$snap_log" "$src" "$dst" "$name" snapshot_done "$short snapshot"
        snap_ns=$run_ns snap_first=$first_ns snap_hwm=$hwm_kb snap_cpu=$cpu_ticks snap_src=$src_ticks snap_dst=$dst_ticks
        got="$(digest "$dst" "$table")"
        [[ "$got" == "$src_digest" ]] || { snap_bad=1; log "WARNING: after the snapshot the target holds $got, the source $src_digest"; }
        log "(a) tidemark: $(secs "$snap_ns") s (first position row after $(secs "${snap_first:-0}") s), peak RSS $((snap_hwm / 1024)) MB; state: $last_state"
    }
    if [[ "$ORDER" == peer-first ]]; then run_peers; run_tidemark_snapshot; else run_tidemark_snapshot; run_peers; fi

    # (b) streaming: the backlog written while the daemon is stopped
    local changes=$((TXNS * TXN_ROWS)) w_ns
    log "(b) writing the backlog to $src: $TXNS transactions of $TXN_ROWS rows (inserts and updates alternately) with no reader running"
    t0="$(now_ns)"
    if [[ "$src" == postgres ]]; then
        backlog_sql postgres "$table" | pg >"$WORK/$short.end"
        END_MARK="$(lsn_num "$(tail -n 1 "$WORK/$short.end")")"
        log "(b) end mark: LSN $(tail -n 1 "$WORK/$short.end") (inside the last transaction)"
    else
        backlog_sql mariadb "$table" | my
        END_MARK="$(my -e "SHOW MASTER STATUS" | awk '{ print $1, $2 }')"
        log "(b) end mark: binlog $END_MARK"
    fi
    w_ns=$(($(now_ns) - t0))
    src_digest="$(digest "$src" "$table")"
    settle "$dst"
    log "(b) backlog written in $(secs "$w_ns") s; tidemark: from the target's position until it reaches the end mark"
    local stream_ns stream_hwm stream_cpu stream_src stream_dst stream_bad=0
    run_daemon_until "$config" "$stream_log" "$src" "$dst" "$name" caught_up "$short streaming"
    stream_ns=$run_ns stream_hwm=$hwm_kb stream_cpu=$cpu_ticks stream_src=$src_ticks stream_dst=$dst_ticks
    got="$(digest "$dst" "$table")"
    [[ "$got" == "$src_digest" ]] || { stream_bad=1; log "WARNING: after streaming the target holds $got, the source $src_digest"; }
    log "(b) tidemark: $(secs "$stream_ns") s, peak RSS $((stream_hwm / 1024)) MB"

    # Drop this direction's tables now (disk and buffer pools for the next direction); cleanup drops the rest.
    sql_in "$src" "DROP TABLE $([[ $src == postgres ]] && echo "public.$table" || echo "\`$table\`")" >/dev/null
    sql_in "$dst" "DROP TABLE $([[ $dst == postgres ]] && echo "public.$table" || echo "\`$table\`")" >/dev/null

    # ------------------------------------------------------------------------ report
    local bulk_tool sql_tool bulk_rate ratio sql_ratio=""
    if [[ "$dst" == postgres ]]; then bulk_tool="psql COPY FROM STDIN"; sql_tool="psql -f: INSERT ... ON CONFLICT DO UPDATE"
    else bulk_tool="mariadb LOAD DATA LOCAL INFILE"; sql_tool="mariadb <: INSERT ... ON DUPLICATE KEY UPDATE"; fi
    ratio="$(awk -v a="$bulk_ns" -v b="$snap_ns" 'BEGIN { printf "%.2f", a / b }')"  # rates: rows/b over rows/a
    [[ -z "$sql_ns" ]] || sql_ratio="$(awk -v a="$sql_ns" -v b="$snap_ns" 'BEGIN { printf "%.2f", a / b }')"
    {
        echo
        echo "== $src -> $dst: $ROWS rows of ~110 bytes (id bigint PK, a int, b varchar(100), c double, d timestamp); $(nproc) cores shared with both servers; load average $(cut -d' ' -f1-3 /proc/loadavg)"
        echo "(a) initial snapshot; the peers load the rows exported from the source ($(secs "$export_ns") s, not counted); CPU s (us/row)"
        report_head "" rows
        report_line "peer: $bulk_tool" "$bulk_ns" "$ROWS" 1.00 - - "$bulk_cpu" - "$bulk_bad"
        [[ -z "$sql_ns" ]] || report_line "peer: $sql_tool, $PEER_TXN_ROWS rows/tx" "$sql_ns" "$ROWS" \
            "$(awk -v a="$bulk_ns" -v b="$sql_ns" 'BEGIN { printf "%.2f", a / b }')" - - "$sql_cpu" - "$sql_bad"
        report_line "tidemark: start -> snapshot done in the target" "$snap_ns" "$ROWS" "$ratio" "$snap_hwm" "$snap_cpu" "$snap_dst" "$snap_src" "$snap_bad"
        echo "  ratio = rows/s over the bulk peer's; tidemark / sql peer ${sql_ratio:--}; tidemark's first position-table row $(secs "${snap_first:-0}") s after its start"
        echo "(b) streaming: $TXNS transactions of $TXN_ROWS rows (inserts and updates alternately) = $changes changes, written in $(secs "$w_ns") s ($(awk -v c="$changes" -v n="$w_ns" 'BEGIN { printf "%.0f", c / (n / 1e9) }') changes/s at the source, not counted); CPU s (us/change)"
        report_head "" changes
        report_line "tidemark: start -> its position reaches the end mark" "$stream_ns" "$changes" - "$stream_hwm" "$stream_cpu" "$stream_dst" "$stream_src" "$stream_bad"
        echo "  daemon log, snapshot run: $(log_problems "$snap_log" | head -n 1) warnings/errors"
        log_problems "$snap_log" | tail -n +2
        echo "  daemon log, streaming run: $(log_problems "$stream_log" | head -n 1) warnings/errors"
        log_problems "$stream_log" | tail -n +2
    } | tee -a "$WORK/report.txt"
    bulk_rate="$(awk -v r="$ROWS" -v n="$bulk_ns" 'BEGIN { printf "%.0f", r / (n / 1e9) }')"
    # direction, bulk rows/s, sql rows/s, tidemark rows/s, /bulk, /sql, RSS MB, daemon us/row, target us/row,
    # changes/s, daemon us/change, target us/change, RSS MB, any mismatch
    awk -v d="$src -> $dst" -v rows="$ROWS" -v br="$bulk_rate" -v sn="${sql_ns:-0}" -v tn="$snap_ns" -v r="$ratio" -v sr="${sql_ratio:--}" \
        -v sh="$snap_hwm" -v sc="$snap_cpu" -v sd="$snap_dst" -v c="$changes" -v stn="$stream_ns" -v sth="$stream_hwm" \
        -v stc="$stream_cpu" -v std="$stream_dst" -v h="$CLK_TCK" -v bad="$((bulk_bad + sql_bad + snap_bad + stream_bad))" 'BEGIN {
        printf "%s\t%s\t%s\t%.0f\t%s\t%s\t%.1f\t%.1f\t%.1f\t%.0f\t%.1f\t%.1f\t%.1f\t%s\n", d, br, (sn > 0 ? sprintf("%.0f", rows / (sn / 1e9)) : "-"),
            rows / (tn / 1e9), r, sr, sh / 1024, sc / h / rows * 1e6, sd / h / rows * 1e6, c / (stn / 1e9), stc / h / c * 1e6,
            std / h / c * 1e6, sth / 1024, (bad > 0 ? "MISMATCH" : "ok")
    }' >>"$SUMMARY"
}

# ---------------------------------------------------------------------------- run
# Stock durability: the throwaway PostgreSQL cluster runs with fsync = off (scripts/lib/postgres.sh); a user's
# server flushes every commit. MariaDB's defaults (innodb_flush_log_at_trx_commit=1) apply.
if [[ "${DBSINK_BENCH_PG_FSYNC:-on}" == on && "$(pg -c "SHOW fsync")" == off ]]; then
    pg_super -c "ALTER SYSTEM SET fsync = on" -c "SELECT pg_reload_conf()" >/dev/null
    pg_fsync_set=1
    sleep 0.5
fi
SETTINGS="PostgreSQL fsync = $(pg -c "SHOW fsync"), synchronous_commit = $(pg -c "SHOW synchronous_commit"), shared_buffers = $(pg -c "SHOW shared_buffers"); MariaDB innodb_flush_log_at_trx_commit = $(my -e "SELECT @@innodb_flush_log_at_trx_commit"), innodb_buffer_pool_size = $(($(my -e "SELECT @@innodb_buffer_pool_size") / 1048576))MB, binlog on"
log "run $RUN in $WORK: $SETTINGS; order $ORDER"
for d in "${DIRECTIONS[@]}"; do
    bench_direction "$d"
done
restore_settings

echo
echo "==================== summary: $ROWS rows; streaming $((TXNS * TXN_ROWS)) changes in $TXNS transactions; batch_max_events ${BATCH:-5000 (default)}, snapshot.chunk_size ${CHUNK:-8192 into PostgreSQL, 4096 into MariaDB (defaults)}; $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$SETTINGS"
awk -F'\t' 'BEGIN {
    printf "%-20s | %9s %9s %9s %6s %6s %7s %9s %9s | %9s %9s %9s %7s | %s\n", "", "snapshot:", "", "", "", "", "", "", "", "stream:", "", "", "", ""
    printf "%-20s | %9s %9s %9s %6s %6s %7s %9s %9s | %9s %9s %9s %7s | %s\n", "direction", "bulk r/s", "sql r/s", "tm r/s",
        "/bulk", "/sql", "RSS MB", "d us/row", "t us/row", "chg/s", "d us/chg", "t us/chg", "RSS MB", "check"
}
{ printf "%-20s | %9s %9s %9s %6s %6s %7s %9s %9s | %9s %9s %9s %7s | %s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14 }' "$SUMMARY"
echo "(bulk: COPY FROM STDIN / LOAD DATA LOCAL INFILE; sql: the same multi-row upserts through the target's client, $PEER_TXN_ROWS rows per"
echo " transaction; tm: tidemark; RSS: the daemon's peak; d / t us: CPU of the daemon / of the target server per row or change)"
