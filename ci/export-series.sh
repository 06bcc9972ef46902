#!/bin/sh
# Export the commits of TREE after debian-base into SERIES_DIR as git
# send-email takes them: numbered patches ([PATCH nn/mm]) and a cover letter
# per series, from cover.txt (and cover-2.txt), with the shortlog, the
# diffstat and the base commit; and the file `series`, the one ordered list
# of every patch that make tree applies.
#
# Where TREE has the tag series-2-base (make-tree.sh sets it), the commits
# after it are a second series that can be posted on its own: numbered from
# 1 again, in files 0101-... with the cover letter 0100-cover-letter.patch,
# listed after the line "# series 2" of `series`.
# Exporting an unchanged tree changes nothing.
# Usage: ci/export-series.sh TREE SERIES_DIR
set -eu
tree=$1 series=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/patches"
# MAINTAINERS first in each patch: checkpatch then sees the entry updated
# before the files the patch adds
printf 'MAINTAINERS\n*\n' >"$tmp/order"

# export_range BASE TIP COVER_TXT FILE_PREFIX: the patches of BASE..TIP into
# $tmp/patches, their names prefixed with FILE_PREFIX (00 or 01) in place of
# format-patch's 00, with a cover letter; their names go to $tmp/list.
export_range() {
	base=$1 tip=$2 cover=$3 prefix=$4
	rm -rf "$tmp/out"
	git -C "$tree" format-patch -q --no-signature --zero-commit --full-index \
		--numbered --subject-prefix=PATCH -O"$tmp/order" -o "$tmp/out" \
		"$base..$tip"
	count=$(ls "$tmp/out" | wc -l)
	if [ "$count" -eq 0 ]; then
		echo "export-series: no commits in $base..$tip" >&2
		exit 1
	fi
	for f in "$tmp/out"/*.patch; do
		name=$prefix${f##*/00}
		mv "$f" "$tmp/patches/$name"
		echo "$name" >>"$tmp/list"
	done
	{
		echo "Subject: [PATCH $(printf '%0*d' ${#count} 0)/$count] $(head -n 1 "$cover")"
		echo
		tail -n +3 "$cover"
		echo
		git -C "$tree" shortlog "$base..$tip"
		git -C "$tree" diff --stat=72 "$base..$tip"
		echo
		echo "base-commit: $(git -C "$tree" rev-parse "$base")"
	} >"$tmp/patches/${prefix}00-cover-letter.patch"
}

# A rebase leaves the tag on the old commit: follow it to the commit of
# HEAD's history with the same subject.
if git -C "$tree" rev-parse -q --verify series-2-base >/dev/null &&
    ! git -C "$tree" merge-base --is-ancestor series-2-base HEAD; then
	subject=$(git -C "$tree" log -1 --format=%s series-2-base)
	tab=$(printf '\t')
	moved=$(git -C "$tree" log --format="%H$tab%s" debian-base..HEAD |
		while IFS="$tab" read -r hash s; do
			[ "$s" = "$subject" ] && echo "$hash"
		done | head -n 1)
	if [ -z "$moved" ]; then
		echo "export-series: series-2-base ($subject) is not in HEAD's history" >&2
		exit 1
	fi
	git -C "$tree" tag -f series-2-base "$moved" >/dev/null
	echo "export-series: series-2-base moved to $(git -C "$tree" log -1 --format='%h %s' "$moved")"
fi
if git -C "$tree" rev-parse -q --verify series-2-base >/dev/null; then
	export_range debian-base series-2-base "$series/cover.txt" 00
	echo "# series 2: on top of the first; cover letter 0100-cover-letter.patch" >>"$tmp/list"
	export_range series-2-base HEAD "$series/cover-2.txt" 01
else
	export_range debian-base HEAD "$series/cover.txt" 00
fi

rm -f "$series"/[0-9][0-9][0-9][0-9]-*.patch
mv "$tmp/patches"/*.patch "$series/"
mv "$tmp/list" "$series/series"
echo "export-series: $(grep -vc '^#' "$series/series") patches in $series"
