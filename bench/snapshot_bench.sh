#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR/../scripts
# Snapshot benchmark (issue #5): a DBLog watermark snapshot of a large table, triggered by a signal row while
# a background workload of ~1000 transactions/s runs, beside the database's own full-table read.
#
#   bench/snapshot_bench.sh [postgres] [mariadb]      (both by default; from anywhere; takes several minutes)
#   SNAP_BENCH_ROWS=1000000 bench/snapshot_bench.sh postgres
#
# Scenario, per database:
#   1. Builds tidemark and bench_snapshot_load (bench/snapshot_load.cpp) in a Release tree (SNAP_BENCH_BUILD_DIR,
#      build-bench), starts the servers with scripts/servers.sh (a no-op when they run; never stops them).
#   2. Creates three tables named after this run (snapbench_<pid>): the big table (SNAP_BENCH_ROWS rows of about
#      200 bytes: id bigint primary key, int, decimal, timestamp, a 150-character text) filled in one statement
#      (generate_series / the SEQUENCE engine's seq_1_to_N, MariaDB without binlogging the load), a small table of
#      the same shape (SNAP_BENCH_SMALL_ROWS, for peak RSS at a second size), and the background table _bg
#      (SNAP_BENCH_BG_ROWS rows: id, n, ts_us). Then the tables' pages go to disk (PostgreSQL CHECKPOINT, InnoDB
#      FLUSH TABLES ... FOR EXPORT), as for a table that has lived a while: otherwise the server writes the load out
#      during the measurements and the workload's commits queue behind those writes (stalls of about 100 ms).
#   3. The background workload (bench_snapshot_load): SNAP_BENCH_RATE single-row UPDATE transactions per second
#      (autocommit, SNAP_BENCH_THREADS connections) on the _bg table -- another, small, captured table, not the
#      snapshotted one -- each setting ts_us to the database clock (microseconds) when the UPDATE executes. It runs
#      during every phase below, (a) included, so the database carries the same load in each.
#   4. (a) Raw read, twice (the best counts): PostgreSQL `psql -c "COPY (SELECT * FROM t) TO STDOUT" >/dev/null`,
#      MariaDB `mariadb --quick -e "SELECT * FROM t" >/dev/null`; wall time and rows/s.
#   5. (b) Tidemark, one fresh daemon per phase (its own pipeline name, slot, publication, state file and topics;
#      snapshot.initial: never): the small table at the first chunk size, then the big table at each of
#      SNAP_BENCH_CHUNK_SIZES ("1024 8192"; snapshot.chunk_size). Each phase: start the daemon streaming the three
#      tables to the real broker (TIDEMARK_KAFKA_BOOTSTRAP), run the workload alone for SNAP_BENCH_WARMUP_S seconds
#      (baseline latency), insert the execute-snapshot signal row, poll the state file until
#      extensions.snapshot.tables_done counts the table (written only after Kafka acknowledged the rows); then
#      read VmHWM of the daemon (peak RSS) and stop it.
#      Snapshot rows/s = rows / (signal inserted -> tables_done in the state file; state.flush_interval_ms
#      SNAP_BENCH_FLUSH_MS is the resolution). Latency of the workload's changes = the record's Kafka timestamp
#      (the _bg topic is created with message.timestamp.type=LogAppendTime: the broker's append time) minus
#      ts_us; p50/p99/max over the changes executed while the snapshot ran, and over those before the signal
#      (baseline). It includes the commit itself (the workload prints its client round trip per transaction).
#      The snapshot topic must hold one record per row (checked). CPU seconds during the snapshot of the daemon,
#      the broker and the database server (all its processes); the machine's busy share of all cores; and from
#      /proc/pressure the share of that time in which some runnable task waited for a core, and in which every
#      busy task waited for I/O. The state file is polled without forking (a parser per poll took half a core).
#   6. (c) Debezium (bench/debezium, its embedded engine feeding one KafkaProducer: acks=all, idempotent, linger.ms=5),
#      after the Tidemark phases, the same big table with the same workload running, into its own topics on the same
#      broker: per chunk size of SNAP_BENCH_DEBEZIUM_CHUNK_SIZES (default: the first of SNAP_BENCH_CHUNK_SIZES) a fresh
#      peer (snapshot.mode=no_data, incremental.snapshot.chunk.size = that chunk size, MariaDB snapshot.locking.mode=none,
#      its own signal table snapbench_<pid>_dbz_signal, slot and publication) streams the three tables; WARMUP_S after it
#      reports streaming it inserts one execute-snapshot signal row and is timed until Kafka acknowledged one op=r
#      record per row of the table. Same latency, CPU and record-count figures; peak RSS = VmHWM of the JVM. The summary
#      gets a Debezium row per chunk size and the ratio Tidemark / Debezium at that chunk size. On by default when mvn and
#      java exist; BENCH_DEBEZIUM=0 turns it off. A failing peer is reported and the benchmark goes on.
#   7. Prints a summary table per database. Exit 0 whether or not the targets are met (it prints, it does not
#      assert): snapshot rows/s >= 0.7 x raw read, p99 latency during the snapshot <= 20 ms, peak RSS <= 100 MB
#      independent of the table size.
#   8. Drops everything it created (tables, topics, slots, publications, offset files), also on failure. The pipelines use their
#      own signal and watermark tables (snapbench_<pid>_signal/_watermark): signals other users insert into the
#      shared tidemark_signal cannot reach them.
#
# Environment: SNAP_BENCH_ROWS (5000000), SNAP_BENCH_SMALL_ROWS (100000), SNAP_BENCH_CHUNK_SIZES ("1024 8192"),
# SNAP_BENCH_RATE (1000 transactions/s), SNAP_BENCH_THREADS (4), SNAP_BENCH_BG_ROWS (1000), SNAP_BENCH_WARMUP_S
# (5), SNAP_BENCH_FLUSH_MS (100), SNAP_BENCH_TIMEOUT_S (1800 per phase), SNAP_BENCH_BUILD_DIR (build-bench),
# SNAP_BENCH_TOUCH_ROWS (0: a fresh topic; N: the first N rows of the big table are changed during the warm-up, so that
# its topic's partitions hold records when the snapshot starts, as a table that streams changes), SNAP_BENCH_REPEATS
# (1: rounds over SNAP_BENCH_CHUNK_SIZES; the summary adds each chunk size's median and range, and compares the median
# with Debezium), SNAP_BENCH_SKIP_BUILD=1 (use the binaries already built there), SNAP_BENCH_KEEP=1 keeps the work directory
# (configs, daemon logs, the consumed latency samples, the Debezium peer's logs). Debezium: BENCH_DEBEZIUM (1; 0 = off),
# SNAP_BENCH_DEBEZIUM_CHUNK_SIZES (the first of SNAP_BENCH_CHUNK_SIZES), SNAP_BENCH_DEBEZIUM_TIMEOUT_S (SNAP_BENCH_TIMEOUT_S;
# on timeout the partial rate is printed), BENCH_DEBEZIUM_PROPS ("k=v k=v" extra connector properties),
# BENCH_DEBEZIUM_JAVA_OPTS (JVM options; none by default) -- see bench/debezium/peer.sh. SNAP_BENCH_PG_FSYNC (on:
# PostgreSQL runs with fsync = on during the run, as a stock server does, then is reset; off: the throwaway cluster's
# fsync = off). SNAP_BENCH_SNAPSHOT_YAML: more snapshot settings for the Tidemark phases, "key: value" per line
# (e.g. $'target_ack_latency_ms: 0\nchunks_in_flight: 8'). SNAP_BENCH_KAFKA_YAML: more sink.kafka settings, the same way
# (e.g. $'properties:\n  batch.size: "131072"'). SNAP_BENCH_YAML: top-level settings (e.g. $'log:\n  level: debug').
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
ROOT="$(cd "$SCRIPT_DIR/.." && pwd -P)"
. "$ROOT/scripts/lib/common.sh"
# shellcheck source=lib.sh
. "$SCRIPT_DIR/lib.sh"
. "$ROOT/scripts/lib/kafka.sh"
# shellcheck source=SCRIPTDIR/debezium/peer.sh
. "$SCRIPT_DIR/debezium/peer.sh"
cd "$ROOT"

