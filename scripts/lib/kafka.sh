# shellcheck shell=bash
# shellcheck disable=SC2034 # settings read by scripts/servers.sh and callers
# Throwaway single-node Apache Kafka broker (KRaft) on 127.0.0.1 for tests. Source after common.sh.
#
#   start_kafka          fetch the broker jars once (Maven Central, cached), format the storage once,
#                        start the broker detached, wait until it serves metadata. No-op if running.
#                        = kafka_launch + kafka_wait_ready (callers may start other servers between).
#   stop_kafka           SIGTERM, wait, SIGKILL fallback.
#   kafka_running        true when the broker of this run dir is up.
#   kafka_tool CLASS ... run a Kafka command-line class from the same jars, e.g.
#                        kafka_tool org.apache.kafka.tools.TopicCommand --bootstrap-server B --list
#   kafka_create_topic NAME [PARTITIONS]   (tests create topics themselves via the admin API;
#                        this is for manual checks and the demo)
#
# The jars: tests/kafka/pom.xml lists them; `mvn dependency:copy-dependencies` copies them to
# $TIDEMARK_CACHE_DIR/kafka/<version>/libs (from ~/.m2, fetched from Maven Central the first time).
# The folder counts as complete when its .complete marker names the same version and pom checksum.
# Broker settings: auto.create.topics.enable=false (TIDEMARK_KAFKA_AUTO_CREATE_TOPICS=true gives the broker's
# stock default), num.partitions=3, replication factor 1 everywhere.

# The one place the Kafka version is chosen (4.x runs on Java 17).
TIDEMARK_KAFKA_VERSION="${TIDEMARK_KAFKA_VERSION:-4.1.1}"
TIDEMARK_KAFKA_PORT="${TIDEMARK_KAFKA_PORT:-19092}"
TIDEMARK_KAFKA_CONTROLLER_PORT="${TIDEMARK_KAFKA_CONTROLLER_PORT:-19093}"
TIDEMARK_KAFKA_AUTO_CREATE_TOPICS="${TIDEMARK_KAFKA_AUTO_CREATE_TOPICS:-false}"
TIDEMARK_KAFKA_BOOTSTRAP="127.0.0.1:$TIDEMARK_KAFKA_PORT"
KAFKA_START_TIMEOUT="${KAFKA_START_TIMEOUT:-90}"
KAFKA_HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xms256m -Xmx512m}"

KAFKA_POM="$TIDEMARK_ROOT/tests/kafka/pom.xml"
KAFKA_HOME_DIR="$TIDEMARK_CACHE_DIR/kafka/$TIDEMARK_KAFKA_VERSION"
KAFKA_LIBS_DIR="$KAFKA_HOME_DIR/libs"
KAFKA_DIR="$TIDEMARK_RUN_DIR/kafka"
KAFKA_DATA_DIR="$KAFKA_DIR/data"
KAFKA_CONFIG="$KAFKA_DIR/server.properties"
KAFKA_LOG4J_CONFIG="$KAFKA_DIR/log4j2.properties"
KAFKA_TOOLS_LOG4J_CONFIG="$KAFKA_DIR/tools-log4j2.properties"
KAFKA_LOG_FILE="$KAFKA_DIR/server.log"
KAFKA_STDOUT_FILE="$KAFKA_DIR/kafka.out"
KAFKA_PID_FILE="$KAFKA_DIR/kafka.pid"

_kafka_java() {
    if [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]]; then
        printf '%s\n' "$JAVA_HOME/bin/java"
    else
        command -v java || die "kafka: java not found (run: scripts/servers.sh deps)"
    fi
}

kafka_running() {
    local pid
    pid="$(pidfile_pid "$KAFKA_PID_FILE")" || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q 'kafka\.Kafka'
}

# ---------------------------------------------------------------------------
# Jars
# ---------------------------------------------------------------------------

_kafka_jars_stamp() {
    printf 'version=%s pom=%s\n' "$TIDEMARK_KAFKA_VERSION" "$(sha256sum "$KAFKA_POM" | cut -d' ' -f1)"
}

