#!/bin/sh
# The hash that names a version of series/: its patches without the cover
# letters (which quote make check's counts), in the order of series/series.
# make check writes it into its summary; check-counts.sh compares it.
# Usage: ci/series-hash.sh (from the repository's root)
set -eu
grep -v '^#' series/series | grep -v cover-letter | sed 's|^|series/|' |
	xargs cat | sha256sum | cut -c1-12
