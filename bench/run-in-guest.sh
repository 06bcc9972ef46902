#!/bin/sh
# Run the FUSE transport benchmark inside the test guest (busybox sh).
# For each round, and interleaved within the round (the order rotates from
# one round to the next), each configuration:
#   tmpfs  the workload on a tmpfs directly: the floor, no FUSE
#   dev-1  fuse_bench_server on /dev/fuse with 1 thread
#   dev-N  fuse_bench_server on /dev/fuse with one thread per CPU
#   uring  fuse_bench_server over io_uring, one queue per CPU, each
#          queue's thread pinned to its CPU (the load is not pinned)
#   uring-1q  the same with entries on one queue only (CPU 0), which the
#          kernel uses for every CPU
# runs every workload with 1 job and with one job per CPU.
# Prints TSV rows on stdout: round workload transport jobs ops_per_s p50_us p99_us
# (NA where a tool gives no such figure); progress and errors go to stderr,
# among them, before each run, "bench: [K/N] round R/ROUNDS CONFIG WORKLOAD
# jobs=J" (run K of the N planned; bench/boot-guest.sh adds the time left).
#
# With BENCH_COST=1 (bench/run.sh sets it under BENCH_ICOUNT=1) each run
# goes through fuse_bench_cost, and so does, just before it (after one
# unmeasured run of it, for the set-up), the same command doing one
# operation per job; a second kind of row gives the difference (the run's
# figures net of the tools' start and exit):
#   cost mode round workload transport jobs ops busy_ns elapsed_ns ctxt cal res
# (guest CPU time of all tasks, guest time, context switches, CAL and RES
# IPIs; see fuse_bench_cost.c), mode "free" for the runs above and "cpu0"
# for one more pass after the rounds, where the load and the server are
# started under "taskset 1" (the server without --pin: all its threads on
# CPU 0) and only cost rows are printed.
#
# Environment: BENCH_ROUNDS (3), BENCH_SECONDS per run (4),
# BENCH_WORKLOADS (stat read4k read128k create fio-randread4k fio-qd16
# seqread-1m seqwrite-1m seqread-1m-direct seqwrite-1m-direct; also
# available: create-own-dir, create with a directory per job, and bonnie,
# the bonnie++ metadata run, far too slow for the
# default budget under TCG with the seed's 30:1:1:10),
# BENCH_TRANSPORTS (tmpfs dev-1 dev-N uring uring-1q; also uring-2q etc.,
# entries on that many queues; also libfuse-dev and
# libfuse-ring, an unmodified libfuse3 passthrough through fuse-ring/ over
# each transport; dev-1-poll and dev-N-poll,
# /dev/fuse with dev_poll_us=BENCH_POLL_US (50); uring-free, the ring
# server with its queue threads left to the scheduler), BENCH_PIN (0; 1
# pins the /dev/fuse server's threads and the load threads to CPUs as
# well), BENCH_DEPTH ring
# entries per queue (2), BENCH_BONNIE_FILES (bonnie++ -n argument,
# 30:1:1:10), BENCH_COST (0), and the backend the server simulates
# (BENCH_LATENCY_US, BENCH_ASYNC_DIO, BENCH_WRITEBACK: guest-servers.sh).
# fio-libaio-qd16 is fio-qd16 with the libaio engine (needs CONFIG_AIO).
set -u
B=$(cd "$(dirname "$0")" && pwd)
rounds=${BENCH_ROUNDS:-3}
secs=${BENCH_SECONDS:-4}
workloads=${BENCH_WORKLOADS:-stat read4k read128k create fio-randread4k \
fio-qd16 seqread-1m seqwrite-1m seqread-1m-direct seqwrite-1m-direct}
transports=${BENCH_TRANSPORTS:-tmpfs dev-1 dev-N uring uring-1q}
depth=${BENCH_DEPTH:-2}
poll=${BENCH_POLL_US:-50}
bonnie_files=${BENCH_BONNIE_FILES:-30:1:1:10}
pin=
[ "${BENCH_PIN:-0}" = 1 ] && pin=--pin
ncpu=$(nproc)
jobs_list=1
[ "$ncpu" -gt 1 ] && jobs_list="1 $ncpu"
mnt=/mnt/bench
slog=/tmp/fuse_bench_server.log
failures=0
# BENCH_COST=1: each run under fuse_bench_cost, which writes $cost_file
cost_file=/tmp/bench-cost.txt
measure=
[ "${BENCH_COST:-0}" = 1 ] && measure="$B/fuse_bench_cost $cost_file"
cost_mode=free
taskset_cmd=	# "taskset 1" in the cost pass on CPU 0
one_op=