_kafka_jars_complete() {
    [[ -f "$KAFKA_HOME_DIR/.complete" ]] &&
        [[ "$(cat "$KAFKA_HOME_DIR/.complete")" == "$(_kafka_jars_stamp)" ]] &&
        [[ -f "$KAFKA_LIBS_DIR/kafka_2.13-$TIDEMARK_KAFKA_VERSION.jar" ]]
}

kafka_fetch_jars() {
    if _kafka_jars_complete; then
        return 0
    fi
    require_cmd mvn
    [[ -f "$KAFKA_POM" ]] || die "kafka: $KAFKA_POM is missing"
    local start partial="$KAFKA_HOME_DIR/libs.partial" mvn_log="$KAFKA_HOME_DIR/mvn.log"
    start="$(now_s)"
    log_info "kafka: fetching Apache Kafka $TIDEMARK_KAFKA_VERSION jars with Maven into $KAFKA_LIBS_DIR"
    mkdir -p "$KAFKA_HOME_DIR"
    rm -rf "$partial" "$KAFKA_HOME_DIR/.complete"
    if ! mvn -B -q -Dstyle.color=never -f "$KAFKA_POM" \
        -Dkafka.version="$TIDEMARK_KAFKA_VERSION" \
        dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$partial" \
        >"$mvn_log" 2>&1; then
        show_log_tail "$mvn_log" 60
        die "kafka: mvn dependency:copy-dependencies failed"
    fi
    [[ -f "$partial/kafka_2.13-$TIDEMARK_KAFKA_VERSION.jar" ]] || die "kafka: broker jar missing after mvn"
    rm -rf "$KAFKA_LIBS_DIR"
    mv "$partial" "$KAFKA_LIBS_DIR"
    _kafka_jars_stamp >"$KAFKA_HOME_DIR/.complete"
    log_info "kafka: $(find "$KAFKA_LIBS_DIR" -name '*.jar' | wc -l) jars ready in $(elapsed_since "$start")s"
}

# kafka_tool CLASS ARGS...: a Kafka command-line tool from the cached jars; logs WARN+ to stderr.
kafka_tool() {
    local class="$1"
    shift
    kafka_fetch_jars
    _kafka_write_tools_log4j
    "$(_kafka_java)" -Xmx256m -Dlog4j2.configurationFile="$KAFKA_TOOLS_LOG4J_CONFIG" \
        -cp "$KAFKA_LIBS_DIR/*" "$class" "$@"
}

# kafka_create_topic NAME [PARTITIONS]: creates a topic if it does not exist.
kafka_create_topic() {
    local topic="$1" partitions="${2:-3}"
    kafka_tool org.apache.kafka.tools.TopicCommand --bootstrap-server "$TIDEMARK_KAFKA_BOOTSTRAP" \
        --create --if-not-exists --topic "$topic" --partitions "$partitions" --replication-factor 1
}

# ---------------------------------------------------------------------------
# Configuration and storage
# ---------------------------------------------------------------------------

_kafka_write_config() {
    cat >"$KAFKA_CONFIG" <<EOF
# Written by scripts/lib/kafka.sh on every start; edits are lost.
# Single-node KRaft: this process is both broker and controller.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$TIDEMARK_KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$TIDEMARK_KAFKA_PORT,CONTROLLER://127.0.0.1:$TIDEMARK_KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$TIDEMARK_KAFKA_PORT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
log.dirs=$KAFKA_DATA_DIR

# Topics: tests create their own through the admin API (a throwaway broker with the stock default, true,
# tests a first start on a broker that creates them).
auto.create.topics.enable=$TIDEMARK_KAFKA_AUTO_CREATE_TOPICS
delete.topic.enable=true
num.partitions=3
default.replication.factor=1
min.insync.replicas=1

# Internal topics on one broker.
offsets.topic.replication.factor=1
offsets.topic.num.partitions=10
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=10
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1

# Fast tests.
group.initial.rebalance.delay.ms=0
num.network.threads=2
num.io.threads=4
log.retention.check.interval.ms=10000
EOF
}

