#!/usr/bin/env bash
# stress/soak.sh BUILD_DIR... [--seconds N] [--seed S] — the long soak
# (./run stress). Runs every stress program of each BUILD_DIR for its share
# of N seconds (default 600 in total, split evenly over programs and
# builds), in runs of at most 60 s with successive seeds (S, S+1, ...;
# default: from the clock), under TSAN_OPTIONS halt_on_error=1 and no
# suppressions (ASan and UBSan halt on their first report too). Prints
# each run's summary line (and the full output of a failing run, with the
# command that replays it; a passing run's WARNING: lines too), then one
# final line. Exits 0 only if every run passed.
set -u
usage() { echo "usage: $0 BUILD_DIR... [--seconds N] [--seed S]" >&2; exit 2; }
builds=()
while [ $# -gt 0 ] && [[ $1 != --* ]]; do
	builds+=("$1")
	shift
done
[ ${#builds[@]} -ge 1 ] || usage
total=600
seed=$(( $(date +%s) % 1000000 ))
while [ $# -gt 0 ]; do
	case $1 in
	--seconds) [ $# -ge 2 ] || usage; total=$2; shift 2 ;;
	--seed) [ $# -ge 2 ] || usage; seed=$2; shift 2 ;;
	*) usage ;;
	esac
done
[[ $total =~ ^[0-9]+$ && $seed =~ ^[0-9]+$ ]] || usage
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 second_deadlock_stack=1}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

# each entry: a program and its own arguments
programs=(stress_submit_stop stress_lifecycle stress_faults stress_shared_shards
	"stress_mixed --engines 0" "stress_mixed --engines 1" stress_churn stress_claim_race
	stress_pool_share_race stress_sw_qp stress_ring_watch)
for build in "${builds[@]}"; do
	for p in "${programs[@]}"; do
		[ -x "$build/stress/${p%% *}" ] || { echo "soak: $build/stress/${p%% *} not built" >&2; exit 2; }
	done
done
share=$(( total / (${#programs[@]} * ${#builds[@]}) ))
[ "$share" -ge 1 ] || share=1
chunk=60
log=$(mktemp)
trap 'rm -f "$log"' EXIT

echo "soak: ${#programs[@]} programs × ${#builds[@]} builds × ${share} s, runs of ≤ ${chunk} s, first seed $seed, builds ${builds[*]}"
pass=0 fail=0 start=$SECONDS
for build in "${builds[@]}"; do
	for p in "${programs[@]}"; do
		left=$share
		while [ "$left" -gt 0 ]; do
			secs=$(( left < chunk ? left : chunk ))
			left=$(( left - secs ))
			t0=$SECONDS
			read -r -a cmd <<<"$p"
			"$build/stress/${cmd[0]}" "${cmd[@]:1}" --seconds "$secs" --seed "$seed" >"$log" 2>&1
			rc=$?
			line=$(grep -E "^${cmd[0]}: (PASS|FAIL)" "$log" | tail -n 1)
			if [ "$rc" -eq 0 ] && [ -n "$line" ]; then
				pass=$((pass + 1))
				echo "  PASS $build $p (wall $((SECONDS - t0))s): ${line#*: PASS }"
				grep '^WARNING:' "$log" | sed 's/^/    /' # a race that seldom happened
			else
				fail=$((fail + 1))
				echo "  FAIL $build $p seed $seed ${secs}s (exit $rc)"
				sed 's/^/    | /' "$log" | head -n 200
				echo "    replay: TSAN_OPTIONS='$TSAN_OPTIONS' ASAN_OPTIONS='$ASAN_OPTIONS'" \
					"UBSAN_OPTIONS='$UBSAN_OPTIONS' $build/stress/$p --seconds $secs --seed $seed"
			fi
			seed=$((seed + 1))
		done
	done
done
echo "soak: $pass passed, $fail failed in $((SECONDS - start)) s"
[ "$fail" -eq 0 ]
