#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Coverage-guided fuzzing of the decoders (libFuzzer + ASan + UBSan; targets in fuzz/, see docs/fuzzing.md):
#   - installs the Debian packages it needs when missing (clang-14, libclang-rt-14-dev, the build's libraries),
#   - configures and builds build-fuzz/ with clang++-14 and -DTIDEMARK_FUZZ=ON (the fuzz targets only),
#   - runs each target for a bounded time, one after the other, starting from its committed seeds in
#     fuzz/corpus/<target>/ (new inputs go to build-fuzz/corpus/<target>/, the repository is not touched),
#   - exits non-zero when any target crashed, leaked, hit a sanitizer report, a timeout or the memory limit;
#     the input that did it is in build-fuzz/artifacts/<target>/, the log in build-fuzz/logs/<target>.log.
# Options (environment): TIDEMARK_FUZZ_SECONDS per target (default 60); TIDEMARK_FUZZ_TARGETS, a space-
# separated subset (default all); TIDEMARK_SKIP_DEPS=1 skips the package check; TIDEMARK_BUILD_JOBS (default
# nproc). Reproduce a finding: build-fuzz/fuzz/<target> build-fuzz/artifacts/<target>/crash-...
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
. "$SCRIPT_DIR/lib/common.sh"
. "$SCRIPT_DIR/lib/install-deps.sh"

cd "$TIDEMARK_ROOT"
if [[ "${TIDEMARK_SKIP_DEPS:-0}" != 1 ]]; then
    install_deps
fi
require_cmd clang++-14

seconds="${TIDEMARK_FUZZ_SECONDS:-60}"
build_dir="$TIDEMARK_ROOT/build-fuzz"
all_targets=(binlog_events_fuzzer row_decoder_fuzzer mysql_json_binary_fuzzer json_diff_apply_fuzzer
    pgoutput_decoder_fuzzer pg_value_parser_fuzzer signal_fuzzer config_loader_fuzzer)
read -r -a targets <<<"${TIDEMARK_FUZZ_TARGETS:-${all_targets[*]}}"

# Longest input per target: a few times the largest seed, small enough to keep executions fast.
max_len_of() {
    case "$1" in
        binlog_events_fuzzer) echo 16384 ;;
        row_decoder_fuzzer | json_diff_apply_fuzzer | config_loader_fuzzer) echo 8192 ;;
        pg_value_parser_fuzzer) echo 2048 ;;
        *) echo 4096 ;;
    esac
}

start="$(now_s)"
mkdir -p "$build_dir/logs"
log_info "building the fuzz targets ($build_dir)"
cmake -S "$TIDEMARK_ROOT" -B "$build_dir" -G Ninja -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=Debug \
    -DTIDEMARK_FUZZ=ON -DTIDEMARK_WERROR=ON -DTIDEMARK_BUILD_TESTS=OFF -DTIDEMARK_BUILD_BENCH=OFF \
    >"$build_dir/logs/cmake.log" 2>&1 || { cat "$build_dir/logs/cmake.log"; die "cmake configure failed for $build_dir"; }
cmake --build "$build_dir" --target "${targets[@]}" -j "${TIDEMARK_BUILD_JOBS:-$(nproc)}"
log_info "built in $(elapsed_since "$start")s; fuzzing ${#targets[@]} targets for ${seconds}s each"

# Set here, not inherited: scripts/test.sh exports its own for ctest.
export ASAN_OPTIONS="detect_leaks=1:strict_string_checks=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
failed=()
for target in "${targets[@]}"; do
    seeds="$TIDEMARK_ROOT/fuzz/corpus/$target"
    [[ -d "$seeds" ]] || die "no seed corpus $seeds"
    corpus="$build_dir/corpus/$target"
    artifacts="$build_dir/artifacts/$target"
    log="$build_dir/logs/$target.log"
    mkdir -p "$corpus" "$artifacts"
    rc=0
    "$build_dir/fuzz/$target" -max_total_time="$seconds" -max_len="$(max_len_of "$target")" -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts/" "$corpus" "$seeds" \
        >"$log" 2>&1 || rc=$?
    stats="$(grep -E '^stat::(number_of_executed_units|new_units_added|peak_rss_mb)' "$log" | sed 's/^stat:://' |
        tr '\n' ' ' || true)"
    if ((rc != 0)); then
        show_log_tail "$log" 60
        log_error "$target: FAILED (exit $rc); the input is in $artifacts/, the log in $log"
        failed+=("$target")
    else
        log_info "$target: ok ($stats)"
    fi
done

log_info "fuzzing took $(elapsed_since "$start")s in total"
((${#failed[@]} == 0)) || die "fuzz targets with findings: ${failed[*]}"
log_info "no findings"
