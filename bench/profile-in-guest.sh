#!/bin/sh
# Profile the FUSE transports inside the benchmark guest (busybox sh), with
# the perf that bench/build.sh stages when BENCH_PERF=1. For each
# configuration and workload, 1 job and a fixed number of operations:
#   - perf stat of the whole guest (-a): CPU time, context switches and
#     CPU migrations, printed per operation as a TSV row
#       cost workload transport ops cpu_us_per_op cs_per_op migr_per_op
#   - perf record of the whole guest (-a, cpu-clock, call graphs off):
#     the share of each task and of each kernel or user function, as text.
# With QEMU's -icount (bench/profile.sh's default) guest time counts
# instructions, so "CPU time per operation" is an instruction count.
#
# Environment: BENCH_TRANSPORTS (dev-1 uring), BENCH_WORKLOADS (stat
# create), BENCH_OPS per run (4000), BENCH_DEPTH (2), BENCH_PIN (0),
# BENCH_POLL_US (50); the configurations are those of run-in-guest.sh.
set -u
B=$(cd "$(dirname "$0")" && pwd)
transports=${BENCH_TRANSPORTS:-dev-1 uring}
workloads=${BENCH_WORKLOADS:-stat create}
ops=${BENCH_OPS:-4000}
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

# the load tool, 1 job, a fixed number of operations; add --workload W
load="$B/fuse_bench_load --dir $mnt --jobs 1 --max-ops $ops --seconds 3600 $pin"

# perf stat -x, lines are "value,unit,event,..."; print the cost row.
cost() {	# workload transport
	# shellcheck disable=SC2086
	out=$(perf stat -a -x, -o /tmp/perf-stat.txt \
		-e task-clock,context-switches,cpu-migrations -- \
		$load --workload "$1") || return 1
	n=$(echo "$out" | cut -f3)
	awk -F, -v w="$1" -v t="$2" -v n="$n" '
		$3 ~ /^task-clock/ { cpu = $1 }
		$3 ~ /^context-switches/ { cs = $1 }
		$3 ~ /^cpu-migrations/ { mig = $1 }
		END {
			if (n == "" || n == 0 || cpu == "") exit 1
			printf "cost\t%s\t%s\t%d\t%.1f\t%.2f\t%.3f\n", w, t, n,
				cpu * 1000 / n, cs / n, mig / n
		}' /tmp/perf-stat.txt
}

profile() {	# workload transport
	# shellcheck disable=SC2086
	perf record -a -N -q -e cpu-clock -o /tmp/perf.data -- \
		$load --workload "$1" >/dev/null 2>&1 || return 1
	echo "== $2 $1: share of guest CPU time by task"
	perf report -i /tmp/perf.data --stdio --sort comm \
		--percent-limit 1 2>/dev/null | grep -v '^#' | grep .
	echo "== $2 $1: share of guest CPU time by task and function"
	perf report -i /tmp/perf.data --stdio --sort comm,sym \
		--percent-limit 0.7 2>/dev/null | grep -v '^#' | grep .
	rm -f /tmp/perf.data
}

if ! command -v perf >/dev/null; then
	log "no perf in the guest (bench/build.sh with BENCH_PERF=1)"
	exit 1
fi
mkdir -p "$mnt"
log "$ncpu cpus, $ops ops per run, workloads: $workloads"
for t in $transports; do
	start_server "$t" || { failures=$((failures + 1)); continue; }
	for w in $workloads; do
		# shellcheck disable=SC2086
		$load --workload "$w" >/dev/null	# set-up, warm caches
		cost "$w" "$t" || { log "$t $w: perf stat failed"; failures=$((failures + 1)); }
		profile "$w" "$t" || { log "$t $w: perf record failed"; failures=$((failures + 1)); }
	done
	stop_server
done
log "done, $failures failures"
[ "$failures" -eq 0 ]
