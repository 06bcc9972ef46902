#!/bin/sh
# The load of one bench/packaged-in-guest.sh run, timed as one command by
# fuse_bench_cost.
# Usage: packaged-jobs.sh sqfs-read MNT TREE N
#          N jobs read every file under MNT, job j the top directories
#          j, j+N, ... of TREE (the image's source)
#        packaged-jobs.sh ovl-untar MNT TAR N
#          N jobs each untar TAR into MNT/uJ; the caches are dropped;
#          then each lists its tree with ls -lR
set -u
what=$1 mnt=$2 src=$3 n=$4

case $what in
sqfs-read)
	j=0
	while [ "$j" -lt "$n" ]; do
		dirs=
		i=0
		for d in $(ls "$src"); do
			[ $((i % n)) -eq "$j" ] && dirs="$dirs $mnt/$d"
			i=$((i + 1))
		done
		find $dirs -type f | xargs cat >/dev/null &
		j=$((j + 1))
	done
	wait
	;;
ovl-untar)
	j=0
	while [ "$j" -lt "$n" ]; do
		mkdir "$mnt/u$j" && tar xf "$src" -C "$mnt/u$j" &
		j=$((j + 1))
	done
	wait
	sync
	echo 3 >/proc/sys/vm/drop_caches
	j=0
	while [ "$j" -lt "$n" ]; do
		ls -lR "$mnt/u$j" >/dev/null &
		j=$((j + 1))
	done
	wait
	;;
*)
	echo "packaged-jobs.sh: unknown load $what" >&2
	exit 2
	;;
esac
