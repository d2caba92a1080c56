#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR/../scripts
# Exactly-once benchmark: sink.kafka.exactly_once beside at-least-once delivery, same backlog, same run, same machine.
#
#   bench/exactly_once_bench.sh                          (PostgreSQL source; from the repository root or anywhere)
#   EOS_BENCH_SOURCE=mysql bench/exactly_once_bench.sh   (MariaDB source)
#
# Scenario (defaults: 500,000 single-row INSERTs in transactions of 100; then 200 single-row transactions/s for 20 s):
#   1. Builds a Release tree in build-eosbench/ (EOS_BENCH_BUILD_DIR; EOS_BENCH_SKIP_BUILD=1 takes the tidemark binary
#      already there, without cmake) and copies the binary into the work directory, so that both modes run the same one;
#      starts the source database and Kafka with scripts/servers.sh (a no-op when they run; it never stops them).
#   2. Creates its own objects, all named after this run (tmeos_<pid>): tables <name>_rows (the backlog) and <name>_lat
#      (the latency rows), and two pipelines that differ only in sink.kafka.exactly_once and in their name, which is their
#      topic prefix: <name>_alo (at-least-once) and <name>_eos (exactly-once: transactional id tidemark-<name>_eos, state
#      topic <name>_eos.tidemark.state, created by the daemon). Their four data topics (4 partitions each) are created
#      beforehand. Each daemon is started once and stopped, so that its starting point lies before the backlog:
#      PostgreSQL: a pgoutput slot of its own (one publication for both); MariaDB: the binlog is rotated (FLUSH BINARY LOGS),
#      the at-least-once daemon records the end of the binlog in its state file, the exactly-once one starts from a copy of
#      that file (its state topic is empty, so it goes on from the state file) and keeps its state in its state topic.
#   3. Writes the backlog while no daemon runs, as bench/postgres_bench.sh does (a DO block, one INSERT per row, COMMIT
#      every EOS_BENCH_TXN_ROWS; the end LSN noted inside the last transaction) or bench/mysql_bench.sh does (INSERT ...
#      SELECT of EOS_BENCH_TXN_ROWS rows per transaction from the SEQUENCE engine; the end from SHOW MASTER STATUS).
#   4. Throughput: at-least-once, then exactly-once (EOS_BENCH_ORDER=eos-first swaps them; never both at once), each from
#      its own starting point to its own topic, timed from the process start until its state file's committed position
#      reaches the end of the backlog. Exactly-once writes the state file after a Kafka transaction committed (the state
#      topic holds the state; the file is its cache), at-least-once after Kafka acknowledged: the same clock for both.
#      Also without the start-up (until the daemon logs that its source streams: exactly-once spends it in
#      init_transactions and reading its state topic). Peak RSS (VmHWM, read before SIGTERM), CPU seconds of the daemon
#      and of the broker, the Kafka transactions committed (records of the state topic). Then each topic is read to its
#      end with kcat and must hold one record per row, each key once (exactly-once: isolation.level=read_committed; also
#      read with read_uncommitted, which counts the records of aborted transactions too).
#      EOS_BENCH_REPEAT=N runs N such pairs, each run a pipeline of its own (<name>_alo2, <name>_eos2, ...: own slot or
#      copy of the start position, own topics) over the same backlog, every other pair in the other order (alo eos, eos
#      alo, alo eos, ...), and reports each run and the median of each mode.
#   5. Latency, commit -> visible, one daemon at a time (at-least-once first), each streaming from where it stopped:
#      a consumer that is not Tidemark (kcat; read_committed for exactly-once, the default for at-least-once), whose
#      output lines a python3 reader stamps with their receive time, reads the mode's latency topic; a sentinel row shows
#      that the daemon caught up; then a writer inside the database (a DO block, a MariaDB compound statement) commits
#      EOS_BENCH_RATE single-row transactions per second for EOS_BENCH_LATENCY_S seconds on a fixed schedule, each row
#      carrying its wall-clock time in microseconds taken just before its COMMIT (clock_timestamp(), SYSDATE(6): the
#      reader's clock, on this machine). Per row: latency = receive time - that time. Prints p50/p90/p99/max, and the part
#      until Tidemark produced the record (its Kafka timestamp, CreateTime) beside the part after it.
#   6. Prints a summary: rows/s of each mode, the ratio exactly-once / at-least-once (target >= 0.9), peak RSS, latency
#      percentiles of each mode and what exactly-once adds, the load average. It prints, it does not assert: exit 0
#      whether or not the target is met; non-zero only when the benchmark itself could not run.
#   7. Drops everything it created (daemons stopped, slots, publication, tables, topics), also on failure.
#
# Environment: EOS_BENCH_SOURCE (postgres | mysql), EOS_BENCH_ROWS (500000), EOS_BENCH_TXN_ROWS (100), EOS_BENCH_RATE
# (200 transactions/s), EOS_BENCH_LATENCY_S (20), EOS_BENCH_BUILD_DIR (build-eosbench), EOS_BENCH_SKIP_BUILD=1 (use
# EOS_BENCH_BUILD_DIR/tidemark as it is), EOS_BENCH_INTERVAL_MS (sink.kafka.transaction_interval_ms; unset: the daemon's
# default, 100), EOS_BENCH_FLUSH_MS (state.flush_interval_ms of both daemons, 100: the resolution of the throughput
# timing), EOS_BENCH_TIMEOUT_S (1800, per throughput run), EOS_BENCH_ORDER (alo-first | eos-first, the throughput runs),
# EOS_BENCH_REPEAT (1: pairs of throughput runs; a run of 500,000 rows lasts a few seconds, so one pair on a shared
# 2-core machine is noisy), EOS_BENCH_KEEP=1 keeps the work directory (configs, logs, the stamped latency samples).
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
ROOT="$(cd "$SCRIPT_DIR/.." && pwd -P)"
. "$ROOT/scripts/lib/common.sh"
# shellcheck source=lib.sh
. "$SCRIPT_DIR/lib.sh"
. "$ROOT/scripts/lib/kafka.sh"
cd "$ROOT"

