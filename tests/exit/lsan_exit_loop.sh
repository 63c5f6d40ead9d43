#!/usr/bin/env bash
# tests/exit/lsan_exit_loop.sh EXIT_APP RUNS (ASan builds)
# `exit_app quick` RUNS times under LeakSanitizer with the slow unwinder
# (fast_unwind_on_malloc=0, as tests/remote sets it). LSan's exit-time
# check runs before the library's destructors, while the reclaimer thread
# the teardown started may still be young; a thread still starting holds
# its start-up allocations where LSan does not look, and the check reports
# them as a leak (google/sanitizers#1836). engine/rcu.c waits for the
# thread to run before doca_call_rcu returns; without that wait this loop
# failed 5 times and once in two rounds of 2000 runs, and 1 in 12 runs of
# remote_kill_exporter. Every run must exit 0 with no output.
set -u
bin=$1 runs=$2
for ((i = 1; i <= runs; i++)); do
	out=$(ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0 "$bin" quick 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ] || [ -n "$out" ]; then
		printf 'lsan_exit_loop: run %d of %d: exit %d, output:\n%s\n' "$i" "$runs" "$rc" "$out"
		exit 1
	fi
done
echo "lsan_exit_loop: $runs runs, all clean"
