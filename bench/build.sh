#!/bin/sh
# Build the benchmark's binaries and stage them, with run-in-guest.sh and
# (when installed) fio and bonnie++, for initramfs/build.sh, which merges the
# staging dir into the guest image and copies the shared libraries.
# Usage: bench/build.sh [STAGE_DIR]   (default build/bench-stage)
# Environment: CC (cc), BENCH_UAPI_INCLUDE (build/obj-hdr/usr/include: the
# patched tree's "make headers" output), BENCH_FIO=0 / BENCH_BONNIE=0 to
# leave those tools out of the image, BENCH_PERF=1 to add Debian's perf
# (bench/profile.sh).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
stage=${1:-$top/build/bench-stage}
uapi=${BENCH_UAPI_INCLUDE:-$top/build/obj-hdr/usr/include}
cc=${CC:-cc}
cflags="-O2 -g -std=gnu11 -Wall -Wextra -Wno-unused-parameter"

if ! grep -q FUSE_OVER_IO_URING "$uapi/linux/fuse.h" 2>/dev/null; then
	echo "bench/build.sh: $uapi/linux/fuse.h lacks FUSE_OVER_IO_URING;" \
		"generate the patched tree's headers (make headers O=...)" >&2
	exit 1
fi

rm -rf "$stage"
mkdir -p "$stage/bench"
$cc $cflags -isystem "$uapi" -pthread -o "$stage/bench/fuse_bench_server" \
	"$here/fuse_bench_server.c" -l:liburing.a
$cc $cflags -pthread -o "$stage/bench/fuse_bench_load" \
	"$here/fuse_bench_load.c"
$cc $cflags -o "$stage/bench/fuse_bench_cost" "$here/fuse_bench_cost.c"
cp "$here/run-in-guest.sh" "$here/profile-in-guest.sh" \
	"$here/memory-in-guest.sh" "$here/guest-servers.sh" \
	"$here/bonnie-wakes-in-guest.sh" "$here/packaged-in-guest.sh" \
	"$here/packaged-jobs.sh" "$here/waits-in-guest.sh" \
	"$here/create-tail-in-guest.sh" "$here/dirlock-in-guest.sh" \
	"$here/guest-tracing.sh" "$stage/bench/"

if [ "${BENCH_FIO:-1}" != 0 ] && fio=$(command -v fio); then
	mkdir -p "$stage/usr/bin"
	cp "$fio" "$stage/usr/bin/fio"
fi
if [ "${BENCH_BONNIE:-1}" != 0 ] && bonnie=$(command -v bonnie++); then
	mkdir -p "$stage/usr/sbin"
	cp "$bonnie" "$stage/usr/sbin/bonnie++"
fi

# Older Debian linux-perf packages make /usr/bin/perf a wrapper that picks
# perf_<version> by uname; the guest gets a binary itself.
if [ "${BENCH_PERF:-0}" = 1 ]; then
	perf=$(ls /usr/bin/perf_[0-9]* 2>/dev/null | sort -V | tail -n 1)
	[ -n "$perf" ] || perf=$(command -v perf)
	mkdir -p "$stage/usr/bin"
	cp "$perf" "$stage/usr/bin/perf"
fi

# fuse-ring's example: Debian's libfuse3 over the ring, for the libfuse-*
# configurations. glibc loads libgcc_s at run time (ldd does not list it).
if [ "${BENCH_LIBFUSE:-1}" != 0 ] && pkg-config --exists fuse3; then
	sh "$top/fuse-ring/build.sh" "$top/build/fuse-ring-out" >/dev/null
	cp "$top/build/fuse-ring-out/bin/passthrough_ring" "$stage/bench/"
	gcc_s=$(ldconfig -p | awk '/libgcc_s.so.1 .*x86-64/ { print $NF; exit }')
	mkdir -p "$stage$(dirname "$gcc_s")"
	cp -L "$gcc_s" "$stage$gcc_s"
fi
