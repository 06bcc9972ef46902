#!/bin/sh
# Runs in the test guest (busybox sh, as root): the example passthrough_ring
# over the io_uring transport and over /dev/fuse, a data-integrity workload
# on each, shutdown by umount and by SIGTERM, INTERRUPT and FORGET, and the
# fallback message with enable_uring=0, and packaged file systems under the
# preload.
# Expects /fuse-ring/passthrough_ring. Prints "fuse-ring-test: N passed, M failed".
set -u
bin=${FUSE_RING_BIN:-/fuse-ring/passthrough_ring}
param=/sys/module/fuse/parameters/enable_uring
work=/tmp/fr
ref=$work/ref
sizes="0 1 511 4095 4096 4097 65536 131073 1048576 1048577 3000001"
npass=0
nfail=0

# FUSE_RING_ONLY="tag ...": run only these (tags of run_transport,
# sigterm_test, exit_test, or the other test functions' names).
want() {
	[ -z "${FUSE_RING_ONLY:-}" ] && return 0
	case " $FUSE_RING_ONLY " in *" $1 "*) return 0 ;; esac
	return 1
}

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

# wait_logged TEXT SECONDS: 0 once the server's log has a line with TEXT
wait_logged() {
	n=0
	while ! grep -q "$1" "$srv_log"; do
		n=$((n + 1))
		[ "$n" -gt $(($2 * 10)) ] && return 1
		sleep 0.1
	done
}

# wait_mounted: 0 once $mnt is mounted; 1 (with the server's log) if
# $srv_pid exits first or 10 s pass
wait_mounted() {
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
}

# start_server TAG ARGS...: sets srv_pid, srv_log, mnt, back
start_server() {
	tag=$1
	shift
	back=$work/back-$tag
	mnt=$work/mnt-$tag
	srv_log=$work/server-$tag.log
	mkdir -p "$back" "$mnt"
	${srv_wrap:-} "$bin" "$@" "$back" "$mnt" >"$srv_log" 2>&1 &
	srv_pid=$!
	wait_mounted
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
	wait_logged "slow LOOKUP waits" 30 ||
		bad "$tag: the slow LOOKUP not in the server 30 s after the stat"
	kill -TERM "$sp"
	if wait_gone "$sp" 10; then
		ok "$tag: LOOKUP waiting in the server ended by a signal"
	else
		bad "$tag: stat still blocked 10 s after SIGTERM"
	fi
	wait "$sp" 2>/dev/null
}

handlers_max() {
	sed -n 's/^passthrough_ring: max concurrent handlers: //p' "$srv_log"
}

# barrier_round K MASK...: K LOOKUPs of barrier-K-*, caller i pinned to
# the CPU mask MASK[i]; each handler waits (5 s at most) until all K are
# in handlers at once. Sets met to the number that were.
barrier_round() {
	k=$1
	shift
	before=$(grep -c "barrier met ($k)" "$srv_log")
	pids=
	i=0
	for m in "$@"; do
		i=$((i + 1))
		# a directory each: the kernel serialises LOOKUPs in one directory
		mkdir -p "$mnt/bar$i"
		taskset "$m" stat "$mnt/bar$i/barrier-$k-$i" >/dev/null 2>&1 &
		pids="$pids $!"
	done
	for p in $pids; do wait "$p"; done
	met=$(($(grep -c "barrier met ($k)" "$srv_log") - before))
	rmdir "$mnt"/bar*
}

# The threaded loop runs max_threads (6) blocking handlers at once, and a
# handler waiting for a request of its own CPU gets it.
concurrency_test() {
	barrier_round 6 1 2 1 2 1 2
	check "$tag: 6 blocking handlers at once (max_threads 6)" [ "$met" -eq 6 ]
	barrier_round 2 1 1
	check "$tag: a handler waiting for a request of its CPU gets it" [ "$met" -eq 2 ]
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
	case "$mode $* " in
	*" --max-threads="*) concurrency_test ;;
	esac
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
	if [ "$mode" = --ring ]; then
		# what libfuse splices from /dev/fuse is counted, not by opcode
		case " $* " in
		*" --splice "*) check "$tag: /dev/fuse requests spliced" [ "${dev:-0}" -gt 0 ] ;;
		*" --single "*)
			# its one thread is in the slow LOOKUP until it is answered,
			# which drops the INTERRUPT (as on /dev/fuse)
			check "$tag: FORGET served" [ "${forget:-0}" -gt 0 ] ;;
		*)
			check "$tag: FORGET served" [ "${forget:-0}" -gt 0 ]
			check "$tag: INTERRUPT reached the server" [ "${intr:-0}" -gt 0 ] ;;
		esac
	else
		# no ring: libfuse keeps its own I/O, nothing of ours counts
		check "$tag: libfuse's own I/O" grep -q "libfuse's own I/O" "$srv_log"
	fi
	case "$mode $* " in
	*" --single "*)
		# its one thread is in the slow LOOKUP: the INTERRUPT waits, as on /dev/fuse
		check "$tag: one handler at a time (FORGET, INTERRUPT included)" \
			[ "$(handlers_max)" = 1 ] ;;
	*) check "$tag: interrupted LOOKUP answered EINTR" grep -q "slow LOOKUP interrupted" "$srv_log" ;;
	esac
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

