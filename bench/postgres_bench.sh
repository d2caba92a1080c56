#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR/../scripts
# PostgreSQL source benchmark: Tidemark beside pg_recvlogical, reading the same backlog of changes.
#
#   bench/postgres_bench.sh            (from the repository root or anywhere; takes a few minutes)
#
# Scenario (defaults: 1,000,000 single-row INSERTs in transactions of 100):
#   1. Builds a Release tree in build-pgbench/ (PG_BENCH_BUILD_DIR to use another), starts PostgreSQL and
#      Kafka with scripts/servers.sh (a no-op when they run; it never stops or cleans them).
#   2. Creates its own objects, all named after this run (tmbench_<pid>): table public.bench_rows, Kafka
#      topic tmbench_<pid>.public.bench_rows (4 partitions), publication, and two pgoutput slots created
#      before any row is written: Tidemark's (the daemon creates the publication and its slot, then is
#      stopped) and pg_recvlogical's (pg_create_logical_replication_slot).
#   3. Writes the backlog while neither reader runs: a DO block, one INSERT per row, COMMIT every
#      PG_BENCH_TXN_ROWS rows. Inside the last transaction it notes pg_current_wal_insert_lsn() = E: every
#      change lies before E, and the last commit ends after it.
#   4. (a) pg_recvlogical --start -E E -f /dev/null on its slot (proto_version 1, the same publication):
#      exits at the first message past E, i.e. once it received the last commit.
#      (b) tidemark run: timed from the process start until its state file's committed position
#      ("pg:X/Y", written only after Kafka acknowledged everything before it) is >= E.
#      (c) Debezium (bench/debezium: Debezium 3.6.1.Final's embedded engine, JSON without schemas, one KafkaProducer
#      with acks=all, idempotence, linger.ms=5, each batch acknowledged before it is marked processed): from its own slot,
#      a copy of pg_recvlogical's (pg_copy_logical_replication_slot, before the backlog), the same publication,
#      snapshot.mode=no_data, to its own 4-partition topic tmbench_<pid>_dbz.public.bench_rows; timed from the JVM's
#      start until Kafka acknowledged one change record per row. On by default when mvn and java exist; BENCH_DEBEZIUM=0
#      turns it off; a failing peer is reported and the rest of the benchmark goes on.
#      They run one after the other (never together: the machine's cores are shared with the broker).
#   5. Prints seconds, rows/s, the ratio Tidemark / pg_recvlogical (target >= 0.8) and Tidemark / Debezium, peak RSS
#      (VmHWM of the daemon, read before SIGTERM; target <= 100 MB), the CPU seconds spent by each tool,
#      the walsender serving its slot and the Kafka broker in each phase, and checks that the topic holds
#      exactly one record per row. Exit 0 whether or not the targets are met (it prints, it does not
#      assert); non-zero only when the benchmark itself could not run.
#   6. Drops everything it created (daemon stopped, slots, publication, table, topic), also on failure.
#
# Environment: PG_BENCH_ROWS (1000000), PG_BENCH_TXN_ROWS (100), PG_BENCH_BUILD_DIR (build-pgbench),
# PG_BENCH_FLUSH_MS (state.flush_interval_ms of the daemon, 100: the resolution of its timing),
# PG_BENCH_TIMEOUT_S (1800, per reader), PG_BENCH_ORDER (recvlogical-first or tidemark-first), PG_BENCH_PERF=1
# (perf record of the daemon during its run; prints the top symbols), PG_BENCH_KEEP=1 keeps the temporary directory (config, logs).
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

ROWS="${PG_BENCH_ROWS:-1000000}"
TXN_ROWS="${PG_BENCH_TXN_ROWS:-100}"
BUILD_DIR="${PG_BENCH_BUILD_DIR:-build-pgbench}"
FLUSH_MS="${PG_BENCH_FLUSH_MS:-100}"
TIMEOUT_S="${PG_BENCH_TIMEOUT_S:-1800}"
((ROWS % TXN_ROWS == 0)) || die "PG_BENCH_ROWS ($ROWS) must be a multiple of PG_BENCH_TXN_ROWS ($TXN_ROWS)"
TXNS=$((ROWS / TXN_ROWS))

