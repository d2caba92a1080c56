#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# The two-way sync demo (./scripts/demo.sh two-way runs it). On a fresh Debian 12 machine, as root:
#   installs the dependencies, builds Tidemark, starts throwaway MariaDB and PostgreSQL servers on loopback,
#   and keeps a legacy and a modern schema in sync both ways while both take writes. Ctrl-C stops it all.
#
# The scenario of a migration: `legacy_customers` in MariaDB (AUTO_INCREMENT id, first_name, last_name)
# and `modern_customers` in PostgreSQL (a UUID key of its own, full_name computed from the legacy names,
# another column name for the e-mail). Two pipelines run, legacy_to_modern and modern_to_legacy, each
# naming the other as its peer: each change reaches the other side once, transformed, and never comes
# back; the keys each side generates are paired in an id map on each side, so a row created on either
# side is updated and deleted from either side; the `version` column decides conflicts (last writer wins).
# A writer edits both sides (including rows the other side created); every few seconds the demo prints
# both tables, joined through the id map, and whether they agree.
#
# Environment: TIDEMARK_DEMO_SECONDS=N (stop by itself after N seconds instead of waiting for Ctrl-C),
# TIDEMARK_DEMO_BINARY=path (a tidemark binary already built: no install, no build).
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
. "$SCRIPT_DIR/lib/common.sh"
. "$SCRIPT_DIR/lib/install-deps.sh"
cd "$TIDEMARK_ROOT"

demo_dir="$TIDEMARK_RUN_DIR/demo-two-way"
build_dir="$TIDEMARK_ROOT/build-demo"
pids=()

cleanup() {
    trap - EXIT INT TERM
    echo
    log_info "stopping the demo"
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    log_info "logs: $demo_dir/*.log"
    TIDEMARK_SKIP_DEPS=1 "$SCRIPT_DIR/servers.sh" stop mariadb postgres || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

tidemark="${TIDEMARK_DEMO_BINARY:-}"
if [[ -z "$tidemark" ]]; then
    install_deps
    log_info "building Tidemark ($build_dir)"
    cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTIDEMARK_BUILD_TESTS=OFF \
        -DTIDEMARK_BUILD_BENCH=OFF -DTIDEMARK_WERROR=OFF >/dev/null
    cmake --build "$build_dir" -j "$(nproc)" --target tidemark
    tidemark="$build_dir/tidemark"
fi

rm -rf "$demo_dir"
mkdir -p "$demo_dir"
TIDEMARK_SKIP_DEPS=1 "$SCRIPT_DIR/servers.sh" start mariadb postgres
# shellcheck disable=SC1091
. "$TIDEMARK_RUN_DIR/env.sh"

legacy() {
    mariadb --no-defaults -h127.0.0.1 -P"$TIDEMARK_MYSQL_PORT" -u"$TIDEMARK_MYSQL_USER" -p"$TIDEMARK_MYSQL_PASSWORD" \
        -D "$TIDEMARK_MYSQL_DATABASE" "$@"
}
modern() {
    PGPASSWORD="$TIDEMARK_PG_PASSWORD" psql -q -X -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$TIDEMARK_PG_PORT" \
        -U "$TIDEMARK_PG_USER" -d "$TIDEMARK_PG_DATABASE" "$@"
}

log_info "creating legacy_customers in MariaDB ($TIDEMARK_MYSQL_DATABASE) and modern_customers in PostgreSQL"
legacy -e "DROP TABLE IF EXISTS legacy_customers, tidemark_marker, tidemark_id_map, tidemark_conflict, tidemark_apply_position;
CREATE TABLE legacy_customers (id INT AUTO_INCREMENT PRIMARY KEY, first_name VARCHAR(50) NOT NULL,
                               last_name VARCHAR(50) NOT NULL, email VARCHAR(100), version INT NOT NULL DEFAULT 1);
INSERT INTO legacy_customers (first_name, last_name, email) VALUES
  ('Ada', 'Lovelace', 'ada@example.com'), ('Grace', 'Hopper', 'grace@example.com'),
  ('Edsger', 'Dijkstra', 'ewd@example.com'), ('Barbara', 'Liskov', 'barbara@example.com')"
modern <<'SQL'
SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = 'tidemark_modern_to_legacy';
DROP PUBLICATION IF EXISTS tidemark_modern_to_legacy;
DROP TABLE IF EXISTS modern_customers, tidemark_marker, tidemark_id_map, tidemark_conflict, tidemark_apply_position;
CREATE TABLE modern_customers (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), full_name text NOT NULL,
                               email_address text, version int NOT NULL DEFAULT 1);
SQL

cat >"$demo_dir/legacy-to-modern.yaml" <<YAML
# Written by scripts/demo-two-way.sh; config/two-way-legacy-to-modern.yaml explains every line.
name: legacy_to_modern
source:
  type: mysql
  host: 127.0.0.1
  port: $TIDEMARK_MYSQL_PORT
  user: $TIDEMARK_MYSQL_USER
  password: \${DEMO_MYSQL_PASSWORD}
  tables: [$TIDEMARK_MYSQL_DATABASE.legacy_customers]
  mysql:
    server_id: 5401
sink:
  type: postgres
  database:
    host: 127.0.0.1
    port: $TIDEMARK_PG_PORT
    user: $TIDEMARK_PG_USER
    password: \${DEMO_PG_PASSWORD}
    database: $TIDEMARK_PG_DATABASE
    tables:
      - source: $TIDEMARK_MYSQL_DATABASE.legacy_customers
        target: modern_customers
        generated_key: true          # PostgreSQL's UUID default; paired with the legacy id in tidemark_id_map
        version: version             # last writer wins
        columns:
          full_name: "concat(:first_name, ' ', :last_name)"
          email_address: email
          version: version