# fuse_session_exit() in a handler ends the loop: the server exits by itself.
exit_test() {
	tag=$1
	shift
	echo "=== $tag: fuse_session_exit() from a handler ($*)"
	start_server "$tag" "$@" --exit-name=stopnow || { bad "$tag: mount"; return; }
	stat "$mnt/stopnow" >/dev/null 2>&1
	if wait_gone "$srv_pid" 20; then
		wait "$srv_pid"
		check "$tag: the loop ended, server exited 0" [ $? -eq 0 ]
	else
		bad "$tag: server still running 20 s after fuse_session_exit()"
		kill -9 "$srv_pid"
	fi
	check "$tag: mount gone" sh -c "! grep -q ' $mnt ' /proc/mounts"
	umount -l "$mnt" 2>/dev/null
	cat "$srv_log"
}

# Attributes of 10000 and 65536 bytes set on the backing file read and
# listed through the mount, one of 2000 bytes set through it. getxattr and
# listxattr may answer 64 KiB whatever max_write is: with max_write 65536
# the ring takes that; with 4096 (max_pages 1) its replies could not, and
# the session stays on /dev/fuse saying why, as /dev/fuse takes them.
xattr_test() { # TAG MODE MAX_WRITE
	tag=$1
	echo "=== $tag: passthrough_ring $2 --max-write=$3, xattrs up to 64 KiB"
	start_server "$tag" "$2" --max-write="$3" || { bad "$tag: mount"; return; }
	: >"$back/x"
	for size in 10000 65536; do
		if ! /fuse-ring/xattr_tool set "$back/x" "user.big$size" "$size"; then
			bad "$tag: no user xattrs on the backing dir"
			continue
		fi
		check "$tag: getxattr and listxattr of $size bytes" \
			/fuse-ring/xattr_tool check "$mnt/x" "user.big$size" "$size"
	done
	check "$tag: setxattr of 2000 bytes" /fuse-ring/xattr_tool set "$mnt/x" user.small 2000
	check "$tag: ... on the backing file" /fuse-ring/xattr_tool check "$back/x" user.small 2000
	rm -f "$mnt/x"
	stop_by_umount
	case "$2 $3" in
	"--ring 65536")
		check "$tag: transport io_uring" grep -q "transport=io_uring" "$srv_log"
		check "$tag: requests went through the ring" [ "$(stat_of ring)" -gt 0 ] ;;
	"--ring "*)
		check "$tag: one line says why" grep -q "below the 64 KiB a getxattr.*falling back to /dev/fuse" "$srv_log"
		check "$tag: transport /dev/fuse" grep -q "transport=/dev/fuse" "$srv_log" ;;
	esac
}

# A server allowed on CPU 0 only registers one queue (its affinity, not
# every possible CPU), and CPU 1's requests reach it.
affinity_test() {
	tag=ring-affinity
	echo "=== $tag: taskset 1 passthrough_ring --ring"
	[ "$(nproc)" -ge 2 ] || { bad "$tag: needs 2 CPUs, the guest has $(nproc)"; return; }
	srv_wrap="taskset 1"
	start_server "$tag" --ring || { bad "$tag: mount"; srv_wrap=; return; }
	srv_wrap=
	check "$tag: write from CPU 1" taskset 2 cp "$ref/r131073" "$mnt/f"
	drop_caches
	check "$tag: read from CPU 1" taskset 2 cmp "$ref/r131073" "$mnt/f"
	rm -f "$mnt/f"
	stop_by_umount
	check "$tag: one queue, for the one allowed CPU" [ "$(stat_of queues)" = 1 ]
	check "$tag: requests went through the ring" [ "$(stat_of ring)" -gt 0 ]
}