SOURCE="${EOS_BENCH_SOURCE:-postgres}"
ROWS="${EOS_BENCH_ROWS:-500000}"
TXN_ROWS="${EOS_BENCH_TXN_ROWS:-100}"
RATE="${EOS_BENCH_RATE:-200}"
LAT_S="${EOS_BENCH_LATENCY_S:-20}"
BUILD_DIR="${EOS_BENCH_BUILD_DIR:-build-eosbench}"
INTERVAL_MS="${EOS_BENCH_INTERVAL_MS:-}"
FLUSH_MS="${EOS_BENCH_FLUSH_MS:-100}"
TIMEOUT_S="${EOS_BENCH_TIMEOUT_S:-1800}"
ORDER="${EOS_BENCH_ORDER:-alo-first}"
REPEAT="${EOS_BENCH_REPEAT:-1}"
case "$SOURCE" in
    postgres | mysql) ;;
    *) die "EOS_BENCH_SOURCE must be postgres or mysql, not '$SOURCE'" ;;
esac
case "$ORDER" in
    alo-first) MODES=(alo eos) ;;
    eos-first) MODES=(eos alo) ;;
    *) die "EOS_BENCH_ORDER must be alo-first or eos-first, not '$ORDER'" ;;
esac
for v in ROWS TXN_ROWS RATE LATENCY_S FLUSH_MS TIMEOUT_S REPEAT ${INTERVAL_MS:+INTERVAL_MS}; do
    value="${ROWS}"
    case "$v" in
        TXN_ROWS) value="$TXN_ROWS" ;; RATE) value="$RATE" ;; LATENCY_S) value="$LAT_S" ;; FLUSH_MS) value="$FLUSH_MS" ;;
        TIMEOUT_S) value="$TIMEOUT_S" ;; REPEAT) value="$REPEAT" ;; INTERVAL_MS) value="$INTERVAL_MS" ;;
    esac
    [[ "$value" =~ ^[1-9][0-9]*$ ]] || die "EOS_BENCH_$v must be a positive integer, not '$value'"
done
((ROWS % TXN_ROWS == 0)) || die "EOS_BENCH_ROWS ($ROWS) must be a multiple of EOS_BENCH_TXN_ROWS ($TXN_ROWS)"
TXNS=$((ROWS / TXN_ROWS))
LAT_ROWS=$((RATE * LAT_S))
# The throughput runs, in their order: alo eos, then eos2 alo2, alo3 eos3... (each a pipeline of its own).
RUNS=()
for ((r = 1; r <= REPEAT; r++)); do
    suffix=""
    ((r > 1)) && suffix="$r"
    if ((r % 2 == 1)); then RUNS+=("${MODES[0]}$suffix" "${MODES[1]}$suffix"); else RUNS+=("${MODES[1]}$suffix" "${MODES[0]}$suffix"); fi
done
mode_of() { echo "${1%%[0-9]*}"; }
require_cmd kcat python3

