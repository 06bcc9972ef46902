#!/bin/sh
# The test counts the README and the cover letter quote must be those of
# a make check of today's series/: SUMMARY is the committed copy of what
# make check wrote to build/logs/summary.txt (series/check-summary.txt).
# README.md holds SUMMARY's lines verbatim, indented, between the lines
# "<!-- make check summary -->" and "<!-- end of make check summary -->";
# series/cover.txt holds its kunit and kselftest lines; and series/ must
# be what that make check ran.
# Usage: ci/check-counts.sh SUMMARY
set -eu
summary=$1
if [ ! -f "$summary" ]; then
	echo "check-counts: no $summary: run make check, then copy build/logs/summary.txt there"
	exit 1
fi
last=build/logs/summary.txt
if [ -f "$last" ] && ! cmp -s "$last" "$summary"; then
	echo "check-counts: note: $last (the last make check here) is not $summary"
fi
quoted=$(sed -n '/^<!-- make check summary -->$/,/^<!-- end of make check summary -->$/p' \
	README.md | sed '1d;$d;/^$/d;s/^    //')
bad=0
now=$(sh ci/series-hash.sh)
if ! grep -qx "series: $now" "$summary"; then
	echo "check-counts: series/ changed since the make check of $summary: run it again"
	bad=1
fi
if [ "$quoted" != "$(cat "$summary")" ]; then
	echo "check-counts: README.md quotes other counts than $summary:"
	echo "$quoted" | diff - "$summary" || true
	bad=1
fi
grep -E '^(kunit|kselftest)' "$summary" | while IFS= read -r line; do
	grep -qF "$line" series/cover.txt || { echo "check-counts: series/cover.txt lacks \"$line\""; exit 1; }
done || bad=1
[ "$bad" -eq 0 ] && echo "check-counts: README.md and series/cover.txt quote $summary"
exit "$bad"