# FUSE_RING_FAULT=enable: no queue can enable its ring after INIT accepted
# it; the mount must be served over /dev/fuse, not hang.
fault_enable_test() {
	tag=fault-enable
	echo "=== $tag: FUSE_RING_FAULT=enable passthrough_ring --ring"
	export FUSE_RING_FAULT=enable
	start_server "$tag" --ring || { bad "$tag: mount"; unset FUSE_RING_FAULT; return; }
	unset FUSE_RING_FAULT
	timeout 60 cp "$ref/r1048577" "$mnt/f"
	check "$tag: write through the mount, no hang" [ $? -eq 0 ]
	drop_caches
	check "$tag: data through /dev/fuse" timeout 60 cmp "$ref/r1048577" "$mnt/f"
	rm -f "$mnt/f"
	stop_by_umount
	check "$tag: stderr says it falls back" grep -q "enabling the ring of queue.*falling back to /dev/fuse" "$srv_log"
	check "$tag: nothing through the ring" [ "$(stat_of ring)" = 0 ]
}

# FUSE_RING_FAULT=submit:N: the only queue fails fatally after N requests;
# the mount must fail cleanly (callers get errors, the server exits), not hang.
fault_submit_test() {
	tag=fault-submit
	echo "=== $tag: FUSE_RING_FAULT=submit:40 passthrough_ring --ring --queues=1"
	export FUSE_RING_FAULT=submit:40
	start_server "$tag" --ring --queues=1 || { bad "$tag: mount"; unset FUSE_RING_FAULT; return; }
	unset FUSE_RING_FAULT
	timeout 60 sh -c "for i in \$(seq 1 50); do cp $ref/r4097 $mnt/f\$i; done" 2>/dev/null
	rc=$?
	# GNU timeout says 124, busybox's the child's SIGTERM (143)
	check "$tag: callers did not hang" [ "$rc" -ne 124 -a "$rc" -ne 143 ]
	if wait_gone "$srv_pid" 30; then
		wait "$srv_pid"
		ok "$tag: server exited"
	else
		bad "$tag: server still running 30 s after its queue failed"
		kill -9 "$srv_pid"
	fi
	umount -l "$mnt" 2>/dev/null
	cat "$srv_log"
	check "$tag: stderr says the session ends" grep -q "no queue left to serve the ring: ending the session" "$srv_log"
	check "$tag: stderr claims no fallback" sh -c "! grep -q 'falling back' $srv_log"
}

# ---- Debian's packaged file systems under the preload ----
preload=/fuse-ring/libfuse-ring-preload.so
tree=/fuse-ring/tree
image=/fuse-ring/tree.sqfs

# pkg_start TAG PRELOAD(0/1) CMD...: run a packaged server in the foreground
pkg_start() {
	tag=$1
	use=$2
	shift 2
	mnt=$work/mnt-$tag
	srv_log=$work/server-$tag.log
	mkdir -p "$mnt"
	if [ "$use" != 0 ]; then
		FUSE_RING_STATS=1 LD_PRELOAD=$preload "$@" "$mnt" >"$srv_log" 2>&1 &
	else
		"$@" "$mnt" >"$srv_log" 2>&1 &
	fi
	srv_pid=$!
	wait_mounted
}

# pkg_stop HOW: unmount with HOW (umount, fusermount3 -u); the server exits 0
pkg_stop() {
	check "$tag: $1" $1 "$mnt"
	if wait_gone "$srv_pid" 20; then
		wait "$srv_pid"
		check "$tag: server exited 0" [ $? -eq 0 ]
	else
		bad "$tag: server still running 20 s after $1"
		kill -9 "$srv_pid"
	fi
	echo "--- server log ($tag)"
	cat "$srv_log"
	echo "---"
}

# pkg_transport USE: the stats line shows the ring (1), the fallback with
# one line saying why (fallback), or there is no fuse-ring at all (0, off)
pkg_transport() {
	case $1 in
	1)
		check "$tag: requests went through the ring" [ "$(stat_of ring)" -gt 0 ]
		check "$tag: transport io_uring" grep -q "transport=io_uring" "$srv_log" ;;
	fallback)
		check "$tag: one line says why" [ "$(grep -c 'falling back to /dev/fuse' "$srv_log")" -eq 1 ]
		check "$tag: transport /dev/fuse" grep -q "transport=/dev/fuse" "$srv_log" ;;
	*)
		check "$tag: no fuse-ring at all" sh -c "! grep -q fuse-ring $srv_log" ;;
	esac
}

