#!/bin/sh
# Runs in the test guest (busybox sh, as root): the example passthrough_ring
# over the io_uring transport and over /dev/fuse, a data-integrity workload
# on each, shutdown by umount and by SIGTERM, INTERRUPT and FORGET, and the
# fallback message with enable_uring=0.
# Expects /fuse-ring/passthrough_ring. Prints "fuse-ring-test: N passed, M failed".
set -u
bin=${FUSE_RING_BIN:-/fuse-ring/passthrough_ring}
param=/sys/module/fuse/parameters/enable_uring
work=/tmp/fr
ref=$work/ref
sizes="0 1 511 4095 4096 4097 65536 131073 1048576 1048577 3000001"
npass=0
nfail=0

ok() { npass=$((npass + 1)); echo "PASS: $*"; }
bad() { nfail=$((nfail + 1)); echo "FAIL: $*"; }
check() { # description command...
	d=$1
	shift
	if "$@"; then ok "$d"; else bad "$d"; fi
}

drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches; }
mounted() { grep -q " $1 " /proc/mounts; }

# wait_gone PID SECONDS: 0 if the process ended in time
wait_gone() {
	n=0
	while kill -0 "$1" 2>/dev/null; do
		# a zombie child counts as gone
		grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null && return 0
		n=$((n + 1))
		[ "$n" -gt $(($2 * 10)) ] && return 1
		sleep 0.1
	done
	return 0
}

# start_server TAG ARGS...: sets srv_pid, srv_log, mnt, back
start_server() {
	tag=$1
	shift
	back=$work/back-$tag
	mnt=$work/mnt-$tag
	srv_log=$work/server-$tag.log
	mkdir -p "$back" "$mnt"
	"$bin" "$@" "$back" "$mnt" >"$srv_log" 2>&1 &
	srv_pid=$!
	n=0
	while ! mounted "$mnt"; do
		n=$((n + 1))
		if [ "$n" -gt 100 ] || ! kill -0 "$srv_pid" 2>/dev/null; then
			echo "server $tag did not mount:"
			cat "$srv_log"
			return 1
		fi
		sleep 0.1
	done
	return 0
}

# stop_by_umount: umount, the server must exit 0 by itself
stop_by_umount() {
	check "$tag: umount" umount "$mnt"
	if wait_gone "$srv_pid" 20; then
		wait "$srv_pid"
		check "$tag: server exited 0 after umount" [ $? -eq 0 ]
	else
		bad "$tag: server still running 20 s after umount"
		kill -9 "$srv_pid"
	fi
	echo "--- server log ($tag)"
	cat "$srv_log"
	echo "---"
}

stat_of() { # FIELD: value of FIELD=N in the server's stats line
	grep 'fuse-ring: requests:' "$srv_log" | grep -o "[( :]$1=[0-9]*" | head -n 1 | sed 's/.*=//'
}

make_refs() {
	mkdir -p "$ref"
	for s in $sizes; do
		if [ "$s" -eq 0 ]; then
			: >"$ref/r$s"
		else
			dd if=/dev/urandom of="$ref/r$s" bs="$s" count=1 2>/dev/null
		fi
	done
}

# One worker: files of every size through the mount, read back through the
# mount and on the backing dir, rename, readdir, unlink.
worker() {
	i=$1
	d=$mnt/w$i
	mkdir "$d" || return 1
	for s in $sizes; do cp "$ref/r$s" "$d/f$s" || return 1; done
	drop_caches
	for s in $sizes; do cmp "$ref/r$s" "$d/f$s" || return 1; done
	for s in $sizes; do cmp "$ref/r$s" "$back/w$i/f$s" || return 1; done
	for s in $sizes; do mv "$d/f$s" "$d/g$s" || return 1; done
	n=$(ls "$d" | wc -l)
	[ "$n" -eq "$(echo $sizes | wc -w)" ] || { echo "readdir: $n entries"; return 1; }
	for s in $sizes; do cmp "$ref/r$s" "$d/g$s" || return 1; done
	ln -s "g4096" "$d/link" && [ "$(readlink "$d/link")" = g4096 ] || return 1
	cmp "$ref/r4096" "$d/link" || return 1
	ln "$d/g1" "$d/hard" && cmp "$ref/r1" "$d/hard" || return 1
	rm "$d"/g* "$d/link" "$d/hard" || return 1
	[ -z "$(ls "$d")" ] || return 1
	rmdir "$d" || return 1
	[ ! -e "$back/w$i" ] || return 1
}

