#!/bin/sh
# Print the MAINTAINERS file that commit COMMIT of TREE must have: Debian's,
# with an F: line in the existing "FUSE: FILESYSTEM IN USERSPACE" entry for
# every path the series added by COMMIT that none of the entry's F: lines
# covers yet (the selftests as their folder). So each patch that adds a
# file adds its line, and get_maintainer.pl names FUSE's maintainers for
# every file of the series. Rewrite the series with it after adding files:
#   git filter-branch -f --index-filter "sh $PWD/../../ci/maintainers-add-files.sh \
#     . \$GIT_COMMIT >/tmp/m && git update-index --cacheinfo 100644,\
#     \$(git hash-object -w /tmp/m),MAINTAINERS" debian-base..HEAD
# then copy the entry to MAINTAINERS.snippet (make verify-series compares).
# Usage: ci/maintainers-add-files.sh TREE COMMIT
set -eu
tree=$1 commit=$2
git -C "$tree" diff --name-only --diff-filter=A debian-base "$commit" |
	sed 's|^\(tools/testing/selftests/filesystems/fuse/\).*|\1|' | sort -u >"${TMPDIR:-/tmp}/added.$$"
git -C "$tree" show debian-base:MAINTAINERS |
python3 -c '
import sys
added = [l.strip() for l in open(sys.argv[1]) if l.strip()]
s = sys.stdin.read()
head = "FUSE: FILESYSTEM IN USERSPACE\n"
i = s.index(head)
j = s.index("\n\n", i) + 1
lines = s[i:j].splitlines(True)
pats = [l[3:].strip() for l in lines if l.startswith("F:\t")]
def covered(p):
    return any(p == q or (q.endswith("/") and p.startswith(q)) for q in pats)
new = ["F:\t%s\n" % p for p in added if not covered(p)]
fl = sorted([l for l in lines if l.startswith("F:\t")] + new)
other = [l for l in lines if not l.startswith("F:\t")]
k = next(n for n, l in enumerate(lines) if l.startswith("F:\t"))
out = other[:k] + fl + other[k:]
sys.stdout.write(s[:i] + "".join(out) + s[j:])
' "${TMPDIR:-/tmp}/added.$$"
rm -f "${TMPDIR:-/tmp}/added.$$"
