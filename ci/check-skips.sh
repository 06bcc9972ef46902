#!/bin/sh
# Compare the test cases a run skipped with those it is expected to skip
# (one name a line in EXPECTED, '#' starts a comment). A skip not listed,
# or a listed case that no longer skips, fails: a skip nobody expected
# hides a test that did not run, and a list that no longer matches hides
# the next one.
# Usage: ci/check-skips.sh kunit|kselftest LOG EXPECTED
set -eu
kind=$1 log=$2 expected=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
case $kind in
kunit)
	# kunit.py: "[hh:mm:ss] [SKIPPED] case_name"
	sed -n 's/^\[[0-9:]*\] *\[SKIPPED\] \([^ ]*\).*/\1/p' "$log" ;;
kselftest)
	# TAP: "# ok N fixture.variant.case # SKIP reason", nested or not
	tr -d '\r' <"$log" | sed -n 's/^\(# \)*ok [0-9]* \(.*[^ ]\) *# SKIP.*/\2/p' ;;
*)
	echo "check-skips: unknown kind $kind" >&2
	exit 2 ;;
esac | sort >"$tmp/skipped"
sed 's/#.*//; s/[[:space:]]*$//; /^$/d' "$expected" | sort >"$tmp/expected"
bad=0
for name in $(comm -23 "$tmp/skipped" "$tmp/expected"); do
	echo "check-skips: $name skipped, not in $expected"
	bad=1
done
for name in $(comm -13 "$tmp/skipped" "$tmp/expected"); do
	echo "check-skips: $name is in $expected but did not skip"
	bad=1
done
exit "$bad"