ROWS="${SNAP_BENCH_ROWS:-5000000}"
SMALL_ROWS="${SNAP_BENCH_SMALL_ROWS:-100000}"
CHUNK_SIZES="${SNAP_BENCH_CHUNK_SIZES:-1024 8192}"
REPEATS="${SNAP_BENCH_REPEATS:-1}"
TOUCH_ROWS="${SNAP_BENCH_TOUCH_ROWS:-0}"
RATE="${SNAP_BENCH_RATE:-1000}"
THREADS="${SNAP_BENCH_THREADS:-4}"
BG_ROWS="${SNAP_BENCH_BG_ROWS:-1000}"
WARMUP_S="${SNAP_BENCH_WARMUP_S:-5}"
FLUSH_MS="${SNAP_BENCH_FLUSH_MS:-100}"
TIMEOUT_S="${SNAP_BENCH_TIMEOUT_S:-1800}"
BUILD_DIR="${SNAP_BENCH_BUILD_DIR:-build-bench}"
DBZ_CHUNK_SIZES="${SNAP_BENCH_DEBEZIUM_CHUNK_SIZES:-${CHUNK_SIZES%% *}}"
DBZ_TIMEOUT_S="${SNAP_BENCH_DEBEZIUM_TIMEOUT_S:-$TIMEOUT_S}"
DATABASES=("$@")
((${#DATABASES[@]})) || DATABASES=(postgres mariadb)
for d in "${DATABASES[@]}"; do
    [[ "$d" == postgres || "$d" == mariadb ]] || die "unknown database '$d' (postgres | mariadb)"
done
require_cmd kcat jq psql mariadb

log() { printf '[snap-bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# ---------------------------------------------------------------------------- build and servers
if [[ "${SNAP_BENCH_SKIP_BUILD:-0}" != 1 ]]; then
    log "building Release in $BUILD_DIR (tidemark, bench_snapshot_load)"
    cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTIDEMARK_BUILD_TESTS=OFF >/dev/null
    cmake --build "$BUILD_DIR" --target tidemark bench_snapshot_load >/dev/null
fi
TIDEMARK_BIN="$ROOT/$BUILD_DIR/tidemark"
LOAD_BIN="$ROOT/$BUILD_DIR/bench/bench_snapshot_load"
[[ -x "$TIDEMARK_BIN" && -x "$LOAD_BIN" ]] || die "missing $TIDEMARK_BIN or $LOAD_BIN"

# The Debezium peer: one stack per database (never mixed); a failed build turns that database's phase off.
declare -A dbz_on=()
if dbz_enabled; then
    for d in "${DATABASES[@]}"; do
        log "building the Debezium peer for $d (cached)"
        if dbz_build "$d"; then dbz_on[$d]=1; else log "WARNING: the Debezium peer for $d did not build; its phase is skipped"; fi
    done
fi

servers=(kafka)
for d in "${DATABASES[@]}"; do servers+=("$d"); done
"$ROOT/scripts/servers.sh" start "${servers[@]}" >/dev/null 2>&1 || "$ROOT/scripts/servers.sh" start "${servers[@]}"
# shellcheck disable=SC1091
. "$TIDEMARK_RUN_DIR/env.sh"
export PGPASSWORD="$TIDEMARK_PG_PASSWORD" PGCONNECT_TIMEOUT=10
PG_CONNINFO="host=$TIDEMARK_PG_HOST port=$TIDEMARK_PG_PORT user=$TIDEMARK_PG_USER dbname=$TIDEMARK_PG_DATABASE"
DB="$TIDEMARK_MYSQL_DATABASE"
pg() { psql "$PG_CONNINFO" -X -v ON_ERROR_STOP=1 -qAt "$@"; }
# The superuser over the unix socket (trust), for the server's durability settings.
pg_super() { psql -X -v ON_ERROR_STOP=1 -qAt -h "$TIDEMARK_PG_SOCKET_DIR" -p "$TIDEMARK_PG_PORT" -U "$TIDEMARK_PG_ROOT_USER" -d postgres "$@"; }
pg_fsync_set=0
my() { mariadb --no-defaults -h "$TIDEMARK_MYSQL_HOST" -P "$TIDEMARK_MYSQL_PORT" -u "$TIDEMARK_MYSQL_ROOT_USER" \
    -p"$TIDEMARK_MYSQL_ROOT_PASSWORD" -N -B "$DB" "$@"; }

RUN="snapbench_$$"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/tidemark-snapbench.XXXXXX")"
SUMMARY="$WORK/summary.txt"
: >"$SUMMARY"
daemon_pid=""
load_pid=""
: >"$WORK/debezium.failures"
phase_names=()  # every phase of the run, both databases: each its own pipeline name
created_pg=0
created_my=0
topics=()
pg_pipelines=()

now_ns() { date +%s%N; }
now_us() { echo $(($(date +%s%N) / 1000)); }
kafka_pid="$(cat "$KAFKA_PID_FILE" 2>/dev/null || echo self)"

# Stops the workload; its summary line is then in $WORK/load.out.
stop_load() {
    [[ -n "$load_pid" ]] || return 0
    kill -TERM "$load_pid" 2>/dev/null || true
    wait "$load_pid" 2>/dev/null || true
    load_pid=""
}

# p50 p99 max count of the numbers in a file, tab-separated ("-" when empty).
percentiles() {
    touch "$1"
    sort -g "$1" | awk '{ v[NR] = $1 } END {
        if (NR == 0) { printf "-\t-\t-\t0"; exit }
        i50 = int(0.5 * NR) + 1; i99 = int(0.99 * NR) + 1; if (i99 > NR) i99 = NR
        printf "%.1f\t%.1f\t%.1f\t%d", v[i50], v[i99], v[NR], NR }'
}

drop_topics() {
    local t
    for t in "$@"; do
        kafka_tool org.apache.kafka.tools.TopicCommand --bootstrap-server "$TIDEMARK_KAFKA_BOOTSTRAP" \
            --delete --if-exists --topic "$t" >/dev/null 2>&1 || log "WARNING: could not delete topic $t"
    done
}

# The workload's changes in topic $1 as "ts_us latency_ms to_producer_ms to_commit_ms" lines into $2: Kafka
# LogAppendTime (ms) - ts_us; the envelope's ts_ms (when the producer serialized the record) - ts_us; and, for
# PostgreSQL ($3), the source block's ts_ms (the commit time, whole milliseconds) - ts_us (MySQL's binlog times are
# whole seconds); "-" when absent. They say how much of the latency came before the commit (the database: WAL
# flush), between the commit and the producer (log, decoding, Tidemark's queue and merge stage), and after the
# producer (librdkafka, the broker).
latency_samples() {
    timeout 120 kcat -b "$TIDEMARK_KAFKA_BOOTSTRAP" -C -t "$1" -o beginning -e -q -f '%T\t%s\n' 2>/dev/null |
        awk -F'\t' -v with_commit="$([[ "$3" == postgres ]] && echo 1 || echo 0)" '{ i = index($2, "\"after\":"); s = substr($2, i)
                      if (!match(s, /"ts_us":[0-9]+/)) next
                      ts = substr(s, RSTART + 8, RLENGTH - 8) + 0; pre = "-"; commit = "-"
                      if (match(s, /"op":"[a-z]","ts_ms":[0-9]+/)) pre = sprintf("%.3f", substr(s, RSTART + 17, RLENGTH - 17) - ts / 1000)
                      if (with_commit && match(s, /"source":\{[^}]*"ts_ms":[0-9]+/)) {
                          src = substr(s, RSTART, RLENGTH); j = index(src, "\"ts_ms\":")
                          commit = sprintf("%.3f", substr(src, j + 8) - ts / 1000) }
                      printf "%.0f %.3f %s %s\n", ts, $1 - ts / 1000, pre, commit }' \
        >"$2"
}

# The five slowest changes of the snapshot window of latency file $1 (signal at $2 us, done at $3 us), as
# "+seconds after the signal: total ms (to commit / to producer ms)": when the stalls come, and on which side.
slowest_samples() {
    awk -v s0="$2" -v s1="$3" '$1 >= s0 && $1 <= s1 { print }' "$1" | sort -k2,2 -g -r | head -5 |
        awk -v s0="$2" '{ printf "%s+%.2fs: %.1f ms (%s to the commit, %s to the producer)", (NR > 1 ? ", " : ""), ($1 - s0) / 1e6, $2, $4, $3 }'
}

topic_records() {  # records in every partition of topic $1
    kafka_tool org.apache.kafka.tools.GetOffsetShell --bootstrap-server "$TIDEMARK_KAFKA_BOOTSTRAP" \
        --topic "$1" 2>/dev/null | awk -F: '{ s += $NF } END { print s + 0 }'
}

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

cleanup() {
    local status=$?
    set +e
    stop_load
    stop_daemon
    if [[ $pg_fsync_set == 1 ]]; then  # back to the throwaway cluster's own setting
        pg_super -c "ALTER SYSTEM RESET fsync" -c "SELECT pg_reload_conf()" >/dev/null 2>&1 || log "WARNING: could not reset fsync"
    fi
    dbz_stop 0
    log "cleaning up: tables, topics, slots, publications"
    local p
    for p in "${pg_pipelines[@]}"; do drop_pg_pipeline "$p"; done
    ((${#topics[@]})) && drop_topics "${topics[@]}"
    [[ $created_pg == 1 ]] && pg -c "DROP TABLE IF EXISTS public.${RUN}_signal, public.${RUN}_watermark, public.${RUN}_dbz_signal" >/dev/null 2>&1
    [[ $created_my == 1 ]] && my -e "DROP TABLE IF EXISTS \`${RUN}_signal\`, \`${RUN}_watermark\`, \`${RUN}_dbz_signal\`" >/dev/null 2>&1
    if [[ $created_pg == 1 ]]; then
        pg -c "DROP TABLE IF EXISTS public.${RUN}, public.${RUN}_small, public.${RUN}_bg" >/dev/null 2>&1
    fi
    if [[ $created_my == 1 ]]; then
        my -e "DROP TABLE IF EXISTS \`${RUN}\`, \`${RUN}_small\`, \`${RUN}_bg\`" >/dev/null 2>&1
    fi
    if [[ $status != 0 && -f "$WORK/daemon.log" ]]; then show_log_tail "$WORK/daemon.log" 30; fi
    if [[ "${SNAP_BENCH_KEEP:-0}" == 1 ]]; then log "kept $WORK"; else rm -rf "$WORK"; fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------------------- per database
# Sets: KIND (postgres|mysql), SCHEMA (topic middle part), create/raw-read/signal functions.
create_tables() {  # $1 = database
    if [[ "$1" == postgres ]]; then
        created_pg=1
        local t
        for t in "$RUN:$ROWS" "${RUN}_small:$SMALL_ROWS"; do
            local name="${t%%:*}" n="${t##*:}"
            pg -c "CREATE TABLE public.$name (id bigint, k int, amount numeric(12,2), created_at timestamptz, payload text)"
            pg -c "INSERT INTO public.$name SELECT i, (i % 1000)::int, (i % 100000) / 100.0,
                       timestamptz '2026-01-01' + i * interval '1 second', left(repeat(md5(i::text), 5), 150)
                   FROM generate_series(1, $n) AS i"
            pg -c "ALTER TABLE public.$name ADD PRIMARY KEY (id)"
            pg -c "VACUUM (ANALYZE) public.$name"
        done
        pg -c "CREATE TABLE public.${RUN}_bg (id bigint PRIMARY KEY, n bigint NOT NULL, ts_us bigint NOT NULL)"
        pg -c "INSERT INTO public.${RUN}_bg SELECT i, 0, 0 FROM generate_series(1, $BG_ROWS) AS i"
        # Written out now, like a table that has lived a while: otherwise the checkpointer writes the load's
        # pages (and VACUUM's hint bits) during the measurements, and the workload's commits queue behind it.
        pg_super -c "CHECKPOINT"
    else
        created_my=1
        local t
        for t in "$RUN:$ROWS" "${RUN}_small:$SMALL_ROWS"; do
            local name="${t%%:*}" n="${t##*:}" from=1 step=1000000
            my -e "CREATE TABLE \`$name\` (id BIGINT PRIMARY KEY, k INT, amount DECIMAL(12,2), created_at DATETIME(6),
                   payload VARCHAR(160)) ENGINE=InnoDB"
            while ((from <= n)); do  # not binlogged: no reader needs the load, and the binlog stays small
                local to=$((from + step - 1))
                ((to > n)) && to=$n
                my -e "SET SESSION sql_log_bin = 0; INSERT INTO \`$name\` SELECT seq, seq % 1000, (seq % 100000) / 100,
                       TIMESTAMP '2026-01-01 00:00:00' + INTERVAL seq SECOND, LEFT(REPEAT(MD5(seq), 5), 150)
                       FROM seq_${from}_to_${to}"
                from=$((to + 1))
            done
            my -e "ANALYZE TABLE \`$name\`" >/dev/null
        done
        my -e "CREATE TABLE \`${RUN}_bg\` (id BIGINT PRIMARY KEY, n BIGINT NOT NULL, ts_us BIGINT NOT NULL) ENGINE=InnoDB"
        my -e "INSERT INTO \`${RUN}_bg\` SELECT seq, 0, 0 FROM seq_1_to_${BG_ROWS}"
        # The same for InnoDB: its dirty pages of the load written to disk before the measurements.
        my -e "FLUSH TABLES \`$RUN\`, \`${RUN}_small\`, \`${RUN}_bg\` FOR EXPORT; UNLOCK TABLES"
    fi
}

start_load() {  # $1 = database
    if [[ "$1" == postgres ]]; then
        "$LOAD_BIN" --db postgres --host "$TIDEMARK_PG_HOST" --port "$TIDEMARK_PG_PORT" --user "$TIDEMARK_PG_USER" \
            --password "$TIDEMARK_PG_PASSWORD" --database "$TIDEMARK_PG_DATABASE" --table "public.${RUN}_bg" \
            --rows "$BG_ROWS" --rate "$RATE" --threads "$THREADS" >"$WORK/load.out" 2>&1 &
    else
        "$LOAD_BIN" --db mysql --host "$TIDEMARK_MYSQL_HOST" --port "$TIDEMARK_MYSQL_PORT" --user "$TIDEMARK_MYSQL_ROOT_USER" \
            --password "$TIDEMARK_MYSQL_ROOT_PASSWORD" --database "$DB" --table "${RUN}_bg" \
            --rows "$BG_ROWS" --rate "$RATE" --threads "$THREADS" >"$WORK/load.out" 2>&1 &
    fi
    load_pid=$!
}

raw_read() {  # $1 = database; prints nanoseconds
    local t0 t1
    t0="$(now_ns)"
    if [[ "$1" == postgres ]]; then
        psql "$PG_CONNINFO" -X -v ON_ERROR_STOP=1 -qc "COPY (SELECT * FROM public.$RUN) TO STDOUT" >/dev/null
    else
        mariadb --no-defaults -h "$TIDEMARK_MYSQL_HOST" -P "$TIDEMARK_MYSQL_PORT" -u "$TIDEMARK_MYSQL_USER" \
            -p"$TIDEMARK_MYSQL_PASSWORD" --quick -N -B "$DB" -e "SELECT * FROM \`$RUN\`" >/dev/null
    fi
    t1="$(now_ns)"
    echo $((t1 - t0))
}

# One Tidemark phase: $1 database, $2 table, $3 its rows, $4 chunk size, $5 label. Appends a line to $RESULTS.
run_phase() {
    local dbkind="$1" table="$2" nrows="$3" chunk="$4" label="$5"
    local name="${RUN}_${#phase_names[@]}"
    phase_names+=("$name")
    local config="$WORK/$name.yaml" state="$WORK/$name.state.json" middle qualified
    if [[ "$dbkind" == postgres ]]; then middle=public; qualified="public.$table"; else middle="$DB"; qualified="$DB.$table"; fi
    local big_topic="$name.$middle.$table" bg_topic="$name.$middle.${RUN}_bg"
    topics+=("$big_topic" "$bg_topic")
    kafka_create_topic "$big_topic" 4 >/dev/null
    kafka_tool org.apache.kafka.tools.TopicCommand --bootstrap-server "$TIDEMARK_KAFKA_BOOTSTRAP" --create \
        --if-not-exists --topic "$bg_topic" --partitions 1 --replication-factor 1 \
        --config message.timestamp.type=LogAppendTime >/dev/null

    if [[ "$dbkind" == postgres ]]; then
        pg_pipelines+=("$name")
        cat >"$config" <<EOF
name: $name
source:
  type: postgres
  host: $TIDEMARK_PG_HOST
  port: $TIDEMARK_PG_PORT
  user: $TIDEMARK_PG_USER
  password: \${TIDEMARK_PG_PASSWORD}
  database: $TIDEMARK_PG_DATABASE
  tables: [$qualified, public.${RUN}_bg]
  postgres:
    slot: $name
    publication: $name
    create_publication: true
EOF
    else
        cat >"$config" <<EOF
name: $name
source:
  type: mysql
  host: $TIDEMARK_MYSQL_HOST
  port: $TIDEMARK_MYSQL_PORT
  user: $TIDEMARK_MYSQL_USER
  password: \${TIDEMARK_MYSQL_PASSWORD}
  database: $DB
  tables: [$qualified, $DB.${RUN}_bg]
  mysql:
    server_id: $((20000 + ($$ + ${#phase_names[@]}) % 10000))
EOF
    fi
    cat >>"$config" <<EOF
sink:
  type: kafka
  kafka:
    bootstrap_servers: $TIDEMARK_KAFKA_BOOTSTRAP
$([[ -z "${SNAP_BENCH_KAFKA_YAML:-}" ]] || sed 's/^/    /' <<<"$SNAP_BENCH_KAFKA_YAML")
state:
  path: $state
  flush_interval_ms: $FLUSH_MS
snapshot:
  initial: never
  chunk_size: $chunk
  signal_table: ${RUN}_signal
  watermark_table: ${RUN}_watermark
EOF
    # More snapshot settings for every Tidemark phase, one "key: value" per line (SNAP_BENCH_SNAPSHOT_YAML).
    [[ -z "${SNAP_BENCH_SNAPSHOT_YAML:-}" ]] || sed 's/^/  /' <<<"$SNAP_BENCH_SNAPSHOT_YAML" >>"$config"
    # Top-level settings (SNAP_BENCH_YAML), e.g. $'log:\n  level: debug'.
    [[ -z "${SNAP_BENCH_YAML:-}" ]] || echo "$SNAP_BENCH_YAML" >>"$config"
    rm -f "$state"
    log "[$label] starting the daemon ($name, chunk_size $chunk)"
    : >"$WORK/daemon.log"
    "$TIDEMARK_BIN" run --config "$config" >>"$WORK/daemon.log" 2>&1 &
    daemon_pid=$!
    local i
    for ((i = 0; ; i++)); do  # streaming: the state file exists (MariaDB writes its start position at once)
        if [[ "$dbkind" == postgres ]]; then
            [[ "$(pg -c "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '$name' AND active")" == 1 ]] && break
        else
            [[ -s "$state" ]] && break
        fi
        kill -0 "$daemon_pid" 2>/dev/null || die "the daemon exited before it streamed"
        ((i < 600)) || die "the daemon is not streaming after 60 s"
        sleep 0.1
    done
    sleep 1
    local warm_us sig_us done_us
    warm_us="$(now_us)"
    start_load "$dbkind"
    # A table that is snapshotted usually streams changes too, so its topic's partitions already hold records:
    # change a few of its rows first, so that the snapshot does not pay the broker's first appends to fresh
    # partitions (SNAP_BENCH_TOUCH_ROWS, 0 = a fresh topic). Their records are not counted as snapshot records.
    if ((TOUCH_ROWS > 0)); then
        if [[ "$dbkind" == postgres ]]; then
            pg -c "UPDATE public.$table SET k = k + 1 WHERE id <= $TOUCH_ROWS" >/dev/null
        else
            my -e "UPDATE \`$table\` SET k = k + 1 WHERE id <= $TOUCH_ROWS"
        fi
    fi
    sleep "$WARMUP_S"
    local k0 d0 db0 m0 p0 p0_us sigid="${name}_sig"
    k0="$(proc_ticks "$kafka_pid")"
    d0="$(proc_ticks "$daemon_pid")"
    db0="$(server_ticks "$dbkind")"
    m0="$(machine_ticks)"
    p0="$(pressure_totals)"
    p0_us="${EPOCHREALTIME/./}"
    sig_us="$(now_us)"
    local data="{\"tables\": [\"$qualified\"]}"
    if [[ "$dbkind" == postgres ]]; then
        pg -c "INSERT INTO ${RUN}_signal (id, type, data) VALUES ('$sigid', 'execute-snapshot', '$data')"
    else
        my -e "INSERT INTO ${RUN}_signal (id, type, data) VALUES ('$sigid', 'execute-snapshot', '$data')"
    fi
    log "[$label] signal $sigid inserted at $sig_us (µs since the epoch); waiting for tables_done"
    local deadline=$(($(date +%s) + TIMEOUT_S)) s tables_done=0 cur_rows=0
    # Polled without forking a parser: three jq runs per poll took half a core from the machine measured.
    for ((i = 0; ; i++)); do
        s="$(<"$state")" 2>/dev/null || s=""
        [[ "$s" =~ \"tables_done\":[[:space:]]*([0-9]+) ]] && tables_done="${BASH_REMATCH[1]}"
        ((tables_done >= 1)) && break
        [[ "$s" != *"snapshot of $qualified refused"* ]] || die "$(jq -r '.extensions.snapshot.last_error' <<<"$s")"
        kill -0 "$daemon_pid" 2>/dev/null || die "the daemon exited during the snapshot"
        if ((i % 50 == 0 && i > 0)); then
            cur_rows="$(jq -r '.extensions.snapshot.current.rows // 0' <<<"$s" 2>/dev/null || echo "?")"
            (($(date +%s) < deadline)) || die "snapshot not done within $TIMEOUT_S s (rows so far: $cur_rows)"
            log "[$label] $cur_rows rows acknowledged"
        fi
        nap 0.05
    done
    done_us="$(now_us)"
    local hwm_kb cpu kcpu dbcpu busy pressure
    hwm_kb="$(awk '/^VmHWM:/ { print $2 }' "/proc/$daemon_pid/status")"
    cpu=$(($(proc_ticks "$daemon_pid") - d0))
    kcpu=$(($(proc_ticks "$kafka_pid") - k0))
    dbcpu=$(($(server_ticks "$dbkind") - db0))
    busy="$(busy_since "$m0")"
    pressure="$(pressure_since "$p0" "$p0_us")"
    local load_line
    stop_load
    load_line="$(cat "$WORK/load.out")"
    sleep 1  # the last workload changes reach Kafka
    stop_daemon
    log "[$label] done: $(awk -v a="$sig_us" -v b="$done_us" 'BEGIN { printf "%.1f", (b - a) / 1e6 }') s; workload: $load_line"

    # Latency samples: Kafka LogAppendTime (ms) - ts_us, for the workload's changes.
    latency_samples "$bg_topic" "$WORK/$name.latency" "$dbkind"
    local records
    records="$(topic_records "$big_topic")" && records=$((records - TOUCH_ROWS)) || records="?"
    drop_topics "$big_topic" "$bg_topic"
    [[ "$dbkind" == postgres ]] && drop_pg_pipeline "$name"
    awk -v w="$warm_us" -v s0="$sig_us" -v s1="$done_us" -v b="$WORK/$name.base" -v s="$WORK/$name.snap" '
        $1 >= w && $1 < s0 { print $2 > b } $1 >= s0 && $1 <= s1 { print $2 > s }' "$WORK/$name.latency"
    log "[$label] slowest changes during the snapshot: $(slowest_samples "$WORK/$name.latency" "$sig_us" "$done_us")"
    local base snap
    base="$(percentiles "$WORK/$name.base")"
    snap="$(percentiles "$WORK/$name.snap")"
    # label rows chunk seconds records hwm_MB cpu kcpu | base p50 p99 max n | snap p50 p99 max n | workload | dbcpu
    # busy% cpu_some%/io_full%
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$nrows" "$chunk" \
        "$(awk -v a="$sig_us" -v b="$done_us" 'BEGIN { printf "%.2f", (b - a) / 1e6 }')" "$records" \
        "$(awk -v k="$hwm_kb" 'BEGIN { printf "%.1f", k / 1024 }')" \
        "$(awk -v t="$cpu" -v h="$CLK_TCK" 'BEGIN { printf "%.1f", t / h }')" \
        "$(awk -v t="$kcpu" -v h="$CLK_TCK" 'BEGIN { printf "%.1f", t / h }')" "$base" "$snap" "$load_line" \
        "$(awk -v t="$dbcpu" -v h="$CLK_TCK" 'BEGIN { printf "%.1f", t / h }')" "$busy" "$pressure" >>"$RESULTS"
}

# A Debezium phase that could not finish: says why (with the end of the peer's log), stops the peer and the workload,
# notes it for the summary. $1 label, $2 peer output, $3 reason.
dbz_phase_failed() {
    log "[$1] Debezium peer FAILED: $3 (the benchmark goes on)"
    dbz_fail_tail "$2"
    dbz_stop 0
    stop_load
    printf '%s: FAILED, %s\n' "$1" "$3" >>"$WORK/debezium.failures"
    return 1
}

# One Debezium phase (bench/debezium): $1 database, $2 table, $3 its rows, $4 chunk size. The incremental snapshot of
# the table through Debezium's embedded engine and one KafkaProducer, with the workload running as in run_phase.
# Appends a line to $RESULTS (label "debezium <chunk>"); returns non-zero, after saying why, when the peer failed.
run_debezium_phase() {
    local dbkind="$1" table="$2" nrows="$3" chunk="$4" label="debezium $4"
    local name="${RUN}_dbz${#phase_names[@]}"
    phase_names+=("$name")
    local out="$WORK/$name.out" sig="${RUN}_dbz_signal" middle
    local args=(--kind="$dbkind" --mode=incremental-snapshot --expected="$nrows" --chunk-size="$chunk"
        --bootstrap="$TIDEMARK_KAFKA_BOOTSTRAP" --topic-prefix="$name" --offset-file="$WORK/$name.offsets"
        --signal-id="$name-snapshot" --signal-delay-ms=$(((1 + WARMUP_S) * 1000)) --timeout-s="$DBZ_TIMEOUT_S")
    # Debezium's signal table (id, type, data): the connector also writes its window watermarks there.
    if [[ "$dbkind" == postgres ]]; then
        middle=public
        pg -c "CREATE TABLE IF NOT EXISTS public.$sig (id varchar(64) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048))" ||
            { dbz_phase_failed "$label" "$out" "cannot create its signal table"; return 1; }
        pg_pipelines+=("$name")  # the connector creates slot and publication $name (publication.autocreate.mode=filtered)
        args+=(--host="$TIDEMARK_PG_HOST" --port="$TIDEMARK_PG_PORT" --user="$TIDEMARK_PG_USER" --password="$TIDEMARK_PG_PASSWORD"
            --database="$TIDEMARK_PG_DATABASE" --tables="public.$table,public.${RUN}_bg,public.$sig"
            --count-table="public.$table" --signal-table="public.$sig" --slot="$name" --publication="$name")
    else
        middle="$DB"
        my -e "CREATE TABLE IF NOT EXISTS \`$sig\` (id VARCHAR(64) PRIMARY KEY, type VARCHAR(32) NOT NULL, data VARCHAR(2048))" ||
            { dbz_phase_failed "$label" "$out" "cannot create its signal table"; return 1; }
        args+=(--host="$TIDEMARK_MYSQL_HOST" --port="$TIDEMARK_MYSQL_PORT" --user="$TIDEMARK_MYSQL_USER"
            --password="$TIDEMARK_MYSQL_PASSWORD" --database="$DB" --tables="$DB.$table,$DB.${RUN}_bg,$DB.$sig"
            --count-table="$DB.$table" --signal-table="$DB.$sig" --server-id=$((30000 + ($$ + ${#phase_names[@]}) % 10000)))
    fi
    local big_topic="$name.$middle.$table" bg_topic="$name.$middle.${RUN}_bg"
    topics+=("$big_topic" "$bg_topic" "$name.$middle.$sig")
    if ! kafka_create_topic "$big_topic" 4 >/dev/null ||
        ! kafka_tool org.apache.kafka.tools.TopicCommand --bootstrap-server "$TIDEMARK_KAFKA_BOOTSTRAP" --create \
            --if-not-exists --topic "$bg_topic" --partitions 1 --replication-factor 1 \
            --config message.timestamp.type=LogAppendTime >/dev/null; then
        dbz_phase_failed "$label" "$out" "cannot create its topics"
        return 1
    fi

    log "[$label] starting the Debezium peer ($name, incremental.snapshot.chunk.size $chunk)"
    dbz_start "$dbkind" "$out" "${args[@]}"
    dbz_wait_line "$out" streaming 300 || { dbz_phase_failed "$label" "$out" "the connector did not start streaming"; return 1; }
    sleep 1
    local warm_us sig_us done_us k0 db0 m0 p0 p0_us
    warm_us="$(now_us)"
    start_load "$dbkind"
    # The peer inserts the signal row 1 + SNAP_BENCH_WARMUP_S seconds after it reported streaming.
    dbz_wait_line "$out" signal $((WARMUP_S + 120)) || { dbz_phase_failed "$label" "$out" "no signal row inserted"; return 1; }
    k0="$(proc_ticks "$kafka_pid")"
    db0="$(server_ticks "$dbkind")"
    m0="$(machine_ticks)"
    p0="$(pressure_totals)"
    p0_us="${EPOCHREALTIME/./}"
    sig_us="$(sed -n 's/^DEBEZIUM signal inserted at_us=\([0-9]*\).*/\1/p' "$out" | head -n 1)"
    log "[$label] signal $name-snapshot inserted; waiting for $nrows snapshot records acknowledged by Kafka"
    local s=0
    dbz_wait_line "$out" result $((DBZ_TIMEOUT_S + 120)) || s=$?
    ((s == 0)) || { dbz_phase_failed "$label" "$out" "$( ((s == 2)) && echo "no result within $((DBZ_TIMEOUT_S + 120)) s" || echo "the peer stopped")"; return 1; }
    local kcpu=$(($(proc_ticks "$kafka_pid") - k0)) dbcpu=$(($(server_ticks "$dbkind") - db0)) busy pressure
    busy="$(busy_since "$m0")"
    pressure="$(pressure_since "$p0" "$p0_us")"
    local complete rows seconds rss_kb cpu_s
    complete="$(dbz_field "$out" complete)"
    rows="$(dbz_field "$out" rows)"
    seconds="$(dbz_field "$out" seconds)"
    rss_kb="$(dbz_field "$out" peak_rss_kb)"
    cpu_s="$(dbz_field "$out" window_cpu_s)"
    done_us="$(dbz_field "$out" done_us)"
    [[ "$complete" == 1 ]] || { label="$label (timeout)"; printf '%s: timed out after %s s, partial rate\n' "$label" "$DBZ_TIMEOUT_S" >>"$WORK/debezium.failures"; }
    local load_line
    stop_load
    load_line="$(cat "$WORK/load.out")"
    dbz_stop 60
    log "[$label] done: $seconds s, $rows rows; workload: $load_line"

    latency_samples "$bg_topic" "$WORK/$name.latency" "$dbkind"
    local records
    records="$(topic_records "$big_topic")" || records="?"
    drop_topics "$big_topic" "$bg_topic" "$name.$middle.$sig"
    [[ "$dbkind" == postgres ]] && drop_pg_pipeline "$name"
    rm -f "$WORK/$name.offsets"
    awk -v w="$warm_us" -v s0="$sig_us" -v s1="$done_us" -v b="$WORK/$name.base" -v s="$WORK/$name.snap" '
        $1 >= w && $1 < s0 { print $2 > b } $1 >= s0 && $1 <= s1 { print $2 > s }' "$WORK/$name.latency"
    local base snap
    base="$(percentiles "$WORK/$name.base")"
    snap="$(percentiles "$WORK/$name.snap")"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$rows" "$chunk" "$(awk -v s="$seconds" 'BEGIN { printf "%.2f", s }')" \
        "$records" "$(awk -v k="$rss_kb" 'BEGIN { printf "%.1f", k / 1024 }')" "$(awk -v c="$cpu_s" 'BEGIN { printf "%.1f", c }')" \
        "$(awk -v t="$kcpu" -v h="$CLK_TCK" 'BEGIN { printf "%.1f", t / h }')" "$base" "$snap" "$load_line" \
        "$(awk -v t="$dbcpu" -v h="$CLK_TCK" 'BEGIN { printf "%.1f", t / h }')" "$busy" "$pressure" >>"$RESULTS"
}

bench_database() {
    local dbkind="$1"
    RESULTS="$WORK/$dbkind.results"
    : >"$RESULTS"
    log "== $dbkind: creating $RUN ($ROWS rows), ${RUN}_small ($SMALL_ROWS rows), ${RUN}_bg ($BG_ROWS rows)"
    local t0
    t0="$(now_ns)"
    create_tables "$dbkind"
    log "tables created in $(awk -v a="$t0" -v b="$(now_ns)" 'BEGIN { printf "%.0f", (b - a) / 1e9 }') s"

    log "(a) raw read of $RUN, twice, with the workload running"
    start_load "$dbkind"
    sleep 2
    local r1 r2 raw_ns load_line
    r1="$(raw_read "$dbkind")"
    r2="$(raw_read "$dbkind")"
    stop_load
    load_line="$(cat "$WORK/load.out")"
    raw_ns=$((r1 < r2 ? r1 : r2))
    log "(a) $(awk -v a="$r1" -v b="$r2" 'BEGIN { printf "%.2f s, %.2f s", a / 1e9, b / 1e9 }'); workload: $load_line"

    local first_chunk="${CHUNK_SIZES%% *}" c
    run_phase "$dbkind" "${RUN}_small" "$SMALL_ROWS" "$first_chunk" "small table"
    local rep
    for ((rep = 1; rep <= REPEATS; rep++)); do  # rounds over the chunk sizes, so a slow spell hits them alike
        for c in $CHUNK_SIZES; do
            run_phase "$dbkind" "$RUN" "$ROWS" "$c" "chunk $c$( ((REPEATS == 1)) || echo " #$rep")"
        done
    done
    local dbz_note
    if [[ "${dbz_on[$dbkind]:-0}" == 1 ]]; then
        for c in $DBZ_CHUNK_SIZES; do
            run_debezium_phase "$dbkind" "$RUN" "$ROWS" "$c" || true
        done
        dbz_note="Debezium $(dbz_version "$dbkind") ($dbkind stack of bench/debezium)"
    elif [[ "${BENCH_DEBEZIUM:-1}" == 0 ]]; then
        dbz_note="off (BENCH_DEBEZIUM=0)"
    else
        dbz_note="skipped (no mvn/java, or the peer did not build)"
    fi

    if [[ "$dbkind" == postgres ]]; then
        pg -c "DROP TABLE IF EXISTS public.${RUN}, public.${RUN}_small, public.${RUN}_bg, public.${RUN}_signal, public.${RUN}_watermark, public.${RUN}_dbz_signal"
        created_pg=0
    else
        my -e "DROP TABLE IF EXISTS \`${RUN}\`, \`${RUN}_small\`, \`${RUN}_bg\`, \`${RUN}_signal\`, \`${RUN}_watermark\`, \`${RUN}_dbz_signal\`"
        created_my=0
    fi

    local raw_tool
    if [[ "$dbkind" == postgres ]]; then raw_tool='psql COPY (SELECT *) TO STDOUT'; else raw_tool='mariadb --quick SELECT *'; fi
    {
        echo
        echo "== $dbkind snapshot: $ROWS rows of ~200 bytes; workload $RATE tx/s of single-row UPDATEs on another captured table ($BG_ROWS rows); $(nproc) cores shared with the database and Kafka; load average $(cut -d' ' -f1-3 /proc/loadavg)"
        awk -F'\t' -v cores="$(nproc)" -v raw_ns="$raw_ns" -v rows="$ROWS" -v r1="$r1" -v r2="$r2" -v tool="$raw_tool" -v dbz="$dbz_note" \
            -v dbz_props="${BENCH_DEBEZIUM_PROPS:-}" -v dbz_java="${BENCH_DEBEZIUM_JAVA_OPTS:-}" \
            -v dbz_fail="$(sed 's/^/    /' "$WORK/debezium.failures")" '
            BEGIN {
                raw = rows / (raw_ns / 1e9)
                printf "(a) %s: %.2f s / %.2f s, best %.0f rows/s\n\n", tool, r1 / 1e9, r2 / 1e9, raw
                printf "%-23s %9s %6s %8s %10s %6s %9s %14s %5s %9s %14s %18s %8s %8s\n", "(b) tidemark/(c) phase", "rows", "chunk", "seconds",
                    "rows/s", "ratio", "peak RSS", "CPU s d/k/db", "busy", "stall c/io", "base p50/p99", "snap p50/p99/max", "samples", "records"
            }
            {
                is_dbz = ($1 ~ /^debezium/)
                r = ($4 > 0) ? $2 / $4 : 0; ratio = ($2 == rows) ? sprintf("%.2f", r / raw) : "-"
                printf "%-23s %9d %6d %8.2f %10.0f %6s %6.1f MB %14s %4d%% %9s %14s %18s %8d %8s%s\n", $1, $2, $3, $4, r, ratio, $6,
                    $7 "/" $8 "/" $18, $19, $20 "%", $9 "/" $10 " ms", $13 "/" $14 "/" $15 " ms", $16, $5, ($5 == $2 ? "" : " <- MISMATCH")
                loads = loads "  " $1 ": " $17 "\n"
                if (is_dbz) { dz[$3] = r; dzhwm[$3] = $6; dzlabel[$3] = $1; ndz++; next }
                if ($2 == rows) {
                    best = (r / raw > best) ? r / raw : best; if ($14 + 0 > worst99) worst99 = $14 + 0; tmhwm[$3] = $6
                    n = ++runs[$3]; rates[$3, n] = r; p99s[$3, n] = $14 + 0
                }
                hwm = ($6 > hwm) ? $6 : hwm
            }
            function median(a, c, n,    i, j, v, t) {  # of a[c, 1..n]; also sets lo and hi, its smallest and largest
                for (i = 1; i <= n; i++) v[i] = a[c, i]
                for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
                lo = v[1]; hi = v[n]
                return (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
            }
            END {
                for (c in runs) {
                    tm[c] = median(rates, c, runs[c])
                    if (runs[c] > 1) {
                        printf "chunk %d over %d runs: rows/s median %.0f (%.0f-%.0f, ratio %.2f)", c, runs[c], tm[c], lo, hi, tm[c] / raw
                        m99 = median(p99s, c, runs[c])
                        printf ", snap p99 median %.1f ms (%.1f-%.1f)\n", m99, lo, hi
                    }
                }
                printf "\nrows/s = rows / (signal inserted -> tables_done in the state file, i.e. acknowledged by Kafka)\n"
                printf "latency = Kafka LogAppendTime - ts_us (database clock when the UPDATE ran), base = before the signal, snap = while the snapshot ran\n"
                printf "CPU s d/k/db = daemon (Debezium: JVM) / Kafka broker / database server CPU seconds during the snapshot;\n"
                printf "busy = CPU in use on the whole machine meanwhile (all %d cores; 100%% = saturated); stall c/io = the share\n", cores
                printf "of that time in which some runnable task waited for a core / every busy task waited for I/O (/proc/pressure)\n"
                printf "targets (Tidemark): ratio >= 0.70 (best %.2f), p99 during the snapshot <= 20 ms (worst %.1f), peak RSS <= 100 MB (max %.1f)\n", best, worst99, hwm
                printf "\n(c) Debezium: %s\n", dbz
                if (dbz_fail != "") printf "%s\n", dbz_fail
                if (ndz) {
                    printf "    rows/s = rows / (signal row inserted -> the last snapshot record (op=r) of the table acknowledged by Kafka);\n"
                    printf "    peak RSS = VmHWM of the JVM. Settings: embedded engine, JSON converter without schemas, one KafkaProducer\n"
                    printf "    (acks=all, idempotent, linger.ms=5, keyed by the record key; each batch acknowledged before it is marked\n"
                    printf "    processed), snapshot.mode=no_data, incremental.snapshot.chunk.size = the chunk size, MariaDB\n"
                    printf "    snapshot.locking.mode=none; everything else at Debezium'"'"'s defaults (poll.interval.ms 500, max.batch.size 2048,\n"
                    printf "    max.queue.size 8192)%s%s.\n", (dbz_props != "" ? "; extra: " dbz_props : ""), (dbz_java != "" ? "; JVM: " dbz_java : "; JVM: default heap sizing")
                    for (c in dz) {
                        if (c in tm)
                            printf "    Tidemark%s / Debezium at chunk %d: %.0f / %.0f rows/s = %s%s; peak RSS %.1f / %.1f MB\n",
                                (runs[c] > 1 ? " (median)" : ""), c, tm[c], dz[c],
                                (dz[c] > 0 ? sprintf("%.2f", tm[c] / dz[c]) : "-"), (dzlabel[c] ~ /timeout/ ? " (Debezium timed out: partial rate)" : ""), tmhwm[c], dzhwm[c]
                        else
                            printf "    Debezium at chunk %d: %.0f rows/s (no Tidemark phase at that chunk size)\n", c, dz[c]
                    }
                }
                printf "workload (client side: transactions, achieved rate, round trip p50/p99 of one autocommit UPDATE):\n%s", loads
            }' "$RESULTS"
        : >"$WORK/debezium.failures"
    } | tee -a "$SUMMARY"
}

# Stock durability: the throwaway PostgreSQL cluster runs with fsync = off (scripts/lib/postgres.sh); a user's
# server flushes every commit, watermarks included. MariaDB's defaults (innodb_flush_log_at_trx_commit=1) apply.
if [[ " ${DATABASES[*]} " == *" postgres "* && "${SNAP_BENCH_PG_FSYNC:-on}" == on && "$(pg -c "SHOW fsync")" == off ]]; then
    pg_super -c "ALTER SYSTEM SET fsync = on" -c "SELECT pg_reload_conf()" >/dev/null
    pg_fsync_set=1
    sleep 0.5
    log "PostgreSQL: fsync = $(pg -c "SHOW fsync"), synchronous_commit = $(pg -c "SHOW synchronous_commit") for this run"
fi
for d in "${DATABASES[@]}"; do
    bench_database "$d"
done
echo
echo "==================== summary"
cat "$SUMMARY"
