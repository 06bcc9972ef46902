#!/bin/sh
# make check-flakes: boot the test guest once, as make check does (4 CPUs,
# 2 of them online), run the race and stress kselftests FLAKES_RUNS times
# each in it (ci/guest-flakes.sh), and print per test how many turns it
# passed, "TEST: PASSED/RUNS", then "N passed, N failed": a test passed if
# it passed every turn; a skip counts as a failure unless the test is
# listed in ci/expected-skips/kselftest, and so does a filter of
# ci/guest-flakes.sh that selects no test. A kernel report in the guest's
# console, or a guest that does not finish, fails the run. Logs go to build/logs/ (flakes.out
# fills as the guest runs).
# Usage: ci/check-flakes.sh BZIMAGE INITRAMFS
# Environment: FLAKES_RUNS (20), FLAKES_GUEST_TIMEOUT seconds (600 a turn,
# and 600 more; a turn takes about 5 minutes under TCG).
set -u
logs=build/logs
mkdir -p "$logs"
runs=${FLAKES_RUNS:-20}
log=$logs/flakes.log
start=$(date +%s)

GUEST_SMP=4 GUEST_LOG=$logs/flakes-console.log GUEST_OUT=$logs/flakes.out \
GUEST_TIMEOUT=${FLAKES_GUEST_TIMEOUT:-$(( runs * 600 + 600 ))} \
	sh ci/run-guest.sh "$1" "$2" "FLAKES_RUNS=$runs
$(cat ci/guest-flakes.sh)" >"$log" 2>&1
rc=$?

echo "check-flakes: $runs turns in $(( $(date +%s) - start ))s (guest exit $rc)"
# Tests in the order they first ran; a turn without a line for a test (its
# program crashed or hung) counts as not passed.
awk -v runs="$runs" -v skips=ci/expected-skips/kselftest '
BEGIN {
	while ((getline line <skips) > 0) {
		sub(/#.*/, "", line)
		if (split(line, word) > 0)
			expected[word[1]] = 1
	}
}
$1 == "flakes:" && ($2 == "pass" || $2 == "fail" || $2 == "skip") {
	if (!($3 in seen)) { seen[$3] = 1; order[n++] = $3 }
	count[$3, $2]++
}
END {
	for (i = 0; i < n; i++) {
		t = order[i]
		skip = count[t, "skip"] ? sprintf(" (%d skipped)", count[t, "skip"]) : ""
		printf "%s: %d/%d%s\n", t, count[t, "pass"], runs, skip
		ok = count[t, "pass"]
		if (t in expected)
			ok += count[t, "skip"]
		if (ok == runs && !count[t, "fail"])
			passed++
		else
			failed++
	}
	printf "total %d %d\n", passed, failed
}' "$log" >"$logs/flakes.table"
grep -v '^total ' "$logs/flakes.table"
# shellcheck disable=SC2046
set -- $(sed -n 's/^total //p' "$logs/flakes.table")
passed=${1:-0} failed=${2:-0}
if [ "$rc" -ne 0 ]; then
	grep -E -A 60 '^(check-log|run-guest):' "$log" | head -n 80
	echo "check-flakes: the guest run failed (exit $rc); see $log and $logs/flakes-console.log"
	[ "$failed" -gt 0 ] || failed=1
fi
if [ "$(( passed + failed ))" -eq 0 ]; then
	tail -n 40 "$log"
	failed=1
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
