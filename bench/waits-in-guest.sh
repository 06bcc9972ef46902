#!/bin/sh
# Inside the benchmark guest (busybox sh): fio's libaio random reads at
# queue depth 16 over the ring, with the fuse_uring_* trace events on; one
# table row per job count (bench/waits.sh says what the columns are).
# Environment: BENCH_JOBS ("1 N"), BENCH_DEPTH (2), and the backend
# (BENCH_LATENCY_US, BENCH_ASYNC_DIO: guest-servers.sh).
set -u
B=$(cd "$(dirname "$0")" && pwd)
ncpu=$(nproc)
# depth, poll, pin, mnt and slog: for guest-servers.sh
depth=${BENCH_DEPTH:-2}
poll=0
pin=
mnt=/mnt/bench
slog=/tmp/fuse_bench_server.log
events="fuse_uring_queue_req fuse_uring_send_req fuse_uring_commit_req
fuse_request_end"
tracefs=/sys/kernel/tracing
status=0

. "$B/guest-servers.sh"

fio_read() {	# jobs: prints "p50 p99" in us
	fio --name=r --filename="$mnt/data64m" --rw=randread --bs=4k \
		--direct=1 --size=64m --runtime=1 --time_based \
		--ioengine=libaio --iodepth=16 --numjobs="$1" \
		--group_reporting --thread --fallocate=none \
		--output-format=terse 2>/dev/null |
	awk -F';' '$1 == 3 {
		for (i = 18; i <= 37; i++) {
			split($i, kv, "=")
			if (kv[1] == "50.000000%") p50 = kv[2]
			if (kv[1] == "99.000000%") p99 = kv[2]
		}
		print p50, p99 }'
}

trace() {	# 0|1
	for e in $events; do
		echo "$1" >"$tracefs/events/fuse/$e/enable" || return 1
	done
}

# Per READ (opcode 15): "waiting in_server moved", in us, from the trace
per_read() {
	awk '{ ev = ""; ts = 0
	  for (i = 1; i <= NF; i++) {
		if (!ts && $i ~ /^[0-9]+\.[0-9]+:$/) ts = $i + 0
		if ($i ~ /^fuse_[a-z_]+:$/) ev = $i
		if ($i == "req") u = $(i + 1)
		if ($i == "queue") q = $(i + 1)
		if ($i == "opcode") op = $(i + 1)
	  }
	  if (ev == "fuse_uring_queue_req:") {
		if (op == 15) { t0[u] = ts; q0[u] = q }
	  } else if (!(u in t0)) {
		next
	  } else if (ev == "fuse_uring_send_req:") {
		ts1[u] = ts; moved[u] = q != q0[u]
	  } else if (ev == "fuse_uring_commit_req:" && (u in ts1)) {
		printf "%.0f %.0f %d\n", (ts1[u] - t0[u]) * 1e6,
			(ts - ts1[u]) * 1e6, moved[u]
		delete t0[u]; delete ts1[u]
	  }
	}' "$tracefs/trace"
}

pct() {	# column: "p50 p99" of that column of /tmp/reads
	sort -n -k "$1" /tmp/reads | awk -v c="$1" '{ v[NR] = $c }
		END { i = int(NR * 0.5); j = int(NR * 0.99)
		      print v[i > 0 ? i : 1], v[j > 0 ? j : 1] }'
}

[ -d "$tracefs/events" ] || mount -t tracefs tracefs "$tracefs"
echo global >"$tracefs/trace_clock"
echo 16384 >"$tracefs/buffer_size_kb"
mkdir -p "$mnt"
echo "Where READs wait over the ring: fio libaio QD16, $ncpu CPUs," \
	"${BENCH_LATENCY_US:-0} us backend, $depth entries per queue (us)"
echo
echo "| jobs | fio p50 / p99 | READs | waiting p50 / p99 |" \
	"in the server p50 / p99 | served by another queue |"
echo "|---:|---:|---:|---:|---:|---:|"
for jobs in ${BENCH_JOBS:-1 $ncpu}; do
	start_server uring || { status=1; continue; }
	fio_read "$jobs" >/dev/null	# lays the file out, warms the caches
	: >"$tracefs/trace"
	trace 1 || { log "no fuse_uring_* trace events"; status=1; }
	set -- $(fio_read "$jobs")
	trace 0
	per_read >/tmp/reads
	n=$(wc -l </tmp/reads)
	if [ "$#" -ne 2 ] || [ "$n" -eq 0 ]; then
		log "$jobs jobs: no fio result or no traced READs"
		status=1
	else
		moved=$(awk '{ m += $3 } END { printf "%.0f%%", 100 * m / NR }' \
			/tmp/reads)
		echo "| $jobs | $1 / $2 | $n | $(pct 1 | sed 's# # / #') |" \
			"$(pct 2 | sed 's# # / #') | $moved |"
	fi
	: >"$tracefs/trace"
	stop_server
done
exit "$status"
