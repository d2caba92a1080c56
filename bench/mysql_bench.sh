#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR/../scripts
# MySQL/MariaDB source benchmark: Tidemark beside mariadb-binlog, reading the same range of the binlog.
#
#   bench/mysql_bench.sh            (from the repository root or anywhere; takes a few minutes)
#
# Scenario (defaults: 1,000,000 inserted rows, transactions of 100 rows):
#   1. Builds a Release tree in build-mybench/ (MY_BENCH_BUILD_DIR), starts MariaDB and Kafka with
#      scripts/servers.sh (a no-op when they run; it never stops them).
#   2. Creates its own table tidemark_test.bench_rows_<pid> and topic, rotates the binlog (FLUSH BINARY
#      LOGS, so the backlog sits in one fresh file), starts Tidemark once so that it records the end of the
#      binlog as its position (P0), and stops it.
#   3. Writes the backlog while no reader runs: INSERT ... SELECT of MY_BENCH_TXN_ROWS rows per
#      transaction from the SEQUENCE engine; then notes the end of the binlog E (SHOW MASTER STATUS).
#   4. (a) mariadb-binlog --read-from-remote-server --base64-output=decode-rows --verbose from P0 to E,
#      to /dev/null: the server's own tool decoding the same rows.
#      (b) tidemark run from P0: timed from the process start until its state file's committed position
#      (written only after Kafka acknowledged everything before it) reaches E.
#      (c) the same with the stdout sink into /dev/null.
#      (d) Debezium (bench/debezium: debezium-connector-mariadb 3.5.0.Final with the embedded engine of the same
#      version, JSON without schemas, one KafkaProducer with acks=all, idempotence, linger.ms=5, each batch acknowledged
#      before it is marked processed): its offset store seeded with P0 (file, position and BINLOG_GTID_POS(file, pos)),
#      snapshot.mode=recovery (rebuilds the schema history from the table, no data), snapshot.locking.mode=none, to its
#      own 4-partition topic tmbench_<pid>_dbz.<db>.<table>; timed from the JVM's start until Kafka acknowledged one
#      change record per row. On by default when mvn and java exist; BENCH_DEBEZIUM=0 turns it off; a failing peer is
#      reported and the rest of the benchmark goes on.
#      One after the other, never together (the cores are shared with MariaDB and Kafka).
#   5. Prints seconds, rows/s, the ratio Tidemark / mariadb-binlog (target >= 1.0) and Tidemark / Debezium, peak RSS
#      (VmHWM; target <= 100 MB), CPU seconds of each tool and of the broker, and checks that the topic
#      holds one record per row. Exit 0 whether or not targets are met; non-zero only when it could not run.
#   6. Drops the table and the topics, also on failure.
#
# Environment: MY_BENCH_ROWS (1000000), MY_BENCH_TXN_ROWS (100), MY_BENCH_BUILD_DIR (build-mybench),
# MY_BENCH_FLUSH_MS (state.flush_interval_ms, 100: the timing resolution), MY_BENCH_TIMEOUT_S (1800),
# MY_BENCH_KEEP=1 keeps the work directory, MY_BENCH_PERF=1 records a perf profile (call graphs; MY_BENCH_PERF_FREQ
# samples/s, 999) of the daemon
# during phase (b) and prints its top symbols, MY_BENCH_REPEAT=N runs phase (b) N times (CPU per run printed),
# MY_BENCH_ALT_BIN=<tidemark binary> alternates that binary with the built one in the repeated (b) runs (A/B
# comparison of CPU per record on the same backlog and machine state), MY_BENCH_ALT_PROPS="k=v k=v" does the same
# with the built binary and these extra sink.kafka.properties (librdkafka settings).
# Debezium (see bench/debezium/peer.sh): BENCH_DEBEZIUM (1; 0 = off), BENCH_DEBEZIUM_PROPS ("k=v k=v" extra connector
# properties), BENCH_DEBEZIUM_JAVA_OPTS (JVM options; none by default).
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

