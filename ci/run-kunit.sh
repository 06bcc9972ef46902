#!/bin/sh
# Run the KUnit suites of the series with kunit.py on UML (its default).
# Prints kunit.py's output; the last line is kunit.py's own summary.
# Usage: ci/run-kunit.sh TREE BUILD_DIR KUNITCONFIG [kunit.py options...]
set -eu
tree=$1
mkdir -p "$2"
build=$(cd "$2" && pwd) config=$(cd "$(dirname "$3")" && pwd)/$(basename "$3")
shift 3
cd "$tree"
exec python3 tools/testing/kunit/kunit.py run --kunitconfig="$config" \
	--build_dir="$build" --jobs="$(nproc)" --timeout=600 \
	--make_options 'CC=ccache gcc' "$@"
