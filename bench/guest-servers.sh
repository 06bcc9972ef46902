# Sourced by bench/run-in-guest.sh and bench/profile-in-guest.sh (busybox
# sh): start and stop one benchmark configuration's FUSE server on $mnt.
# The caller sets B (the bench folder), ncpu, depth, poll, pin, mnt and
# slog, and may set taskset_cmd ("taskset 1": the server starts on CPU 0
# and stays there, its own --pin dropped); start_server sets spid,
# stop_server clears it. The backend the server simulates comes from the
# environment (bench/run-latency.sh): BENCH_LATENCY_US (0; every request
# but FORGET and INTERRUPT waits that long in the thread serving it),
# BENCH_ASYNC_DIO and BENCH_WRITEBACK (0; 1 accepts FUSE_ASYNC_DIO,
# FUSE_WRITEBACK_CACHE); backend holds them as server options.
poll_param=/sys/module/fuse/parameters/dev_poll_us
uring_param=/sys/module/fuse/parameters/enable_uring
spid=
backend=
[ "${BENCH_LATENCY_US:-0}" != 0 ] && backend="--latency-us $BENCH_LATENCY_US"
[ "${BENCH_ASYNC_DIO:-0}" = 1 ] && backend="$backend --async-dio"
[ "${BENCH_WRITEBACK:-0}" = 1 ] && backend="$backend --writeback"

log() { echo "bench: $*" >&2; }

# Poll until CONDITION (a shell command) holds; at most TRIES x 50 ms.
wait_for() {
	tries=$1
	shift
	while ! eval "$*"; do
		tries=$((tries - 1))
		[ "$tries" -le 0 ] && return 1
		sleep 0.05
	done
	return 0
}

is_mounted() { grep -q " $mnt " /proc/mounts; }

start_server() {
	poll_us=0
	case $1 in
	dev-1) args="--transport dev --threads 1" ;;
	dev-N) args="--transport dev --threads $ncpu" ;;
	dev-1-poll) args="--transport dev --threads 1" poll_us=$poll ;;
	dev-N-poll) args="--transport dev --threads $ncpu" poll_us=$poll ;;
	# the ring as fuse-ring/ runs it: each queue's thread on
	# the queue's CPU; uring-free leaves their placement to the scheduler
	uring) args="--transport uring --depth $depth --pin" ;;
	uring-free) args="--transport uring --depth $depth" ;;
	# uring with the rings' task work set up otherwise (issue 24):
	# COOP_TASKRUN + TASKRUN_FLAG, or SINGLE_ISSUER + DEFER_TASKRUN;
	# -poll: each queue's thread spins up to $poll us before it waits
	uring-poll|uring-coop|uring-defer|uring-coop-poll|uring-defer-poll)
		setup=${1#uring-}
		setup=${setup%poll}
		setup=${setup%-}
		args="--transport uring --depth $depth --setup ${setup:-plain}"
		case $1 in *poll) args="$args --poll-us $poll" ;; esac
		args="$args --pin"
		;;
	# one queue for every CPU, its thread polling on a CPU of its own
	# (the scheduler moves the load off it): the seed's RFC, a server
	# thread that does not sleep, over the ring
	uring-1q-defer-poll)
		args="--transport uring --depth $depth --queues 1 --setup defer"
		args="$args --poll-us $poll --pin"
		;;
	# uring-1q, uring-2q, ...: entries on that many queues only, spread
	# over the CPUs; the kernel serves the others from the nearest queue
	uring-*q)
		queues=${1#uring-}
		# --pin last: the cost pass on CPU 0 takes it off the end
		args="--transport uring --depth $depth --queues ${queues%q} --pin"
		;;
	libfuse-dev|libfuse-ring)
		start_libfuse "$1"
		return
		;;
	esac
	# dev_poll_us: the /dev/fuse knob of the same series
	if [ -w "$poll_param" ]; then
		echo "$poll_us" >"$poll_param"
	elif [ "$poll_us" != 0 ]; then
		log "no $poll_param: the kernel lacks dev_poll_us"
	fi
	if [ -w "$uring_param" ]; then
		case $1 in uring*) echo 1 ;; *) echo 0 ;; esac >"$uring_param"
	elif [ "${1%-*}" = uring ]; then
		log "no $uring_param: the kernel lacks the io_uring transport"
	fi
	[ -n "${taskset_cmd:-}" ] && args=${args% --pin}
	: >"$slog"
	# shellcheck disable=SC2086
	${taskset_cmd:-} "$B/fuse_bench_server" $args $pin $backend \
		"$mnt" 2>>"$slog" &
	spid=$!
	# ready: mounted and INIT answered (the server then says "serving")
	if ! wait_for 200 '(is_mounted && grep -q serving "$slog") ||
	    ! kill -0 $spid 2>/dev/null' || ! is_mounted; then
		log "$1: server did not mount $mnt"
		cat "$slog" >&2
		stop_server
		return 1
	fi
	return 0
}

# libfuse-dev, libfuse-ring: Debian's libfuse3 running fuse-ring's example
# passthrough of a tmpfs directory, over /dev/fuse or over the ring.
start_libfuse() {
	[ -x "$B/passthrough_ring" ] || { log "$1: no passthrough_ring"; return 1; }
	if [ -w "$poll_param" ]; then
		echo 0 >"$poll_param"
		echo N >"$wake_param"
	fi
	mode=--no-ring
	if [ "$1" = libfuse-ring ]; then
		mode=--ring
		[ -w "$uring_param" ] && echo 1 >"$uring_param"
	fi
	mkdir -p /mnt/pt-src
	grep -q " /mnt/pt-src " /proc/mounts ||
		mount -t tmpfs -o size=1g ptsrc /mnt/pt-src || return 1
	: >"$slog"
	# shellcheck disable=SC2086
	${taskset_cmd:-} "$B/passthrough_ring" $mode /mnt/pt-src "$mnt" \
		>>"$slog" 2>&1 &
	spid=$!
	if ! wait_for 200 'is_mounted || ! kill -0 $spid 2>/dev/null' ||
	    ! is_mounted; then
		log "$1: passthrough_ring did not mount $mnt"
		cat "$slog" >&2
		stop_server
		return 1
	fi
	return 0
}

stop_server() {
	[ -n "$spid" ] || return 0
	if is_mounted; then
		umount "$mnt" 2>/dev/null || umount -l "$mnt"
	fi
	if ! wait_for 100 '! kill -0 $spid 2>/dev/null'; then
		log "server $spid still running 5 s after umount: SIGTERM"
		kill -TERM "$spid" 2>/dev/null
		if ! wait_for 100 '! kill -0 $spid 2>/dev/null'; then
			log "server $spid ignores SIGTERM: SIGKILL"
			kill -KILL "$spid" 2>/dev/null
		fi
	fi
	wait "$spid" 2>/dev/null
	spid=
	if grep -v '^fuse_bench_server: serving' "$slog" | grep -q .; then
		log "server messages:"
		sed 's/^/  /' "$slog" >&2
	fi
}
