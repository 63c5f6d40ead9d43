#!/usr/bin/env bash
# stress/expect_violation.sh PROGRAM ARGS... — passes only if a stress
# program run with --sabotage (a deliberate harness fault) detects it: exit
# status 1, at least one "VIOLATION:" line, a FAIL summary, and no sanitizer
# report (a crash must not pass for a detection). Proves the invariant
# checks of the stress programs can fail.
set -u
out=$("$@" 2>&1)
rc=$?
echo "$out"
if [ "$rc" -eq 1 ] && grep -q '^VIOLATION:' <<<"$out" && grep -Eq ': FAIL seed=|^FATAL:' <<<"$out" &&
	! grep -q 'Sanitizer' <<<"$out"; then
	echo "expect_violation: PASS (the sabotage was detected)"
	exit 0
fi
echo "expect_violation: FAIL (exit $rc; the sabotage went unnoticed or the run broke otherwise)"
exit 1
