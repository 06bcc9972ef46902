#!/bin/sh
# Read run_kselftest.sh's TAP output and print "PASSED FAILED SKIPPED",
# counting every test case of every program (the nested "# ok" lines). A
# program that failed without reporting a failed case (crash, timeout)
# counts as one failure; so does output with no TAP plan at all.
# Usage: ci/count-kselftest.sh KSELFTEST.TAP
set -eu
awk '
/^# ok [0-9]+ /        { if ($0 ~ /# SKIP/) skip++; else pass++; next }
/^# not ok [0-9]+ /    { fail++; prog_fail++; next }
/^ok [0-9]+ /          { prog_fail = 0; progs++; next }
/^not ok [0-9]+ /      { if ($0 ~ /# SKIP/) skip++; else if (!prog_fail) fail++; prog_fail = 0; progs++; next }
END                    { if (!progs) fail++; printf "%d %d %d\n", pass, fail, skip }
' "$1"
