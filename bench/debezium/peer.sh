# shellcheck shell=bash
# Debezium peer for the benchmarks: builds and runs bench/debezium (Debezium's embedded engine -> one KafkaProducer).
# Sourced by bench/snapshot_bench.sh, bench/postgres_bench.sh and bench/mysql_bench.sh after scripts/lib/common.sh.
#
#   dbz_enabled              true when the Debezium phases should run: BENCH_DEBEZIUM is not 0 and mvn and java exist
#                            (prints why not on stderr otherwise)
#   dbz_build STACK          STACK = postgres (Debezium 3.6.1.Final) | mariadb (debezium-connector-mariadb 3.5.0.Final);
#                            mvn package + dependency:copy-dependencies into bench/debezium/target/STACK (git-ignored),
#                            skipped while the jar is there and the pom and sources are unchanged. Non-zero on failure
#                            (the Maven log is shown).
#   dbz_start STACK OUT ARGS...
#                            starts the peer in the background (sets dbz_pid): its "DEBEZIUM ..." lines go to OUT, its
#                            log (Debezium's, slf4j-simple) to OUT.log. ARGS are the program's --name=value options
#                            (see src/main/java/dev/tidemark/bench/DebeziumPeer.java); BENCH_DEBEZIUM_PROPS="k=v k=v"
#                            adds connector properties, BENCH_DEBEZIUM_JAVA_OPTS JVM options (default: none, i.e.
#                            the JVM's own heap sizing, as Debezium Server starts).
#   dbz_wait_line OUT WORD TIMEOUT_S
#                            waits until OUT has a line "DEBEZIUM WORD ..." (0), the peer exited or printed
#                            "DEBEZIUM error" (1), or the time is up (2)
#   dbz_field OUT KEY        the value of KEY=... in the result line ("DEBEZIUM result ...")
#   dbz_stop [TIMEOUT_S]     waits up to TIMEOUT_S (default 60) for the peer to exit, then SIGTERM, then SIGKILL
#   dbz_fail_tail OUT        shows the peer's error line and the end of its log
#   dbz_version STACK        the Debezium version of a stack (from its pom)
#
# The peer's stack versions are in bench/debezium/{postgres,mariadb}/pom.xml; the two are never on one classpath.

DBZ_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
DBZ_LOG_LEVEL="${BENCH_DEBEZIUM_LOG_LEVEL:-info}"
dbz_pid=""

dbz_enabled() {
    if [[ "${BENCH_DEBEZIUM:-1}" == 0 ]]; then
        echo "Debezium phases off (BENCH_DEBEZIUM=0)" >&2
        return 1
    fi
    local c
    for c in mvn java; do
        if ! command -v "$c" >/dev/null 2>&1; then
            echo "Debezium phases off: '$c' not found" >&2
            return 1
        fi
    done
    return 0
}

_dbz_stamp() {  # $1 = stack: checksum of what the build depends on
    {
        sha256sum "$DBZ_DIR/$1/pom.xml"
        find "$DBZ_DIR/src" -type f -name '*.java' -print0 | sort -z | xargs -0 sha256sum
    } | sha256sum | cut -d' ' -f1
}

dbz_build() {
    local stack="$1"
    [[ "$stack" == postgres || "$stack" == mariadb ]] || { echo "dbz_build: unknown stack '$stack'" >&2; return 1; }
    local target="$DBZ_DIR/target/$stack" stamp
    mkdir -p "$target"
    stamp="$(_dbz_stamp "$stack")"
    (
        # One build per stack at a time (several benchmark scripts may start together).
        flock 8
        if [[ -f "$target/.stamp" && "$(cat "$target/.stamp")" == "$stamp" && -f "$target/tidemark-debezium-peer.jar" &&
            -d "$target/lib" ]]; then
            exit 0
        fi
        echo "building the Debezium peer ($stack) with Maven into $target" >&2
        rm -f "$target/.stamp"
        rm -rf "${target:?}/lib"
        if ! mvn -B -q -Dstyle.color=never -f "$DBZ_DIR/$stack/pom.xml" package dependency:copy-dependencies \
            >"$target/build.log" 2>&1; then
            tail -n 40 "$target/build.log" >&2
            echo "Debezium peer ($stack): mvn failed (log: $target/build.log)" >&2
            exit 1
        fi
        [[ -f "$target/tidemark-debezium-peer.jar" ]] || { echo "Debezium peer ($stack): no jar after mvn" >&2; exit 1; }
        echo "$stamp" >"$target/.stamp"
    ) 8>"$DBZ_DIR/target/.$stack.lock"
}