. "$B/guest-servers.sh"

# Workloads; each prints "ops ops_per_s p50_us p99_us" or fails. With
# one_op=1, one operation per job instead of a $secs run.
# shellcheck disable=SC2086
run_load() {	# workload dir jobs
	$measure $taskset_cmd "$B/fuse_bench_load" --workload "$1" \
		--dir "$2" --jobs "$3" --seconds "$secs" ${one_op:+--max-ops 1} \
		$pin | awk -F'\t' '{ print $3, $5, $6, $7 }'
}

# fio's 4 KiB O_DIRECT random reads; fio reads the load tool's data64m
# when read4k or seqread-1m made it already, else it lays the file out
# itself.
# shellcheck disable=SC2086
run_fio() {	# dir jobs ioengine iodepth
	if [ -n "$one_op" ]; then
		limit=--number_ios=1
	else
		limit="--runtime=$secs --time_based"
	fi
	$measure $taskset_cmd fio --name=r --filename="$1/data64m" \
		--rw=randread --bs=4k --direct=1 --size=64m $limit \
		--ioengine="$3" --iodepth="$4" --numjobs="$2" \
		--group_reporting --thread --fallocate=none \
		--output-format=terse 2>/dev/null |
	awk -F';' '$1 == 3 {	# read: KiB, KiB/s, IOPS; clat percentiles
		p50 = p99 = "NA"
		for (i = 18; i <= 37; i++) {
			split($i, kv, "=")
			if (kv[1] == "50.000000%") p50 = kv[2]
			if (kv[1] == "99.000000%") p99 = kv[2]
		}
		print $6 / 4, $8, p50, p99; found = 1
	} END { exit !found }'
}

run_one() {	# workload dir jobs
	case $1 in
	fio-randread4k) run_fio "$2" "$3" psync 1 ;;
	fio-qd16) run_fio "$2" "$3" io_uring 16 ;;
	fio-libaio-qd16) run_fio "$2" "$3" libaio 16 ;;
	*) run_load "$@" ;;
	esac
}

# bonnie++ metadata phases: prints "phase ops_per_s" lines
run_bonnie() {	# dir
	bonnie++ -x 1 -q -s0 -n "$bonnie_files" -r 0 -u root -d "$1" \
		2>/dev/null |
	awk -F',' '$1 ~ /^[0-9]/ && NF >= 37 {
		split("seqcreate seqstat seqdel rancreate ranstat randel", n, " ")
		for (i = 0; i < 6; i++) {
			v = $(27 + 2 * i)
			if (v !~ /^[0-9]+$/) v = "NA"
			print n[i + 1], v
		}
		found = 1
	} END { exit !found }'
}

# Whether this guest has what workload $1 needs.
can_run() {
	case $1 in
	bonnie) command -v bonnie++ >/dev/null ;;
	fio-libaio-*) command -v fio >/dev/null && [ -d /proc/sysvipc ] &&
		[ -e /proc/sys/fs/aio-max-nr ] ;;
	fio-*) command -v fio >/dev/null && [ -d /proc/sysvipc ] ;;
	esac
}

# Before each run: "bench: [K/N] round R/ROUNDS CONFIG WORKLOAD jobs=J".
run_no=0
say_progress() {	# round transport workload [jobs]
	run_no=$((run_no + 1))
	if [ "$cost_mode" = free ]; then
		pass="round $1/$rounds"
	else
		pass="cost pass on CPU 0"
	fi
	log "[$run_no/$total_runs] $pass $2 $3${4:+ jobs=$4}"
}

row() {	# round workload transport jobs ops p50 p99
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@"
}

# BENCH_COST=1: the cost row of the run that just ended, net of the
# one-operation run before it (BASE: its ops and fuse_bench_cost figures),
# which takes out the tools' start, set-up and exit (fio's alone is about
# 140M guest instructions).
cost_row() {	# round workload transport jobs ops BASE...
	# shellcheck disable=SC2046
	set -- "$@" $(cat "$cost_file" 2>/dev/null)
	if [ "$#" -ne 16 ]; then
		log "round $1 $3 $2 jobs=$4: no cost figures"
		return
	fi
	printf 'cost\t%s\t%s\t%s\t%s\t%s\t' "$cost_mode" "$1" "$2" "$3" "$4"
	shift 4
	echo "$@" | awk '{ printf "%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\n",
		$1 - $2, $8 - $3, $9 - $4, $10 - $5, $11 - $6, $12 - $7 }'
}

