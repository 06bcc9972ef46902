#!/bin/sh
# Debian's packaged file systems over the ring (the fuse-ring preload) and
# over /dev/fuse (no preload), inside the benchmark guest (busybox sh); run
# by bench/packaged.sh.
# Workloads (bench/packaged-jobs.sh), each with 1 job and one per CPU:
#   sqfs-read    squashfuse_ll: after dropping the caches, every file of
#                the image read (the jobs split the top directories)
#   ovl-untar    fuse-overlayfs over an empty lower dir: each job untars
#                the tree into a directory of its own, the caches are
#                dropped, then it lists its tree with ls -lR (every file
#                looked up and stat-ed)
# Each run goes through fuse_bench_cost; one row per run:
#   pkg round workload transport jobs files busy_ns elapsed_ns ctxt cal res ring
# (ring: requests the preload's stats line counts on the ring, "-" for
# /dev/fuse). Environment: BENCH_ROUNDS (3).
set -u
B=$(cd "$(dirname "$0")" && pwd)
rounds=${BENCH_ROUNDS:-3}
ncpu=$(nproc)
preload=$B/libfuse-ring-preload.so
tree=$B/tree
image=$B/tree.sqfs
work=/tmp/pkg
cost=$work/cost
failures=0

drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches; }
mounted() { grep -q " $1 " /proc/mounts; }

# start TRANSPORT CMD...: mount at $mnt, server log in $slog
start() {
	tr=$1
	shift
	slog=$work/server.log
	mkdir -p "$mnt"
	if [ "$tr" = uring ]; then
		FUSE_RING_STATS=1 LD_PRELOAD=$preload "$@" "$mnt" >"$slog" 2>&1 &
	else
		"$@" "$mnt" >"$slog" 2>&1 &
	fi
	spid=$!
	n=0
	while ! mounted "$mnt"; do
		n=$((n + 1))
		if [ "$n" -gt 600 ] || ! kill -0 "$spid" 2>/dev/null; then
			echo "bench: $* did not mount:"
			sed 's/^/bench: /' "$slog"
			return 1
		fi
		sleep 0.1
	done
}

# stop: umount, wait for the server, set ring to its ring request count
stop() {
	umount "$mnt"
	wait "$spid"
	ring=-
	[ "$tr" = uring ] || return 0
	ring=$(grep -o 'requests: ring=[0-9]*' "$slog" | sed 's/.*=//')
	ring=${ring:-0}
	if [ "$ring" -eq 0 ]; then
		echo "bench: no request went through the ring:"
		sed 's/^/bench: /' "$slog"
	fi
}

row() { # WORKLOAD TRANSPORT JOBS FILES RING
	[ "$2" = uring ] && [ "$5" -eq 0 ] && failures=$((failures + 1))
	echo "pkg $round $1 $2 $3 $4 $(cat "$cost") $5"
}

sqfs_run() { # TRANSPORT JOBS
	mnt=$work/sqfs
	start "$1" squashfuse_ll -f "$image" || { failures=$((failures + 1)); return; }
	drop_caches
	"$B/fuse_bench_cost" "$cost" sh "$B/packaged-jobs.sh" sqfs-read "$mnt" "$tree" "$2" ||
		failures=$((failures + 1))
	stop
	row sqfs-read "$1" "$2" "$nfiles" "$ring"
}

ovl_run() { # TRANSPORT JOBS
	mnt=$work/ovl
	o=$work/ovl-dirs
	rm -rf "$o"
	mkdir -p "$o/lower" "$o/upper" "$o/work"
	start "$1" fuse-overlayfs -f -o "lowerdir=$o/lower,upperdir=$o/upper,workdir=$o/work" ||
		{ failures=$((failures + 1)); return; }
	"$B/fuse_bench_cost" "$cost" sh "$B/packaged-jobs.sh" ovl-untar "$mnt" "$work/tree.tar" "$2" ||
		failures=$((failures + 1))
	stop
	# new directories are marked opaque with a .wh..wh..opq file each
	got=$(find "$o/upper" -type f ! -name '.wh.*' | wc -l)
	[ "$got" -eq $((nfiles * $2)) ] ||
		{ echo "bench: ovl-untar: $got files in the upper dir"; failures=$((failures + 1)); }
	row ovl-untar "$1" "$2" $((nfiles * $2)) "$ring"
}

if ! echo 1 >/sys/module/fuse/parameters/enable_uring; then
	echo "bench: no FUSE io_uring transport in this kernel"
	exit 1
fi
mkdir -p "$work"
mount -t tmpfs pkg "$work"
nfiles=$(find "$tree" -type f | wc -l)
(cd "$tree" && tar cf "$work/tree.tar" .)
echo "bench: packaged file systems, $ncpu CPUs, $nfiles files, $rounds rounds"
echo "pkg round workload transport jobs files busy_ns elapsed_ns ctxt cal res ring"
runs=$((rounds * 2 * 2 * 2))
k=0
round=1
while [ "$round" -le "$rounds" ]; do
	for jobs in 1 "$ncpu"; do
		for tr in dev uring; do
			k=$((k + 1))
			echo "bench: [$k/$runs] round $round sqfs-read $tr jobs=$jobs"
			sqfs_run "$tr" "$jobs"
			k=$((k + 1))
			echo "bench: [$k/$runs] round $round ovl-untar $tr jobs=$jobs"
			ovl_run "$tr" "$jobs"
		done
	done
	round=$((round + 1))
done
echo "pkg-done: $failures failures"
[ "$failures" -eq 0 ]
