#!/bin/sh
# Check that applying series/ to the pristine source gives exactly the tree
# of TREE's HEAD (so nothing is left only in the build folder), and that the
# FUSE entry of MAINTAINERS, to which the series adds its files, is
# MAINTAINERS.snippet; and that the README and the cover letter quote the
# counts of a make check of this series, committed as
# series/check-summary.txt (ci/check-counts.sh).
# Usage: ci/verify-series.sh TREE SERIES_DIR
set -eu
tree=$(cd "$1" && pwd) series=$(cd "$2" && pwd)
scratch=$tree.verify
git -C "$tree" worktree remove --force "$scratch" 2>/dev/null || rm -rf "$scratch"
git -C "$tree" worktree add -q --detach "$scratch" debian-base
trap 'git -C "$tree" worktree remove --force "$scratch"' EXIT
while IFS= read -r patch; do
	case $patch in ''|'#'*) continue ;; esac
	git -C "$scratch" am -q "$series/$patch"
done <"$series/series"
want=$(git -C "$tree" rev-parse 'HEAD^{tree}')
got=$(git -C "$scratch" rev-parse 'HEAD^{tree}')
if [ "$want" != "$got" ]; then
	echo "verify-series: series/ does not reproduce $tree (run make series)" >&2
	git -C "$tree" diff --stat "$got" "$want" >&2
	exit 1
fi
entry=$(git -C "$tree" show HEAD:MAINTAINERS |
	sed -n '/^FUSE: FILESYSTEM IN USERSPACE$/,/^$/p' | sed '/^$/d')
if [ "$entry" != "$(cat "$series/../MAINTAINERS.snippet")" ]; then
	echo "verify-series: the FUSE entry of MAINTAINERS differs from MAINTAINERS.snippet:" >&2
	echo "$entry" | diff "$series/../MAINTAINERS.snippet" - >&2
	exit 1
fi
echo "verify-series: series/ reproduces $tree; FUSE entry = MAINTAINERS.snippet"
sh "$(dirname "$0")/check-counts.sh" "$series/check-summary.txt"
