#!/bin/sh
# Print what a failed stage's log says of its failed test cases: KUnit's
# failed expectations and kselftest's "not ok" lines, with some context,
# so that CI's output names the cause and not only the test.
# Usage: ci/show-failures.sh STAGE.LOG
set -eu
pattern='EXPECTATION FAILED|ASSERTION FAILED|try faulted|try timed out|\[FAILED\]|\[CRASHED\]|^(# )?not ok [0-9]+ |FAIL:'
[ -f "$1" ] || exit 0
if grep -Eq "$pattern" "$1"; then
	echo "check: failures in $1:"
	grep -E -B 2 -A 8 "$pattern" "$1" | tr -d '\r' | head -n 80
fi