workload() {
	# big sequential writes and reads in 1 MiB requests (max payload)
	dd if=/dev/urandom of="$work/big" bs=1048576 count=8 2>/dev/null
	check "$tag: 8 MiB dd bs=1M through the mount" dd if="$work/big" of="$mnt/big" bs=1048576 2>/dev/null
	drop_caches
	check "$tag: md5 of 8 MiB through the mount" [ "$(md5sum <"$mnt/big")" = "$(md5sum <"$work/big")" ]
	check "$tag: md5 of 8 MiB on the backing dir" [ "$(md5sum <"$back/big")" = "$(md5sum <"$work/big")" ]
	# partial overwrite in the middle, then append
	dd if="$ref/r4097" of="$mnt/big" bs=4097 seek=100 conv=notrunc 2>/dev/null
	dd if="$ref/r4097" of="$work/big" bs=4097 seek=100 conv=notrunc 2>/dev/null
	cat "$ref/r511" >>"$mnt/big"
	cat "$ref/r511" >>"$work/big"
	drop_caches
	check "$tag: overwrite+append, compare" cmp "$work/big" "$mnt/big"
	# written on the backing dir, read through the mount
	cp "$ref/r131073" "$back/from-back"
	check "$tag: backing-dir file read through the mount" cmp "$ref/r131073" "$mnt/from-back"
	# truncate through the mount
	: >"$mnt/from-back"
	check "$tag: truncate" [ ! -s "$back/from-back" ]
	rm -f "$mnt/big" "$mnt/from-back"

	pids=
	for i in 1 2 3 4; do
		worker "$i" >"$work/worker-$tag-$i.log" 2>&1 &
		pids="$pids $!"
	done
	i=0
	for p in $pids; do
		i=$((i + 1))
		if wait "$p"; then
			ok "$tag: parallel worker $i"
		else
			bad "$tag: parallel worker $i"
			cat "$work/worker-$tag-$i.log"
		fi
	done
	check "$tag: mount empty after the workload" [ -z "$(ls "$mnt")" ]
}

interrupt_test() {
	stat "$mnt/slowpoke" >/dev/null 2>&1 &
	sp=$!
	sleep 1
	kill -TERM "$sp"
	if wait_gone "$sp" 10; then
		ok "$tag: LOOKUP waiting in the server ended by a signal"
	else
		bad "$tag: stat still blocked 10 s after SIGTERM"
	fi
	wait "$sp" 2>/dev/null
}

# Server over TRANSPORT (--ring/--no-ring) with EXTRA args, full workload.
run_transport() {
	tag=$1
	mode=$2
	shift 2
	echo "=== $tag: passthrough_ring $mode $*"
	start_server "$tag" "$mode" --slow-name=slowpoke "$@" || { bad "$tag: mount"; return; }
	ok "$tag: mounted"
	t0=$(date +%s)
	workload
	interrupt_test
	drop_caches
	echo "$tag: workload took $(($(date +%s) - t0)) s"
	stop_by_umount
	ring=$(stat_of ring)
	dev=$(stat_of dev)
	forget=$(stat_of forget)
	intr=$(stat_of interrupt)
	foreign=$(stat_of foreign_thread_replies)
	echo "$tag: requests ring=${ring:-?} dev=${dev:-?} forget=${forget:-?} interrupt=${intr:-?} foreign_thread_replies=${foreign:-?}"
	check "$tag: server counted its requests" [ -n "$ring" -a -n "$dev" ]
	if [ "$mode" = --ring ]; then
		check "$tag: requests went through the ring" [ "${ring:-0}" -gt 1000 ]
		check "$tag: transport io_uring" grep -q "transport=io_uring" "$srv_log"
	else
		check "$tag: no request through the ring" [ "${ring:-1}" -eq 0 ]
		check "$tag: transport /dev/fuse" grep -q "transport=/dev/fuse" "$srv_log"
	fi
	check "$tag: FORGET served" [ "${forget:-0}" -gt 0 ]
	check "$tag: INTERRUPT reached the server" [ "${intr:-0}" -gt 0 ]
	check "$tag: interrupted LOOKUP answered EINTR" grep -q "slow LOOKUP interrupted" "$srv_log"
	case "$mode $* " in
	"--ring"*" --async "*) check "$tag: replies from other threads reached their entries" [ "${foreign:-0}" -gt 0 ] ;;
	"--ring"*" --queues=1 "*) check "$tag: one queue served every CPU" [ "$(stat_of queues)" = 1 ] ;;
	esac
	case "$mode $* " in
	*" --poll-us="*) check "$tag: the queue thread found requests while polling" [ "$(stat_of poll_hits)" -gt 0 ] ;;
	*) check "$tag: no polling unless asked" [ "$(stat_of poll_hits)" = 0 ] ;;
	esac
}

