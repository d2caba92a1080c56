#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Runs the benchmarks in bench/ against the dev broker and the real Kafka broker, printing their figures.
# Builds a Release tree in build-bench/. Stops the broker again if it started it.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
. "$SCRIPT_DIR/lib/common.sh"
. "$SCRIPT_DIR/lib/install-deps.sh"
cd "$TIDEMARK_ROOT"
install_deps
cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DTIDEMARK_BUILD_TESTS=OFF >/dev/null
cmake --build build-bench -j "$(nproc)"

started_kafka=0
if ! TIDEMARK_SKIP_DEPS=1 "$SCRIPT_DIR/servers.sh" status >/dev/null 2>&1 && ! grep -q TIDEMARK_KAFKA_BOOTSTRAP "$TIDEMARK_RUN_DIR/env.sh" 2>/dev/null; then
    started_kafka=1
fi
TIDEMARK_SKIP_DEPS=1 "$SCRIPT_DIR/servers.sh" start kafka
# shellcheck disable=SC1091
. "$TIDEMARK_RUN_DIR/env.sh"
trap '[[ $started_kafka == 1 ]] && "$SCRIPT_DIR/servers.sh" stop kafka' EXIT

echo "== serialization + produce (bench/serialize_produce_bench.cpp) on $(nproc) cores"
build-bench/bench/bench_serialize_produce "$@" 2> >(grep -v '^\[' >&2)
