#!/bin/sh
# Memory per connection of the io_uring ring by number of queues, inside
# the test guest (busybox sh); run by bench/memory.sh.
# For each configuration (dev-1: /dev/fuse, no ring, the baseline;
# uring-1q, uring-2q: entries on 1 and 2 queues; uring: on every possible
# CPU's queue) and round: mount BENCH_MEM_MOUNTS (20) file systems, each
# with its own fuse_bench_server, read /proc/meminfo before the first and
# after the last is serving (the server says "serving" once its REGISTERs
# are submitted, and the kernel makes the entries as they are), unmount.
# Prints one row per round and configuration:
#   mem round config queues entries buffer_bytes memfree_kib slab_kib sunreclaim_kib kernelstack_kib
# (the /proc/meminfo differences for all the mounts; buffer_bytes is one
# server's own figure), then a markdown table of the medians per
# connection, each with the ring's share (minus dev-1) in brackets.
# Environment: BENCH_MEM_MOUNTS (20), BENCH_ROUNDS (3), BENCH_DEPTH (2).
set -u
B=$(cd "$(dirname "$0")" && pwd)
mounts=${BENCH_MEM_MOUNTS:-20}
rounds=${BENCH_ROUNDS:-3}
depth=${BENCH_DEPTH:-2}
ncpu=$(nproc)
possible=$(awk -F'[-,]' '{ print $NF + 1 }' /sys/devices/system/cpu/possible)
configs="dev-1 uring-1q uring-2q uring"
pin=
poll=0
mnt=
slog=
failures=0
rows=/tmp/bench-memory.tsv

. "$B/guest-servers.sh"

# MemFree, Slab, SUnreclaim, KernelStack in KiB; first the slab caches
# give back their empty slabs (SLUB keeps some per cache), so that what
# the previous mounts freed does not hide what the next ones take
meminfo() {
	for f in /sys/kernel/slab/*/shrink; do
		[ -w "$f" ] && echo 1 >"$f"
	done
	awk '{ v[$1] = $2 } END {
		print v["MemFree:"], v["Slab:"], v["SUnreclaim:"], v["KernelStack:"]
	}' /proc/meminfo
}

# Start $mounts servers of configuration $1 on /mnt/mem1..; their pids
# go to $pids
start_all() {
	pids=
	i=1
	while [ "$i" -le "$mounts" ]; do
		mnt=/mnt/mem$i slog=/tmp/mem$i.log
		mkdir -p "$mnt"
		start_server "$1" || return 1
		pids="$pids $spid"
		i=$((i + 1))
	done
}

stop_all() {
	i=1
	for spid in $pids; do
		mnt=/mnt/mem$i slog=/tmp/mem$i.log
		stop_server
		i=$((i + 1))
	done
	pids=
}

measure() {	# round config
	before=$(meminfo)
	if ! start_all "$2"; then
		log "round $1 $2: a server did not start"
		failures=$((failures + 1))
		stop_all
		return
	fi
	after=$(meminfo)
	# "serving ... over io_uring: Q queues x E entries, B bytes of buffers"
	# shellcheck disable=SC2046
	set -- "$1" "$2" $(sed -n 's/.*: \([0-9]*\) queues x \([0-9]*\) entries, \([0-9]*\) bytes of buffers.*/\1 \2 \3/p' /tmp/mem1.log)
	[ "$#" -eq 5 ] || set -- "$1" "$2" 0 0 0
	stop_all
	echo "$before $after" | awk -v r="$1" -v c="$2" -v q="$3" \
	    -v e="$4" -v b="$5" '{
		printf "mem\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\n", r, c, q, e,
		       b, $1 - $5, $6 - $2, $7 - $3, $8 - $4
	}'
}

log "$ncpu CPUs online, $possible possible; $mounts mounts x $rounds rounds"
# unmeasured first: slab caches and the like made once per boot
pids=
for c in dev-1 uring; do
	start_all "$c" && stop_all
done
: >"$rows"
r=1
while [ "$r" -le "$rounds" ]; do
	for c in $configs; do
		measure "$r" "$c" >>"$rows"
	done
	r=$((r + 1))
done
[ -w "$uring_param" ] && echo 0 >"$uring_param"
cat "$rows"

# Medians per configuration, per connection, in KiB
echo
awk -F'\t' -v k="$mounts" -v possible="$possible" -v ncpu="$ncpu" '
function median(c, col,    n, i, j, v, a) {
	n = cnt[c]
	for (i = 1; i <= n; i++) a[i] = val[c, i, col]
	for (i = 2; i <= n; i++) {
		v = a[i]
		for (j = i - 1; j >= 1 && a[j] > v; j--) a[j + 1] = a[j]
		a[j + 1] = v
	}
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function cell(c, col,    x, base) {
	x = median(c, col) / k
	if (c == "dev-1" || !("dev-1" in cnt))
		return sprintf("%.1f", x)
	base = median("dev-1", col) / k
	return sprintf("%.1f (%+.1f)", x, x - base)
}
{
	if (!($3 in cnt)) order[++n] = $3
	c = ++cnt[$3]
	qe[$3] = $3 == "dev-1" ? "-" : $4 " x " $5
	bufs[$3] = $6
	for (i = 7; i <= 10; i++) val[$3, c, i] = $i
}
END {
	print "Memory per connection, KiB, median of " cnt[order[1]] " rounds of " k " mounts (" ncpu " CPUs online, " possible " possible); in brackets the ring'"'"'s share, minus dev-1:"
	print ""
	print "| configuration | queues x entries | server ring buffers | kernel slab, unreclaimable (SUnreclaim) | kernel stacks | MemFree drop |"
	print "|---|---|---:|---:|---:|---:|"
	for (i = 1; i <= n; i++) {
		c = order[i]
		printf "| %s | %s | %s | %s | %s | %s |\n", c, qe[c],
		       c == "dev-1" ? "-" : sprintf("%.1f", bufs[c] / 1024),
		       cell(c, 9), cell(c, 10),
		       cell(c, 7)
	}
}' "$rows"
log "done, $failures failures"
[ "$failures" -eq 0 ]
