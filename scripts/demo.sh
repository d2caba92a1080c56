#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# The live demo. On a fresh Debian 12 machine, as root:
#   installs the dependencies, builds Tidemark, starts throwaway MariaDB and PostgreSQL servers on
#   loopback with the settings CDC needs, starts a Kafka endpoint (the zero-setup dev broker by default,
#   or the real Apache Kafka broker with TIDEMARK_DEMO_KAFKA=real), starts Tidemark, and follows the
#   resulting Kafka records with kcat. Ctrl-C stops everything it started.
#
# What it streams: a PostgreSQL table (logical replication, pgoutput) and a MariaDB table (the row-based
# binlog, read as a replica), one Tidemark pipeline each. The demo creates both tables, starts the two
# pipelines, and keeps writing rows (insert, update, delete) with psql and mariadb while kcat shows the
# records of both topics; now and then it asks for a snapshot of each table (`tidemark snapshot`), whose rows
# arrive as op "r" between the live changes.
#
# Environment: TIDEMARK_DEMO_KAFKA=dev|real (default dev), TIDEMARK_DEMO_SECONDS=N (stop by itself after
# N seconds instead of waiting for Ctrl-C).
#
# ./scripts/demo.sh two-way runs the other demo instead: two-way sync between a legacy MariaDB schema and a
# modern PostgreSQL one (scripts/demo-two-way.sh).
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
if [[ "${1:-}" == two-way ]]; then exec "$SCRIPT_DIR/demo-two-way.sh"; fi
[[ $# -eq 0 ]] || { echo "usage: $0 [two-way]" >&2; exit 2; }
. "$SCRIPT_DIR/lib/common.sh"
. "$SCRIPT_DIR/lib/install-deps.sh"
cd "$TIDEMARK_ROOT"

kafka_mode=${TIDEMARK_DEMO_KAFKA:-dev}
[[ "$kafka_mode" == dev || "$kafka_mode" == real ]] || die "TIDEMARK_DEMO_KAFKA must be dev or real"
demo_dir="$TIDEMARK_RUN_DIR/demo"
build_dir="$TIDEMARK_ROOT/build-demo"
servers=(mariadb postgres)
[[ "$kafka_mode" == real ]] && servers+=(kafka)
tidemark_pid=""
tidemark_my_pid=""
broker_pid=""
writer_pid=""
writer_my_pid=""

cleanup() {
    trap - EXIT INT TERM
    echo
    log_info "stopping the demo"
    [[ -n "$writer_pid" ]] && kill "$writer_pid" 2>/dev/null || true
    [[ -n "$writer_my_pid" ]] && kill "$writer_my_pid" 2>/dev/null || true
    if [[ -n "$tidemark_pid" ]] && kill -0 "$tidemark_pid" 2>/dev/null; then
        kill -TERM "$tidemark_pid" && wait "$tidemark_pid" || true
        log_info "tidemark (PostgreSQL) stopped; its log: $demo_dir/tidemark.log"
    fi
    if [[ -n "$tidemark_my_pid" ]] && kill -0 "$tidemark_my_pid" 2>/dev/null; then
        kill -TERM "$tidemark_my_pid" && wait "$tidemark_my_pid" || true
        log_info "tidemark (MariaDB) stopped; its log: $demo_dir/tidemark-mysql.log"
    fi
    if [[ -n "$broker_pid" ]] && kill -0 "$broker_pid" 2>/dev/null; then
        kill -TERM "$broker_pid" && wait "$broker_pid" || true
    fi
    TIDEMARK_SKIP_DEPS=1 "$SCRIPT_DIR/servers.sh" stop "${servers[@]}" || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

install_deps
log_info "building Tidemark ($build_dir)"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTIDEMARK_BUILD_TESTS=OFF \
    -DTIDEMARK_BUILD_BENCH=OFF -DTIDEMARK_WERROR=OFF >/dev/null
cmake --build "$build_dir" -j "$(nproc)" --target tidemark tidemark-dev-broker

rm -rf "$demo_dir"
mkdir -p "$demo_dir"
TIDEMARK_SKIP_DEPS=1 "$SCRIPT_DIR/servers.sh" start "${servers[@]}"
# shellcheck disable=SC1091
. "$TIDEMARK_RUN_DIR/env.sh"

log_info "MariaDB on 127.0.0.1:$TIDEMARK_MYSQL_PORT, binlog settings for CDC:"
mariadb -h127.0.0.1 -P"$TIDEMARK_MYSQL_PORT" -u"$TIDEMARK_MYSQL_USER" -p"$TIDEMARK_MYSQL_PASSWORD" -t \
    -e 'SELECT @@log_bin, @@binlog_format, @@binlog_row_image, @@binlog_row_metadata, @@gtid_current_pos'
log_info "PostgreSQL on 127.0.0.1:$TIDEMARK_PG_PORT:"
PGPASSWORD="$TIDEMARK_PG_PASSWORD" psql -h 127.0.0.1 -p "$TIDEMARK_PG_PORT" -U "$TIDEMARK_PG_USER" \
    -d "$TIDEMARK_PG_DATABASE" -c 'SHOW wal_level' -c 'SELECT rolreplication FROM pg_roles WHERE rolname = current_user'

psql_demo() {
    PGPASSWORD="$TIDEMARK_PG_PASSWORD" psql -q -X -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$TIDEMARK_PG_PORT" \
        -U "$TIDEMARK_PG_USER" -d "$TIDEMARK_PG_DATABASE" "$@"
}
log_info "creating table public.demo_orders"
psql_demo <<'SQL'
SELECT pg_drop_replication_slot('tidemark_demo') FROM pg_replication_slots WHERE slot_name = 'tidemark_demo';
DROP PUBLICATION IF EXISTS tidemark_demo;
DROP TABLE IF EXISTS demo_orders;
CREATE TABLE demo_orders (id serial PRIMARY KEY, customer text NOT NULL, amount numeric(10,2),
                          status text NOT NULL DEFAULT 'new', updated_at timestamptz NOT NULL DEFAULT now());
SQL

mariadb_demo() {
    mariadb --no-defaults -h127.0.0.1 -P"$TIDEMARK_MYSQL_PORT" -u"$TIDEMARK_MYSQL_USER" -p"$TIDEMARK_MYSQL_PASSWORD" \
        -D "$TIDEMARK_MYSQL_DATABASE" "$@"
}
log_info "creating table $TIDEMARK_MYSQL_DATABASE.demo_orders in MariaDB"
mariadb_demo -e "DROP TABLE IF EXISTS demo_orders;
CREATE TABLE demo_orders (id INT AUTO_INCREMENT PRIMARY KEY, customer VARCHAR(100) NOT NULL, amount DECIMAL(10,2),
                          status ENUM('new','paid','shipped') NOT NULL DEFAULT 'new',
                          updated_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3))"

topics=(demo.public.demo_orders "demo_mysql.$TIDEMARK_MYSQL_DATABASE.demo_orders")
if [[ "$kafka_mode" == real ]]; then
    . "$SCRIPT_DIR/lib/kafka.sh"
    bootstrap=$TIDEMARK_KAFKA_BOOTSTRAP
    for t in "${topics[@]}"; do kafka_create_topic "$t" 3; done
else
    "$build_dir/tidemark-dev-broker" --bootstrap-file "$demo_dir/bootstrap" --topic "${topics[0]}:3" --topic "${topics[1]}:3" \
        >"$demo_dir/dev-broker.out" 2>&1 </dev/null &
    broker_pid=$!
    for _ in $(seq 100); do [[ -s "$demo_dir/bootstrap" ]] && break; sleep 0.1; done
    [[ -s "$demo_dir/bootstrap" ]] || die "the dev broker did not start: $(cat "$demo_dir/dev-broker.out")"
    bootstrap=$(cat "$demo_dir/bootstrap")
fi
log_info "Kafka ($kafka_mode) at $bootstrap"

cat >"$demo_dir/tidemark.yaml" <<YAML
# Written by scripts/demo.sh. See config/ for commented examples of every setting.
name: demo
source:
  type: postgres
  host: 127.0.0.1
  port: $TIDEMARK_PG_PORT
  user: $TIDEMARK_PG_USER
  password: \${DEMO_PG_PASSWORD}      # from the environment, never written here
  database: $TIDEMARK_PG_DATABASE
  tables: [public.demo_orders]
  postgres:
    slot: tidemark_demo
    publication: tidemark_demo
    create_publication: true
sink:
  type: kafka
  kafka:
    bootstrap_servers: $bootstrap      # topics: demo.<schema>.<table>
state:
  path: $demo_dir/state.json
YAML
export DEMO_PG_PASSWORD="$TIDEMARK_PG_PASSWORD"

cat >"$demo_dir/tidemark-mysql.yaml" <<YAML
# Written by scripts/demo.sh. See config/mysql-kafka.yaml for every setting, commented.
name: demo_mysql
source:
  type: mysql
  host: 127.0.0.1
  port: $TIDEMARK_MYSQL_PORT
  user: $TIDEMARK_MYSQL_USER
  password: \${DEMO_MYSQL_PASSWORD}   # from the environment, never written here
  tables: [$TIDEMARK_MYSQL_DATABASE.demo_orders]
  mysql:
    server_id: 5400
sink:
  type: kafka
  kafka:
    bootstrap_servers: $bootstrap      # topics: demo_mysql.<database>.<table>
state:
  path: $demo_dir/state-mysql.json
YAML
export DEMO_MYSQL_PASSWORD="$TIDEMARK_MYSQL_PASSWORD"

log_info "tidemark check (PostgreSQL pipeline)"
"$build_dir/tidemark" check --config "$demo_dir/tidemark.yaml"
log_info "tidemark check (MariaDB pipeline)"
"$build_dir/tidemark" check --config "$demo_dir/tidemark-mysql.yaml"
"$build_dir/tidemark" run --config "$demo_dir/tidemark-mysql.yaml" >"$demo_dir/tidemark-mysql.log" 2>&1 &
tidemark_my_pid=$!
"$build_dir/tidemark" run --config "$demo_dir/tidemark.yaml" >"$demo_dir/tidemark.log" 2>&1 &
tidemark_pid=$!
for _ in $(seq 100); do
    [[ -n "$(psql_demo -tAc "SELECT 1 FROM pg_replication_slots WHERE slot_name = 'tidemark_demo' AND active")" ]] && break
    kill -0 "$tidemark_pid" 2>/dev/null || die "tidemark exited: $(cat "$demo_dir/tidemark.log")"
    sleep 0.2
done
log_info "tidemark (PostgreSQL) is running (pid $tidemark_pid, log $demo_dir/tidemark.log); committed position in $demo_dir/state.json"
for _ in $(seq 100); do  # the MariaDB pipeline records the end of the binlog as its first position
    grep -q binlog: "$demo_dir/state-mysql.json" 2>/dev/null && break
    kill -0 "$tidemark_my_pid" 2>/dev/null || die "tidemark (MariaDB) exited: $(cat "$demo_dir/tidemark-mysql.log")"
    sleep 0.2
done
log_info "tidemark (MariaDB) is running (pid $tidemark_my_pid, log $demo_dir/tidemark-mysql.log); committed position in $demo_dir/state-mysql.json"

# A writer in the background: a few orders now, then one change every two seconds.
(
    psql_demo -c "INSERT INTO demo_orders (customer, amount) VALUES ('Ada', 12.50), ('Grace', 99.99), ('Linus', 5.00)"
    psql_demo -c "UPDATE demo_orders SET status = 'paid', updated_at = now() WHERE customer = 'Ada'"
    psql_demo -c "DELETE FROM demo_orders WHERE customer = 'Linus'"
    n=0
    while sleep 2; do
        n=$((n + 1))
        psql_demo -c "INSERT INTO demo_orders (customer, amount) VALUES ('customer $n', $n.25)" || break
        psql_demo -c "UPDATE demo_orders SET status = 'shipped', updated_at = now() WHERE id = (SELECT min(id) FROM demo_orders WHERE status <> 'shipped')" || break
        # Now and then a snapshot of the table beside the live changes: its rows arrive as op "r".
        if ((n % 5 == 3)); then
            "$build_dir/tidemark" snapshot --config "$demo_dir/tidemark.yaml" --table public.demo_orders || break
        fi
    done
) >"$demo_dir/writer.log" 2>&1 &
writer_pid=$!
(
    mariadb_demo -e "INSERT INTO demo_orders (customer, amount) VALUES ('Edsger', 7.00), ('Barbara', 42.00)"
    mariadb_demo -e "UPDATE demo_orders SET status = 'paid' WHERE customer = 'Edsger'"
    n=0
    while sleep 3; do
        n=$((n + 1))
        mariadb_demo -e "BEGIN; INSERT INTO demo_orders (customer, amount) VALUES ('buyer $n', $n.75);
            UPDATE demo_orders SET status = 'shipped' WHERE status <> 'shipped' ORDER BY id LIMIT 1; COMMIT" || break
        if ((n % 5 == 2)); then
            "$build_dir/tidemark" snapshot --config "$demo_dir/tidemark-mysql.yaml" \
                --table "$TIDEMARK_MYSQL_DATABASE.demo_orders" || break
        fi
    done
) >"$demo_dir/writer-mysql.log" 2>&1 &
writer_my_pid=$!

log_info "following the Kafka records of ${topics[*]} (kcat); Ctrl-C stops everything"
follow() { kcat -C -q -b "$bootstrap" -o beginning -f '\n%t [partition %p] key %k\n%s\n' -t "$1"; }
follow "${topics[0]}" &
follow_pg=$!
follow "${topics[1]}" &
follow_my=$!
if [[ -n "${TIDEMARK_DEMO_SECONDS:-}" ]]; then
    sleep "$TIDEMARK_DEMO_SECONDS"
else
    wait "$follow_pg" "$follow_my" || true
fi
kill "$follow_pg" "$follow_my" 2>/dev/null || true