_kafka_write_log4j() {
    cat >"$KAFKA_LOG4J_CONFIG" <<EOF
# Broker logging (log4j2): INFO for the broker, WARN for the chatty parts; nothing on stdout.
status = warn
name = tidemark-kafka
shutdownHook = disable
appender.file.type = RollingFile
appender.file.name = FILE
appender.file.fileName = $KAFKA_LOG_FILE
appender.file.filePattern = $KAFKA_LOG_FILE.%i
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
appender.file.policies.type = Policies
appender.file.policies.size.type = SizeBasedTriggeringPolicy
appender.file.policies.size.size = 20MB
appender.file.strategy.type = DefaultRolloverStrategy
appender.file.strategy.max = 2
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = FILE
logger.statechange.name = state.change.logger
logger.statechange.level = WARN
logger.request.name = kafka.request.logger
logger.request.level = WARN
logger.log.name = org.apache.kafka.storage.internals.log
logger.log.level = WARN
logger.kafkalog.name = kafka.log
logger.kafkalog.level = WARN
logger.cluster.name = kafka.cluster
logger.cluster.level = WARN
logger.config.name = org.apache.kafka.common.config
logger.config.level = WARN
logger.metadata.name = org.apache.kafka.image
logger.metadata.level = WARN
EOF
}

_kafka_write_tools_log4j() {
    mkdir -p "$KAFKA_DIR"
    [[ -f "$KAFKA_TOOLS_LOG4J_CONFIG" ]] && return 0
    cat >"$KAFKA_TOOLS_LOG4J_CONFIG" <<'EOF'
status = warn
name = tidemark-kafka-tools
appender.err.type = Console
appender.err.name = STDERR
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.err.ref = STDERR
EOF
}

# Formats the storage once. Re-formats when a previous format did not finish or the controller
# port changed (the voter set is recorded in the metadata log).
_kafka_format_storage() {
    local stamp_file="$KAFKA_DIR/format.stamp" stamp
    stamp="controller=127.0.0.1:$TIDEMARK_KAFKA_CONTROLLER_PORT"
    if [[ -f "$KAFKA_DATA_DIR/meta.properties" && -f "$stamp_file" && "$(cat "$stamp_file")" == "$stamp" ]]; then
        return 0
    fi
    if [[ -e "$KAFKA_DATA_DIR" ]]; then
        log_warn "kafka: storage in $KAFKA_DATA_DIR is unfinished or for another controller port; re-formatting"
    fi
    rm -rf "$KAFKA_DATA_DIR" "$stamp_file"
    local cluster_id
    cluster_id="$(kafka_tool kafka.tools.StorageTool random-uuid 2>"$KAFKA_DIR/format.log" | tail -n 1)"
    [[ "$cluster_id" =~ ^[A-Za-z0-9_-]{22}$ ]] || {
        show_log_tail "$KAFKA_DIR/format.log"
        die "kafka: could not generate a cluster id (got '$cluster_id')"
    }
    log_info "kafka: formatting storage $KAFKA_DATA_DIR (cluster id $cluster_id)"
    if ! kafka_tool kafka.tools.StorageTool format -t "$cluster_id" -c "$KAFKA_CONFIG" \
        >>"$KAFKA_DIR/format.log" 2>&1; then
        show_log_tail "$KAFKA_DIR/format.log"
        die "kafka: storage format failed"
    fi
    printf '%s\n' "$cluster_id" >"$KAFKA_DIR/cluster.id"
    printf '%s\n' "$stamp" >"$stamp_file"
}

# ---------------------------------------------------------------------------
# Start / stop
# ---------------------------------------------------------------------------

_kafka_metadata_ok() {
    kcat -b "$TIDEMARK_KAFKA_BOOTSTRAP" -L -m 5 2>/dev/null | grep -q 'broker 1 at'
}

_KAFKA_LAUNCHED=0

