#!/usr/bin/env bash
# stress/tsan_expect.sh BINARY MODE race|clean [MARKER]
# Runs BINARY MODE (a tsan_selfcheck mode, or a tests/race_app mode) and
# passes only on the expected verdict:
#   race  — TSan must report (a data race or a heap-use-after-free), the
#           process must exit with TSan's status, and the report must name
#           MARKER in a stack frame (the function holding the deliberate
#           bug), so an unrelated report cannot pass for the intended one;
#   clean — exit 0 and no ThreadSanitizer report at all.
# TSAN_OPTIONS from the environment are kept (no suppressions: the library
# needs none); halt_on_error and the exit code are forced so the verdict does
# not depend on the caller.
set -u
bin=$1 mode=$2 want=$3 marker=${4:-}
out=$(TSAN_OPTIONS="${TSAN_OPTIONS:-} halt_on_error=1 exitcode=66" "$bin" "$mode" 2>&1)
rc=$?
reported=no
if grep -Eq 'WARNING: ThreadSanitizer: (data race|heap-use-after-free)' <<<"$out"; then
	reported=yes
fi
verdict() {
	echo "$out"
	echo "tsan_expect: mode $mode: expected $want, exit $rc, report: $reported — $1"
	[ "$1" = PASS ]
	exit $?
}
case $want in
race)
	[ "$reported" = yes ] || verdict "FAIL (TSan did not see the deliberate race)"
	[ "$rc" -eq 66 ] || verdict "FAIL (TSan reported but the exit status is not 66)"
	[ -z "$marker" ] || grep -Eq "#[0-9]+ $marker " <<<"$out" ||
		verdict "FAIL (no stack frame of the report is in $marker)"
	verdict PASS ;;
clean)
	[ "$reported" = no ] && ! grep -q ThreadSanitizer <<<"$out" || verdict "FAIL (TSan reported a correct hand-off)"
	[ "$rc" -eq 0 ] || verdict "FAIL (exit status $rc)"
	verdict PASS ;;
*)
	echo "usage: $0 BINARY MODE race|clean [MARKER]" >&2
	exit 2 ;;
esac
