#!/bin/sh
# Inside the benchmark guest (busybox sh): what creates in one directory
# by a job per CPU wait for. Per transport (dev-N, uring),
# fuse_bench_load's create (open O_CREAT, close, unlink, all in one
# directory) runs with a job per CPU, DL_OPS operations each, with the
# lock contention events traced: a wait spans a task's contention_begin
# on an rwsem (flags READ or WRITE) to its contention_end. One table row
# per transport (bench/dirlock.sh says what the columns are).
# Environment: DL_OPS (4000), DL_TRANSPORTS ("dev-N uring").
set -u
B=$(cd "$(dirname "$0")" && pwd)
ncpu=$(nproc)
# depth, poll, pin, mnt and slog: for guest-servers.sh
depth=2
poll=0
pin=
mnt=/mnt/bench
slog=/tmp/fuse_bench_server.log
events="lock/contention_begin lock/contention_end"
status=0

. "$B/guest-servers.sh"
. "$B/guest-tracing.sh"

# Per rwsem wait of the load's tasks: "us flags". An end closes the wait
# on its own lock only: the rwsem's wait_lock may be contended inside it.
waits() {
	awk '$1 ~ /^fuse_bench_load-/ { ts = 0; ev = ""; lock = ""
	  for (i = 2; i <= NF; i++) {
		if (!ts && $i ~ /^[0-9]+\.[0-9]+:$/) ts = $i + 0
		else if (ts && ev == "" && $i ~ /^[a-z_]+:$/) {
			ev = $i
			lock = $(i + 1)
		}
	  }
	  if (ev == "contention_begin:" && /flags=(READ|WRITE)\)/) {
		begin[$1] = ts
		on[$1] = lock
		match($0, /flags=[A-Z]+/)
		flags[$1] = substr($0, RSTART + 6, RLENGTH - 6)
	  } else if (ev == "contention_end:" && ($1 in begin) &&
		     on[$1] == lock) {
		printf "%.0f %s\n", (ts - begin[$1]) * 1e6, flags[$1]
		delete begin[$1]
	  }
	}' "$tracefs/trace"
}

pct() {	# file: "p50 p99 max" of its first column
	sort -n "$1" | awk '{ v[NR] = $1 }
		END { if (!NR) { print "- - -"; exit }
		      i = int(NR * 0.5); j = int(NR * 0.99)
		      print v[i > 0 ? i : 1], v[j > 0 ? j : 1], v[NR] }'
}

mkdir -p "$mnt"
ops=${DL_OPS:-4000}
echo "What creates in one directory wait for: $ncpu CPUs, a job per CPU," \
	"$ops creates each, $depth entries per queue (us)"
echo
echo "| transport | load p50 / p99 | rwsem waits (write) | wait p50 / p99 /" \
	"max | waits of 1 ms or more (write) |"
echo "|---|---:|---:|---:|---:|"
for t in ${DL_TRANSPORTS:-dev-N uring}; do
	start_server "$t" || { status=1; continue; }
	"$B/fuse_bench_load" --workload create --dir "$mnt" --jobs "$ncpu" \
		--max-ops 400 --seconds 10 >/dev/null	# warms the caches
	: >"$tracefs/trace"
	trace 1 || { log "no trace events"; status=1; }
	set -- $("$B/fuse_bench_load" --workload create --dir "$mnt" \
		--jobs "$ncpu" --max-ops "$ops" --seconds 60)
	trace 0
	waits >/tmp/waits
	if [ "$#" -ne 7 ]; then
		log "$t: no load result"
		status=1
	else
		echo "| $t | $6 / $7 |" \
			"$(wc -l </tmp/waits) ($(grep -c ' WRITE$' /tmp/waits)) |" \
			"$(pct /tmp/waits | sed 's# # / #g') |" \
			"$(awk '$1 >= 1000 { n++; if ($2 == "WRITE") w++ }
				END { printf "%d (%d)", n, w }' /tmp/waits) |"
	fi
	: >"$tracefs/trace"
	stop_server
done
exit "$status"
