#!/usr/bin/env bash
# tests/exit/report_expect.sh EXIT_APP
# exit_app forget leaves a device, a context, a 1 MiB memory and a PE
# alive: it must exit 0 and its stderr must be exactly the library's
# at-exit report, one warning line per kind (engine/live.c); exit_app clean
# must print nothing at all.
set -u
bin=$1
expected='[doca-core WARN] at exit: 1 device still alive
[doca-core WARN] at exit: 1 context still alive
[doca-core WARN] at exit: 1 memory (1048576 bytes) still alive
[doca-core WARN] at exit: 1 progress engine still alive'
fail=0
got=$("$bin" forget 2>&1 >/dev/null)
rc=$?
if [ "$rc" -ne 0 ] || [ "$got" != "$expected" ]; then
	printf 'report_expect: forget: exit %s, stderr:\n%s\nexpected exit 0 and:\n%s\n' "$rc" "$got" "$expected"
	fail=1
fi
got=$("$bin" clean 2>&1)
rc=$?
if [ "$rc" -ne 0 ] || [ -n "$got" ]; then
	printf 'report_expect: clean: exit %s, output:\n%s\nexpected exit 0 and no output\n' "$rc" "$got"
	fail=1
fi
[ "$fail" -eq 0 ] && echo "report_expect: PASS"
exit "$fail"
