#!/bin/sh
# Extract the pinned kernel source into TREE as a git repository and apply
# series/ on top, one commit per patch. The pristine source is tagged
# debian-base; `git log debian-base..` is the series. The base commit is
# the same on every machine (fixed author and date), so that the cover
# letters' base-commit names it. A line "# series 2..." in series/series
# tags the commit before it series-2-base: the first series ends there.
# Usage: ci/make-tree.sh TARBALL TREE SERIES_DIR
set -eu
tarball=$1 tree=$2 series=$(cd "$3" && pwd)
if [ -e "$tree" ]; then
	echo "make-tree: $tree exists; remove it to start again" >&2
	exit 1
fi
tmp=$tree.extracting
rm -rf "$tmp"
mkdir -p "$tmp"
tar -xf "$tarball" -C "$tmp" --strip-components=1
cd "$tmp"
git init -q -b main
git config user.name "${GIT_AUTHOR_NAME:-fuse-uring}"
git config user.email "${GIT_AUTHOR_EMAIL:-fuse-uring@localhost}"
# Debian's .gitignore ignores everything at the top level: add by force.
git add -f -A >/dev/null
GIT_AUTHOR_NAME=Debian GIT_AUTHOR_EMAIL=debian-kernel@lists.debian.org \
GIT_COMMITTER_NAME=Debian GIT_COMMITTER_EMAIL=debian-kernel@lists.debian.org \
GIT_AUTHOR_DATE='1970-01-01T00:00:00Z' GIT_COMMITTER_DATE='1970-01-01T00:00:00Z' \
	git commit -q -m "$(basename "$tarball") (Debian package, pristine)"
git tag debian-base
while IFS= read -r patch; do
	case $patch in
	'# series 2'*) git tag series-2-base ;;
	''|'#'*) ;;
	*) git am -q --committer-date-is-author-date "$series/$patch" ;;
	esac
done <"$series/series"
cd - >/dev/null
mv "$tmp" "$tree"
echo "make-tree: $tree at $(git -C "$tree" rev-list --count debian-base..HEAD) patches"
