#!/usr/bin/env bash
# fuzz/run_fuzz.sh BUILD_DIR [--seconds N] [libFuzzer flags...]
# Fuzz the API with BUILD_DIR/fuzz/fuzz_api for N seconds (default 600),
# seeded with the committed corpus. New inputs go to BUILD_DIR/fuzz/work-corpus,
# crashes and divergences to BUILD_DIR/fuzz/artifacts/ (never into the source
# tree: copy a reproducer into fuzz/corpus/ by hand once it is understood).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: run_fuzz.sh BUILD_DIR [--seconds N]}" && pwd)
shift
seconds=600
if [ "${1:-}" = "--seconds" ]; then
	seconds=${2:?--seconds needs a value}
	shift 2
fi
bin=$build/fuzz/fuzz_api
if [ ! -x "$bin" ]; then
	echo "run_fuzz.sh: $bin not built (needs CC=clang and -Db_sanitize=address,...)" >&2
	exit 1
fi
work=$build/fuzz/work-corpus
artifacts=$build/fuzz/artifacts
mkdir -p "$work" "$artifacts"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export DOCA_LOG_LEVEL=${DOCA_LOG_LEVEL:-error}
log=$build/fuzz/fuzz-$(date +%Y%m%d-%H%M%S).log
echo "fuzzing for ${seconds}s: $bin (log: $log)"
set +e
# -detect_leaks=0: objects are freed after an RCU grace period, on the library's
# reclaimer thread, so per-input leak checks would only see pending frees; LSan still
# checks at exit, after the library's destructor has waited for them.
"$bin" "$work" "$here/corpus" -max_total_time="$seconds" -max_len=2048 -timeout=20 -detect_leaks=0 \
	-rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts/" "$@" >"$log" 2>&1
rc=$?
set -e
grep -E '^(#[0-9]+[[:space:]]+DONE|stat::number_of_executed_units|stat::average_exec_per_sec|Done )' "$log" || true
if [ $rc -ne 0 ]; then
	tail -n 60 "$log"
	echo "run_fuzz.sh: the fuzzer failed (exit $rc); reproducers in $artifacts/" >&2
	exit 1 # not $rc: libFuzzer's crash exit is 77, which meson reads as "skipped"
fi
echo "run_fuzz.sh: ${seconds}s clean"
