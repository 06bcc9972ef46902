#!/bin/sh
# Profile the FUSE transports inside the benchmark guest (busybox sh), with
# the perf that bench/build.sh stages when BENCH_PERF=1. For each
# configuration and workload, BENCH_JOBS jobs (1) and a fixed number of
# operations:
#   - perf stat of the whole guest (-a): context switches and CPU
#     migrations per operation, and the load tool's time per operation;
#   - for the ring, the fuse_uring_* trace events of the same run (if the
#     kernel has them): which CPU issued each request, which queue took it
#     and on which CPU the server got it;
#   - perf record of the whole guest (-a, cpu-clock, call graphs off):
#     the share of each task and of each kernel or user function, as text,
#     and from it the CPU time per operation of the load tool and of the
#     server (sampled: a few % of noise, and perf's own work perturbs it).
# One TSV row per run sums it up:
#   cost workload transport ops us_per_op load_us server_us cs mig
# and one per ring run from the trace events:
#   queues workload transport requests own_queue_pct same_cpu_pct
# With QEMU's -icount (bench/profile.sh's default) guest time counts
# instructions, so these times are instruction counts (1 ns each).
#
# Environment: BENCH_TRANSPORTS (dev-1 uring), BENCH_WORKLOADS (stat
# create), BENCH_OPS per run and job (10000), BENCH_JOBS (1),
# BENCH_PERF_HZ sampling rate (10000), BENCH_DEPTH (2), BENCH_PIN (0),
# BENCH_POLL_US (50), BENCH_PERF_LIMIT (0.7: functions under that share
# of the guest's time are not listed), BENCH_PERF_GRAPH (0; 1 records
# call chains and prints each listed function's callers), and the backend
# the server simulates (BENCH_LATENCY_US, BENCH_ASYNC_DIO, BENCH_WRITEBACK:
# guest-servers.sh); the configurations are those of run-in-guest.sh.
set -u
B=$(cd "$(dirname "$0")" && pwd)
transports=${BENCH_TRANSPORTS:-dev-1 uring}
workloads=${BENCH_WORKLOADS:-stat create}
ops=${BENCH_OPS:-10000}
jobs=${BENCH_JOBS:-1}
all_ops=$((ops * jobs))
freq=${BENCH_PERF_HZ:-10000}
limit=${BENCH_PERF_LIMIT:-0.7}
graph=
[ "${BENCH_PERF_GRAPH:-0}" = 1 ] && graph=-g
depth=${BENCH_DEPTH:-2}
poll=${BENCH_POLL_US:-50}
pin=
[ "${BENCH_PIN:-0}" = 1 ] && pin=--pin
ncpu=$(nproc)
mnt=/mnt/bench
slog=/tmp/fuse_bench_server.log
failures=0
# perf keeps a build-id cache under $HOME
HOME=/tmp
export HOME

. "$B/guest-servers.sh"

# the load tool, BENCH_JOBS jobs (1), a fixed number of operations each;
# add --workload W
load="$B/fuse_bench_load --dir $mnt --jobs $jobs --max-ops $ops --seconds 3600 $pin"