# SIGTERM: clean exit, mount gone; BUSY=1 keeps a file open meanwhile.
sigterm_test() {
	tag=$1
	busy=$2
	shift 2
	echo "=== $tag: SIGTERM (file held open: $busy)"
	start_server "$tag" "$@" || { bad "$tag: mount"; return; }
	cp "$ref/r65536" "$mnt/keep"
	check "$tag: file written" cmp "$ref/r65536" "$mnt/keep"
	[ "$busy" = 1 ] && exec 3<"$mnt/keep"
	kill -TERM "$srv_pid"
	if wait_gone "$srv_pid" 20; then
		wait "$srv_pid"
		check "$tag: server exited 0 on SIGTERM" [ $? -eq 0 ]
	else
		bad "$tag: server still running 20 s after SIGTERM"
		kill -9 "$srv_pid"
	fi
	check "$tag: mount gone after SIGTERM" sh -c "! grep -q ' $mnt ' /proc/mounts"
	if [ "$busy" = 1 ]; then
		# the connection is gone: the open file fails, without hanging
		if cat <&3 >/dev/null 2>&1; then r=0; else r=1; fi
		echo "$tag: read of the held file after the server's exit: $([ $r = 0 ] && echo ok || echo error)"
		exec 3<&-
	fi
	check "$tag: data on the backing dir" cmp "$ref/r65536" "$back/keep"
	check "$tag: clean-exit message" grep -q "passthrough_ring: exit 0" "$srv_log"
	echo "--- server log ($tag)"
	cat "$srv_log"
	echo "---"
}

fallback_test() {
	tag=fallback
	echo "=== fallback: enable_uring=0, passthrough_ring --ring"
	echo 0 >"$param"
	start_server "$tag" --ring || { bad "$tag: mount"; echo 1 >"$param"; return; }
	cp "$ref/r1048577" "$mnt/f"
	drop_caches
	check "$tag: data through /dev/fuse" cmp "$ref/r1048577" "$mnt/f"
	rm "$mnt/f"
	stop_by_umount
	echo 1 >"$param"
	check "$tag: message says the transport is disabled" grep -q "io_uring transport is disabled.*falling back to /dev/fuse" "$srv_log"
	check "$tag: served over /dev/fuse" grep -q "transport=/dev/fuse" "$srv_log"
	check "$tag: nothing through the ring" [ "$(stat_of ring)" = 0 ]
}

echo "fuse-ring-test: $(nproc) cpus, $(uname -r)"
if [ ! -w "$param" ]; then
	echo "fuse-ring-test: no $param: kernel without the FUSE io_uring transport"
	exit 1
fi
mkdir -p "$work"
mount -t tmpfs fr "$work"
make_refs

echo 1 >"$param"
run_transport ring --ring
run_transport ring-async --ring --async
run_transport ring-single --ring --single
run_transport ring-1q --ring --queues=1
run_transport ring-1q-poll --ring --queues=1 --poll-us=50
run_transport dev --no-ring
run_transport dev-async --no-ring --async
sigterm_test term-ring 0 --ring
sigterm_test term-ring-busy 1 --ring
sigterm_test term-dev 0 --no-ring
fallback_test

echo "fuse-ring-test: $npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