log() { printf '[eos-bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
LOAD_START="$(cut -d' ' -f1-3 /proc/loadavg)"

# ---------------------------------------------------------------------------- build and servers
[[ "$BUILD_DIR" == /* ]] || BUILD_DIR="$ROOT/$BUILD_DIR"
if [[ "${EOS_BENCH_SKIP_BUILD:-0}" == 1 ]]; then
    [[ -x "$BUILD_DIR/tidemark" ]] || die "EOS_BENCH_SKIP_BUILD=1 but there is no $BUILD_DIR/tidemark"
    log "using $BUILD_DIR/tidemark as it is (EOS_BENCH_SKIP_BUILD=1; build type $(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$BUILD_DIR/CMakeCache.txt" 2>/dev/null || echo unknown))"
else
    log "building Release in $BUILD_DIR"
    cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTIDEMARK_BUILD_TESTS=OFF >/dev/null
    cmake --build "$BUILD_DIR" --target tidemark >/dev/null
fi

if [[ $SOURCE == postgres ]]; then SERVERS=(postgres kafka); else SERVERS=(mariadb kafka); fi
"$ROOT/scripts/servers.sh" start "${SERVERS[@]}" >/dev/null 2>&1 || "$ROOT/scripts/servers.sh" start "${SERVERS[@]}"
# shellcheck disable=SC1091
. "$TIDEMARK_RUN_DIR/env.sh"
BOOTSTRAP="$TIDEMARK_KAFKA_BOOTSTRAP"

NAME="tmeos_$$"
ROWS_TABLE="${NAME}_rows"
LAT_TABLE="${NAME}_lat"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/tidemark-eosbench.XXXXXX")"
TIDEMARK_BIN="$WORK/tidemark"
declare -A CONFIG STATE DLOG TOPIC LAT_TOPIC SLOT STATE_TOPIC
for run in "${RUNS[@]}"; do
    CONFIG[$run]="$WORK/$run.yaml"
    STATE[$run]="$WORK/$run.state.json"
    DLOG[$run]="$WORK/$run.log"
    SLOT[$run]="${NAME}_$run"
    STATE_TOPIC[$run]="${NAME}_$run.tidemark.state"  # exactly-once runs: sink.kafka.state_topic's default
    : >"${DLOG[$run]}"
done
declare -A MODE_NAME=([alo]="at-least-once" [eos]="exactly-once")
daemon_pid=""
kcat_pid=""
stamp_pid=""
created_tables=0
created_topics=0

if [[ $SOURCE == postgres ]]; then
    export PGPASSWORD="$TIDEMARK_PG_PASSWORD" PGCONNECT_TIMEOUT=10
    CONNINFO="host=$TIDEMARK_PG_HOST port=$TIDEMARK_PG_PORT user=$TIDEMARK_PG_USER dbname=$TIDEMARK_PG_DATABASE"
    sql() { psql "$CONNINFO" -X -v ON_ERROR_STOP=1 -qAt "$@"; }
    SCHEMA=public
    PUB="$NAME"
else
    DB="$TIDEMARK_MYSQL_DATABASE"
    my_root() { mariadb --no-defaults -h "$TIDEMARK_MYSQL_HOST" -P "$TIDEMARK_MYSQL_PORT" -u "$TIDEMARK_MYSQL_ROOT_USER" \
        -p"$TIDEMARK_MYSQL_ROOT_PASSWORD" -N -B "$@"; }
    SCHEMA="$DB"
fi
for run in "${RUNS[@]}"; do TOPIC[$run]="${NAME}_$run.$SCHEMA.$ROWS_TABLE"; done
for mode in alo eos; do LAT_TOPIC[$mode]="${NAME}_$mode.$SCHEMA.$LAT_TABLE"; done

drop_slot() {  # waits until the slot is inactive (a walsender lingers briefly after its client left)
    local slot="$1" i
    for ((i = 0; i < 100; i++)); do
        [[ "$(sql -c "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '$slot' AND active")" == 0 ]] && break
        sleep 0.1
    done
    sql -c "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '$slot'" >/dev/null ||
        log "WARNING: could not drop slot $slot (drop it by hand: SELECT pg_drop_replication_slot('$slot'))"
}

stop_consumer() {
    if [[ -n "$kcat_pid" ]]; then terminate "$kcat_pid" 50; kcat_pid=""; fi
    if [[ -n "$stamp_pid" ]]; then terminate "$stamp_pid" 50; stamp_pid=""; fi
}

cleanup() {
    local status=$?
    set +e
    stop_consumer
    stop_daemon
    log "cleaning up: $([[ $SOURCE == postgres ]] && echo "slots, publication, ")tables, topics"
    if [[ $SOURCE == postgres ]]; then
        local i
        for ((i = 0; i < 60; i++)); do  # a server restarted by another session comes back with our slots
            sql -c "SELECT 1" >/dev/null 2>&1 && break
            sleep 1
        done
        local run
        for run in "${RUNS[@]}"; do drop_slot "${SLOT[$run]}"; done
        sql -c "DROP PUBLICATION IF EXISTS $PUB" >/dev/null 2>&1
        [[ $created_tables == 1 ]] && sql -c "DROP TABLE IF EXISTS public.$ROWS_TABLE, public.$LAT_TABLE" >/dev/null 2>&1
    else
        [[ $created_tables == 1 ]] && my_root -e "DROP TABLE IF EXISTS \`$DB\`.\`$ROWS_TABLE\`, \`$DB\`.\`$LAT_TABLE\`" >/dev/null 2>&1
    fi
    # The data topics and the state topics: one regular expression, one JVM.
    [[ $created_topics == 1 ]] &&
        kafka_tool org.apache.kafka.tools.TopicCommand --bootstrap-server "$BOOTSTRAP" --delete --if-exists \
            --topic "${NAME}_(alo|eos)[0-9]*\\..*" >/dev/null 2>&1
    if [[ $status != 0 ]]; then
        for run in "${RUNS[@]}"; do [[ -s "${DLOG[$run]}" ]] && show_log_tail "${DLOG[$run]}" 30; done
    fi
    if [[ "${EOS_BENCH_KEEP:-0}" == 1 ]]; then log "kept $WORK"; else rm -rf "$WORK"; fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------------------- helpers
now_ns() { date +%s%N; }
kafka_pid="$(cat "$KAFKA_PID_FILE" 2>/dev/null || echo self)"
secs() { awk -v t="$1" -v h="$CLK_TCK" 'BEGIN { printf "%.1f", t / h }'; }
hwm_of() { awk '/^VmHWM:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }
lsn_num() { local hi="${1%/*}" lo="${1#*/}"; echo $(((16#$hi << 32) + 16#$lo)); }
binlog_seq() { local s="${1##*.}"; echo $((10#$s)); }

start_daemon() {  # MODE
    "$TIDEMARK_BIN" run --config "${CONFIG[$1]}" >>"${DLOG[$1]}" 2>&1 &
    daemon_pid=$!
}

# Prints the committed position in MODE's state file ("X/Y" for PostgreSQL, "file pos" for MariaDB), or nothing.
state_position() {
    local content
    [[ -f "${STATE[$1]}" ]] || return 0
    content="$(<"${STATE[$1]}")" || return 0
    if [[ $SOURCE == postgres ]]; then
        [[ "$content" =~ \"position\":\ *\"pg:([0-9A-F]+/[0-9A-F]+)\" ]] && echo "${BASH_REMATCH[1]}"
    else
        [[ "$content" =~ file=([^\;\"]+)\;pos=([0-9]+) ]] && echo "${BASH_REMATCH[1]} ${BASH_REMATCH[2]}"
    fi
    return 0
}

# True once MODE's committed position lies at or past the end of the backlog.
reached_end() {
    local p f
    p="$(state_position "$1")"
    [[ -n "$p" ]] || return 1
    if [[ $SOURCE == postgres ]]; then
        (($(lsn_num "$p") >= END_NUM))
    else
        read -r f p <<<"$p"
        local s e
        s="$(binlog_seq "$f")"
        e="$(binlog_seq "$END_FILE")"
        ((s > e || (s == e && p >= END_POS)))
    fi
}

# The records of a topic read to its end: prints "records distinct-keys" ("? ?" when kcat failed).
count_records() {  # TOPIC ISOLATION
    local out
    out="$(timeout 900 kcat -C -b "$BOOTSTRAP" -t "$1" -o beginning -e -q -X "isolation.level=$2" -f '%k\n' \
        2>>"$WORK/kcat-count.log" | sort | uniq -c | awk '{ n += $1; k++ } END { printf "%d %d\n", n, k }')" || out="? ?"
    echo "$out"
}

# ---------------------------------------------------------------------------- the latency reader
# Stamps each line of kcat's output (Kafka timestamp TAB value) with the time it arrived, and writes
# recv_us TAB kafka_ts_ms TAB phase TAB id TAB commit_us TAB source_ts_ms, one line each, flushed at once.
cat >"$WORK/stamp.py" <<'PY'
import json, sys, time
out = open(sys.argv[1], "w", buffering=1)
readline = sys.stdin.buffer.readline
while True:
    line = readline()
    if not line:
        break
    recv_us = int(time.time() * 1e6)
    try:
        kafka_ts, value = line.rstrip(b"\n").split(b"\t", 1)
        record = json.loads(value)
        after = record.get("after") or {}
        source = record.get("source") or {}
        out.write("%d\t%s\t%s\t%s\t%s\t%s\n" % (recv_us, kafka_ts.decode(), after.get("phase"), after.get("id"),
                                                after.get("commit_us"), source.get("ts_ms")))
    except (ValueError, AttributeError) as e:
        out.write("#unparsed\t%d\t%r\n" % (recv_us, line[:200]))
PY
# Latency figures of one phase: prints "rows distinct duplicates missing p50 p90 p99 max mean produced_p50 produced_p99
# srcts_p50 rate" (milliseconds; produced: commit -> the record's Kafka timestamp; srcts: receive - source.ts_ms).
cat >"$WORK/latency.py" <<'PY'
import math, sys
path, phase, expected = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
lat, produced, srcts, commits, seen = [], [], [], [], {}
for line in open(path):
    f = line.rstrip("\n").split("\t")
    if len(f) != 6 or f[0].startswith("#") or f[2] == "None" or int(f[2]) != phase or int(f[3]) <= 0:
        continue
    recv_us, kafka_ms, rid, commit_us = int(f[0]), int(f[1]), int(f[3]), int(f[4])
    seen[rid] = seen.get(rid, 0) + 1
    if seen[rid] > 1:
        continue
    lat.append((recv_us - commit_us) / 1000.0)
    produced.append(kafka_ms - commit_us / 1000.0)
    if f[5] != "None":
        srcts.append(recv_us / 1000.0 - int(f[5]))
    commits.append(commit_us)
def pct(v, p):
    if not v:
        return float("nan")
    s = sorted(v)
    return s[max(0, math.ceil(p * len(s)) - 1)]
n = len(lat)
rate = (n - 1) / ((max(commits) - min(commits)) / 1e6) if n > 1 and max(commits) > min(commits) else float("nan")
print(sum(seen.values()), n, sum(c - 1 for c in seen.values()), max(0, expected - n),
      " ".join("%.1f" % x for x in (pct(lat, .5), pct(lat, .9), pct(lat, .99), max(lat) if lat else float("nan"),
                                    sum(lat) / n if n else float("nan"), pct(produced, .5), pct(produced, .99),
                                    pct(srcts, .5), rate)))
PY

# ---------------------------------------------------------------------------- setup
log "run $NAME ($SOURCE source): $ROWS rows in $TXNS transactions of $TXN_ROWS, then $RATE tx/s for $LAT_S s; work dir $WORK"
cp "$BUILD_DIR/tidemark" "$TIDEMARK_BIN"
if [[ $SOURCE == postgres ]]; then
    for ((i = 0; ; i++)); do  # another session may be restarting the shared server
        sql -c "SELECT 1" >/dev/null 2>&1 && break
        ((i < 60)) || die "PostgreSQL at $TIDEMARK_PG_HOST:$TIDEMARK_PG_PORT does not answer"
        sleep 1
    done
    created_tables=1
    sql -c "CREATE TABLE public.$ROWS_TABLE (id bigint PRIMARY KEY, payload text, n int, at timestamptz)" \
        -c "CREATE TABLE public.$LAT_TABLE (id bigint PRIMARY KEY, phase int, commit_us bigint)"
else
    created_tables=1
    my_root -e "CREATE TABLE \`$DB\`.\`$ROWS_TABLE\` (id BIGINT PRIMARY KEY, payload VARCHAR(64), n INT, at DATETIME(6));
                CREATE TABLE \`$DB\`.\`$LAT_TABLE\` (id BIGINT PRIMARY KEY, phase INT, commit_us BIGINT)"
fi

log "creating topics ${NAME}_<run>.$SCHEMA.$ROWS_TABLE for runs ${RUNS[*]} and ${NAME}_{alo,eos}.$SCHEMA.$LAT_TABLE (4 partitions each)"
created_topics=1
for run in "${RUNS[@]}"; do kafka_create_topic "${TOPIC[$run]}" 4 >/dev/null; done
for mode in alo eos; do kafka_create_topic "${LAT_TOPIC[$mode]}" 4 >/dev/null; done

# The configurations differ in their name (the topic prefix), their starting point and exactly_once.
write_config() {  # RUN
    local run="$1" mode
    mode="$(mode_of "$1")"
    {
        echo "# Written by bench/exactly_once_bench.sh (run $run, ${MODE_NAME[$mode]})."
        echo "name: ${NAME}_$run"
        echo "source:"
        if [[ $SOURCE == postgres ]]; then
            cat <<EOF
  type: postgres
  host: $TIDEMARK_PG_HOST
  port: $TIDEMARK_PG_PORT
  user: $TIDEMARK_PG_USER
  password: \${TIDEMARK_PG_PASSWORD}
  database: $TIDEMARK_PG_DATABASE
  tables: [public.$ROWS_TABLE, public.$LAT_TABLE]
  postgres:
    slot: ${SLOT[$run]}
    publication: $PUB
    create_publication: true
EOF
        else
            cat <<EOF
  type: mysql
  host: $TIDEMARK_MYSQL_HOST
  port: $TIDEMARK_MYSQL_PORT
  user: $TIDEMARK_MYSQL_USER
  password: \${TIDEMARK_MYSQL_PASSWORD}
  tables: [$DB.$ROWS_TABLE, $DB.$LAT_TABLE]
  mysql:
    server_id: $((40000 + $$ % 10000 + 10000 * $([[ $mode == eos ]] && echo 1 || echo 0)))
EOF
        fi
        cat <<EOF
sink:
  type: kafka
  kafka:
    bootstrap_servers: $BOOTSTRAP
    topic_creation:
      enabled: true
      partitions: 4
EOF
        if [[ $mode == eos ]]; then
            echo "    exactly_once: true"
            [[ -n "$INTERVAL_MS" ]] && echo "    transaction_interval_ms: $INTERVAL_MS"
        fi
        cat <<EOF
# The log only: no initial snapshot.
snapshot:
  initial: never
state:
  path: ${STATE[$run]}
  flush_interval_ms: $FLUSH_MS
EOF
    } >"${CONFIG[$run]}"
}
for run in "${RUNS[@]}"; do write_config "$run"; done

# Each daemon once, so that its starting point lies before the backlog.
if [[ $SOURCE == postgres ]]; then
    for run in "${RUNS[@]}"; do
        log "starting the $run daemon once to create its slot ${SLOT[$run]} (and the publication $PUB)"
        start_daemon "$run"
        for ((i = 0; ; i++)); do
            [[ "$(sql -c "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '${SLOT[$run]}' AND active")" == 1 ]] && break
            kill -0 "$daemon_pid" 2>/dev/null || die "the $run daemon exited before its slot became active"
            ((i < 600)) || die "slot ${SLOT[$run]} not active after 60 s"
            sleep 0.1
        done
        stop_daemon
    done
    sql -c "SELECT slot_name, confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name LIKE '${NAME}\_%' ORDER BY 1" |
        while IFS='|' read -r s l; do log "slot $s at $l"; done
else
    my_root -e "FLUSH BINARY LOGS"
    log "starting the alo daemon once to record the end of the binlog as its position"
    start_daemon alo
    for ((i = 0; ; i++)); do
        [[ -n "$(state_position alo)" ]] && break
        kill -0 "$daemon_pid" 2>/dev/null || die "the alo daemon exited before it recorded a position"
        ((i < 600)) || die "no position after 60 s"
        sleep 0.1
    done
    stop_daemon
    read -r START_FILE START_POS <<<"$(state_position alo)"
    log "start position $START_FILE:$START_POS, for every run (copies of that state file)"
    for run in "${RUNS[@]}"; do
        [[ $run == alo ]] && continue
        # The same position under the run's pipeline name (a state file names its pipeline).
        sed "s/\"pipeline\": *\"${NAME}_alo\"/\"pipeline\": \"${NAME}_$run\"/" "${STATE[alo]}" >"${STATE[$run]}"
        grep -q "\"${NAME}_$run\"" "${STATE[$run]}" || die "cannot rename the pipeline in the copied state file ${STATE[$run]}"
        [[ "$(mode_of "$run")" == eos ]] || continue
        # Exactly-once: once, so that its state topic and transactional id exist before its timed run (the empty
        # state topic sends it to the state file).
        log "starting the $run daemon once (it goes on from its state file: its state topic is empty)"
        start_daemon "$run"
        for ((i = 0; ; i++)); do
            grep -q 'mysql: streaming the binlog' "${DLOG[$run]}" 2>/dev/null && break
            kill -0 "$daemon_pid" 2>/dev/null || die "the $run daemon exited before it streamed"
            ((i < 600)) || die "the $run daemon did not stream within 60 s"
            sleep 0.1
        done
        sleep 1
        stop_daemon
    done
fi
for run in "${RUNS[@]}"; do
    if grep -q ' error ' "${DLOG[$run]}" 2>/dev/null; then show_log_tail "${DLOG[$run]}" 20; die "the $run daemon logged an error on its first start"; fi
done

# ---------------------------------------------------------------------------- backlog
log "writing $ROWS rows (transactions of $TXN_ROWS) with no daemon running"
t0="$(now_ns)"
if [[ $SOURCE == postgres ]]; then
    notice="$(sql -c "
DO \$\$
DECLARE
  i bigint := 0;
BEGIN
  FOR t IN 1..$TXNS LOOP
    FOR r IN 1..$TXN_ROWS LOOP
      i := i + 1;
      INSERT INTO public.$ROWS_TABLE VALUES (i, md5(i::text) || md5((i * 7)::text), (i % 1000)::int, clock_timestamp());
    END LOOP;
    IF t = $TXNS THEN
      RAISE NOTICE 'tmbench_end lsn=%', pg_current_wal_insert_lsn();
    END IF;
    COMMIT;
  END LOOP;
END
\$\$" 2>&1)"
    [[ "$notice" =~ tmbench_end\ lsn=([0-9A-F]+/[0-9A-F]+) ]] || die "no end LSN from the writer: $notice"
    END_LSN="${BASH_REMATCH[1]}"
    END_NUM="$(lsn_num "$END_LSN")"
    [[ "$(sql -c "SELECT count(*) FROM public.$ROWS_TABLE")" == "$ROWS" ]] || die "the table does not hold $ROWS rows"
    backlog_mb="$(sql -c "SELECT round(pg_wal_lsn_diff('$END_LSN', confirmed_flush_lsn) / 1048576.0) FROM pg_replication_slots WHERE slot_name = '${SLOT[alo]}'")"
    END_DESC="$END_LSN"
else
    for ((t = 0; t < TXNS; t++)); do
        a=$((t * TXN_ROWS + 1)); b=$(((t + 1) * TXN_ROWS))
        echo "INSERT INTO \`$DB\`.\`$ROWS_TABLE\` SELECT seq, CONCAT(MD5(seq), MD5(seq * 7)), seq % 1000, NOW(6) FROM seq_${a}_to_${b};"
    done | my_root -D "$DB"
    read -r END_FILE END_POS <<<"$(my_root -e "SHOW MASTER STATUS" | awk '{ print $1, $2 }')"
    [[ "$(my_root -e "SELECT COUNT(*) FROM \`$DB\`.\`$ROWS_TABLE\`")" == "$ROWS" ]] || die "the table does not hold $ROWS rows"
    if [[ "$END_FILE" == "$START_FILE" ]]; then
        backlog_mb="$(awk -v a="$START_POS" -v b="$END_POS" 'BEGIN { printf "%.0f", (b - a) / 1048576 }')"
    else
        backlog_mb="? (the binlog rotated: $START_FILE -> $END_FILE)"
    fi
    END_DESC="$END_FILE:$END_POS"
fi
write_s="$(awk -v a="$t0" -v b="$(now_ns)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')"
log "wrote in $write_s s; the backlog ends at $END_DESC (~$backlog_mb MB of $([[ $SOURCE == postgres ]] && echo WAL || echo binlog))"

# ---------------------------------------------------------------------------- throughput
declare -A NS HWM CPU KCPU STARTUP_NS COMMITS RECORDS KEYS ALL_RECORDS
if [[ $SOURCE == postgres ]]; then STREAM_LINE='postgres: streaming slot'; else STREAM_LINE='mysql: streaming the binlog'; fi
state_commits() {  # RUN: its committed Kafka transactions so far = the records of its state topic (one per commit)
    timeout 120 kcat -C -b "$BOOTSTRAP" -t "${STATE_TOPIC[$1]}" -o beginning -e -q -X isolation.level=read_committed -f 'x\n' \
        2>>"$WORK/kcat-count.log" | wc -l
}
run_throughput() {  # RUN
    local run="$1" mode i t0 t1 k0 deadline lines0 ts commits0=0
    mode="$(mode_of "$run")"
    [[ $mode == eos ]] && commits0="$(state_commits "$run")"
    log "throughput, run $run (${MODE_NAME[$mode]}): to ${TOPIC[$run]}, until the committed position reaches $END_DESC"
    lines0="$(wc -l <"${DLOG[$run]}")"
    k0="$(proc_ticks "$kafka_pid")"
    t0="$(now_ns)"
    start_daemon "$run"
    HWM[$run]=0
    deadline=$(($(date +%s) + TIMEOUT_S))
    for ((i = 0; ; i++)); do
        reached_end "$run" && break
        kill -0 "$daemon_pid" 2>/dev/null || die "the $run daemon exited during its run"
        (($(date +%s) < deadline)) || die "the $run daemon did not reach $END_DESC within $TIMEOUT_S s (committed: $(state_position "$run"))"
        ((i % 20 == 0)) && HWM[$run]="$(hwm_of "$daemon_pid")"  # a fallback: the read below counts
        nap 0.02
    done
    t1="$(now_ns)"
    NS[$run]=$((t1 - t0))
    HWM[$run]="$(hwm_of "$daemon_pid")"
    CPU[$run]="$(proc_ticks "$daemon_pid")"
    KCPU[$run]=$(($(proc_ticks "$kafka_pid") - k0))
    # Its start-up (configuration, Kafka; exactly-once: init_transactions and reading the state topic): from the
    # process start to its log line saying that the source streams (the log's clock is milliseconds).
    ts="$(tail -n +"$((lines0 + 1))" "${DLOG[$run]}" | grep -m1 -F "$STREAM_LINE" | cut -d' ' -f1)" || ts=""
    STARTUP_NS[$run]=0
    [[ -n "$ts" ]] && STARTUP_NS[$run]=$(($(date -d "$ts" +%s%N) - t0))
    log "throughput, run $run: $(awk -v n="${NS[$run]}" -v r="$ROWS" -v s="${STARTUP_NS[$run]}" 'BEGIN { printf "%.2f s (start-up %.2f s), %.0f rows/s", n / 1e9, s / 1e9, r / (n / 1e9) }'), peak RSS $((HWM[$run] / 1024)) MB"
    stop_daemon
    COMMITS[$run]="-"
    [[ $mode == eos ]] && COMMITS[$run]=$(($(state_commits "$run") - commits0))
    return 0
}
for run in "${RUNS[@]}"; do
    run_throughput "$run"
done

log "counting the records of each topic (kcat to the end)"
for run in "${RUNS[@]}"; do
    ALL_RECORDS[$run]="-"
    isolation=read_uncommitted
    [[ "$(mode_of "$run")" == eos ]] && isolation=read_committed
    read -r records keys <<<"$(count_records "${TOPIC[$run]}" "$isolation")"
    RECORDS[$run]="$records" KEYS[$run]="$keys"
    if [[ $isolation == read_committed ]]; then
        read -r records _ <<<"$(count_records "${TOPIC[$run]}" read_uncommitted)"
        ALL_RECORDS[$run]="$records"
    fi
done

# ---------------------------------------------------------------------------- latency
declare -A LAT
if [[ $SOURCE == postgres ]]; then
    sentinel() { sql -c "INSERT INTO public.$LAT_TABLE VALUES (-$1, $1, (extract(epoch from clock_timestamp()) * 1000000)::bigint)"; }
    latency_writer() {  # PHASE: RATE single-row transactions per second on a fixed schedule, LAT_ROWS of them
        sql -c "
DO \$\$
DECLARE
  t0 double precision := extract(epoch from clock_timestamp());
  w double precision;
BEGIN
  FOR i IN 1..$LAT_ROWS LOOP
    w := t0 + (i - 1)::double precision / $RATE - extract(epoch from clock_timestamp());
    IF w > 0 THEN
      PERFORM pg_sleep(w);
    END IF;
    INSERT INTO public.$LAT_TABLE VALUES ($1::bigint * 1000000000 + i, $1, (extract(epoch from clock_timestamp()) * 1000000)::bigint);
    COMMIT;
  END LOOP;
END
\$\$"
    }
else
    sentinel() { my_root -e "INSERT INTO \`$DB\`.\`$LAT_TABLE\` VALUES (-$1, $1, CAST(UNIX_TIMESTAMP(SYSDATE(6)) * 1000000 AS SIGNED))"; }
    latency_writer() {  # a compound statement: no stored procedure to drop
        my_root -D "$DB" <<SQL
DELIMITER //
BEGIN NOT ATOMIC
  DECLARE i INT DEFAULT 0;
  DECLARE t0 DECIMAL(20,6) DEFAULT UNIX_TIMESTAMP(SYSDATE(6));
  DECLARE w DECIMAL(20,6);
  WHILE i < $LAT_ROWS DO
    SET w = t0 + i / $RATE - UNIX_TIMESTAMP(SYSDATE(6));
    IF w > 0 THEN
      DO SLEEP(w);
    END IF;
    START TRANSACTION;
    INSERT INTO \`$LAT_TABLE\` VALUES ($1 * 1000000000 + i + 1, $1, CAST(UNIX_TIMESTAMP(SYSDATE(6)) * 1000000 AS SIGNED));
    COMMIT;
    SET i = i + 1;
  END WHILE;
END//
DELIMITER ;
SQL
    }
fi

run_latency() {  # MODE PHASE
    local mode="$1" phase="$2" out="$WORK/$1.latency.tsv" fifo="$WORK/$1.fifo" i n t0 t1
    local -a iso=()
    [[ $mode == eos ]] && iso=(-X isolation.level=read_committed)
    log "latency, ${MODE_NAME[$mode]}: daemon streaming, kcat ${iso[*]:-(default isolation)} on ${LAT_TOPIC[$mode]}"
    start_daemon "$mode"
    mkfifo "$fifo"
    python3 "$WORK/stamp.py" "$out" <"$fifo" &
    stamp_pid=$!
    kcat -C -b "$BOOTSTRAP" -t "${LAT_TOPIC[$mode]}" -o beginning -u -q "${iso[@]}" -f '%T\t%s\n' \
        >"$fifo" 2>"$WORK/$mode.kcat.log" &
    kcat_pid=$!
    sentinel "$phase"
    for ((i = 0; ; i++)); do  # the daemon caught up (and the reader reads) once the sentinel arrived
        [[ -f "$out" ]] && awk -F'\t' -v p="$phase" '$3 == p && $4 == -p { f = 1 } END { exit !f }' "$out" && break
        kill -0 "$daemon_pid" 2>/dev/null || die "the $mode daemon exited before it caught up"
        kill -0 "$kcat_pid" 2>/dev/null || { cat "$WORK/$mode.kcat.log" >&2; die "kcat exited"; }
        ((i < 1200)) || die "the sentinel row did not reach the $mode reader within 120 s"
        sleep 0.1
    done
    log "latency, ${MODE_NAME[$mode]}: caught up; writing $LAT_ROWS single-row transactions at $RATE/s"
    t0="$(now_ns)"
    latency_writer "$phase" >/dev/null || die "the latency writer failed (see above: a server restarted by another session?)"
    t1="$(now_ns)"
    for ((i = 0; ; i++)); do
        n="$(awk -F'\t' -v p="$phase" '$3 == p && $4 > 0 { n++ } END { print n + 0 }' "$out")"
        ((n >= LAT_ROWS)) && break
        kill -0 "$daemon_pid" 2>/dev/null || die "the $mode daemon exited during the latency run"
        if ((i >= 300)); then log "WARNING: only $n of $LAT_ROWS rows reached the $mode reader 30 s after the writer ended"; break; fi
        sleep 0.1
    done
    stop_consumer
    stop_daemon
    rm -f "$fifo"
    LAT[$mode]="$(python3 "$WORK/latency.py" "$out" "$phase" "$LAT_ROWS")"
    log "latency, ${MODE_NAME[$mode]}: writer $(awk -v n="$((t1 - t0))" 'BEGIN { printf "%.1f", n / 1e9 }') s; rows/distinct/duplicates/missing + p50 p90 p99 max mean (ms)...: ${LAT[$mode]}"
}
phase=0
for mode in alo eos; do
    phase=$((phase + 1))
    run_latency "$mode" "$phase"
done

# ---------------------------------------------------------------------------- report
echo
echo "== Exactly-once beside at-least-once, $SOURCE source ($(nproc) cores, shared with the database and Kafka)"
echo "throughput: $ROWS single-row INSERTs in transactions of $TXN_ROWS (~$backlog_mb MB of log), each run from its own starting point; runs in order: ${RUNS[*]}"
for run in "${RUNS[@]}"; do
    echo "$run $(mode_of "$run") ${NS[$run]} ${STARTUP_NS[$run]} ${HWM[$run]} $(secs "${CPU[$run]}") $(secs "${KCPU[$run]}") ${RECORDS[$run]} ${KEYS[$run]} ${ALL_RECORDS[$run]} ${COMMITS[$run]}"
done | awk -v rows="$ROWS" -v repeat="$REPEAT" '
function median(v, n,    i, j, t, s) {  # of v[1..n]
    for (i = 1; i <= n; i++) s[i] = v[i]
    for (i = 2; i <= n; i++) for (j = i; j > 1 && s[j - 1] > s[j]; j--) { t = s[j]; s[j] = s[j - 1]; s[j - 1] = t }
    return n % 2 ? s[(n + 1) / 2] : (s[n / 2] + s[n / 2 + 1]) / 2
}
{
    run = $1; mode = $2; secs = $3 / 1e9; rate = rows / secs; srate = ($4 > 0 && $3 > $4) ? rows / (($3 - $4) / 1e9) : 0
    n[mode]++; R[mode, n[mode]] = rate; S[mode, n[mode]] = srate; M[mode, n[mode]] = $5 / 1024; SU[mode, n[mode]] = $4 / 1e9
    if (mode == "eos" && $11 ~ /^[0-9]+$/ && $11 > 0) { C[n[mode]] = $11; CS[n[mode]] = ($3 - $4) / 1e6 / $11 }
    label = (mode == "alo" ? "at-least-once" : "exactly-once") (repeat > 1 ? " (" run ")" : "")
    check = ($8 == rows && $9 == rows) ? "" : "  <- MISMATCH (expected " rows ")"
    extra = mode == "eos" ? sprintf(" (read_committed; %s with read_uncommitted; %s Kafka transactions)", $10, $11) : ""
    lines[NR] = sprintf("%-22s %8.2f %9.2f %10.0f %10.0f %7.1f MB %9s %9s   %s / %s%s%s", label, secs, $4 / 1e9, rate, srate, $5 / 1024, $6, $7, $8, $9, check, extra)
    if (mode == "eos" && $10 ~ /^[0-9]+$/ && $8 ~ /^[0-9]+$/ && $10 != $8) lines[NR] = lines[NR] "  <- " ($10 - $8) " records of aborted transactions"
}
END {
    printf "%-22s %8s %9s %10s %10s %10s %9s %9s   %s\n", "run", "seconds", "start-up", "rows/s", "streaming", "peak RSS", "CPU s", "broker s", "records / distinct keys in its topic"
    for (i = 1; i <= NR; i++) print lines[i]
    for (k = 1; k <= n["alo"]; k++) { ra[k] = R["alo", k]; sa[k] = S["alo", k]; ma[k] = M["alo", k] }
    for (k = 1; k <= n["eos"]; k++) { re[k] = R["eos", k]; se[k] = S["eos", k]; me[k] = M["eos", k]; sue[k] = SU["eos", k] }
    ar = median(ra, n["alo"]); er = median(re, n["eos"]); as = median(sa, n["alo"]); es = median(se, n["eos"])
    if (repeat > 1) {
        printf "%-22s %8s %9s %10.0f %10.0f %7.1f MB\n", "median at-least-once", "", "", ar, as, median(ma, n["alo"])
        printf "%-22s %8s %9s %10.0f %10.0f %7.1f MB\n", "median exactly-once", "", "", er, es, median(me, n["eos"])
    }
    printf "(rows/s: from the process start; streaming: from the log line saying the source streams, i.e. without the start-up)\n"
    printf "\nthroughput ratio exactly-once / at-least-once %.2f (%starget >= 0.90): %s\n", er / ar, (repeat > 1 ? "medians of " repeat " runs each; " : ""), (er / ar >= 0.9 ? "target met" : "NOT met")
    if (as > 0 && es > 0) printf "without the start-up: %.2f; exactly-once start-up %.2f s%s (at-least-once: %.2f s)\n", es / as, median(sue, n["eos"]), (repeat > 1 ? " (median)" : ""), SU["alo", 1]
    for (k = 1; k <= n["eos"]; k++) if (k in C) printf "exactly-once run %d: %d Kafka transactions, ~%.0f rows each, one every %.0f ms while streaming\n", k, C[k], rows / C[k], CS[k]
}'
echo
echo "latency, commit -> visible to a kcat consumer: $RATE single-row transactions/s for $LAT_S s ($LAT_ROWS rows) with the daemon streaming"
awk -v a="${LAT[alo]}" -v e="${LAT[eos]}" -v src="$SOURCE" -v expected="$LAT_ROWS" 'BEGIN {
    split(a, A, " "); split(e, E, " ")
    printf "%-15s %-18s %6s %5s %7s %7s %7s %7s %7s %9s %9s %9s\n", "mode", "consumer isolation", "rows", "dups", "p50 ms", "p90 ms", "p99 ms", "max ms", "mean", "prod p50", "prod p99", "rate tx/s"
    printf "%-15s %-18s %6s %5s %7s %7s %7s %7s %7s %9s %9s %9s\n", "at-least-once", "default", A[2], A[3], A[5], A[6], A[7], A[8], A[9], A[10], A[11], A[13]
    printf "%-15s %-18s %6s %5s %7s %7s %7s %7s %7s %9s %9s %9s\n", "exactly-once", "read_committed", E[2], E[3], E[5], E[6], E[7], E[8], E[9], E[10], E[11], E[13]
    print "(prod: commit -> the record'"'"'s Kafka timestamp, set when Tidemark produced it; milliseconds, so about -1..+1 ms of noise)"
    if (A[4] > 0 || E[4] > 0) printf "MISSING rows at the reader: at-least-once %d, exactly-once %d (of %d)\n", A[4], E[4], expected
    printf "\nadded by exactly-once: p50 %+.1f ms, p90 %+.1f ms, p99 %+.1f ms, max %+.1f ms, mean %+.1f ms\n", E[5] - A[5], E[6] - A[6], E[7] - A[7], E[8] - A[8], E[9] - A[9]
    if (src == "postgres")
        printf "cross-check on source.ts_ms (PostgreSQL commit timestamp, ms): p50 at-least-once %s ms, exactly-once %s ms\n", A[12], E[12]
}'
echo
echo "exactly-once settings: sink.kafka.transaction_interval_ms ${INTERVAL_MS:-100 (default)}, transaction_max_bytes default; both daemons: state.flush_interval_ms $FLUSH_MS (the throughput timing resolution), linger.ms 5 (Tidemark's default)"
echo "load average: $LOAD_START at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end (other work on the machine skews the figures)"
echo "write phase: ${write_s}s; binary: $BUILD_DIR/tidemark ($("$TIDEMARK_BIN" --version 2>/dev/null || echo '?'))"
