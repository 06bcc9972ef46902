#!/bin/sh
# Give the MAINTAINERS entry of FUSE over io_uring an F: line for each file
# the commit HEAD adds (selftests file by file, so that every patch adding a
# file updates MAINTAINERS and checkpatch has nothing to ask), creating the
# entry if needed, and amend HEAD. Run in build/linux on every commit:
#   git rebase debian-base --exec "sh $PWD/../../ci/maintainers-add-files.sh"
# then copy the entry to MAINTAINERS.snippet (make verify-series compares).
set -eu
added=$(git diff-tree --no-commit-id --name-only --diff-filter=A -r HEAD)
[ -n "$added" ] || exit 0
python3 - $added <<'PY'
import sys
files = sys.argv[1:]
s = open('MAINTAINERS').read()
head = "FUSE OVER IO_URING\n"
if head not in s:
    block = (head +
             "M:\tFUSE over io_uring maintainers <maintainers@users.noreply.a-seed-8ccbde96.example>\n"
             "L:\tlinux-fsdevel@vger.kernel.org\n"
             "S:\tMaintained\n\n")
    anchor = "FUSE: FILESYSTEM IN USERSPACE\n"
    s = s.replace(anchor, block + anchor, 1)
i = s.index(head)
j = s.index("\n\n", i) + 1
lines = s[i:j].splitlines(True)
fl = [l for l in lines if l.startswith("F:\t")]
other = [l for l in lines if not l.startswith("F:\t")]
for f in files:
    fl.append("F:\t%s\n" % f)
fl = sorted(set(fl))
s = s[:i] + "".join(other) + "".join(fl) + s[j:]
open('MAINTAINERS', 'w').write(s)
PY
git add -f MAINTAINERS
git commit -q --amend --no-edit
