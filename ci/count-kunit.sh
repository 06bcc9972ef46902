#!/bin/sh
# Read kunit.py's output and print "PASSED FAILED SKIPPED".
# A run that never reached its summary line counts as one failure.
# Usage: ci/count-kunit.sh KUNIT.LOG
set -eu
line=$(grep -E 'Testing complete\. Ran [0-9]+ tests' "$1" | tail -n 1 || true)
if [ -z "$line" ]; then
	echo "0 1 0"
	exit 0
fi
num() { echo "$line" | sed -n "s/.*$1: \([0-9]*\).*/\1/p"; }
passed=$(num passed) failed=$(num failed) crashed=$(num crashed)
skipped=$(num skipped) errors=$(num errors)
echo "${passed:-0} $(( ${failed:-0} + ${crashed:-0} + ${errors:-0} )) ${skipped:-0}"