two_way:
  peer: modern_to_legacy
snapshot:
  initial: when_needed               # this direction loads the modern side once
YAML

cat >"$demo_dir/modern-to-legacy.yaml" <<YAML
# Written by scripts/demo-two-way.sh; config/two-way-modern-to-legacy.yaml explains every line.
name: modern_to_legacy
source:
  type: postgres
  host: 127.0.0.1
  port: $TIDEMARK_PG_PORT
  user: $TIDEMARK_PG_USER
  password: \${DEMO_PG_PASSWORD}
  database: $TIDEMARK_PG_DATABASE
  tables: [public.modern_customers]
  postgres:
    slot: tidemark_modern_to_legacy
    publication: tidemark_modern_to_legacy
    create_publication: true
sink:
  type: mysql
  database:
    host: 127.0.0.1
    port: $TIDEMARK_MYSQL_PORT
    user: $TIDEMARK_MYSQL_USER
    password: \${DEMO_MYSQL_PASSWORD}
    database: $TIDEMARK_MYSQL_DATABASE
    tables:
      - source: public.modern_customers
        target: legacy_customers
        generated_key: true          # MariaDB's AUTO_INCREMENT; paired with the modern UUID in tidemark_id_map
        version: version
        columns:
          first_name: "substring_index(:full_name, ' ', 1)"
          last_name: "substring_index(:full_name, ' ', -1)"
          email: email_address
          version: version
two_way:
  peer: legacy_to_modern
snapshot:
  initial: never                     # the other direction loads; this one only streams
YAML
export DEMO_MYSQL_PASSWORD="$TIDEMARK_MYSQL_PASSWORD" DEMO_PG_PASSWORD="$TIDEMARK_PG_PASSWORD"

for pipeline in modern-to-legacy legacy-to-modern; do
    log_info "tidemark check ($pipeline)"
    "$tidemark" check --config "$demo_dir/$pipeline.yaml" || die "the $pipeline configuration does not check"
done
# The pipeline reading the modern side streams before the snapshot writes its first id map entries there.
"$tidemark" run --config "$demo_dir/modern-to-legacy.yaml" >"$demo_dir/modern-to-legacy.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
    [[ -n "$(modern -tAc "SELECT 1 FROM pg_replication_slots WHERE slot_name = 'tidemark_modern_to_legacy' AND active")" ]] && break
    kill -0 "${pids[0]}" 2>/dev/null || die "modern_to_legacy exited: $(cat "$demo_dir/modern-to-legacy.log")"
    sleep 0.2
done
"$tidemark" run --config "$demo_dir/legacy-to-modern.yaml" >"$demo_dir/legacy-to-modern.log" 2>&1 &
pids+=($!)
log_info "both pipelines run (logs in $demo_dir); the modern side is loaded by the initial snapshot"

# The writer: both sides take writes, each also editing rows the other side created.
(
    n=0
    while sleep 2; do
        n=$((n + 1))
        case $((n % 6)) in
        0) legacy -e "INSERT INTO legacy_customers (first_name, last_name, email) VALUES ('Legacy$n', 'Customer', 'l$n@example.com')" ;;
        1) modern -c "INSERT INTO modern_customers (full_name, email_address) VALUES ('Modern$n Customer', 'm$n@example.com')" ;;
        2) legacy -e "UPDATE legacy_customers SET email = CONCAT('edited-on-legacy-$n@', SUBSTRING_INDEX(email, '@', -1)),
                        version = version + 1 WHERE first_name LIKE 'Modern%' ORDER BY id DESC LIMIT 1" ;;
        3) modern -c "UPDATE modern_customers SET full_name = 'Renamed$n Onmodern', version = version + 1
                        WHERE id = (SELECT id FROM modern_customers WHERE full_name LIKE 'Legacy%' LIMIT 1)" ;;
        4) modern -c "DELETE FROM modern_customers WHERE id = (SELECT id FROM modern_customers WHERE full_name LIKE 'Renamed%' LIMIT 1)" ;;
        5) legacy -e "UPDATE legacy_customers SET version = version + 1, last_name = 'Lovelace-King' WHERE first_name = 'Ada'" ;;
        esac || break
    done
) >"$demo_dir/writer.log" 2>&1 &
pids+=($!)

show() {
    echo
    log_info "legacy_customers (MariaDB) | the modern row it is paired with (id map in PostgreSQL)"
    legacy -t -e "SELECT c.id, c.first_name, c.last_name, c.email, c.version, m.source_key AS modern_id
        FROM legacy_customers c LEFT JOIN tidemark_id_map m ON m.pipeline = 'modern_to_legacy' AND m.target_key = c.id
        ORDER BY c.id" 2>/dev/null || true
    log_info "modern_customers (PostgreSQL)"
    modern -c "SELECT id, full_name, email_address, version FROM modern_customers ORDER BY full_name" 2>/dev/null || true
    local l m
    l=$(legacy -N -e "SELECT CONCAT(first_name, ' ', last_name, '|', COALESCE(email, ''), '|', version) FROM legacy_customers" | sort)
    m=$(modern -tA -c "SELECT full_name || '|' || COALESCE(email_address, '') || '|' || version FROM modern_customers" | sort)
    if [[ "$l" == "$m" ]]; then log_info "both sides agree ($(wc -l <<<"$l") customers)"; else log_info "converging..."; fi
}

end=$((SECONDS + ${TIDEMARK_DEMO_SECONDS:-1000000000}))
while ((SECONDS < end)); do
    show
    for pid in "${pids[@]:0:2}"; do kill -0 "$pid" 2>/dev/null || die "a pipeline exited: see $demo_dir/*.log"; done
    sleep 4
done