# every file of the tree, compared through the mount
same_tree() { # DIR
	(cd "$tree" && find . -type f) | while IFS= read -r f; do
		cmp "$tree/$f" "$1/$f" || exit 1
	done && [ "$(cd "$tree" && find . | wc -l)" -eq "$(cd "$1" && find . | wc -l)" ] &&
		[ "$(readlink "$1/a/link")" = sub0/f1 ]
}

squashfuse_test() { # TAG USE BINARY [ARGS]
	t=$1
	use=$2
	shift 2
	echo "=== $t: $* (preload: $use)"
	pkg_start "$t" "$use" "$@" -f "$image" || { bad "$t: mount"; return; }
	drop_caches
	check "$tag: every file of the image" same_tree "$mnt"
	pkg_stop umount
	pkg_transport "$use"
}

overlay_test() { # TAG USE [UNMOUNT]
	t=$1
	use=$2
	how=${3:-umount}
	echo "=== $t: fuse-overlayfs (preload: $use)"
	o=$work/ovl-$t
	mkdir -p "$o/lower" "$o/upper" "$o/work"
	cp -a "$tree/." "$o/lower/"
	pkg_start "$t" "$use" fuse-overlayfs -f -o "lowerdir=$o/lower,upperdir=$o/upper,workdir=$o/work" ||
		{ bad "$t: mount"; return; }
	check "$tag: lower tree through the overlay" same_tree "$mnt"
	cp "$ref/r131073" "$mnt/new" && sync
	check "$tag: new file in the upper dir" cmp "$ref/r131073" "$o/upper/new"
	cat "$ref/r4097" >>"$mnt/a/sub0/f2"
	cat "$tree/a/sub0/f2" "$ref/r4097" >"$work/expect"
	check "$tag: copy-up on write" cmp "$work/expect" "$o/upper/a/sub0/f2"
	check "$tag: lower file untouched" cmp "$tree/a/sub0/f2" "$o/lower/a/sub0/f2"
	rm "$mnt/b/sub1/f3"
	check "$tag: delete hides the lower file" [ ! -e "$mnt/b/sub1/f3" ]
	check "$tag: whiteout in the upper dir" [ -e "$o/upper/b/sub1/f3" -o -c "$o/upper/b/sub1/.wh.f3" -o -c "$o/upper/b/sub1/f3" ]
	check "$tag: lower file kept" [ -e "$o/lower/b/sub1/f3" ]
	mv "$mnt/c/sub2/f4" "$mnt/c/sub2/moved"
	check "$tag: rename" cmp "$tree/c/sub2/f4" "$mnt/c/sub2/moved"
	check "$tag: readdir after rename" [ "$(ls "$mnt/c/sub2" | grep -c '^f')" -eq 9 ]
	mkdir "$mnt/untar"
	(cd "$tree" && tar cf - .) | (cd "$mnt/untar" && tar xf -)
	drop_caches
	check "$tag: a tree untarred through the overlay" same_tree "$mnt/untar"
	rm -r "$mnt/untar" "$mnt/new"
	check "$tag: unlink of the untarred tree" [ ! -e "$mnt/untar" ]
	pkg_stop "$how"
	pkg_transport "$use"
}

# Daemonised (no -f): fuse_daemonize() forks after the mount; the ring must
# be set up in the child that serves.
daemon_test() {
	tag=sqfs-ll-daemon
	mnt=$work/mnt-$tag
	mkdir -p "$mnt"
	echo "=== $tag: squashfuse_ll, daemonised, under the preload"
	if ! LD_PRELOAD=$preload squashfuse_ll "$image" "$mnt"; then
		bad "$tag: mount"
		return
	fi
	check "$tag: mounted when the parent returned" mounted "$mnt"
	check "$tag: every file of the image" same_tree "$mnt"
	pid=$(pidof squashfuse_ll)
	check "$tag: the serving process has its rings" \
		sh -c "ls -l /proc/$pid/fd | grep -q io_uring"
	check "$tag: umount" umount "$mnt"
	check "$tag: daemon exited" wait_gone "$pid" 20
}