run_workloads() {	# round transport dir
	for w in $workloads; do
		can_run "$w" || continue
		case $w in
		bonnie)
			say_progress "$1" "$2" "$w"
			out=$(run_bonnie "$3") || {
				log "round $1 $2 bonnie++ failed"
				failures=$((failures + 1))
				continue
			}
			echo "$out" | while read -r phase ops; do
				row "$1" "bonnie-$phase" "$2" 1 "$ops" NA NA
			done
			rm -rf "$3"/Bonnie.* 2>/dev/null
			continue
			;;
		esac
		for j in $jobs_list; do
			say_progress "$1" "$2" "$w" "$j"
			base=
			if [ -n "$measure" ]; then
				one_op=1
				# set-up first (files the first run makes:
				# fio lays out data64m if missing), then the
				# base: one operation per job
				run_one "$w" "$3" "$j" >/dev/null
				base=$(run_one "$w" "$3" "$j" | cut -d' ' -f1)
				base="$base $(cat "$cost_file" 2>/dev/null)"
				one_op=
			fi
			out=$(run_one "$w" "$3" "$j")
			if [ -z "$out" ]; then
				log "round $1 $2 $w jobs=$j failed"
				failures=$((failures + 1))
				continue
			fi
			# shellcheck disable=SC2086
			set -- "$1" "$2" "$3" $out
			[ "$cost_mode" = free ] &&
				row "$1" "$w" "$2" "$j" "$5" "$6" "$7"
			# shellcheck disable=SC2086
			[ -n "$measure" ] &&
				cost_row "$1" "$w" "$2" "$j" "$4" $base
			set -- "$1" "$2" "$3"
		done
	done
}

run_config() {	# round transport
	case $2 in
	tmpfs)
		mkdir -p /mnt/floor
		mount -t tmpfs -o size=1g floor /mnt/floor || return 1
		run_workloads "$1" "$2" /mnt/floor
		umount /mnt/floor
		;;
	*)
		start_server "$2" || { failures=$((failures + 1)); return 1; }
		if [ "${2%-*}" = uring ] &&
		    ! grep -q 'over io_uring' "$slog"; then
			log "round $1: uring server fell back to /dev/fuse:"
			cat "$slog" >&2
			stop_server
			failures=$((failures + 1))
			return 1
		fi
		run_workloads "$1" "$2" "$mnt"
		stop_server
		;;
	esac
}

mkdir -p "$mnt"
log "$ncpu cpus, $rounds rounds, ${secs}s per run, workloads: $workloads${backend:+, server:$backend}"
# The plan: runs per configuration (bonnie++ one, the others one per job
# count), in each round and, with BENCH_COST=1, in the pass on CPU 0.
runs_per_config=0
for w in $workloads; do
	if ! can_run "$w"; then
		case $w in
		fio-*) [ -d /proc/sysvipc ] || log "fio needs SYSV IPC" \
			"(shmget), which this kernel lacks: $w skipped" ;;
		esac
		case $w in
		fio-libaio-*) [ -e /proc/sys/fs/aio-max-nr ] ||
			log "no CONFIG_AIO in this kernel: $w skipped" ;;
		esac
		continue
	fi
	if [ "$w" = bonnie ]; then
		runs_per_config=$((runs_per_config + 1))
	else
		for j in $jobs_list; do
			runs_per_config=$((runs_per_config + 1))
		done
	fi
done
passes=$rounds
[ -n "$measure" ] && passes=$((rounds + 1))
total_runs=$((passes * $(echo "$transports" | wc -w) * runs_per_config))
r=1
while [ "$r" -le "$rounds" ]; do
	# rotate the order: round r starts with configuration r
	order=$(echo $transports | awk -v r="$r" '{
		for (i = 0; i < NF; i++) printf "%s ", $((i + r - 1) % NF + 1) }')
	for t in $order; do
		# a configuration that fails skips its runs: count them
		next_run_no=$((run_no + runs_per_config))
		run_config "$r" "$t"
		run_no=$next_run_no
	done
	r=$((r + 1))
done
# BENCH_COST=1: once more, everything on CPU 0, cost rows only
if [ -n "$measure" ]; then
	cost_mode=cpu0 taskset_cmd="taskset 1" pin=
	for t in $transports; do
		next_run_no=$((run_no + runs_per_config))
		run_config 1 "$t"
		run_no=$next_run_no
	done
fi
[ -w "$uring_param" ] && echo 0 >"$uring_param"
log "done, $failures failures"
[ "$failures" -eq 0 ]
