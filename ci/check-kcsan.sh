#!/bin/sh
# make check-kcsan: run the kselftests in a guest built with KCSAN instead
# of KASAN, and end with "N passed, N failed". A data race KCSAN reports
# fails the run like any other kernel report, and so does a skip not in
# ci/expected-skips/kselftest. Logs go to build/logs/.
# Usage: ci/check-kcsan.sh BZIMAGE INITRAMFS
set -u
logs=build/logs
mkdir -p "$logs"
GUEST_SMP=4 GUEST_LOG=$logs/kcsan-console.log \
GUEST_TIMEOUT=${CHECK_GUEST_TIMEOUT:-2400} \
	sh ci/run-guest.sh "$1" "$2" "$(cat ci/guest-kselftest.sh)" \
	>"$logs/kcsan.log" 2>&1
rc=$?
grep -E '^(not )?ok [0-9]+ |^# (not )?ok [0-9]+ ' "$logs/kcsan.log" || true
set -- $(sh ci/count-kselftest.sh "$logs/kcsan.log")
failed=$2
if ! sh ci/check-skips.sh kselftest "$logs/kcsan.log" ci/expected-skips/kselftest &&
    [ "$failed" -eq 0 ]; then
	failed=1
fi
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
	tail -n 60 "$logs/kcsan.log"
	failed=1
fi
echo "$1 passed, $failed failed, $3 skipped"
[ "$failed" -eq 0 ]