# kill -9 of fuse-overlayfs while four writers create files in it: each
# writer ends with the error a dead /dev/fuse server gives (ENOTCONN, or
# ECONNABORTED for a request in flight, or EIO from close() when the
# aborted request was the file's writeback: fuse_flush() reports the error
# kept in the mapping), new requests get ENOTCONN, and umount works.
kill_test() { # TAG USE
	t=$1
	use=$2
	echo "=== $t: kill -9 of fuse-overlayfs under load (preload: $use)"
	o=$work/ovl-$t
	mkdir -p "$o/lower" "$o/upper" "$o/work"
	pkg_start "$t" "$use" fuse-overlayfs -f -o "lowerdir=$o/lower,upperdir=$o/upper,workdir=$o/work" ||
		{ bad "$t: mount"; return; }
	pids=
	for i in 1 2 3 4; do
		sh -c "n=0; while cp $ref/r65536 $mnt/k$i-\$n; do n=\$((n + 1)); done" \
			2>"$work/kill-$t-$i.err" &
		pids="$pids $!"
	done
	n=0
	while [ "$(ls "$o/upper" | wc -l)" -lt 40 ] && [ "$n" -lt 600 ]; do
		n=$((n + 1))
		sleep 0.1
	done
	check "$tag: the writers were busy" [ "$(ls "$o/upper" | wc -l)" -ge 40 ]
	kill -9 "$srv_pid"
	i=0
	for p in $pids; do
		i=$((i + 1))
		if wait_gone "$p" 20; then
			wait "$p"
			check "$tag: writer $i saw an error" [ -s "$work/kill-$t-$i.err" ]
		else
			bad "$tag: writer $i still running 20 s after the kill"
		fi
	done
	cat "$work"/kill-"$t"-*.err
	check "$tag: only ENOTCONN, ECONNABORTED or EIO at close" sh -c "! cat $work/kill-$t-*.err |
		grep -v -e 'Transport endpoint is not connected' -e 'Software caused connection abort' \\
			-e \"^cp: error writing to '.*': Input/output error\$\""
	sh -c ": >$mnt/after" 2>"$work/kill-$t-after.err"
	check "$tag: a new request gets ENOTCONN" grep -q 'Transport endpoint is not connected' "$work/kill-$t-after.err"
	wait "$srv_pid" 2>/dev/null
	check "$tag: umount" umount "$mnt"
	cat "$srv_log"
}

preload_tests() {
	echo 1 >"$param"
	squashfuse_test sqfs-ll-ring 1 squashfuse_ll
	squashfuse_test sqfs-ring 1 squashfuse
	squashfuse_test sqfs-single-ring 1 squashfuse -s
	squashfuse_test sqfs-ll-dev 0 squashfuse_ll
	daemon_test
	overlay_test ovl-ring 1
	overlay_test ovl-ring-fusermount 1 "fusermount3 -u"
	overlay_test ovl-dev 0
	# the preload switched off: libfuse alone
	export FUSE_RING=0
	squashfuse_test sqfs-ll-off off squashfuse_ll
	unset FUSE_RING
	# the ring off in the kernel: the preload says so and uses /dev/fuse
	echo 0 >"$param"
	squashfuse_test sqfs-ll-fallback fallback squashfuse_ll
	overlay_test ovl-fallback fallback
	echo 1 >"$param"
	kill_test kill-ring 1
	kill_test kill-dev 0
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
want ring && run_transport ring --ring --max-threads=6
want ring-async && run_transport ring-async --ring --async
want ring-single && run_transport ring-single --ring --single
want ring-clonefd && run_transport ring-clonefd --ring --clone-fd
want ring-splice && run_transport ring-splice --ring --splice
want ring-1q && run_transport ring-1q --ring --queues=1
want ring-1q-poll && run_transport ring-1q-poll --ring --queues=1 --poll-us=50
want dev && run_transport dev --no-ring --max-threads=6
want dev-async && run_transport dev-async --no-ring --async
want dev-splice && run_transport dev-splice --no-ring --splice
want term-ring && sigterm_test term-ring 0 --ring
want term-ring-busy && sigterm_test term-ring-busy 1 --ring
want term-dev && sigterm_test term-dev 0 --no-ring
want fallback_test && fallback_test
want exit-ring && exit_test exit-ring --ring
want exit-ring-single && exit_test exit-ring-single --ring --single
want xattr-ring && xattr_test xattr-ring --ring 65536
want xattr-small && xattr_test xattr-small --ring 4096
want xattr-dev && xattr_test xattr-dev --no-ring 4096
want affinity_test && affinity_test
want fault_enable_test && fault_enable_test
want fault_submit_test && fault_submit_test
want preload_tests && preload_tests

echo "fuse-ring-test: $npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
