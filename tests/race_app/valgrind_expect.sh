#!/usr/bin/env bash
# tests/race_app/valgrind_expect.sh VALGRIND helgrind|drd RACE_APP MODE clean|race [FUNCTION]
# Runs race_app MODE under a Valgrind race detector (with Valgrind's default
# suppressions, which cover glibc's own internals, and nothing else) and
# passes only on the expected verdict:
#   clean — exit 0 and "ERROR SUMMARY: 0 errors";
#   race  — the tool's error exit, and a race report whose stacks name
#           FUNCTION with its file and line, so an unrelated report cannot
#           pass for the deliberate one. (Helgrind shows both accesses; DRD
#           shows the later one, so for DRD FUNCTION is the device's copy.)
# --fair-sched=yes: the program's threads spin with sched_yield, which
# Valgrind's default lock hand-over can starve.
set -u
valgrind=$1 tool=$2 bin=$3 mode=$4 want=$5 func=${6:-}
out=$("$valgrind" --tool="$tool" --fair-sched=yes --error-exitcode=66 "$bin" "$mode" 16 2>&1)
rc=$?
verdict() {
	echo "$out"
	echo "valgrind_expect: $tool, mode $mode: expected $want, exit $rc — $1"
	[ "$1" = PASS ]
	exit $?
}
case $want in
race)
	[ "$rc" -eq 66 ] || verdict "FAIL ($tool did not report the deliberate race)"
	grep -Eq 'Possible data race|Conflicting (load|store)' <<<"$out" ||
		verdict "FAIL (no data race among the errors)"
	# (gcc may name a specialised copy of a function FUNCTION.isra.0 or the like)
	grep -Eq "(at|by) 0x[0-9A-F]+: $func(\.[a-z]+\.[0-9]+)* \([a-z_]+\.c:[0-9]+\)" <<<"$out" ||
		verdict "FAIL (no stack frame of a report is in $func)"
	verdict PASS ;;
clean)
	[ "$rc" -eq 0 ] || verdict "FAIL (exit status $rc)"
	grep -q 'ERROR SUMMARY: 0 errors' <<<"$out" || verdict "FAIL ($tool reported errors)"
	verdict PASS ;;
*)
	echo "usage: $0 VALGRIND helgrind|drd RACE_APP MODE clean|race [FUNCTION]" >&2
	exit 2 ;;
esac