# Starts the broker process without waiting for it (see kafka_wait_ready).
kafka_launch() {
    _KAFKA_LAUNCHED=0
    require_cmd kcat
    if kafka_running; then
        log_info "kafka: already running (pid $(pidfile_pid "$KAFKA_PID_FILE")) on $TIDEMARK_KAFKA_BOOTSTRAP"
        return 0
    fi
    local port
    for port in "$TIDEMARK_KAFKA_PORT" "$TIDEMARK_KAFKA_CONTROLLER_PORT"; do
        if port_open 127.0.0.1 "$port"; then
            die "kafka: port $port is taken by another process (set TIDEMARK_KAFKA_PORT / TIDEMARK_KAFKA_CONTROLLER_PORT)"
        fi
    done
    _KAFKA_START_TIME="$(now_s)"
    mkdir -p "$KAFKA_DIR"
    kafka_fetch_jars
    _kafka_write_config
    _kafka_write_log4j
    _kafka_format_storage

    rm -f "$KAFKA_PID_FILE"
    local java
    java="$(_kafka_java)"
    # The launcher records its own pid, then becomes the JVM (exec keeps the pid).
    # shellcheck disable=SC2086,SC2016 # KAFKA_HEAP_OPTS is a list of JVM options
    setsid bash -c 'echo $$ >"$1"; shift; exec "$@"' kafka-launcher "$KAFKA_PID_FILE" \
        "$java" $KAFKA_HEAP_OPTS -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:+ExitOnOutOfMemoryError \
        -Djava.awt.headless=true \
        -Dlog4j2.configurationFile="$KAFKA_LOG4J_CONFIG" \
        -Dkafka.logs.dir="$KAFKA_DIR" \
        -cp "$KAFKA_LIBS_DIR/*" kafka.Kafka "$KAFKA_CONFIG" \
        </dev/null >>"$KAFKA_STDOUT_FILE" 2>&1 &
    local i
    for ((i = 0; i < 50; i++)); do
        [[ -s "$KAFKA_PID_FILE" ]] && break
        sleep 0.1
    done
    [[ -s "$KAFKA_PID_FILE" ]] || die "kafka: broker process did not start"
    _KAFKA_LAUNCHED=1
    log_info "kafka: broker launched (pid $(cat "$KAFKA_PID_FILE")), waiting for $TIDEMARK_KAFKA_BOOTSTRAP"
}

_kafka_fail() {
    show_log_tail "$KAFKA_STDOUT_FILE" 20
    show_log_tail "$KAFKA_LOG_FILE" 60
    die "kafka: $*"
}

# Waits until the broker launched by kafka_launch answers metadata requests.
kafka_wait_ready() {
    ((_KAFKA_LAUNCHED)) || return 0
    local pid deadline
    pid="$(cat "$KAFKA_PID_FILE")"
    deadline=$(($(date +%s) + KAFKA_START_TIMEOUT))
    until port_open 127.0.0.1 "$TIDEMARK_KAFKA_PORT" && _kafka_metadata_ok; do
        pid_alive "$pid" || _kafka_fail "broker (pid $pid) exited during startup"
        (($(date +%s) < deadline)) || _kafka_fail "broker not ready after ${KAFKA_START_TIMEOUT}s"
        sleep 0.5
    done
    _KAFKA_LAUNCHED=0
    log_info "kafka: ready on $TIDEMARK_KAFKA_BOOTSTRAP (Kafka $TIDEMARK_KAFKA_VERSION) in $(elapsed_since "$_KAFKA_START_TIME")s"
}

start_kafka() {
    kafka_launch
    kafka_wait_ready
}

stop_kafka() {
    if ! kafka_running; then
        log_info "kafka: not running"
        rm -f "$KAFKA_PID_FILE"
        return 0
    fi
    local pid
    pid="$(pidfile_pid "$KAFKA_PID_FILE")"
    log_info "kafka: stopping (pid $pid)"
    terminate_pid "$pid" kafka 60
    rm -f "$KAFKA_PID_FILE"
    log_info "kafka: stopped"
}
