# Sourced by create-tail-in-guest.sh and dirlock-in-guest.sh in the
# benchmark guest: mounts tracefs, sets the global clock and a 64 MiB
# buffer. trace 0|1 turns the events in $events (group/name) off or on.
tracefs=/sys/kernel/tracing

trace() {	# 0|1
	for e in $events; do
		echo "$1" >"$tracefs/events/$e/enable" || return 1
	done
}

[ -d "$tracefs/events" ] || mount -t tracefs tracefs "$tracefs"
echo global >"$tracefs/trace_clock"
echo 65536 >"$tracefs/buffer_size_kb"