ROWS="${MY_BENCH_ROWS:-1000000}"
TXN_ROWS="${MY_BENCH_TXN_ROWS:-100}"
BUILD_DIR="${MY_BENCH_BUILD_DIR:-build-mybench}"
FLUSH_MS="${MY_BENCH_FLUSH_MS:-100}"
TIMEOUT_S="${MY_BENCH_TIMEOUT_S:-1800}"
((ROWS % TXN_ROWS == 0)) || die "MY_BENCH_ROWS ($ROWS) must be a multiple of MY_BENCH_TXN_ROWS ($TXN_ROWS)"
TXNS=$((ROWS / TXN_ROWS))

log() { printf '[my-bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

log "building Release in $BUILD_DIR"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTIDEMARK_BUILD_TESTS=OFF >/dev/null
cmake --build "$BUILD_DIR" --target tidemark >/dev/null
TIDEMARK_BIN="$ROOT/$BUILD_DIR/tidemark"
DBZ_ON=0
DBZ_NOTE="off (BENCH_DEBEZIUM=0, or no mvn/java)"
if dbz_enabled; then
    log "building the Debezium peer (mariadb stack, cached)"
    if dbz_build mariadb; then
        DBZ_ON=1
    else
        DBZ_NOTE="skipped: the peer did not build"
        log "WARNING: the Debezium peer did not build; its phase is skipped"
    fi
fi

"$ROOT/scripts/servers.sh" start mariadb kafka >/dev/null 2>&1 || "$ROOT/scripts/servers.sh" start mariadb kafka
# shellcheck disable=SC1091
. "$TIDEMARK_RUN_DIR/env.sh"
DB="$TIDEMARK_MYSQL_DATABASE"
my_root() { mariadb --no-defaults -h "$TIDEMARK_MYSQL_HOST" -P "$TIDEMARK_MYSQL_PORT" -u "$TIDEMARK_MYSQL_ROOT_USER" \
    -p"$TIDEMARK_MYSQL_ROOT_PASSWORD" -N -B "$@"; }

NAME="tmbench_$$"
TABLE="bench_rows_$$"
TOPIC="$NAME.$DB.$TABLE"
DBZ_PREFIX="${NAME}_dbz"
DBZ_TOPIC="$DBZ_PREFIX.$DB.$TABLE"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/tidemark-mybench.XXXXXX")"
CONFIG="$WORK/tidemark.yaml"
STATE="$WORK/state.json"
DAEMON_LOG="$WORK/tidemark.log"
daemon_pid=""
created_topic=0
dbz_ok=0

cleanup() {
    local status=$?
    set +e
    stop_daemon
    dbz_stop 0
    log "cleaning up: table, topics"
    my_root -e "DROP TABLE IF EXISTS \`$DB\`.\`$TABLE\`" >/dev/null 2>&1
    [[ $created_topic == 1 ]] &&
        kafka_tool org.apache.kafka.tools.TopicCommand --bootstrap-server "$TIDEMARK_KAFKA_BOOTSTRAP" \
            --delete --if-exists --topic "$TOPIC" >/dev/null 2>&1
    [[ $created_topic == 1 && $DBZ_ON == 1 ]] &&
        kafka_tool org.apache.kafka.tools.TopicCommand --bootstrap-server "$TIDEMARK_KAFKA_BOOTSTRAP" \
            --delete --if-exists --topic "$DBZ_TOPIC" >/dev/null 2>&1
    if [[ $status != 0 && -f "$DAEMON_LOG" ]]; then show_log_tail "$DAEMON_LOG" 30; fi
    if [[ "${MY_BENCH_KEEP:-0}" == 1 ]]; then log "kept $WORK"; else rm -rf "$WORK"; fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now_ns() { date +%s%N; }
kafka_pid="$(cat "$KAFKA_PID_FILE" 2>/dev/null || echo self)"
secs() { awk -v t="$1" -v h="$CLK_TCK" 'BEGIN { printf "%.1f", t / h }'; }
# Children's CPU (user + system) of this shell, in ticks: mariadb-binlog's CPU once it has been waited for.
children_ticks() { local line f; read -r line </proc/$$/stat; read -ra f <<<"${line##*) }"; echo $((f[13] + f[14])); }

# ---------------------------------------------------------------------------- setup
log "run $NAME: $ROWS rows in $TXNS transactions of $TXN_ROWS; work dir $WORK"
my_root -e "CREATE TABLE \`$DB\`.\`$TABLE\` (id BIGINT PRIMARY KEY, payload VARCHAR(64), n INT, at DATETIME(6))"
created_topic=1
kafka_create_topic "$TOPIC" 4 >/dev/null
if [[ $DBZ_ON == 1 ]]; then
    kafka_create_topic "$DBZ_TOPIC" 4 >/dev/null || { DBZ_ON=0; DBZ_NOTE="skipped: could not create its topic"; log "WARNING: $DBZ_NOTE"; }
fi

cat >"$CONFIG" <<CONF
# Written by bench/mysql_bench.sh.
name: $NAME
source:
  type: mysql
  host: $TIDEMARK_MYSQL_HOST
  port: $TIDEMARK_MYSQL_PORT
  user: $TIDEMARK_MYSQL_USER
  password: \${TIDEMARK_MYSQL_PASSWORD}
  tables: [$DB.$TABLE]
  mysql:
    server_id: $((20000 + $$ % 10000))
sink:
  type: kafka
  kafka:
    bootstrap_servers: $TIDEMARK_KAFKA_BOOTSTRAP
# The log only: no initial snapshot (its rows would be counted and compete with the log reader).
snapshot:
  initial: never
state:
  path: $STATE
  flush_interval_ms: $FLUSH_MS
CONF

start_daemon() {
    "$TIDEMARK_BIN" run --config "$CONFIG" >>"$DAEMON_LOG" 2>&1 &
    daemon_pid=$!
}
state_position() {  # prints "file pos" of the committed position, or nothing
    local content
    [[ -f "$STATE" ]] || return 0
    content="$(<"$STATE")" || return 0
    [[ "$content" =~ file=([^\;\"]+)\;pos=([0-9]+) ]] && echo "${BASH_REMATCH[1]} ${BASH_REMATCH[2]}"
    return 0
}

my_root -e "FLUSH BINARY LOGS"
log "starting Tidemark once to record the end of the binlog as its position"
start_daemon
for ((i = 0; ; i++)); do
    [[ -n "$(state_position)" ]] && break
    kill -0 "$daemon_pid" 2>/dev/null || die "the daemon exited before it recorded a position"
    ((i < 600)) || die "no position after 60 s"
    sleep 0.1
done
stop_daemon
read -r START_FILE START_POS <<<"$(state_position)"
cp "$STATE" "$WORK/state.start.json"
START_GTID="$(my_root -e "SELECT BINLOG_GTID_POS('$START_FILE', $START_POS)")" || START_GTID=""
log "start position $START_FILE:$START_POS (GTID state ${START_GTID:-none})"

# ---------------------------------------------------------------------------- backlog
log "writing $ROWS rows (INSERT ... SELECT of $TXN_ROWS rows per transaction) with no reader running"
t0="$(now_ns)"
for ((t = 0; t < TXNS; t++)); do
    a=$((t * TXN_ROWS + 1)); b=$(((t + 1) * TXN_ROWS))
    echo "INSERT INTO \`$DB\`.\`$TABLE\` SELECT seq, CONCAT(MD5(seq), MD5(seq * 7)), seq % 1000, NOW(6) FROM seq_${a}_to_${b};"
done | my_root -D "$DB"
write_s="$(awk -v a="$t0" -v b="$(now_ns)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')"
read -r END_FILE END_POS <<<"$(my_root -e "SHOW MASTER STATUS" | awk '{ print $1, $2 }')"
[[ "$END_FILE" == "$START_FILE" ]] || die "the binlog rotated during the backlog ($START_FILE -> $END_FILE); raise max_binlog_size or lower MY_BENCH_ROWS"
[[ "$(my_root -e "SELECT COUNT(*) FROM \`$DB\`.\`$TABLE\`")" == "$ROWS" ]] || die "the table does not hold $ROWS rows"
binlog_mb="$(awk -v a="$START_POS" -v b="$END_POS" 'BEGIN { printf "%.0f", (b - a) / 1048576 }')"
log "wrote in $write_s s; backlog $START_FILE:$START_POS..$END_POS (~$binlog_mb MB of binlog)"

# ---------------------------------------------------------------------------- (a) mariadb-binlog
log "(a) mariadb-binlog --read-from-remote-server --verbose $START_FILE $START_POS..$END_POS > /dev/null"
k0="$(proc_ticks "$kafka_pid")"
c0="$(children_ticks)"
t0="$(now_ns)"
timeout -s TERM "$TIMEOUT_S" mariadb-binlog --no-defaults --read-from-remote-server -h "$TIDEMARK_MYSQL_HOST" \
    -P "$TIDEMARK_MYSQL_PORT" -u "$TIDEMARK_MYSQL_USER" -p"$TIDEMARK_MYSQL_PASSWORD" \
    --base64-output=decode-rows --verbose --start-position="$START_POS" --stop-position="$END_POS" \
    "$START_FILE" >/dev/null 2>"$WORK/mariadb-binlog.log" || { cat "$WORK/mariadb-binlog.log" >&2; die "mariadb-binlog failed"; }
t1="$(now_ns)"
binlog_ns=$((t1 - t0))
binlog_cpu=$(($(children_ticks) - c0))
binlog_kafka_cpu=$(($(proc_ticks "$kafka_pid") - k0))
log "(a) done in $(awk -v n="$binlog_ns" 'BEGIN { printf "%.2f", n / 1e9 }') s"

# ---------------------------------------------------------------------------- (b) and (c) Tidemark
# run_tidemark CONFIG STDOUT: from the start position until the committed position reaches E; sets
# tm_ns, hwm_kb, tm_cpu, tm_kafka_cpu. The daemon's stdout goes to STDOUT, its log to $DAEMON_LOG.
run_tidemark() {
    cp "$WORK/state.start.json" "$STATE"
    : >"$DAEMON_LOG"
    k0="$(proc_ticks "$kafka_pid")"
    t0="$(now_ns)"
    "${3:-$TIDEMARK_BIN}" run --config "$1" >"$2" 2>>"$DAEMON_LOG" &
    daemon_pid=$!
    perf_pid=""
    hwm_kb=0
    deadline=$(($(date +%s) + TIMEOUT_S))
    for ((i = 0; ; i++)); do
        read -r f p <<<"$(state_position) "
        [[ "$f" == "$END_FILE" && -n "$p" ]] && ((p >= END_POS)) && break
        kill -0 "$daemon_pid" 2>/dev/null || die "the daemon exited during the run"
        (($(date +%s) < deadline)) || die "Tidemark did not reach $END_POS within $TIMEOUT_S s (committed: $f:$p)"
        ((i % 20 == 0)) && hwm_kb="$(awk '/^VmHWM:/ { print $2 }' "/proc/$daemon_pid/status" 2>/dev/null || echo "$hwm_kb")"
        # perf -p does not follow threads created later: start once the daemon has its threads (0.5 s in).
        if [[ -n "${4:-}" && -z "$perf_pid" && $i -ge 25 ]]; then
            perf record -F "${MY_BENCH_PERF_FREQ:-999}" -g -p "$daemon_pid" -o "$4" >/dev/null 2>&1 &
            perf_pid=$!
        fi
        nap 0.02
    done
    t1="$(now_ns)"
    tm_ns=$((t1 - t0))
    hwm_kb="$(awk '/^VmHWM:/ { print $2 }' "/proc/$daemon_pid/status" 2>/dev/null || echo "$hwm_kb")"
    tm_cpu="$(proc_ticks "$daemon_pid")"
    tm_kafka_cpu=$(($(proc_ticks "$kafka_pid") - k0))
    if [[ -n "$perf_pid" ]]; then kill -INT "$perf_pid" 2>/dev/null; wait "$perf_pid" 2>/dev/null || true; fi
    stop_daemon
}

log "(b) Tidemark from $START_FILE:$START_POS to Kafka, until its committed position reaches $END_POS"
REPEAT="${MY_BENCH_REPEAT:-1}"
ALT_BIN="${MY_BENCH_ALT_BIN:-}"
if [[ -n "${MY_BENCH_ALT_PROPS:-}" ]]; then
    # The same binary under another name (a symlink), run with a config that adds the properties.
    ln -sf "$TIDEMARK_BIN" "$WORK/tidemark-alt-props"
    ALT_BIN="$WORK/tidemark-alt-props"
    { sed '/^    bootstrap_servers:/q' "$CONFIG"; echo "    properties:"
      for kv in $MY_BENCH_ALT_PROPS; do echo "      ${kv%%=*}: \"${kv#*=}\""; done
      sed '1,/^    bootstrap_servers:/d' "$CONFIG"; } >"$WORK/alt-props.yaml"
fi
runs_report=""
kafka_runs=0
best_ns=""
for ((r = 0; r < REPEAT; r++)); do
    for bin in "$TIDEMARK_BIN" ${ALT_BIN:+"$ALT_BIN"}; do
        perf_out=""
        [[ "${MY_BENCH_PERF:-0}" == 1 && $r == 0 && "$bin" == "$TIDEMARK_BIN" ]] && perf_out="$WORK/perf.data"
        run_config="$CONFIG"
        [[ "$bin" == "$WORK/tidemark-alt-props" ]] && run_config="$WORK/alt-props.yaml"
        run_tidemark "$run_config" "$DAEMON_LOG.stdout" "$bin" "$perf_out"
        kafka_runs=$((kafka_runs + 1))
        line="$(awk -v n="$tm_ns" -v c="$tm_cpu" -v k="$tm_kafka_cpu" -v h="$CLK_TCK" -v rows="$ROWS" -v b="$bin" -v m="$hwm_kb" \
            'BEGIN { printf "%-50s %7.2f s  daemon CPU %5.2f s (%.2f us/row)  broker CPU %5.2f s  peak RSS %.1f MB", b, n / 1e9, c / h, c / h / rows * 1e6, k / h, m / 1024 }')"
        log "(b) run $((r + 1)): $line"
        runs_report+="$line"$'\n'
        # The figures reported below are those of the built binary's fastest run.
        if [[ "$bin" == "$TIDEMARK_BIN" ]] && [[ -z "$best_ns" || $tm_ns -lt $best_ns ]]; then
            best_ns=$tm_ns best_hwm=$hwm_kb best_cpu=$tm_cpu best_kafka_cpu=$tm_kafka_cpu
        fi
    done
done
tm_ns=$best_ns hwm_kb=$best_hwm tm_cpu=$best_cpu tm_kafka_cpu=$best_kafka_cpu

# (c) The same pipeline with the stdout sink into /dev/null: decoding and serialising without Kafka, the
# like-for-like comparison with mariadb-binlog's decoding.
sed -e 's/^  type: kafka$/  type: stdout/' -e '/^  kafka:$/d' -e '/^    bootstrap_servers:/d' "$CONFIG" >"$WORK/stdout.yaml"
b_ns=$tm_ns b_hwm=$hwm_kb b_cpu=$tm_cpu b_kafka_cpu=$tm_kafka_cpu
log "(c) Tidemark from $START_FILE:$START_POS to the stdout sink (/dev/null)"
run_tidemark "$WORK/stdout.yaml" /dev/null
log "(c) done in $(awk -v n="$tm_ns" 'BEGIN { printf "%.2f", n / 1e9 }') s"
c_ns=$tm_ns c_hwm=$hwm_kb c_cpu=$tm_cpu
records="$(kafka_tool org.apache.kafka.tools.GetOffsetShell --bootstrap-server "$TIDEMARK_KAFKA_BOOTSTRAP" \
    --topic "$TOPIC" 2>/dev/null | awk -F: '{ s += $NF } END { print s + 0 }')" || records="?"

# ---------------------------------------------------------------------------- (d) Debezium
# Sets dbz_ok=1 and dbz_ns, dbz_hwm_kb, dbz_cpu_s, dbz_kafka_cpu, dbz_records; on failure says why and returns
# non-zero (the caller goes on).
run_debezium() {
    local out="$WORK/debezium.out"
    log "(d) Debezium from $START_FILE:$START_POS (GTID ${START_GTID:-none}) to Kafka ($DBZ_TOPIC), until $ROWS change records are acknowledged"
    k0="$(proc_ticks "$kafka_pid")"
    t0="$(now_ns)"
    dbz_start mariadb "$out" --kind=mariadb --mode=streaming --expected="$ROWS" --host="$TIDEMARK_MYSQL_HOST" \
        --port="$TIDEMARK_MYSQL_PORT" --user="$TIDEMARK_MYSQL_USER" --password="$TIDEMARK_MYSQL_PASSWORD" \
        --database="$DB" --tables="$DB.$TABLE" --server-id=$((30000 + $$ % 10000)) \
        --start-file="$START_FILE" --start-pos="$START_POS" ${START_GTID:+--start-gtids="$START_GTID"} \
        --bootstrap="$TIDEMARK_KAFKA_BOOTSTRAP" --topic-prefix="$DBZ_PREFIX" --offset-file="$WORK/debezium.offsets" \
        --timeout-s="$TIMEOUT_S"
    while kill -0 "$dbz_pid" 2>/dev/null && ! grep -q '^DEBEZIUM \(result\|error\)' "$out"; do nap 0.05; done
    dbz_kafka_cpu=$(($(proc_ticks "$kafka_pid") - k0))
    dbz_collect_streaming "$out" d "$t0" "$ROWS" "$TIMEOUT_S" || return 1
    dbz_ok=1
    DBZ_NOTE="Debezium $(dbz_version mariadb) (debezium-connector-mariadb) embedded, offsets seeded with file/pos/GTID, snapshot.mode=recovery, snapshot.locking.mode=none, JSON without schemas, KafkaProducer acks=all/idempotent/linger.ms=5${BENCH_DEBEZIUM_PROPS:+; extra: $BENCH_DEBEZIUM_PROPS}${BENCH_DEBEZIUM_JAVA_OPTS:+; JVM: $BENCH_DEBEZIUM_JAVA_OPTS}"
    log "(d) done in $(awk -v n="$dbz_ns" 'BEGIN { printf "%.2f", n / 1e9 }') s (from the JVM's start)"
}
if [[ $DBZ_ON == 1 ]]; then
    run_debezium || true
fi

# ---------------------------------------------------------------------------- report
echo
echo "== MySQL/MariaDB source: $ROWS inserted rows, transactions of $TXN_ROWS, ~$binlog_mb MB of binlog read by each tool ($(nproc) cores, shared with MariaDB and Kafka)"
awk -v rows="$ROWS" -v runs="$kafka_runs" -v bn="$binlog_ns" -v tn="$b_ns" -v hwm="$b_hwm" -v records="$records" \
    -v bc="$(secs "$binlog_cpu")" -v bk="$(secs "$binlog_kafka_cpu")" \
    -v tc="$(secs "$b_cpu")" -v tk="$(secs "$b_kafka_cpu")" -v cn="$c_ns" -v chwm="$c_hwm" -v cc="$(secs "$c_cpu")" \
    -v dok="$dbz_ok" -v dn="${dbz_ns:-0}" -v dsn="${dbz_streaming_ns:-0}" -v dhwm="${dbz_hwm_kb:-0}" -v dcpu="${dbz_cpu_s:-}" -v dk="$(secs "${dbz_kafka_cpu:-0}")" \
    -v drecords="${dbz_records:-}" -v dnote="$DBZ_NOTE" 'BEGIN {
    bs = bn / 1e9; ts = tn / 1e9; cs = cn / 1e9; br = rows / bs; tr = rows / ts; cr = rows / cs
    ratio = tr / br; cratio = cr / br; mb = hwm / 1024
    printf "%-44s %9s %12s %7s %14s   %s\n", "tool", "seconds", "rows/s", "ratio", "peak RSS", "CPU s: tool / kafka broker"
    printf "%-44s %9.2f %12.0f %7s %14s   %s / %s\n", "mariadb-binlog --verbose (-> /dev/null)", bs, br, "1.00", "-", bc, bk
    printf "%-44s %9.2f %12.0f %7.2f %11.1f MB   %s / %s\n", "tidemark (-> Kafka, acknowledged)", ts, tr, ratio, mb, tc, tk
    printf "%-44s %9.2f %12.0f %7.2f %11.1f MB   %s / -\n", "tidemark (-> stdout sink, /dev/null)", cs, cr, cratio, chwm / 1024, cc
    if (dok == 1) {
        ds = dn / 1e9; dr = rows / ds
        printf "%-44s %9.2f %12.0f %7.2f %11.1f MB   %s / %s\n", "debezium (-> Kafka, acknowledged)", ds, dr, dr / br, dhwm / 1024, dcpu, dk
    }
    printf "\nthroughput ratio %.2f (target >= 1.0): %s\n", ratio, (ratio >= 1.0 ? "target met" : "NOT met")
    printf "decode + serialise ratio without Kafka %.2f\n", cratio
    printf "peak RSS %.1f MB (target <= 100 MB): %s\n", mb, (mb <= 100 ? "target met" : "NOT met")
    printf "records in the topic: %s (expected %d: %d run(s) of %d)%s\n", records, rows * runs, runs, rows, (records == rows * runs ? "" : "  <- MISMATCH")
    if (dok == 1) {
        printf "\nTidemark / Debezium throughput ratio %.2f (%.0f / %.0f rows/s); peak RSS %.1f / %.1f MB\n", tr / dr, tr, dr, mb, dhwm / 1024
        printf "records in the Debezium topic: %s (expected %d)%s\n", drecords, rows, (drecords == rows ? "" : "  <- MISMATCH")
    }
    if (dok == 1 && dsn > 0)
        printf "Debezium without its start (JVM, engine, connector: %.2f s): %.2f s from the connector reporting streaming, %.0f rows/s\n", (dn - dsn) / 1e9, dsn / 1e9, rows / (dsn / 1e9)
    printf "debezium: %s\n", dnote
}'
if ((REPEAT > 1)) || [[ -n "$ALT_BIN" ]]; then
    echo
    echo "(b) runs (Kafka, acknowledged), in order:"
    printf '%s' "$runs_report"
fi
if [[ "${MY_BENCH_PERF:-0}" == 1 && -f "$WORK/perf.data" ]]; then
    echo
    echo "== perf (daemon, phase b, first run): top symbols"
    { perf report -i "$WORK/perf.data" --stdio --no-children --sort dso,symbol 2>/dev/null || true; } |
        awk '!/^#/ && NF && !/^ +[|-]/ { sub(/[ -]+$/, ""); print substr($0, 1, 150) }' | head -40 || true
    echo "(perf report -i <work dir>/perf.data with MY_BENCH_KEEP=1 for the full profile)"
fi
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine skews both rates)"
echo "write phase: ${write_s}s; daemon state.flush_interval_ms: $FLUSH_MS (its timing resolution)"
