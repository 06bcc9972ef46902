#!/bin/sh
# make submission: write series/ as git send-email takes it, under the
# submitter's own name. The series files carry the project's placeholder
# identity, which certifies nothing: here each patch gets From: and
# Signed-off-by: from git config user.name and user.email (the Developer's
# Certificate of Origin needs a person), To: the maintainers and Cc: the
# lists that scripts/get_maintainer.pl names for it on the patched tree.
# Refuses to run without an identity, or with the placeholder's. Then runs
# checkpatch --strict on every patch it wrote and prints what it says.
# Output: OUTDIR/1/ (the first series) and OUTDIR/2/ (the second).
# Usage: ci/make-submission.sh TREE SERIES_DIR OUTDIR
set -eu
tree=$(cd "$1" && pwd) series=$(cd "$2" && pwd) out=$3
name=$(git config user.name || true)
email=$(git config user.email || true)
# git format-patch may fold the From: header: the name is on its first line
placeholder=$(sed -n 's/^From: //p' "$series"/0001-*.patch | head -n 1 | sed 's/ *<.*//')
if [ -z "$name" ] || [ -z "$email" ]; then
	echo "submission: set your identity first: git config user.name / user.email" >&2
	exit 1
fi
if [ "$name" = "$placeholder" ]; then
	echo "submission: git config user.name is the project's placeholder ($name);" \
		"a patch is signed off by a person: set your own" >&2
	exit 1
fi
me="$name <$email>"
rm -rf "$out"
mkdir -p "$out/1" "$out/2"
part=1
while IFS= read -r patch; do
	case $patch in
	'# series 2'*) part=2; continue ;;
	''|'#'*) continue ;;
	esac
	case $patch in
	0000-cover-letter.patch|0100-cover-letter.patch) ;;
	*) [ -f "$series/$patch" ] || { echo "submission: $patch missing" >&2; exit 1; } ;;
	esac
	f=$out/$part/$patch
	# The placeholder's From: and Signed-off-by: become the submitter's
	awk -v me="$me" -v ph="$placeholder" '
		folded && /^[ \t]/ { next }
		{ folded = 0 }
		/^From: / && !from { print "From: " me; from = 1; folded = 1; next }
		index($0, "Signed-off-by: " ph " <") == 1 { print "Signed-off-by: " me; next }
		{ print }' "$series/$patch" >"$f"
done <"$series/series"
for cover in 0000 0100; do
	p=1
	[ "$cover" = 0100 ] && p=2
	sed "1,/^Subject:/ s/^Subject:/From: $me\nSubject:/" \
		"$series/$cover-cover-letter.patch" >"$out/$p/$cover-cover-letter.patch"
done

# To: and Cc: from the patched tree's MAINTAINERS, for the files each
# series touches; the cover letter gets the union of its patches'.
out=$(cd "$out" && pwd)
for p in 1 2; do
	patches=$(ls "$out/$p"/*.patch | grep -v -- '-cover-letter\.patch$')
	# shellcheck disable=SC2086
	to=$(cd "$tree" && scripts/get_maintainer.pl --no-git --no-git-fallback \
		--norolestats --nol $patches | paste -sd, -)
	# shellcheck disable=SC2086
	cc=$(cd "$tree" && scripts/get_maintainer.pl --no-git --no-git-fallback \
		--norolestats --nom $patches | paste -sd, -)
	for f in "$out/$p"/*.patch; do
		sed -i "0,/^Subject:/ s/^Subject:/To: $to\nCc: $cc\nSubject:/" "$f"
	done
	echo "submission: series $p: $(ls "$out/$p" | wc -l) files in $out/$p"
	echo "  To: $to"
	echo "  Cc: $cc"
done

status=0
for f in $(ls "$out"/1/*.patch "$out"/2/*.patch | grep -v -- '-cover-letter\.patch$'); do
	report=$("$tree/scripts/checkpatch.pl" --strict --quiet "$f" 2>&1) || status=1
	[ -z "$report" ] || printf '%s:\n%s\n\n' "${f##*/}" "$report"
done
[ "$status" -eq 0 ] || echo "submission: checkpatch has remarks (above); the cover letter accounts for the known ones"
echo "submission: send with: git send-email $out/1/*.patch (then $out/2/*.patch)"
