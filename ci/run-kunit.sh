#!/bin/sh
# Run the KUnit suites of the series with kunit.py on UML (its default),
# then scan the kernel's whole log (BUILD_DIR/test.log) for kernel reports:
# kunit.py shows the log of failed cases only, so a WARN, a lockdep report
# or a slab-poison report inside a passing case would otherwise fail
# nothing. Prints kunit.py's output; kunit.py's own summary comes before
# the scan's verdict.
# Usage: ci/run-kunit.sh TREE BUILD_DIR KUNITCONFIG [kunit.py options...]
set -eu
top=$(pwd)
tree=$1
mkdir -p "$2"
build=$(cd "$2" && pwd) config=$(cd "$(dirname "$3")" && pwd)/$(basename "$3")
shift 3
rm -f "$build/test.log"
rc=0
(cd "$tree" && python3 tools/testing/kunit/kunit.py run \
	--kunitconfig="$config" --build_dir="$build" --jobs="$(nproc)" \
	--timeout=600 --make_options 'CC=ccache gcc' "$@") || rc=$?
if [ ! -f "$build/test.log" ]; then
	echo "run-kunit: no kernel log in $build/test.log"
	exit 1
fi
sh "$top/ci/check-log.sh" "$build/test.log" || rc=1
exit "$rc"
