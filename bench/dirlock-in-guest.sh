#!/bin/sh
# Inside the benchmark guest (busybox sh): what creates in one directory
# by a job per CPU wait for. Per transport (dev-N, uring),
# fuse_bench_load's create (open O_CREAT, close, unlink, all in one
# directory) runs with a job per CPU, DL_OPS operations each, traced:
# - the lock contention events: a wait spans a task's contention_begin on
#   an rwsem (flags READ or WRITE) to its contention_end;
# - sched_switch, sched_wakeup, fuse_request_send/end and the timer
#   interrupt: an op spans one of a job's LOOKUPs to its next, and its
#   time splits into on a CPU, runnable (woken or preempted, not yet on a
#   CPU), asleep in a lock's wait, asleep with a FUSE request of its own
#   out, and asleep otherwise.
# Two tables, a row per transport (bench/dirlock.sh says what the columns
# are).
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
events="lock/contention_begin lock/contention_end sched/sched_switch
	sched/sched_wakeup fuse/fuse_request_send fuse/fuse_request_end
	irq_vectors/local_timer_entry"
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

# Per op of the load's tasks: "total run runnable lock fuse other ticks"
# (us, and the timer interrupts its CPU took while it ran there). A lock
# wait is a sleeping lock's, from contention_begin to the end on that lock.
per_op() {
	awk 'function val(k,   i) {
		for (i = 1; i <= NF; i++)
			if (index($i, k "=") == 1)
				return substr($i, length(k) + 2)
		return ""
	  }
	  function to(p, s) {
		if (p in st)
			acc[p, st[p]] += ts - since[p]
		st[p] = s
		since[p] = ts
	  }
	  function asleep(p) {
		return inlock[p] != "" ? "lock" : (out[p] > 0 ? "fuse" : "other")
	  }
	  { ts = 0; ev = ""; cpu = ""
	    for (i = 2; i <= NF; i++) {
		if (cpu == "" && $i ~ /^\[[0-9]+\]$/) cpu = $i
		if (!ts && $i ~ /^[0-9]+\.[0-9]+:$/) ts = $i + 0
		else if (ts && $i ~ /^[a-z_]+:$/) { ev = $i; at = i; break }
	    }
	    pid = $1; sub(/.*-/, "", pid)
	  }
	  ev == "fuse_request_send:" && $1 ~ /^fuse_bench_load-/ {
		load[pid] = 1
		owner[$(at + 4)] = pid
		out[pid]++
		if ($0 ~ / opcode 1 /) {
			if (pid in start) {
				to(pid, "run")
				printf "%.0f", (ts - start[pid]) * 1e6
				n = split("run runnable lock fuse other", c, " ")
				for (i = 1; i <= n; i++) {
					printf " %.0f", acc[pid, c[i]] * 1e6
					acc[pid, c[i]] = 0
				}
				printf " %d\n", ticks[pid]
				ticks[pid] = 0
			}
			start[pid] = ts
		}
		next
	  }
	  ev == "fuse_request_end:" {
		id = $(at + 4)
		if (id in owner) { out[owner[id]]--; delete owner[id] }
		next
	  }
	  ev == "contention_begin:" && (pid in load) && !/flags=SPIN/ {
		inlock[pid] = $(at + 1)
		next
	  }
	  ev == "contention_end:" && inlock[pid] == $(at + 1) {
		inlock[pid] = ""
		next
	  }
	  ev == "sched_wakeup:" {
		p = val("pid")
		if ((p in load) && st[p] != "run") to(p, "runnable")
		next
	  }
	  ev == "local_timer_entry:" {
		if (cpu in curr) ticks[curr[cpu]]++
		next
	  }
	  ev == "sched_switch:" {
		delete curr[cpu]
		p = val("prev_pid")
		if (p in load)
			to(p, val("prev_state") ~ /^R/ ? "runnable" : asleep(p))
		p = val("next_pid")
		if (p in load) { to(p, "run"); curr[cpu] = p }
	  }' "$tracefs/trace"
}

# Mean of each column over the ops of one group: "n total run ..."
means() {
	awk '{ for (i = 1; i <= NF; i++) s[i] += $i; n++ }
	     END { printf "%d", n
		   for (i = 1; i <= 6; i++) printf " | %.0f", n ? s[i] / n : 0
		   printf " | %.1f", n ? s[7] / n : 0
		   printf "\n" }'
}

pct() {	# file: "p50 p99 max" of its first column
	sort -n "$1" | awk '{ v[NR] = $1 }
		END { if (!NR) { print "- - -"; exit }
		      i = int(NR * 0.5); j = int(NR * 0.99)
		      print v[i > 0 ? i : 1], v[j > 0 ? j : 1], v[NR] }'
}

mkdir -p "$mnt"
: >/tmp/split
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
	per_op | sort -n >/tmp/ops
	n=$(wc -l </tmp/ops)
	if [ "$#" -ne 7 ] || [ "$n" -lt 200 ]; then
		log "$t: no load result or too few traced ops ($n)"
		status=1
	else
		echo "| $t | $6 / $7 |" \
			"$(wc -l </tmp/waits) ($(grep -c ' WRITE$' /tmp/waits)) |" \
			"$(pct /tmp/waits | sed 's# # / #g') |" \
			"$(awk '$1 >= 1000 { n++; if ($2 == "WRITE") w++ }
				END { printf "%d (%d)", n, w }' /tmp/waits) |"
		echo "| $t | all | $(means </tmp/ops) |" >>/tmp/split
		echo "| $t | slowest 1% | $(tail -n $((n / 100)) /tmp/ops |
			means) |" >>/tmp/split
	fi
	: >"$tracefs/trace"
	stop_server
done
echo
echo "Where their time goes (mean us per op; timer interrupts its CPU took" \
	"while the op ran on it)"
echo
echo "| transport | ops | n | total | on a CPU | runnable | lock wait |" \
	"FUSE request out | other sleep | timer interrupts |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
cat /tmp/split
exit "$status"
