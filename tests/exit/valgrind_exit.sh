#!/usr/bin/env bash
# tests/exit/valgrind_exit.sh VALGRIND EXIT_APP MODE clean|leak
# Runs EXIT_APP MODE under Memcheck (--leak-check=full --error-exitcode=66,
# Valgrind's default suppressions and nothing else) and passes only on the
# expected verdict:
#   clean — exit 0, "ERROR SUMMARY: 0 errors", nothing definitely or
#           possibly lost;
#   leak  — exit 66, and a definitely or possibly lost record of at least
#           1 MiB whose allocation stack passes through doca_mem_create
#           (the memory exit_app forgets), so an unrelated leak cannot pass
#           for it.
# The allocator is the caller's: DOCA_CORE_ALLOCATOR comes from the environment.
set -u
valgrind=$1 bin=$2 mode=$3 want=$4
out=$("$valgrind" --leak-check=full --error-exitcode=66 "$bin" "$mode" 2>&1)
rc=$?
verdict() {
	echo "$out"
	echo "valgrind_exit: mode $mode, DOCA_CORE_ALLOCATOR=${DOCA_CORE_ALLOCATOR:-}: expected $want, exit $rc — $1"
	[ "$1" = PASS ]
	exit $?
}
case $want in
clean)
	[ "$rc" -eq 0 ] || verdict "FAIL (exit status $rc)"
	grep -q 'ERROR SUMMARY: 0 errors' <<<"$out" || verdict "FAIL (errors reported)"
	grep -Eq '(definitely|possibly) lost: [1-9]' <<<"$out" && verdict "FAIL (a leak reported)"
	verdict PASS ;;
leak)
	[ "$rc" -eq 66 ] || verdict "FAIL (no error exit: the leak was not seen)"
	# the loss record's first line, then its stack up to the blank line
	awk '/bytes in [0-9]+ blocks are (definitely|possibly) lost/ { rec = $0; inrec = 1; next }
	     inrec && /doca_mem_create/ { print rec; inrec = 0 }
	     /^==[0-9]+== $/ { inrec = 0 }' <<<"$out" |
		grep -Eq '== (1,0[4-9][0-9],[0-9]{3}|[0-9]{1,3}(,[0-9]{3}){2,}) (\(|bytes)' ||
		verdict "FAIL (no loss record of 1 MiB or more from doca_mem_create)"
	verdict PASS ;;
*)
	echo "usage: $0 VALGRIND EXIT_APP MODE clean|leak" >&2
	exit 2 ;;
esac