log() { printf '[pg-bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# ---------------------------------------------------------------------------- build and servers
log "building Release in $BUILD_DIR"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTIDEMARK_BUILD_TESTS=OFF >/dev/null
cmake --build "$BUILD_DIR" --target tidemark >/dev/null
TIDEMARK_BIN="$ROOT/$BUILD_DIR/tidemark"
DBZ_ON=0
DBZ_NOTE="off (BENCH_DEBEZIUM=0, or no mvn/java)"
if dbz_enabled; then
    log "building the Debezium peer (postgres stack, cached)"
    if dbz_build postgres; then
        DBZ_ON=1
    else
        DBZ_NOTE="skipped: the peer did not build"
        log "WARNING: the Debezium peer did not build; its phase is skipped"
    fi
fi

"$ROOT/scripts/servers.sh" start postgres kafka >/dev/null 2>&1 || "$ROOT/scripts/servers.sh" start postgres kafka
# shellcheck disable=SC1091
. "$TIDEMARK_RUN_DIR/env.sh"
export PGPASSWORD="$TIDEMARK_PG_PASSWORD" PGCONNECT_TIMEOUT=10
CONNINFO="host=$TIDEMARK_PG_HOST port=$TIDEMARK_PG_PORT user=$TIDEMARK_PG_USER dbname=$TIDEMARK_PG_DATABASE"
sql() { psql "$CONNINFO" -X -v ON_ERROR_STOP=1 -qAt "$@"; }

# One run at a time: the table name public.bench_rows is fixed (the topic is <name>.public.bench_rows).
exec 9>"$TIDEMARK_RUN_DIR/postgres_bench.lock"
flock -n 9 || die "another bench/postgres_bench.sh is running"

NAME="tmbench_$$"
SLOT_TM="${NAME}_tidemark"
SLOT_RL="${NAME}_recvlogical"
SLOT_DBZ="${NAME}_debezium"
DBZ_PREFIX="${NAME}_dbz"
DBZ_TOPIC="$DBZ_PREFIX.public.bench_rows"
PUB="$NAME"
TOPIC="$NAME.public.bench_rows"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/tidemark-pgbench.XXXXXX")"
CONFIG="$WORK/tidemark.yaml"
STATE="$WORK/state.json"
DAEMON_LOG="$WORK/tidemark.log"
daemon_pid=""
recv_pid=""
created_table=0
created_topic=0
dbz_ok=0

drop_slot() {  # waits until the slot is inactive (a walsender lingers briefly after its client left)
    local slot="$1" i
    for ((i = 0; i < 100; i++)); do
        [[ "$(sql -c "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '$slot' AND active")" == 0 ]] && break
        sleep 0.1
    done
    sql -c "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '$slot'" >/dev/null ||
        log "WARNING: could not drop slot $slot (drop it by hand: SELECT pg_drop_replication_slot('$slot'))"
}

cleanup() {
    local status=$?
    set +e
    if [[ -n "$recv_pid" ]]; then kill -TERM "$recv_pid" 2>/dev/null; wait "$recv_pid" 2>/dev/null; fi
    stop_daemon
    dbz_stop 0
    log "cleaning up: slots, publication, table, topics"
    local i
    for ((i = 0; i < 60; i++)); do  # a server restarted by another session comes back with our slots
        sql -c "SELECT 1" >/dev/null 2>&1 && break
        sleep 1
    done
    drop_slot "$SLOT_TM"
    drop_slot "$SLOT_RL"
    drop_slot "$SLOT_DBZ"
    sql -c "DROP PUBLICATION IF EXISTS $PUB" >/dev/null 2>&1
    [[ $created_table == 1 ]] && sql -c "DROP TABLE IF EXISTS public.bench_rows" >/dev/null 2>&1
    [[ $created_topic == 1 ]] &&
        kafka_tool org.apache.kafka.tools.TopicCommand --bootstrap-server "$TIDEMARK_KAFKA_BOOTSTRAP" \
            --delete --if-exists --topic "$TOPIC" >/dev/null 2>&1
    [[ $created_topic == 1 && $DBZ_ON == 1 ]] &&
        kafka_tool org.apache.kafka.tools.TopicCommand --bootstrap-server "$TIDEMARK_KAFKA_BOOTSTRAP" \
            --delete --if-exists --topic "$DBZ_TOPIC" >/dev/null 2>&1
    if [[ $status != 0 && -f "$DAEMON_LOG" ]]; then show_log_tail "$DAEMON_LOG" 30; fi
    if [[ "${PG_BENCH_KEEP:-0}" == 1 ]]; then log "kept $WORK"; else rm -rf "$WORK"; fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------------------- helpers
lsn_num() { local hi="${1%/*}" lo="${1#*/}"; echo $(((16#$hi << 32) + 16#$lo)); }
now_ns() { date +%s%N; }
# The walsender serving a slot: ws_track SLOT finds it (once) and records its CPU ticks (it starts at 0
# with its client and ends with it, so the last value seen is what it used).
ws_pid=""
ws_ticks=0
ws_track() {
    if [[ -z "$ws_pid" ]]; then
        ws_pid="$(sql -c "SELECT active_pid FROM pg_replication_slots WHERE slot_name = '$1' AND active" 2>/dev/null)" || ws_pid=""
    fi
    if [[ -n "$ws_pid" && -r "/proc/$ws_pid/stat" ]]; then
        local t
        t="$(proc_ticks "$ws_pid")"
        ((t > ws_ticks)) && ws_ticks=$t
    fi
    return 0
}
kafka_pid="$(cat "$KAFKA_PID_FILE" 2>/dev/null || echo self)"
secs() { awk -v t="$1" -v h="$CLK_TCK" 'BEGIN { printf "%.1f", t / h }'; }

# ---------------------------------------------------------------------------- setup
for ((i = 0; ; i++)); do  # another session may be restarting the shared server
    sql -c "SELECT 1" >/dev/null 2>&1 && break
    ((i < 60)) || die "PostgreSQL at $TIDEMARK_PG_HOST:$TIDEMARK_PG_PORT does not answer"
    sleep 1
done
exists="$(sql -c "SELECT to_regclass('public.bench_rows') IS NOT NULL")" || die "cannot query PostgreSQL"
[[ "$exists" == f ]] ||
    die "table public.bench_rows already exists (another benchmark, or a killed run: DROP TABLE public.bench_rows)"
log "run $NAME: $ROWS rows in $TXNS transactions of $TXN_ROWS; work dir $WORK"
sql -c "CREATE TABLE public.bench_rows (id bigint PRIMARY KEY, payload text, n int, at timestamptz)"
created_table=1

log "creating topic $TOPIC (4 partitions)"
created_topic=1
kafka_create_topic "$TOPIC" 4 >/dev/null
if [[ $DBZ_ON == 1 ]]; then
    log "creating topic $DBZ_TOPIC (4 partitions) for Debezium"
    kafka_create_topic "$DBZ_TOPIC" 4 >/dev/null || { DBZ_ON=0; DBZ_NOTE="skipped: could not create its topic"; log "WARNING: $DBZ_NOTE"; }
fi

cat >"$CONFIG" <<EOF
# Written by bench/postgres_bench.sh.
name: $NAME
source:
  type: postgres
  host: $TIDEMARK_PG_HOST
  port: $TIDEMARK_PG_PORT
  user: $TIDEMARK_PG_USER
  password: \${TIDEMARK_PG_PASSWORD}
  database: $TIDEMARK_PG_DATABASE
  tables: [public.bench_rows]
  postgres:
    slot: $SLOT_TM
    publication: $PUB
    create_publication: true
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
EOF

start_daemon() {
    "$TIDEMARK_BIN" run --config "$CONFIG" >>"$DAEMON_LOG" 2>&1 &
    daemon_pid=$!
}

log "starting Tidemark once to create its publication and slot $SLOT_TM"
start_daemon
for ((i = 0; ; i++)); do
    [[ "$(sql -c "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '$SLOT_TM' AND active")" == 1 ]] && break
    kill -0 "$daemon_pid" 2>/dev/null || die "the daemon exited before its slot became active"
    ((i < 600)) || die "slot $SLOT_TM not active after 60 s"
    sleep 0.1
done
stop_daemon
sql -c "SELECT pg_create_logical_replication_slot('$SLOT_RL', 'pgoutput')" >/dev/null
if [[ $DBZ_ON == 1 ]]; then  # Debezium's slot: a copy of pg_recvlogical's, so both start at the same position
    sql -c "SELECT pg_copy_logical_replication_slot('$SLOT_RL', '$SLOT_DBZ')" >/dev/null ||
        { DBZ_ON=0; DBZ_NOTE="skipped: could not copy the slot"; log "WARNING: $DBZ_NOTE"; }
fi
sql -c "SELECT slot_name, confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name IN ('$SLOT_TM', '$SLOT_RL')" |
    while IFS='|' read -r s l; do log "slot $s at $l"; done

# ---------------------------------------------------------------------------- backlog
log "writing $ROWS rows (one INSERT each, COMMIT every $TXN_ROWS) with no reader running"
t0="$(now_ns)"
notice="$(sql -c "
DO \$\$
DECLARE
  i bigint := 0;
BEGIN
  FOR t IN 1..$TXNS LOOP
    FOR r IN 1..$TXN_ROWS LOOP
      i := i + 1;
      INSERT INTO public.bench_rows VALUES (i, md5(i::text) || md5((i * 7)::text), (i % 1000)::int, clock_timestamp());
    END LOOP;
    IF t = $TXNS THEN
      RAISE NOTICE 'tmbench_end lsn=% xid=%', pg_current_wal_insert_lsn(), txid_current();
    END IF;
    COMMIT;
  END LOOP;
END
\$\$" 2>&1)"
write_s="$(awk -v a="$t0" -v b="$(now_ns)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')"
[[ "$notice" =~ tmbench_end\ lsn=([0-9A-F]+/[0-9A-F]+) ]] || die "no end LSN from the writer: $notice"
END_LSN="${BASH_REMATCH[1]}"
END_NUM="$(lsn_num "$END_LSN")"
[[ "$(sql -c "SELECT count(*) FROM public.bench_rows")" == "$ROWS" ]] || die "the table does not hold $ROWS rows"
wal_mb="$(sql -c "SELECT round(pg_wal_lsn_diff('$END_LSN', confirmed_flush_lsn) / 1048576.0) FROM pg_replication_slots WHERE slot_name = '$SLOT_RL'")"
log "wrote in $write_s s; backlog ends before $END_LSN (~$wal_mb MB of WAL after the slots)"

# ---------------------------------------------------------------------------- (a) pg_recvlogical
run_recvlogical() {
    log "(a) pg_recvlogical from slot $SLOT_RL to /dev/null, --endpos $END_LSN"
    ws_pid=""
    ws_ticks=0
    k0="$(proc_ticks "$kafka_pid")"
    t0="$(now_ns)"
    timeout -s TERM "$TIMEOUT_S" pg_recvlogical -d "$CONNINFO" --slot "$SLOT_RL" --start --no-loop \
        -o proto_version=1 -o "publication_names=$PUB" -E "$END_LSN" -f /dev/null 2>"$WORK/pg_recvlogical.log" &
    recv_pid=$!
    while kill -0 "$recv_pid" 2>/dev/null; do ws_track "$SLOT_RL"; nap 0.05; done
    recv_status=0
    wait "$recv_pid" || recv_status=$?
    t1="$(now_ns)"
    recv_pid=""
    [[ $recv_status == 0 ]] || { cat "$WORK/pg_recvlogical.log" >&2; die "pg_recvlogical failed (status $recv_status)"; }
    recv_ns=$((t1 - t0))
    recv_pg_cpu=$ws_ticks
    recv_kafka_cpu=$(($(proc_ticks "$kafka_pid") - k0))
    recv_confirmed="$(sql -c "SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = '$SLOT_RL'")"
    log "(a) done in $(awk -v n="$recv_ns" 'BEGIN { printf "%.2f", n / 1e9 }') s (slot confirmed $recv_confirmed)"
}

# ---------------------------------------------------------------------------- (b) Tidemark
run_tidemark() {
    log "(b) Tidemark from slot $SLOT_TM to Kafka, until its committed position >= $END_LSN"
    rm -f "$STATE"
    : >"$DAEMON_LOG"
    ws_pid=""
    ws_ticks=0
    k0="$(proc_ticks "$kafka_pid")"
    t0="$(now_ns)"
    start_daemon
    perf_pid=""
    position=""
    hwm_kb=0
    deadline=$(($(date +%s) + TIMEOUT_S))
    for ((i = 0; ; i++)); do
        if [[ -f "$STATE" ]]; then
            content="$(<"$STATE")" || content=""
            if [[ "$content" =~ \"position\":\ *\"pg:([0-9A-F]+/[0-9A-F]+)\" ]]; then
                position="${BASH_REMATCH[1]}"
                (($(lsn_num "$position") >= END_NUM)) && break
            fi
        fi
        kill -0 "$daemon_pid" 2>/dev/null || die "the daemon exited during the run"
        (($(date +%s) < deadline)) || die "Tidemark did not reach $END_LSN within $TIMEOUT_S s (committed: ${position:-none})"
        ws_track "$SLOT_TM"
        # PG_BENCH_PERF=1: profile the daemon once it streams (all its threads exist by then; perf -p
        # does not follow threads created later). It perturbs the figures a little.
        if [[ "${PG_BENCH_PERF:-0}" == 1 && -z "$perf_pid" && -n "$ws_pid" ]]; then
            perf record -F 999 -p "$daemon_pid" -o "$WORK/perf.data" >/dev/null 2>&1 &
            perf_pid=$!
        fi
        if ((i % 20 == 0)); then  # VmHWM is monotonic: this is only a fallback, the final read below counts
            hwm_kb="$(awk '/^VmHWM:/ { print $2 }' "/proc/$daemon_pid/status" 2>/dev/null || echo "$hwm_kb")"
        fi
        nap 0.02
    done
    t1="$(now_ns)"
    tm_ns=$((t1 - t0))
    hwm_kb="$(awk '/^VmHWM:/ { print $2 }' "/proc/$daemon_pid/status" 2>/dev/null || echo "$hwm_kb")"
    tm_cpu="$(proc_ticks "$daemon_pid")"
    ws_track "$SLOT_TM"
    tm_pg_cpu=$ws_ticks
    tm_kafka_cpu=$(($(proc_ticks "$kafka_pid") - k0))
    threads="$(for t in /proc/"$daemon_pid"/task/*; do
        printf '%s/%s %s\n' "$(cat "$t/comm" 2>/dev/null)" "${t##*/}" "$(proc_ticks "$daemon_pid/task/${t##*/}")"
    done | sort -k2,2nr | awk -v h="$CLK_TCK" '{ printf "%s%s %.1fs", sep, $1, $2 / h; sep = ", " }')"
    if [[ -n "$perf_pid" ]]; then
        kill -INT "$perf_pid" 2>/dev/null
        wait "$perf_pid" 2>/dev/null || true
    fi
    log "(b) done in $(awk -v n="$tm_ns" 'BEGIN { printf "%.2f", n / 1e9 }') s (committed position $position)"
    stop_daemon
}

# ---------------------------------------------------------------------------- (c) Debezium
# Sets dbz_ok=1 and dbz_ns, dbz_hwm_kb, dbz_cpu_s, dbz_pg_cpu, dbz_kafka_cpu, dbz_records; on failure says why and
# returns non-zero (the caller goes on).
run_debezium() {
    local out="$WORK/debezium.out"
    log "(c) Debezium from slot $SLOT_DBZ to Kafka ($DBZ_TOPIC), until $ROWS change records are acknowledged"
    ws_pid=""
    ws_ticks=0
    k0="$(proc_ticks "$kafka_pid")"
    t0="$(now_ns)"
    dbz_start postgres "$out" --kind=postgres --mode=streaming --expected="$ROWS" --host="$TIDEMARK_PG_HOST" \
        --port="$TIDEMARK_PG_PORT" --user="$TIDEMARK_PG_USER" --password="$TIDEMARK_PG_PASSWORD" \
        --database="$TIDEMARK_PG_DATABASE" --tables=public.bench_rows --slot="$SLOT_DBZ" --publication="$PUB" \
        --publication-autocreate=disabled --bootstrap="$TIDEMARK_KAFKA_BOOTSTRAP" --topic-prefix="$DBZ_PREFIX" \
        --offset-file="$WORK/debezium.offsets" --timeout-s="$TIMEOUT_S"
    while kill -0 "$dbz_pid" 2>/dev/null && ! grep -q '^DEBEZIUM \(result\|error\)' "$out"; do
        ws_track "$SLOT_DBZ"
        nap 0.05
    done
    ws_track "$SLOT_DBZ"
    dbz_kafka_cpu=$(($(proc_ticks "$kafka_pid") - k0))
    dbz_pg_cpu=$ws_ticks
    dbz_collect_streaming "$out" c "$t0" "$ROWS" "$TIMEOUT_S" || return 1
    dbz_ok=1
    DBZ_NOTE="Debezium $(dbz_version postgres) embedded, snapshot.mode=no_data, JSON without schemas, KafkaProducer acks=all/idempotent/linger.ms=5${BENCH_DEBEZIUM_PROPS:+; extra: $BENCH_DEBEZIUM_PROPS}${BENCH_DEBEZIUM_JAVA_OPTS:+; JVM: $BENCH_DEBEZIUM_JAVA_OPTS}"
    log "(c) done in $(awk -v n="$dbz_ns" 'BEGIN { printf "%.2f", n / 1e9 }') s (from the JVM's start; $(dbz_field "$out" seconds) s by its own clock)"
}

# PG_BENCH_ORDER=tidemark-first swaps the two (to see whether the first reader pays for something).
if [[ "${PG_BENCH_ORDER:-recvlogical-first}" == tidemark-first ]]; then
    run_tidemark
    run_recvlogical
else
    run_recvlogical
    run_tidemark
fi
if [[ $DBZ_ON == 1 ]]; then
    run_debezium || true
fi

# One record per row: the topic's end offsets add up to ROWS (a fresh topic, inserts only).
records="$(kafka_tool org.apache.kafka.tools.GetOffsetShell --bootstrap-server "$TIDEMARK_KAFKA_BOOTSTRAP" \
    --topic "$TOPIC" 2>/dev/null | awk -F: '{ s += $NF } END { print s + 0 }')" || records="?"

# ---------------------------------------------------------------------------- report
echo
echo "== PostgreSQL source: $ROWS single-row INSERTs, transactions of $TXN_ROWS, backlog read by each tool ($(nproc) cores, shared with PostgreSQL and Kafka)"
awk -v rows="$ROWS" -v rn="$recv_ns" -v tn="$tm_ns" -v hwm="$hwm_kb" -v records="$records" \
    -v rpg="$(secs "$recv_pg_cpu")" -v rk="$(secs "$recv_kafka_cpu")" \
    -v tpg="$(secs "$tm_pg_cpu")" -v tk="$(secs "$tm_kafka_cpu")" -v tcpu="$(secs "$tm_cpu")" \
    -v dok="$dbz_ok" -v dn="${dbz_ns:-0}" -v dsn="${dbz_streaming_ns:-0}" -v dhwm="${dbz_hwm_kb:-0}" -v dcpu="${dbz_cpu_s:-}" -v dpg="$(secs "${dbz_pg_cpu:-0}")" \
    -v dk="$(secs "${dbz_kafka_cpu:-0}")" -v drecords="${dbz_records:-}" -v dnote="$DBZ_NOTE" 'BEGIN {
    rs = rn / 1e9; ts = tn / 1e9; rr = rows / rs; tr = rows / ts; ratio = tr / rr; mb = hwm / 1024
    printf "%-36s %9s %12s %7s %14s   %s\n", "tool", "seconds", "rows/s", "ratio", "peak RSS", "CPU s: tool / its walsender / kafka broker"
    printf "%-36s %9.2f %12.0f %7s %14s   %s / %s / %s\n", "pg_recvlogical (pgoutput -> /dev/null)", rs, rr, "1.00", "-", "-", rpg, rk
    printf "%-36s %9.2f %12.0f %7.2f %11.1f MB   %s / %s / %s\n", "tidemark (-> Kafka, acknowledged)", ts, tr, ratio, mb, tcpu, tpg, tk
    if (dok == 1) {
        ds = dn / 1e9; dr = rows / ds
        printf "%-36s %9.2f %12.0f %7.2f %11.1f MB   %s / %s / %s\n", "debezium (-> Kafka, acknowledged)", ds, dr, dr / rr, dhwm / 1024, dcpu, dpg, dk
    }
    printf "\nthroughput ratio %.2f (target >= 0.80): %s\n", ratio, (ratio >= 0.8 ? "target met" : "NOT met")
    printf "peak RSS %.1f MB (target <= 100 MB): %s\n", mb, (mb <= 100 ? "target met" : "NOT met")
    printf "records in the topic: %s (expected %d)%s\n", records, rows, (records == rows ? "" : "  <- MISMATCH")
    if (dok == 1) {
        printf "\nTidemark / Debezium throughput ratio %.2f (%.0f / %.0f rows/s); peak RSS %.1f / %.1f MB\n", tr / dr, tr, dr, mb, dhwm / 1024
        printf "records in the Debezium topic: %s (expected %d)%s\n", drecords, rows, (drecords == rows ? "" : "  <- MISMATCH")
    }
    if (dok == 1 && dsn > 0)
        printf "Debezium without its start (JVM, engine, connector: %.2f s): %.2f s from the connector reporting streaming, %.0f rows/s\n", (dn - dsn) / 1e9, dsn / 1e9, rows / (dsn / 1e9)
    printf "debezium: %s\n", dnote
}'
echo "daemon threads (comm/tid cpu): $threads"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine skews both rates)"
echo "write phase: ${write_s}s; WAL after the slots: ~${wal_mb} MB; daemon state.flush_interval_ms: $FLUSH_MS (its timing resolution)"
if [[ "${PG_BENCH_PERF:-0}" == 1 && -f "$WORK/perf.data" ]]; then
    echo
    echo "== perf (daemon, phase b): top symbols"
    { perf report -i "$WORK/perf.data" --stdio --no-children --sort dso,symbol 2>/dev/null || true; } |
        awk '!/^#/ && NF { sub(/[ -]+$/, ""); print substr($0, 1, 150) }' | head -30 || true
    echo "(perf report -i <work dir>/perf.data with PG_BENCH_KEEP=1 for the full profile)"
fi
