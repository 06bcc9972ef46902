#!/bin/sh
# Export the commits of TREE after debian-base into SERIES_DIR as numbered
# patches, a cover letter built from SERIES_DIR/cover.txt, and the file
# `series` listing their order. Exporting an unchanged tree changes nothing.
# Usage: ci/export-series.sh TREE SERIES_DIR
set -eu
tree=$1 series=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$tmp.series"' EXIT
# Numbered subjects, [PATCH nn/mm], as git send-email posts them
git -C "$tree" format-patch -q --no-signature --zero-commit --full-index \
	--numbered --subject-prefix=PATCH -o "$tmp" debian-base..HEAD
count=$(ls "$tmp" | wc -l)
[ "$count" -gt 0 ] || { echo "export-series: no commits after debian-base" >&2; exit 1; }
ls "$tmp" >"$tmp.series"
# The cover letter: cover.txt (subject line, blank line, body) plus the
# shortlog and diffstat of the series.
{
	echo "Subject: [PATCH $(printf '%0*d' ${#count} 0)/$count] $(head -n 1 "$series/cover.txt")"
	echo
	tail -n +3 "$series/cover.txt"
	echo
	git -C "$tree" shortlog debian-base..HEAD
	git -C "$tree" diff --stat=72 debian-base..HEAD
} >"$tmp/0000-cover-letter.patch"
rm -f "$series"/[0-9][0-9][0-9][0-9]-*.patch
mv "$tmp"/*.patch "$series/"
mv "$tmp.series" "$series/series"
echo "export-series: $count patches in $series"
