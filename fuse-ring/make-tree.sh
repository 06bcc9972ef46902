#!/bin/sh
# A tree of a few hundred files for the packaged file systems' tests:
# nested directories, sizes from 0 to 200 KiB, random contents, symlinks.
# Usage: make-tree.sh DIR
set -eu
dir=$1
rm -rf "$dir"
mkdir -p "$dir"
i=0
for d in a b c d e f; do
	for s in 0 1 2 3 4; do
		mkdir -p "$dir/$d/sub$s"
		for n in 0 1 2 3 4 5 6 7 8 9; do
			i=$((i + 1))
			# sizes cycle through small, page-crossing and large files
			size=$(( (i * 7919) % 20000 ))
			[ $((i % 25)) -eq 0 ] && size=$((size * 10 + 4097))
			head -c "$size" /dev/urandom >"$dir/$d/sub$s/f$n"
		done
	done
	ln -s "sub0/f1" "$dir/$d/link"
done
