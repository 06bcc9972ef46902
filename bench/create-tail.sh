#!/bin/sh
# Where one job's slowest creates go, from trace events: build the
# benchmark binaries and image, boot the benchmark kernel under -icount
# and run bench/create-tail-in-guest.sh there: fuse_bench_load's create
# with one job, no backend latency, over dev-N and over the ring. Prints
# per transport the load's p50/p99, the p50/p99/p99.9 of the ops as the
# trace spans them (one LOOKUP to the next), the share of ops during
# which the server's /dev/fuse thread ran (over the ring it receives the
# forgets, which the kernel holds back for a batch), and the p99 of the
# others.
# Usage: sh bench/create-tail.sh   (make create-tail)
# Environment: CT_OPS (3000), CT_TRANSPORTS ("dev-N uring"), GUEST_SMP
#   (4); BENCH_KERNEL, BENCH_UAPI_INCLUDE, GUEST_TIMEOUT, QEMU_ACCEL: as
#   for bench/run.sh; BENCH_OUT (build/bench-create-tail).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
cd "$top"
bzimage=${BENCH_KERNEL:-build/obj-bench/arch/x86/boot/bzImage}
out=${BENCH_OUT:-build/bench-create-tail}
stage=$out/stage
initrd=$out/initramfs.cpio.gz

if [ ! -f "$bzimage" ]; then
	echo "create-tail: no $bzimage; build it with \"make bench-kernel\"" >&2
	exit 1
fi
BENCH_BONNIE=0 BENCH_LIBFUSE=0 sh bench/build.sh "$stage"
sh initramfs/build.sh "$initrd" "$stage"

mkdir -p "$out"
GUEST_SMP=${GUEST_SMP:-4}
BENCH_ICOUNT=1
export GUEST_SMP BENCH_ICOUNT
set +e
sh bench/boot-guest.sh "$bzimage" "$initrd" "$out/create-tail.txt" \
	create-tail-in-guest.sh CT_OPS CT_TRANSPORTS
status=$?
set -e
grep -v '^bench:' "$out/create-tail.txt" >"$out/create-tail.md" || true
cat "$out/create-tail.md"
exit "$status"
