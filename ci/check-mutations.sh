#!/bin/sh
# make check-mutations: each mutation of ci/mutations/ in turn
# (ci/check-mutation.sh), then a table of what caught it, for
# ci/mutations/RESULTS.md. Fails if any mutation was caught by nothing.
# Takes a KUnit run per mutation and a guest kernel build and boot for
# those that name a kselftest: an hour or more. Not part of make check.
# Usage: ci/check-mutations.sh
set -u
out=build/logs/mutations.md
mkdir -p build/logs
{
	echo "Date $(date -u +%Y-%m-%d), project commit $(git rev-parse --short=12 HEAD), series $(sh ci/series-hash.sh): \`make check-mutations\`."
	echo
	echo "| mutation | caught by | what failed |"
	echo "|---|---|---|"
} >"$out"
missed=0
for patch in ci/mutations/*.patch; do
	name=$(basename "$patch" .patch)
	line=$(sh ci/check-mutation.sh "$name" | tail -n 1)
	echo "$line"
	by=${line#*caught by: } what=${line#*failed: }
	by=${by%%;*}
	[ "$by" != nothing ] || missed=1
	echo "| $name | $by | $what |" >>"$out"
done
cat "$out"
[ "$missed" -eq 0 ]