# perf stat -x, lines are "value,unit,event,...". Sets lat (us per op, from
# the load tool's ops/s: guest time), cs and mig (per op).
count() {	# workload
	# shellcheck disable=SC2086
	out=$(perf stat -a -x, -o /tmp/perf-stat.txt \
		-e context-switches,cpu-migrations -- \
		$load --workload "$1") || return 1
	set -- $(echo "$out" | awk -F'\t' '{ print $3, $5 }') \
		$(awk -F, '$3 ~ /^context-switches/ { cs = $1 }
			$3 ~ /^cpu-migrations/ { mig = $1 }
			END { print cs + 0, mig + 0 }' /tmp/perf-stat.txt)
	[ "$#" -eq 4 ] || return 1
	lat=$(awk -v r="$2" 'BEGIN { printf "%.1f", 1e6 / r }')
	cs=$(awk -v n="$1" -v c="$3" 'BEGIN { printf "%.2f", c / n }')
	mig=$(awk -v n="$1" -v m="$4" 'BEGIN { printf "%.3f", m / n }')
}

# The ring's request life from its trace events, during one more run:
# prints requests by issuing CPU and queue, and by queue and the CPU the
# server took them on; sets reqs, ownq (% on the issuing CPU's own queue)
# and samecpu (% taken by the server on the issuing CPU). Returns 1 if the
# kernel has no such events.
tracefs=/sys/kernel/tracing
trace_events() {	# 0|1
	for e in fuse_uring_queue_req fuse_uring_send_req; do
		echo "$1" >"$tracefs/events/fuse/$e/enable" || return 1
	done
}

queues() {	# workload transport
	[ -d "$tracefs/events" ] ||
		mount -t tracefs tracefs "$tracefs" 2>/dev/null
	[ -e "$tracefs/events/fuse/fuse_uring_queue_req" ] || return 1
	echo 8192 >"$tracefs/buffer_size_kb"
	: >"$tracefs/trace"
	trace_events 1 || return 1
	# shellcheck disable=SC2086
	$load --workload "$1" >/dev/null
	trace_events 0
	rm -f /tmp/queues.txt
	# "task-pid [cpu] flags time: event: connection C req U ... queue Q"
	set -- $(awk -v table=/tmp/queues.txt '
		{ ev = ""; cpu = -1
		  for (i = 1; i <= NF; i++) {
			if (cpu < 0 && $i ~ /^\[[0-9]+\]$/)
				cpu = substr($i, 2, length($i) - 2) + 0
			if ($i ~ /^fuse_uring_(queue|send)_req:$/)
				ev = $i
			if ($i == "req")
				u = $(i + 1)
			if ($i == "queue")
				q = $(i + 1)
		  }
		  if (ev == "fuse_uring_queue_req:") {
			from[u] = cpu
			by["cpu " cpu " -> queue " q]++
		  } else if (ev != "" && (u in from)) {
			n++
			by["queue " q " -> server on cpu " cpu]++
			own += from[u] == q
			same += from[u] == cpu
			delete from[u]
		  }
		}
		END {
			for (k in by)
				printf "   %s: %d\n", k, by[k] | "sort > " table
			if (n == 0)
				n = -1
			printf "%d %.1f %.1f\n", n, 100 * own / n, 100 * same / n
		}' "$tracefs/trace") "$1" "$2"
	reqs=$1 ownq=$2 samecpu=$3
	: >"$tracefs/trace"
	echo "== $5 $4: requests by issuing CPU -> queue, queue -> server's CPU"
	cat /tmp/queues.txt
	[ "$reqs" -gt 0 ]
}

# perf record of the whole guest; prints the reports, sets lcpu and scpu:
# guest CPU time per op of the load tool and of the server (us). perf's
# own work shows as the task "perf" and is left out.
profile() {	# workload transport
	# shellcheck disable=SC2086
	perf record -a -N -q -F "$freq" -e cpu-clock $graph -o /tmp/perf.data -- \
		$load --workload "$1" >/dev/null 2>&1 || return 1
	# shellcheck disable=SC2086
	perf report -i /tmp/perf.data --stdio --sort comm \
		${graph:+--no-children -g none} 2>/dev/null >/tmp/perf-comm.txt
	set -- $(awk -v n="$all_ops" '
		/^# Event count/ { total = $NF }
		$1 ~ /%$/ { p = $1; sub("%", "", p)
			if ($2 ~ /^fuse_bench_load/) l += p
			else if ($2 ~ /^(fuse_bench_serv|fb-|passthrough_rin)/) s += p }
		END { ns = total / n / 100 / 1000
			printf "%.1f %.1f\n", l * ns, s * ns
		}' /tmp/perf-comm.txt) "$1" "$2"
	lcpu=$1 scpu=$2
	echo "== $4 $3: share of guest CPU time by task"
	grep -v '^#' /tmp/perf-comm.txt | grep .
	echo "== $4 $3: share of guest CPU time by task and function"
	# shellcheck disable=SC2086
	perf report -i /tmp/perf.data --stdio --sort comm,sym \
		${graph:+--no-children --max-stack 10} \
		--percent-limit "$limit" 2>/dev/null | grep -v '^#' | grep .
	rm -f /tmp/perf.data
}

if ! command -v perf >/dev/null; then
	log "no perf in the guest (bench/build.sh with BENCH_PERF=1)"
	exit 1
fi
mkdir -p "$mnt"
log "$ncpu cpus, $jobs jobs of $ops ops per run, workloads: $workloads${backend:+, server:$backend}"
# before each run, "bench: [K/N] CONFIG WORKLOAD" (bench/boot-guest.sh adds
# the time left)
nworkloads=$(echo "$workloads" | wc -w)
total_runs=$(($(echo "$transports" | wc -w) * nworkloads))
run_no=0
for t in $transports; do
	start_server "$t" || {
		failures=$((failures + 1))
		run_no=$((run_no + nworkloads))
		continue
	}
	for w in $workloads; do
		run_no=$((run_no + 1))
		log "[$run_no/$total_runs] $t $w"
		# shellcheck disable=SC2086
		$load --workload "$w" >/dev/null	# set-up, warm caches
		if ! count "$w" || ! profile "$w" "$t"; then
			log "$t $w: perf failed"
			failures=$((failures + 1))
			continue
		fi
		printf 'cost\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$w" "$t" \
			"$all_ops" "$lat" "$lcpu" "$scpu" "$cs" "$mig"
		case $t in
		uring*)
			if queues "$w" "$t"; then
				printf 'queues\t%s\t%s\t%s\t%s\t%s\n' "$w" \
					"$t" "$reqs" "$ownq" "$samecpu"
			else
				log "$t $w: no fuse_uring_* trace events"
			fi
			;;
		esac
	done
	stop_server
done
log "done, $failures failures"
[ "$failures" -eq 0 ]