dbz_start() {
    local stack="$1" out="$2"
    shift 2
    local target="$DBZ_DIR/target/$stack" java_opts=() props=() kv
    read -r -a java_opts <<<"${BENCH_DEBEZIUM_JAVA_OPTS:-}"
    for kv in ${BENCH_DEBEZIUM_PROPS:-}; do props+=("--prop=$kv"); done
    : >"$out"
    java "${java_opts[@]}" \
        -Dorg.slf4j.simpleLogger.defaultLogLevel="$DBZ_LOG_LEVEL" \
        -Dorg.slf4j.simpleLogger.logFile=System.err \
        -Dorg.slf4j.simpleLogger.showDateTime=true \
        -Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS \
        -cp "$target/tidemark-debezium-peer.jar:$target/lib/*" dev.tidemark.bench.DebeziumPeer "$@" "${props[@]}" \
        </dev/null >"$out" 2>"$out.log" &
    dbz_pid=$!
}

dbz_wait_line() {
    local out="$1" word="$2" timeout="$3" deadline
    deadline=$(($(date +%s) + timeout))
    while :; do
        grep -q "^DEBEZIUM $word" "$out" 2>/dev/null && return 0
        grep -q '^DEBEZIUM error' "$out" 2>/dev/null && return 1
        if [[ -z "$dbz_pid" ]] || ! kill -0 "$dbz_pid" 2>/dev/null; then
            grep -q "^DEBEZIUM $word" "$out" 2>/dev/null && return 0
            return 1
        fi
        (($(date +%s) < deadline)) || return 2
        sleep 0.05
    done
}

dbz_field() {
    grep '^DEBEZIUM result ' "$1" 2>/dev/null | tail -n 1 | tr ' ' '\n' | awk -F= -v k="$2" '$1 == k { print substr($0, length(k) + 2) }'
}

dbz_stop() {
    [[ -n "$dbz_pid" ]] || return 0
    local i limit=$((${1:-60} * 10))
    for ((i = 0; i < limit; i++)); do
        kill -0 "$dbz_pid" 2>/dev/null || break
        sleep 0.1
    done
    terminate "$dbz_pid" 100  # bench/lib.sh; a no-op when it exited by itself
    dbz_pid=""
}

dbz_fail_tail() {
    local out="$1"
    grep '^DEBEZIUM error' "$out" 2>/dev/null | head -n 3 >&2
    if [[ -f "$out.log" ]]; then
        echo "----- errors and warnings in the Debezium peer's log ($out.log) -----" >&2
        grep -E ' (ERROR|WARN) |Exception|^Caused by|^debezium peer' "$out.log" | grep -v '^\s*at ' | tail -n 20 >&2
        echo "----- end -----" >&2
    fi
}

# After a streaming run of the peer (its output in $1): when it did not complete, logs why under the phase
# label $2 (the benchmark goes on), stops the peer, sets DBZ_NOTE and returns 1. Otherwise sets dbz_ns (since
# $3, ns), dbz_hwm_kb, dbz_streaming_ns and dbz_cpu_s, stops the peer and counts DBZ_TOPIC's records into
# dbz_records. $4 rows expected, $5 the timeout in seconds (for the message).
dbz_collect_streaming() {
    local out="$1" phase="$2" t0="$3" rows="$4" timeout_s="$5"
    if [[ "$(dbz_field "$out" complete)" != 1 ]]; then
        local why="the peer failed"
        [[ "$(dbz_field "$out" complete)" == 0 ]] && why="not done within $timeout_s s ($(dbz_field "$out" rows) of $rows rows)"
        log "($phase) Debezium peer FAILED: $why (the benchmark goes on)"
        dbz_fail_tail "$out"
        dbz_stop 0
        DBZ_NOTE="FAILED: $why"
        return 1
    fi
    dbz_ns=$(($(dbz_field "$out" done_us) * 1000 - t0))
    dbz_hwm_kb="$(dbz_field "$out" peak_rss_kb)"
    dbz_streaming_ns=$((($(dbz_field "$out" done_us) - $(dbz_field "$out" streaming_us)) * 1000))
    dbz_cpu_s="$(dbz_field "$out" cpu_s)"
    dbz_stop 60
    dbz_records="$(kafka_tool org.apache.kafka.tools.GetOffsetShell --bootstrap-server "$TIDEMARK_KAFKA_BOOTSTRAP" \
        --topic "$DBZ_TOPIC" 2>/dev/null | awk -F: '{ s += $NF } END { print s + 0 }')" || dbz_records="?"
}

dbz_version() {
    sed -n 's:.*<debezium.version>\(.*\)</debezium.version>.*:\1:p' "$DBZ_DIR/$1/pom.xml" | head -n 1
}
