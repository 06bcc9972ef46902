#!/bin/sh
# Inside the benchmark guest (busybox sh): where one job's slowest creates
# go. Per transport (dev-N, uring), fuse_bench_load's create (open
# O_CREAT, close, unlink) runs CT_OPS times with fuse_request_send and
# sched_switch traced; an op spans one of the load's LOOKUPs to its next.
# One table row per transport (bench/create-tail.sh says what the columns
# are).
# Environment: CT_OPS (3000), CT_TRANSPORTS ("dev-N uring").
set -u
B=$(cd "$(dirname "$0")" && pwd)
ncpu=$(nproc)
# depth, poll, pin, mnt and slog: for guest-servers.sh
depth=2
poll=0
pin=
mnt=/mnt/bench
slog=/tmp/fuse_bench_server.log
events="fuse/fuse_request_send sched/sched_switch"
status=0

. "$B/guest-servers.sh"
. "$B/guest-tracing.sh"

# Per op: "us forgets_us", the op's span and how long the server's
# /dev/fuse thread (fb-forgets) ran in it, on any CPU
per_op() {
	awk '{ ev = ""; ts = 0; cpu = ""
	  for (i = 1; i <= NF; i++) {
		if (cpu == "" && $i ~ /^\[[0-9]+\]$/) cpu = $i
		if (!ts && $i ~ /^[0-9]+\.[0-9]+:$/) ts = $i + 0
		if (ts && ev == "" && $i ~ /^[a-z_]+:$/) ev = $i
	  }
	  if (ev == "fuse_request_send:" && /fuse_bench_load/ &&
	      / opcode 1 /) {
		if (start) printf "%.0f %.0f\n", (ts - start) * 1e6, f * 1e6
		start = ts; f = 0
	  } else if (ev == "sched_switch:") {
		if ((cpu in on) && /prev_comm=fb-forgets /)
			f += ts - (on[cpu] > start ? on[cpu] : start)
		delete on[cpu]
		if (/next_comm=fb-forgets /) on[cpu] = ts
	  }
	}' "$tracefs/trace"
}

pct() {	# file: "p50 p99 p99.9" of its first column
	sort -n "$1" | awk '{ v[NR] = $1 }
		END { i = int(NR * 0.5); j = int(NR * 0.99); k = int(NR * 0.999)
		      print v[i > 0 ? i : 1], v[j > 0 ? j : 1], v[k > 0 ? k : 1] }'
}

mkdir -p "$mnt"
ops=${CT_OPS:-3000}
echo "Where one job's slowest creates go: $ncpu CPUs, $ops creates," \
	"$depth entries per queue (us)"
echo
echo "| transport | load p50 / p99 | op p50 / p99 / p99.9 | ops with" \
	"fb-forgets running | p99 of the other ops |"
echo "|---|---:|---:|---:|---:|"
for t in ${CT_TRANSPORTS:-dev-N uring}; do
	start_server "$t" || { status=1; continue; }
	"$B/fuse_bench_load" --workload create --dir "$mnt" --jobs 1 \
		--max-ops 200 --seconds 10 >/dev/null	# warms the caches
	: >"$tracefs/trace"
	trace 1 || { log "no trace events"; status=1; }
	set -- $("$B/fuse_bench_load" --workload create --dir "$mnt" \
		--jobs 1 --max-ops "$ops" --seconds 60)
	trace 0
	per_op >/tmp/ops
	awk '$2 == 0' /tmp/ops >/tmp/ops-quiet
	n=$(wc -l </tmp/ops)
	if [ "$#" -ne 7 ] || [ "$n" -lt 100 ]; then
		log "$t: no load result or too few traced ops ($n)"
		status=1
	else
		share=$(awk '$2 > 0 { m++ } END { printf "%.1f%%", 100 * m / NR }' \
			/tmp/ops)
		echo "| $t | $6 / $7 | $(pct /tmp/ops | sed 's# # / #g') |" \
			"$share | $(pct /tmp/ops-quiet | cut -d' ' -f2) |"
	fi
	: >"$tracefs/trace"
	stop_server
done
exit "$status"
